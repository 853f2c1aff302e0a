"""The simulated Aurora on the wire: its state topics out, its command topics in.

One CycloneDDS 11 participant (``wire.node.AuroraNode``); writers for the eight state topics
the vendor's ``AuroraClient`` waits for, readers for every command topic. One loop: it waits
on the command readers (a WaitSet) until the next state tick, applies what came to the
model in arrival order, records it, and at each tick advances the model and publishes
``aurora_state`` and ``robot_control_group_state`` (the others every tenth tick). Faults
come from the control port (``control``) on a thread of their own, under the same lock.
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cyclonedds.core import InstanceState, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.util import duration

from executive.robots.aurora.sim.model import AuroraModel
from executive.robots.aurora.sim.record import Recorder
from executive.robots.aurora.wire import types as idl
from executive.robots.aurora.wire.config import GROUP_NAMES, WireConfig
from executive.robots.aurora.wire.convert import plain
from executive.robots.aurora.wire.node import AuroraNode, header, is_valid
from executive.robots.aurora.wire.topics import COMMAND, STATE, type_for

if TYPE_CHECKING:
    from executive.robots.simkit.physics import ContactEvent

FAST_TOPICS = ("aurora_state", "robot_control_group_state")
BROKEN_MARK = "UNDECODABLE!"


def _broken(sample: Any) -> Any:
    """``sample`` serializing with invalid UTF-8 in ``header.frame_id`` (same length)."""
    sample.header.frame_id = BROKEN_MARK
    serialize = sample.serialize

    def serialize_broken(**kwargs: Any) -> bytes:
        data: bytes = serialize(**kwargs)
        return data.replace(BROKEN_MARK.encode(), b"\xff" * len(BROKEN_MARK))

    sample.serialize = serialize_broken
    return sample


class SimNode:
    """The model on the wire, with its record and its control port."""

    def __init__(
        self,
        model: AuroraModel,
        config: WireConfig,
        *,
        rate: float,
        record: str | None,
        control_port: int,
    ) -> None:
        self.model = model
        self.config = config
        self.period = 1.0 / rate
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.node = AuroraNode(config)
        self.writers = {topic: self.node.writer(topic) for topic in STATE}
        self.readers = {topic: self.node.reader(topic, depth=64) for topic in COMMAND}
        self.waitset = WaitSet(self.node.participant)
        for reader in self.readers.values():
            self.waitset.attach(
                ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any)
            )
        self.counters = dict.fromkeys(COMMAND, 0)
        self.silent: dict[str, float] = {}  # topic -> monotonic end (inf: until cleared)
        self.undecodable: dict[str, int] = {}  # topic -> samples left to break
        now = time.monotonic()
        self.recorder = (
            Recorder(
                record,
                {
                    "pid": os.getpid(),
                    "domain": config.domain,
                    "namespace": config.namespace,
                    "ros_compatible": config.ros_compatible,
                    "interface": config.interface,
                    "groups": {name: len(g.q) for name, g in model.groups.items()},
                    "physics": "mujoco" if model.body is not None else "kinematic",
                    "modelled": sorted(model.body.modelled) if model.body is not None else [],
                },
                now,
            )
            if record
            else None
        )
        self.control = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.control.bind(("127.0.0.1", control_port))
        self.control.settimeout(0.2)
        self.control_port: int = self.control.getsockname()[1]

    # -- commands ------------------------------------------------------------------------

    def take_commands(self) -> None:
        for topic, reader in self.readers.items():
            for sample in reader.take(N=64):
                if not is_valid(sample):
                    continue
                now = time.monotonic()
                fields = plain(sample)
                info = getattr(sample, "sample_info", None)
                sent = (
                    now - (time.time() - info.source_timestamp / 1e9) if info is not None else None
                )
                with self.lock:
                    before = (self.model.whole, self.model.upper)
                    result = self.model.command(topic, fields, now)
                    self.counters[topic] += 1
                    self.record(
                        now, {"sent": sent, "topic": topic, "fields": fields, "result": result}
                    )
                    self._fsm_changed(before, now)

    def _fsm_changed(self, before: tuple[int, int], now: float) -> None:
        after = (self.model.whole, self.model.upper)
        if after != before:
            self.record(now, {"fsm": list(after)})

    def record(self, now: float, line: Mapping[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.add(now, line)

    def contact(self, now: float, event: ContactEvent) -> None:
        """A contact of the body began or ended (``sim.body``): into the record, with the
        joint that made it."""
        body = self.model.body
        joint = body.culprit(event) if body is not None else None
        self.record(now, {"contact": {**event.as_dict(), "joint": joint}})

    # -- state ---------------------------------------------------------------------------

    def publish(self, now: float, tick: int) -> None:
        with self.lock:
            samples = self.states(now, all_topics=tick % 10 == 0)
            for topic in list(self.silent):
                if now >= self.silent[topic]:
                    del self.silent[topic]
                    self.record(
                        now, {"fault": {"action": "expired", "kind": "silence", "topic": topic}}
                    )
            for topic, sample in samples.items():
                if topic in self.silent:
                    continue
                if self.undecodable.get(topic, 0) > 0:
                    self.undecodable[topic] -= 1
                    self.writers[topic].write(_broken(sample))
                else:
                    self.writers[topic].write(sample)

    def states(self, now: float, all_topics: bool) -> dict[str, Any]:
        m = self.model
        h = header()
        # the variant's classes (ROS twins included): built by keyword, typed by cyclonedds
        cls: dict[str, Any] = {topic: type_for(self.config, topic) for topic in STATE}
        out: dict[str, Any] = {
            "aurora_state": cls["aurora_state"](
                header=h,
                velocity_command_source=m.source,
                whole_body_fsm_state=m.whole,
                upper_body_fsm_state=m.upper,
                allow_upper_body_override=m.allow_override,
            ),
            "robot_control_group_state": cls["robot_control_group_state"](
                header=h,
                group_motion_state=[m.groups[g].motion for g in m.groups],
                group_state=[
                    idl.ControlGroupState(
                        group_name=name,
                        joint_position=list(g.q),
                        joint_velocity=list(g.dq),
                        joint_effort=[0.0] * len(g.q),
                    )
                    for name, g in m.groups.items()
                ],
                stable_level=1,
            ),
        }
        if not all_topics:
            return out
        b = m.base
        half = b.yaw / 2.0
        quat_xyzw = [0.0, 0.0, math.sin(half), math.cos(half)]
        vel_w = [b.v[0] * math.cos(b.yaw) - b.v[1] * math.sin(b.yaw),
                 b.v[0] * math.sin(b.yaw) + b.v[1] * math.cos(b.yaw), 0.0]  # fmt: skip
        out["base_data_pub"] = cls["base_data_pub"](
            header=h,
            quat_xyzw=quat_xyzw,
            quat_wxyz=[quat_xyzw[3], *quat_xyzw[:3]],
            rpy=[0.0, 0.0, b.yaw],
            omega_W=[0.0, 0.0, b.v[2]],
            acc_W=[0.0, 0.0, 0.0],
            omega_B=[0.0, 0.0, b.v[2]],
            acc_B=[0.0, 0.0, 0.0],
            vel_W=vel_w,
            pos_W=[b.x, b.y, 0.0],
            vel_B=[b.v[0], b.v[1], 0.0],
        )
        weight = [0.0, 0.0, 320.0, 0.0, 0.0, 0.0]  # ~65 kg over two feet
        out["contact_data_pub"] = cls["contact_data_pub"](
            header=h, contact_force=weight * 2, contact_prob=[1.0, 1.0]
        )
        out["true_data_pub"] = cls["true_data_pub"](
            header=h,
            vel_B=[b.v[0], b.v[1], 0.0],
            vel_W=vel_w,
            pos_W=[b.x, b.y, 0.0],
            contact_fz=[320.0, 320.0],
            contact_prob=[1.0, 1.0],
        )
        out["robot_stand_pose_state"] = cls["robot_stand_pose_state"](
            header=h,
            delta_z=m.stand[0],
            delta_pitch=m.stand[1],
            delta_yaw=m.stand[2],
            stable_level=1,
        )
        arms = [g for g in ("left_manipulator", "right_manipulator") if g in m.groups]
        out["robot_cartesian_state"] = cls["robot_cartesian_state"](
            header=h,
            coordinate_system=0,
            group_motion_state=[m.groups[g].motion for g in arms],
            cartesian_state=[
                idl.CartesianState(
                    group_name=g,
                    pose=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                    twist=[0.0] * 6,
                    wrench=[0.0] * 6,
                )
                for g in arms
            ],
            stable_level=1,
        )
        out["robot_motor_cfg_group_state"] = cls["robot_motor_cfg_group_state"](
            header=h,
            group_state=[
                idl.MotorCfgGroupState(
                    group_name=name,
                    mode=idl.MotorMode(int(g.gains.get("mode", idl.MotorMode.PD.value))),
                    motor_error=[0] * len(g.q),
                    pos_kp=list(g.gains.get("pos_kp", [])),
                    pos_ki=list(g.gains.get("pos_ki", [])),
                    pos_kd=list(g.gains.get("pos_kd", [])),
                    pd_kp=list(g.gains.get("pd_kp", [])),
                    pd_kd=list(g.gains.get("pd_kd", [])),
                )
                for name, g in m.groups.items()
            ],
        )
        return out

    # -- control -------------------------------------------------------------------------

    def serve_control(self) -> None:
        """The control port's loop (its own thread): one answer per datagram."""
        while not self.stop.is_set():
            try:
                data, peer = self.control.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                message = json.loads(data)
                if not isinstance(message, dict):
                    raise ValueError("a request is a JSON object")
                with self.lock:
                    self.handle(message, time.monotonic())
                    answer: dict[str, Any] = {"ok": True, "status": self.status()}
            except (ValueError, KeyError, TypeError) as e:
                answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            self.control.sendto(json.dumps(answer).encode(), peer)

    def handle(self, message: Mapping[str, Any], now: float) -> None:
        """Apply one control request (under the lock); ValueError/KeyError for a bad one."""
        if message.get("clear"):
            self.model.clear()
            self.silent.clear()
            self.undecodable.clear()
            self.record(now, {"fault": {"action": "clear", "kind": "all"}})
            return
        kind = message.get("fault")
        if kind is None:
            if message.get("status"):
                return
            raise ValueError(f"unknown request {sorted(message)}: fault, clear or status")
        before = (self.model.whole, self.model.upper)
        if kind == "fsm9":
            self.model.raise_fsm9()
        elif kind == "group_error":
            group = str(message.get("group", "left_manipulator"))
            if group not in self.model.groups:
                raise ValueError(f"group: {group!r} is not one of {', '.join(self.model.groups)}")
            self.model.raise_group_error(group)
        elif kind == "silence":
            topics = message.get("topics") or list(STATE)
            unknown = [t for t in topics if t not in STATE]
            if unknown:
                raise ValueError(f"topics: {unknown} are not state topics ({', '.join(STATE)})")
            d = message.get("duration")
            end = math.inf if d is None else now + float(d)
            self.silent.update(dict.fromkeys(topics, end))
        elif kind == "undecodable":
            topic = str(message.get("topic", "aurora_state"))
            if topic not in STATE:
                raise ValueError(f"topic: {topic!r} is not a state topic ({', '.join(STATE)})")
            self.undecodable[topic] = int(message.get("count", 1))
        else:
            raise ValueError(
                f"fault: {kind!r} is not one of fsm9, group_error, silence, undecodable"
            )
        self.record(now, {"fault": {"action": "set", "kind": kind, **message}})
        self._fsm_changed(before, now)

    def status(self) -> dict[str, Any]:
        return {
            **self.model.status(),
            "silent": sorted(self.silent),
            "undecodable": dict(self.undecodable),
            "counters": dict(self.counters),
        }

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        control = threading.Thread(target=self.serve_control, name="control", daemon=True)
        control.start()
        next_tick = time.monotonic()
        last = next_tick
        next_flush = next_tick + 0.1
        tick = 0
        try:
            while not self.stop.is_set():
                wait = next_tick - time.monotonic()
                if wait > 0:
                    self.waitset.wait(duration(seconds=wait))
                self.take_commands()
                now = time.monotonic()
                if now >= next_tick:
                    with self.lock:
                        for event in self.model.step(now - last, now):
                            self.contact(now, event)
                    last = now
                    self.publish(now, tick)
                    tick += 1
                    next_tick += self.period
                    if next_tick < now:  # fell behind (a loaded machine): no burst
                        next_tick = now + self.period
                if now >= next_flush and self.recorder is not None:
                    with self.lock:
                        self.recorder.flush()
                    next_flush = now + 0.1
        finally:
            self.close()

    def close(self) -> None:
        self.stop.set()
        self.control.close()
        if self.recorder is not None:
            with self.lock:
                self.recorder.add(time.monotonic(), {"counters": dict(self.counters)})
                self.recorder.close()
        self.node.close()


def group_sizes(spec: str) -> dict[str, int]:
    """``left_hand=6,right_hand=12`` over the GR-3's sizes; ValueError naming a bad item."""
    from executive.robots.aurora.wire.config import GR3_GROUP_SIZES

    sizes = dict(GR3_GROUP_SIZES)
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, sep, n = item.partition("=")
        if not sep or name not in GROUP_NAMES or not n.isdigit():
            raise ValueError(
                f"--groups: {item!r} is not GROUP=SIZE with GROUP one of {GROUP_NAMES}"
            )
        sizes[name] = int(n)
    return sizes
