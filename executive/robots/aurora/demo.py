"""``make demo PROFILE=aurora``: the executive driving the simulated Fourier Aurora.

Everything runs for real on a leased loopback DDS domain, as separate processes: the
simulated Aurora (``.venv-aurora/bin/python -m executive.robots.aurora.sim``, cyclonedds 11)
and the service (``atom-executive run``, ``profile: aurora``, ``missions_dir:
missions/aurora``), whose adapter starts its own bridge process on cyclonedds 11. The demo
runs ``arm_hand_walk`` to SUCCEEDED, then ``arm_wave`` and raises FSM 9 (security
protection) in the sim mid-wave: the service must SAFE_STOP naming it, the sim's record
must show the hold (``group_motion_state`` 2) and nothing moving after it; the sim is then
commanded out of FSM 9 and the reset brings the executive back to IDLE. Exit 0 only if every
check held.

``RobotProcess`` (a robot process: this sim, or in the tests the robot built from the
vendor's wheel), ``start`` and ``Record`` are the harness the integration tests and the
bench share.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from executive.harness.demokit import Demo, accepted, say
from executive.harness.stack import ROOT, Stack, running_stack

MISSIONS = ROOT / "missions" / "aurora"
SIM_PYTHON = ROOT / ".venv-aurora" / "bin" / "python"
GROUP_CMD = "robot_control_group_cmd"
MOVING, STOPPED = 1, 2


class RobotProcess:
    """A robot process (the simulated Aurora, or another peer with the same ready line and
    record format) with its JSON-lines record; ``fsm9()`` raises security protection."""

    def __init__(
        self, argv: Sequence[str], record: Path, log: Path, env: dict[str, str] | None = None
    ) -> None:
        self.record_path = record
        self._log: IO[bytes] = log.open("ab")
        self.proc = subprocess.Popen(
            [*argv, "--record", str(record)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**os.environ, **(env or {})},
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError(f"the robot did not start; see {log}")
        self.ready: dict[str, Any] = json.loads(line)
        self.pid = self.proc.pid

    def fsm9(self) -> float:
        """Security protection raised; when it was asked. The simulated Aurora through its
        control port; another robot (the vendor-built one) by SIGUSR1. Not the sim's SIGUSR1:
        its handler takes the lock its main loop may hold, and then waits for it forever."""
        t = time.monotonic()
        if "control_port" in self.ready:
            self.control({"fault": "fsm9"})
        else:
            self.proc.send_signal(signal.SIGUSR1)
        return t

    def control(self, message: dict[str, Any]) -> dict[str, Any]:
        """The simulated Aurora's control port (faults, clear, status)."""
        from executive.robots.aurora.sim.control import request

        return request(int(self.ready["control_port"]), message)

    def records(self) -> Record:
        return Record.read(self.record_path)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()


def sim(stack: Stack, *args: str) -> RobotProcess:
    """The simulated Aurora on ``stack``'s domain."""
    argv = [str(SIM_PYTHON), "-m", "executive.robots.aurora.sim", "--domain", str(stack.domain)]
    return RobotProcess(
        [*argv, *args], stack.workdir / "robot.jsonl", stack.log_path("robot"), stack.env()
    )


