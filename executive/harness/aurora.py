"""The simulated Fourier Aurora and its executive as processes, for the demo, the integration
tests and the bench: ``RobotProcess`` (a robot process: the simulated Aurora in
.venv-aurora, or in the tests the robot built from the vendor's wheel), ``sim``, ``start``
(the service on its loopback domain), ``Record`` (what the robot received), ``bridge_pid``
(the service's wire child) and ``Pendant`` (the robot's own pendant: whole-body FSM
commands from a plain cyclonedds 11 writer).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from executive.harness.stack import ROOT, Stack
from executive.robots.simkit import realtime

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
            realtime.command([*argv, "--record", str(record)]),  # as a robot runs: its own CPU
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
    """A robot's record: the commands it took (time, topic, fields, result) and its faults;
    ``sent``: each command's writer's timestamp where the robot recorded one (the sim does,
    on the same monotonic clock), else when it was taken."""

    commands: list[tuple[float, str, dict[str, Any], str]]
    faults: list[tuple[float, str]]
    sent: list[float] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Record:
        commands, faults, sent = [], [], []
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a line being written
            if "topic" in line:
                commands.append((line["t"], line["topic"], line["fields"], str(line["result"])))
                sent.append(line["t"] if line.get("sent") is None else line["sent"])
            elif "fault" in line:
                fault = line["fault"]
                if isinstance(fault, dict):  # the sim's: {action, kind, ...}
                    if fault.get("action") == "set":
                        faults.append((line["t"], str(fault["kind"])))
                else:  # the vendor robot's: the kind
                    faults.append((line["t"], str(fault)))
        return cls(commands, faults, sent)

    def groups(
        self, after: float = 0.0, clock: str = "taken"
    ) -> list[tuple[float, list[dict[str, Any]]]]:
        """Group commands after ``after`` on ``clock`` ("taken" by the robot, or "sent" by
        its writer): (that time, each group's command)."""
        times = self.sent if clock == "sent" else [t for t, *_ in self.commands]
        return [
            (t, f["group_cmd"])
            for t, (_, topic, f, _) in zip(times, self.commands, strict=True)
            if topic == GROUP_CMD and t > after
        ]

    def moving(self, after: float = 0.0, clock: str = "taken") -> list[float]:
        """When a command carrying a moving group arrived (``clock`` "sent": was written)
        after ``after``."""
        return [
            t
            for t, cmds in self.groups(after, clock)
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


class Pendant:
    """What the robot's own pendant would do: whole-body FSM commands from a plain cyclonedds
    11 writer in .venv-aurora (no project code but the wire's types), e.g. out of FSM 9.
    Ready once its writer has matched the robot's reader: a command written before that
    (volatile) is lost, as CI on a loaded machine once showed."""

    CODE = (
        "import sys\n"
        "from executive.robots.aurora.wire.config import WireConfig\n"
        "from executive.robots.aurora.wire.node import AuroraNode, header\n"
        "from executive.robots.aurora.wire import types as T\n"
        "n = AuroraNode(WireConfig(domain=int(sys.argv[1])))\n"
        "w = n.writer('whole_body_fsm_state_change_cmd')\n"
        "import time\n"
        "t = time.monotonic() + 10\n"
        "while not w.get_matched_subscriptions() and time.monotonic() < t:\n"
        "    time.sleep(0.01)\n"
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
