"""A Fourier Aurora made only of the vendor's wheel: the independent peer of our wire.

Run under .venv-aurora-vendor with FASTDDS_BUILTIN_TRANSPORTS=NONE (loopback only; see
fastdds-loopback.xml)::

    FASTDDS_BUILTIN_TRANSPORTS=NONE .venv-aurora-vendor/bin/python tests/aurora_vendor/robot.py \
        --domain 42 --record /tmp/robot.jsonl

Everything on the wire is the vendor's: its ``DDSInterface`` (Fast DDS 3.0), its SWIG
``fourier_msgs`` types, its QoS helpers (no-ops: RELIABLE + TRANSIENT_LOCAL writers,
BEST_EFFORT readers, as its robot's client has them). Nothing of the project is imported.

As a robot (default): publishes the eight state topics the vendor's ``AuroraClient`` waits
for (``aurora_state`` and ``robot_control_group_state`` at ``--rate``, the rest at a tenth),
GR-3 groups (left_leg 6, right_leg 6, waist 3, head 2, manipulators 7, hands 6); starts in
whole-body FSM 2 (PD stand) with the upper-body override allowed; obeys
``whole_body_fsm_state_change_cmd`` (0..11), ``upper_body_fsm_state_change_cmd`` (0, 1, 2, 4),
``velocity_source_cmd``; takes ``robot_control_group_cmd`` only in FSM 10 (every group) or 11
(all but the legs): ``group_motion_state`` 2 holds the group where it is, anything else moves
it toward ``position`` at 2 rad/s; ``velocity_cmd`` counts only in FSM 3 with source 2.

Faults, by signal: SIGUSR1 raises FSM 9 (security protection: every group holds, group
commands are ignored until a whole-body command leaves 9); SIGUSR2 puts ``left_manipulator``
in ``group_motion_state`` 3 (error). SIGTERM/SIGINT end it (the record flushed).

``--states FILE`` (JSON: topic -> fields as ``common.to_plain`` gives them) publishes exactly
those samples instead of the robot's own, for the exchange test.

The record (``--record``): JSON lines, each with ``t`` (time.monotonic(), CLOCK_MONOTONIC,
comparable with the test's): first ``{"robot": {...}}``, then ``{"topic", "fields",
"result"}`` for every command taken (every field as received), ``{"fault": ...}`` for each
raised fault, ``{"fsm": [whole, upper]}`` whenever the FSM changed. Each line is flushed.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from fourier_aurora_client.dds_interface import DDSInterface
from fourier_aurora_client.qos_profile import (
    PublisherQosProfile,
    SubscriberQosProfile,
)

GROUPS = {
    "left_leg": 6,
    "right_leg": 6,
    "waist": 3,
    "head": 2,
    "left_manipulator": 7,
    "right_manipulator": 7,
    "left_hand": 6,
    "right_hand": 6,
}
LEGS = {"left_leg", "right_leg"}
SPEED = 2.0  # rad/s


class Robot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.lock = threading.Lock()
        # open for the process's life, closed by its exit
        self.record = Path(args.record).open("w", encoding="utf-8") if args.record else None  # noqa: SIM115
        self.whole = 2
        self.upper = 0
        self.source = 0
        self.allow = not args.no_override
        self.q = {g: [0.0] * n for g, n in GROUPS.items()}
        self.target = {g: [0.0] * n for g, n in GROUPS.items()}
        self.motion = dict.fromkeys(GROUPS, 0)
        self.velocity = [0.0, 0.0, 0.0]
        self.fixed: dict[str, Any] = (
            json.loads(Path(args.states).read_text()) if args.states else {}
        )
        self.write({"robot": {"domain": args.domain, "namespace": args.namespace, "ros": args.ros}})
        self.dds = DDSInterface(
            args.domain, common.participant_qos(), args.namespace or None, args.ros
        )
        self.pubs: dict[str, Any] = {}
        self.classes: dict[str, Any] = {}
        for topic, (module, name) in common.STATE.items():
            cls, pubsub = common.types_of(module, name)
            self.classes[topic] = cls
            self.pubs[topic] = self.dds.create_publisher(
                pubsub, topic, qos_profile=PublisherQosProfile.best_effort()
            )
        self.subs = []
        for topic, (module, name) in common.COMMAND.items():
            _, pubsub = common.types_of(module, name)
            self.subs.append(
                self.dds.create_subscription(
                    pubsub,
                    topic,
                    lambda data, topic=topic: self.on_command(topic, data),
                    qos_profile=SubscriberQosProfile.best_effort(),
                )
            )

    def write(self, line: dict[str, Any]) -> None:
        if self.record is not None:
            self.record.write(json.dumps({"t": time.monotonic(), **line}) + "\n")
            self.record.flush()

    # -- commands (Fast DDS's listener thread) -------------------------------------------

    def on_command(self, topic: str, data: Any) -> None:
        fields = common.to_plain(data)  # the listener reuses `data`: copy it out now
        with self.lock:
            before = (self.whole, self.upper)
            result = self.apply(topic, fields)
            self.write({"topic": topic, "fields": fields, "result": result})
            if (self.whole, self.upper) != before:
                self.write({"fsm": [self.whole, self.upper]})

    def apply(self, topic: str, f: dict[str, Any]) -> str:
        if topic == "whole_body_fsm_state_change_cmd":
            if not 0 <= f["desired_state"] <= 11:
                return "out_of_range"
            self.whole = f["desired_state"]
            return "applied"
        if topic == "upper_body_fsm_state_change_cmd":
            if f["desired_state"] not in (0, 1, 2, 4):
                return "out_of_range"
            self.upper = f["desired_state"]
            return "applied"
        if topic == "velocity_source_cmd":
            if f["desired_source"] not in (0, 1, 2):
                return "out_of_range"
            self.source = f["desired_source"]
            return "applied"
        if topic == "velocity_cmd":
            if self.whole != 3 or self.source != 2:
                return "ignored_fsm"
            self.velocity = [f["vx"], f["vy"], f["yaw"]]
            return "applied"
        if topic == "robot_control_group_cmd":
            return self.group_cmd(f["group_cmd"])
        return "recorded"

    def group_cmd(self, cmds: list[dict[str, Any]]) -> str:
        if self.whole not in (10, 11):
            return "ignored_fsm"
        results = []
        for c in cmds:
            g = c["group_name"]
            if g not in GROUPS or (self.whole == 11 and g in LEGS):
                results.append(f"{g}:refused")
            elif self.motion[g] == 3:
                results.append(f"{g}:error")
            elif c["group_motion_state"] == 2:
                self.target[g] = list(self.q[g])
                self.motion[g] = 2
                results.append(f"{g}:held")
            elif len(c["position"]) != GROUPS[g] or not all(map(math.isfinite, c["position"])):
                results.append(f"{g}:bad_position")
            else:
                self.target[g] = list(c["position"])
                self.motion[g] = 1
                results.append(f"{g}:moving")
        return ",".join(results) or "empty"

    # -- faults (noted by signals, applied by the main loop) ------------------------------

    def fsm9(self, *_: object) -> None:
        with self.lock:
            self.whole = 9
            for g in GROUPS:
                self.target[g] = list(self.q[g])
                if self.motion[g] != 3:
                    self.motion[g] = 2
            self.write({"fault": "fsm9"})
            self.write({"fsm": [self.whole, self.upper]})

    def group_error(self, *_: object) -> None:
        with self.lock:
            self.motion["left_manipulator"] = 3
            self.target["left_manipulator"] = list(self.q["left_manipulator"])
            self.write({"fault": "group_error", "group": "left_manipulator"})

    # -- state ---------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        with self.lock:
            for g in GROUPS:
                if self.whole == 9:
                    continue
                q, tgt = self.q[g], self.target[g]
                for i in range(len(q)):
                    q[i] += max(-SPEED * dt, min(SPEED * dt, tgt[i] - q[i]))
                if self.motion[g] == 1 and all(
                    abs(a - b) < 1e-9 for a, b in zip(q, tgt, strict=True)
                ):
                    self.motion[g] = 0

    def states(self, all_topics: bool) -> dict[str, dict[str, Any]]:
        now = time.time()
        header = {"stamp": {"sec": int(now), "nanosec": int((now % 1) * 1e9)}, "frame_id": ""}
        with self.lock:
            out: dict[str, dict[str, Any]] = {
                "aurora_state": {
                    "header": header,
                    "velocity_command_source": self.source,
                    "whole_body_fsm_state": self.whole,
                    "upper_body_fsm_state": self.upper,
                    "allow_upper_body_override": self.allow,
                },
                "robot_control_group_state": {
                    "header": header,
                    "group_motion_state": [self.motion[g] for g in GROUPS],
                    "group_state": [
                        {
                            "group_name": g,
                            "joint_position": list(self.q[g]),
                            "joint_velocity": [0.0] * n,
                            "joint_effort": [0.0] * n,
                        }
                        for g, n in GROUPS.items()
                    ],
                    "stable_level": 1,
                },
            }
        if all_topics:
            out["robot_stand_pose_state"] = {"header": header, "stable_level": 1}
            out["robot_cartesian_state"] = {"header": header, "group_motion_state": [0, 0]}
            out["robot_motor_cfg_group_state"] = {"header": header}
            out["base_data_pub"] = {"header": header, "quat_xyzw": [0.0, 0.0, 0.0, 1.0]}
            out["true_data_pub"] = {"header": header}
            out["contact_data_pub"] = {"header": header, "contact_prob": [1.0, 1.0]}
        return out

    def publish(self, all_topics: bool) -> None:
        samples = self.fixed if self.fixed else self.states(all_topics)
        for topic, fields in samples.items():
            self.pubs[topic].publish(common.fill(self.classes[topic](), fields))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", type=int, default=123)
    parser.add_argument("--namespace", default="")
    parser.add_argument("--record", default="")
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--states", default="")
    parser.add_argument("--no-override", action="store_true")
    parser.add_argument("--ros", action="store_true", help="the vendor's ROS-compatible naming")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    robot = Robot(args)
    # A handler runs on the main thread between bytecodes, maybe inside ``robot.lock``
    # (not reentrant): it only notes the fault, and the loop below applies it.
    pending: list[Callable[[], None]] = []
    signal.signal(signal.SIGUSR1, lambda *_: pending.append(robot.fsm9))
    signal.signal(signal.SIGUSR2, lambda *_: pending.append(robot.group_error))
    print(json.dumps({"ready": True, "pid": __import__("os").getpid()}), flush=True)
    period = 1.0 / args.rate
    tick = 0
    next_t = time.monotonic()
    while not stop.is_set():
        while pending:
            pending.pop(0)()
        robot.step(period)
        robot.publish(all_topics=tick % 10 == 0)
        tick += 1
        next_t += period
        stop.wait(max(0.0, next_t - time.monotonic()))
    robot.write({"end": True})
    robot.dds.close()


if __name__ == "__main__":
    main()