@dataclass(frozen=True)
class Record:
    """A robot's record: the commands it took (time, topic, fields, result) and its faults."""

    commands: list[tuple[float, str, dict[str, Any], str]]
    faults: list[tuple[float, str]]

    @classmethod
    def read(cls, path: Path) -> Record:
        commands, faults = [], []
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a line being written
            if "topic" in line:
                commands.append((line["t"], line["topic"], line["fields"], str(line["result"])))
            elif "fault" in line:
                fault = line["fault"]
                if isinstance(fault, dict):  # the sim's: {action, kind, ...}
                    if fault.get("action") == "set":
                        faults.append((line["t"], str(fault["kind"])))
                else:  # the vendor robot's: the kind
                    faults.append((line["t"], str(fault)))
        return cls(commands, faults)

    def groups(self, after: float = 0.0) -> list[tuple[float, list[dict[str, Any]]]]:
        """Group commands taken after ``after``: (time, each group's command)."""
        return [
            (t, f["group_cmd"])
            for t, topic, f, _ in self.commands
            if topic == GROUP_CMD and t > after
        ]

    def moving(self, after: float = 0.0) -> list[float]:
        """When a command carrying a moving group arrived (after ``after``)."""
        return [
            t
            for t, cmds in self.groups(after)
            if any(c["group_motion_state"] == MOVING for c in cmds)
        ]

    def holds(self, after: float = 0.0) -> list[float]:
        """When a command holding every group it carries arrived (after ``after``)."""
        return [
            t
            for t, cmds in self.groups(after)
            if cmds and all(c["group_motion_state"] == STOPPED for c in cmds)
        ]

    def taken(self, topic: str, after: float = 0.0) -> list[tuple[float, dict[str, Any], str]]:
        return [(t, f, r) for t, tp, f, r in self.commands if tp == topic and t > after]

    def fault_at(self, kind: str) -> float | None:
        return next((t for t, k in self.faults if k == kind), None)


def start(stack: Stack, robot: RobotProcess | None = None, **config: Any) -> RobotProcess:
    """The simulated Aurora (unless ``robot`` is given), then the service on ``stack``
    (profile aurora, missions/aurora), ready: every state source heard."""
    robot = robot or sim(stack)
    try:
        stack.write_config(**{"profile": "aurora", "missions_dir": str(MISSIONS), **config})
        stack.start_service(ready=True)
    except BaseException:
        robot.close()
        raise
    return robot


def bridge_pid(service_pid: int) -> int | None:
    """The service's bridge process (its child running the bridge module), if any."""
    for child in Path(f"/proc/{service_pid}/task").glob("*/children"):
        for pid in child.read_text().split():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"executive.robots.aurora.bridge" in cmdline:
                return int(pid)
    return None


def main(profile: str = "aurora") -> int:
    if profile != "aurora":
        print(f"the Aurora demo runs profile aurora, not {profile!r}", file=sys.stderr)  # noqa: T201
        return 2
    demo = Demo()
    with running_stack() as stack:
        say(
            f"starting the simulated Aurora (cyclonedds 11) and the executive on domain {stack.domain}"
        )
        robot = start(stack)
        try:
            run(demo, stack, robot)
        finally:
            robot.close()
    failed = [what for what, ok in demo.checks if not ok]
    say(f"{len(demo.checks) - len(failed)} of {len(demo.checks)} checks held")
    return 1 if failed or not demo.checks else 0


