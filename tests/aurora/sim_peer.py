"""A controller of the simulated Aurora on the wire module, for tests/aurora/test_sim.py.

Run under .venv-aurora: ``sim_peer.py --domain N --port P SCENARIO``; prints one JSON line
of what it observed (the test asserts on it and on the sim's record).

- ``rules``: group command in FSM 2 (ignored), FSM 11 confirmed, left_manipulator moved to
  a target, a leg refused in 11, the arm held (2); velocity ignored outside FSM 3, walked in
  FSM 3 with source 2;
- ``faults``: FSM 9 from the control port freezes a moving arm and refuses group commands;
  a group error shows 3; silence stops aurora_state; an undecodable sample raises in take();
- ``vendor`` (``--robot-pid``): against tests/aurora_vendor/robot.py, FSM 11 and an arm
  moving, then FSM 9 raised by that robot (SIGUSR1) seen on our side.

Positions are compared within ``TOLERANCE``: the sim's joints are the GR-3's model in
MuJoCo following the firmware's setpoints (a PD loop settles, it does not land on the bit).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from executive.robots.aurora.sim import control
from executive.robots.aurora.wire import types as idl
from executive.robots.aurora.wire.config import WireConfig
from executive.robots.aurora.wire.node import AuroraNode, header, is_valid

TOLERANCE = 2e-3  # rad


def near(a: list[float], b: list[float], tol: float = TOLERANCE) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


class Peer:
    def __init__(self, domain: int, port: int) -> None:
        self.node = AuroraNode(WireConfig(domain=domain))
        self.port = port
        self.state = self.node.reader("aurora_state")
        self.groups = self.node.reader("robot_control_group_state")
        self.base = self.node.reader("base_data_pub")
        self.w = {t: self.node.writer(t) for t in (
            "whole_body_fsm_state_change_cmd", "velocity_source_cmd", "velocity_cmd",
            "robot_control_group_cmd")}  # fmt: skip
        self.last: dict[str, Any] = {}
        assert self.wait(lambda: all(w.get_matched_subscriptions() for w in self.w.values()))

    def poll(self) -> None:
        for key, reader in (("state", self.state), ("groups", self.groups), ("base", self.base)):
            for s in reader.take(N=32):
                if is_valid(s):
                    self.last[key] = s

    def wait(self, pred: Callable[[], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if isinstance(self, Peer) and hasattr(self, "last"):
                self.poll()
            if pred():
                return True
            time.sleep(0.01)
        return False

    def fsm(self) -> int:
        return int(self.last["state"].whole_body_fsm_state) if "state" in self.last else -1

    def q(self, group: str) -> list[float]:
        for g in self.last["groups"].group_state:
            if g.group_name == group:
                return list(g.joint_position)
        raise KeyError(group)

    def motion(self, group: str) -> int:
        names = [g.group_name for g in self.last["groups"].group_state]
        return int(self.last["groups"].group_motion_state[names.index(group)])

    def set_fsm(self, n: int) -> bool:
        self.w["whole_body_fsm_state_change_cmd"].write(
            idl.WholeBodyFsmStateChangeCmd(header=header(), desired_state=n)
        )
        return self.wait(lambda: self.fsm() == n)

    def group(self, name: str, q: list[float], motion: int = 1) -> None:
        cmd = idl.ControlGroupCmd(group_name=name, group_motion_state=motion, position=q)
        self.w["robot_control_group_cmd"].write(
            idl.RobotControlGroupCmd(header=header(), group_cmd=[cmd])
        )


def rules(p: Peer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    assert p.wait(lambda: "groups" in p.last and p.fsm() >= 0)
    out["fsm_start"] = p.fsm()
    for _ in range(6):  # the sim's best-effort reader may not have matched the first yet
        p.group("left_manipulator", [0.2] * 7)
        time.sleep(0.05)
    out["moved_in_fsm2"] = not near(p.q("left_manipulator"), [0.0] * 7)
    out["fsm11"] = p.set_fsm(11)
    target = [0.1, -0.1, 0.2, -0.2, 0.05, 0.0, 0.15]
    p.group("left_manipulator", target)
    out["reached"] = p.wait(lambda: near(p.q("left_manipulator"), target))
    p.group("left_leg", [0.1] * 6)
    time.sleep(0.3)
    out["leg_moved_in_11"] = not near(p.q("left_leg"), [0.0] * 6)
    p.group("left_manipulator", [0.8] * 7)
    time.sleep(0.1)
    p.group("left_manipulator", [], motion=2)
    out["held"] = p.wait(lambda: p.motion("left_manipulator") == 2)
    held = p.q("left_manipulator")
    time.sleep(0.3)
    out["still_after_hold"] = near(p.q("left_manipulator"), held)
    p.w["velocity_cmd"].write(idl.VelocityCmd(header=header(), vx=0.5, duration=2.0))
    time.sleep(0.3)
    out["walked_in_11"] = p.wait(lambda: "base" in p.last, 2) and p.last["base"].pos_W[0] != 0.0
    out["fsm3"] = p.set_fsm(3)
    p.w["velocity_source_cmd"].write(idl.VelocitySourceCmd(header=header(), desired_source=2))
    assert p.wait(lambda: p.last["state"].velocity_command_source == 2)
    p.w["velocity_cmd"].write(idl.VelocityCmd(header=header(), vx=0.5, duration=2.0))
    out["walked"] = p.wait(lambda: p.last["base"].pos_W[0] > 0.05)
    return out


def faults(p: Peer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    assert p.wait(lambda: "groups" in p.last and p.fsm() >= 0)
    assert p.set_fsm(11)
    p.group("left_manipulator", [1.0] * 7)
    assert p.wait(lambda: p.q("left_manipulator")[0] > 0.1)
    control.request(p.port, {"fault": "fsm9"})
    out["fsm9"] = p.wait(lambda: p.fsm() == 9)
    time.sleep(0.05)  # the group state of that tick too (a topic of its own: maybe not yet read)
    p.poll()
    frozen = p.q("left_manipulator")
    p.group("left_manipulator", [1.0] * 7)
    time.sleep(0.3)
    p.poll()
    out["frozen"] = near(p.q("left_manipulator"), frozen) and frozen[0] < 1.0
    out["motion_after_fsm9"] = p.motion("left_manipulator")
    out["fsm_cmd_refused"] = not p.set_fsm(11)
    control.request(p.port, {"clear": True})
    control.request(p.port, {"fault": "group_error", "group": "right_manipulator"})
    out["group_error"] = p.wait(lambda: p.motion("right_manipulator") == 3)
    control.request(p.port, {"fault": "silence", "topics": ["aurora_state"], "duration": 1.0})
    time.sleep(0.2)
    p.state.take(N=64)
    time.sleep(0.5)
    out["silent_samples"] = len([s for s in p.state.take(N=64) if is_valid(s)])
    out["heard_again"] = p.wait(lambda: len(p.state.read(N=1)) > 0, 3)
    control.request(p.port, {"fault": "undecodable", "topic": "aurora_state", "count": 3})
    errors = []
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not errors:
        try:
            p.state.take(N=64)
        except Exception as e:  # noqa: BLE001 - what an undecodable sample raises is the finding
            errors.append(type(e).__name__)
        time.sleep(0.005)
    out["undecodable_raised"] = errors
    return out


def vendor(p: Peer, robot_pid: int) -> dict[str, Any]:
    """Against tests/aurora_vendor/robot.py: FSM 11, an arm moving, then FSM 9 raised by the
    robot (SIGUSR1 to it) seen here, and a group command after it."""
    out: dict[str, Any] = {}
    assert p.wait(lambda: "groups" in p.last and p.fsm() >= 0)
    out["fsm11"] = p.set_fsm(11)
    p.group("left_manipulator", [1.0] * 7)
    out["moving"] = p.wait(lambda: p.q("left_manipulator")[0] > 0.1)
    os.kill(robot_pid, signal.SIGUSR1)
    out["fsm9"] = p.wait(lambda: p.fsm() == 9)
    frozen = p.q("left_manipulator")
    p.group("left_manipulator", [1.0] * 7)
    time.sleep(0.3)
    p.poll()
    out["frozen"] = near(p.q("left_manipulator"), frozen)
    out["motion_after_fsm9"] = p.motion("left_manipulator")
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--port", type=int, default=0, help="the sim's control port")
    parser.add_argument("--robot-pid", type=int, default=0, help="the vendor robot's pid")
    parser.add_argument("scenario", choices=["rules", "faults", "vendor"])
    args = parser.parse_args()
    peer = Peer(args.domain, args.port)
    if args.scenario == "vendor":
        out = vendor(peer, args.robot_pid)
    else:
        out = {"rules": rules, "faults": faults}[args.scenario](peer)
    print(json.dumps(out))
    peer.node.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