def run(demo: Demo, stack: Stack, robot: RobotProcess) -> None:
    client = stack.client
    status = client.status(30)
    demo.check(
        f"executive ready: {status.state}, interface {status.interface_variant}, profile "
        f"{status.profile}, every state source heard",
        status.state == "IDLE" and status.profile == "aurora" and not status.not_ready,
    )

    say("operator: start arm_hand_walk (control, arm and hand, release, walk, stand)")
    t0 = time.monotonic()
    reply = client.request("start", {"mission": "arm_hand_walk", "params": {"walk_seconds": 1.5}})
    demo.check(f"start accepted (run {reply.message})", accepted(client, reply))
    done = demo.follow(client, lambda s: s.state != "RUNNING", 60)
    demo.check("arm_hand_walk SUCCEEDED", done is not None and done.state == "SUCCEEDED")
    time.sleep(0.3)  # the sim flushes its record every 100 ms
    rec = robot.records()
    whole = [
        f["desired_state"]
        for _, f, r in rec.taken("whole_body_fsm_state_change_cmd", t0)
        if r == "applied"
    ]
    demo.check(
        f"the robot took whole-body FSMs 11, 2, 3, 2 in order: {whole}", whole == [11, 2, 3, 2]
    )
    arm = [c for _, cmds in rec.groups(t0) for c in cmds if c["group_name"] == "left_manipulator"]
    demo.check(f"the left arm was commanded ({len(arm)} commands)", len(arm) > 10)
    hand = [c for _, cmds in rec.groups(t0) for c in cmds if c["group_name"] == "left_hand"]
    demo.check(f"the left hand was commanded ({len(hand)} commands)", len(hand) > 10)
    walk = [f for _, f, _ in rec.taken("velocity_cmd", t0)]
    forward = [i for i, f in enumerate(walk) if f["vx"] > 0]
    demo.check(
        f"the robot walked ({len(forward)} velocity commands forward) and was sent zero after",
        bool(forward) and any(f["vx"] == 0.0 for f in walk[forward[-1] :]),
    )

    say("operator: start arm_wave; FSM 9 (security protection) raised by the robot mid-wave")
    t1 = time.monotonic()
    reply = client.request("start", {"mission": "arm_wave", "params": {"waves": 10}})
    demo.check("start accepted", accepted(client, reply))
    waving = stack.wait_for(lambda: len(robot.records().moving(t1)) > 20, 15)
    demo.check("the robot receives moving arm commands", waving)
    t_fault = robot.fsm9()
    stopped = client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    demo.check("SAFE_STOP", stopped is not None)
    if stopped is not None:
        demo.check(f"cause: {stopped.safety_reason}", "estop" in stopped.safety_reason)
    time.sleep(0.5)
    rec = robot.records()
    raised = rec.fault_at("fsm9") or t_fault
    holds = rec.holds(raised)
    demo.check(
        f"the hold reached the robot {1e3 * (holds[0] - raised):.1f} ms after the fault"
        if holds
        else "the hold reached the robot",
        bool(holds),
    )
    late = rec.moving(holds[0]) if holds else []
    demo.check(f"nothing moving reached the robot after the hold ({len(late)})", not late)

    say("the site clears the protection (FSM 2 from the robot's pendant); operator: reset")
    robot.control({"clear": True})
    out = client.request("reset")
    demo.check(f"reset refused while the robot is in FSM 9: {out.message}", out.code != 0)
    pendant = Pendant(stack)
    try:
        answer = leave_fsm9(stack, pendant)
    finally:
        pendant.close()
    demo.check(f"reset accepted once the robot left FSM 9: {answer}", answer is not None)
    demo.check(
        "IDLE after the reset", client.wait_status(lambda s: s.state == "IDLE", 5) is not None
    )


class Pendant:
    """What the robot's own pendant would do: whole-body FSM commands from a plain cyclonedds
    11 writer in .venv-aurora (no project code but the wire's types), e.g. out of FSM 9."""

    CODE = (
        "import sys\n"
        "from executive.robots.aurora.wire.config import WireConfig\n"
        "from executive.robots.aurora.wire.node import AuroraNode, header\n"
        "from executive.robots.aurora.wire import types as T\n"
        "n = AuroraNode(WireConfig(domain=int(sys.argv[1])))\n"
        "w = n.writer('whole_body_fsm_state_change_cmd')\n"
        "print('ready', flush=True)\n"
        "for line in sys.stdin:\n"
        "    w.write(T.WholeBodyFsmStateChangeCmd(header=header(), desired_state=int(line)))\n"
        "n.close()\n"
    )

    def __init__(self, stack: Stack) -> None:
        self.proc = subprocess.Popen(
            [str(SIM_PYTHON), "-c", self.CODE, str(stack.domain)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=stack.env(),
            text=True,
        )
        assert self.proc.stdout is not None
        self.proc.stdout.readline()

    def whole(self, state: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{state}\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def leave_fsm9(stack: Stack, pendant: Pendant, timeout: float = 5.0) -> str | None:
    """The robot commanded out of FSM 9 (to 2) until the executive's reset is accepted: its
    answer, or None if it never was."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pendant.whole(2)
        reply = stack.client.request("reset")
        if reply.code == 0:
            return str(reply.message)
        time.sleep(0.2)
    return None


if __name__ == "__main__":
    sys.exit(main())
