"""Start the Aurora's processes for a test: the simulated Aurora, the vendor-built robot, peers.

The tests run in ``.venv`` (cyclonedds 0.10.2); everything on the Aurora's wire runs as its
own process in the environment that owns it (``make aurora-env``):

- ``start_sim(domain, *args)``: ``python -m executive.robots.aurora.sim`` in .venv-aurora,
  recording to a file; returns once its ready line is read (its control port in it);
- ``start_vendor_robot(domain, *args)``: tests/aurora_vendor/robot.py in .venv-aurora-vendor
  (Fast DDS, the vendor's types only), recording to a file;
- ``run_aurora(script, *args)`` / ``run_vendor(script, *args)``: a script to completion in
  either environment, its stdout's last line parsed as JSON.

Every process gets ``FASTDDS_BUILTIN_TRANSPORTS=NONE`` (loopback only for Fast DDS) and is
ended (SIGTERM, then SIGKILL) when the test ends. A missing environment fails the test with
the command that makes it: ``make test`` creates both, so nothing here is skipped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from executive.robots.aurora.sim import control

ROOT = Path(__file__).resolve().parents[2]
AURORA_PY = ROOT / ".venv-aurora" / "bin" / "python"
VENDOR_PY = ROOT / ".venv-aurora-vendor" / "bin" / "python"
VENDOR_DIR = ROOT / "tests" / "aurora_vendor"
STARTUP_TIMEOUT = 20.0  # generous: the machine is shared


def require(python: Path) -> Path:
    if not (python.parent.parent / ".installed").exists():
        pytest.fail(f"{python.parent.parent.name} is missing: run `make aurora-env` first")
    return python


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["FASTDDS_BUILTIN_TRANSPORTS"] = "NONE"
    e.pop("FOURIERDDS_ROS_COMPATIBLE", None)
    e["PYTHONUNBUFFERED"] = "1"
    return e


@dataclass
class Proc:
    """A started process, its record and (for the sim) its control port."""

    proc: subprocess.Popen[str]
    record: Path
    log: Path
    ready: dict[str, Any] = field(default_factory=dict)

    @property
    def control_port(self) -> int:
        return int(self.ready["control_port"])

    def control(self, **message: Any) -> dict[str, Any]:
        answer = control.request(self.control_port, message)
        assert answer["ok"], answer
        return answer

    def lines(self) -> list[dict[str, Any]]:
        """The record so far (complete lines)."""
        text = self.record.read_text(encoding="utf-8") if self.record.exists() else ""
        return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]

    def commands(self, topic: str) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line.get("topic") == topic]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def _start(cmd: list[str], tmp: Path, name: str) -> Proc:
    record = tmp / f"{name}.jsonl"
    log = tmp / f"{name}.log"
    proc = subprocess.Popen(
        [*cmd, "--record", str(record)],
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        env=env(),
        cwd=ROOT,
    )
    p = Proc(proc, record, log)
    assert proc.stdout is not None
    deadline = time.monotonic() + STARTUP_TIMEOUT
    line = proc.stdout.readline()  # the ready line, or "" when it died
    if not line or time.monotonic() > deadline:
        p.stop()
        raise AssertionError(f"{name} did not start: {log.read_text()[-2000:]}")
    p.ready = json.loads(line)
    return p


class Processes:
    """What a test started; all stopped at its end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.started: list[Proc] = []

    def sim(self, domain: int, *args: str, name: str = "sim") -> Proc:
        cmd = [
            str(require(AURORA_PY)),
            "-m",
            "executive.robots.aurora.sim",
            "--domain",
            str(domain),
        ]
        p = _start([*cmd, *args], self.tmp, name)
        self.started.append(p)
        return p

    def vendor_robot(self, domain: int, *args: str, name: str = "robot") -> Proc:
        cmd = [str(require(VENDOR_PY)), str(VENDOR_DIR / "robot.py"), "--domain", str(domain)]
        p = _start([*cmd, *args], self.tmp, name)
        self.started.append(p)
        return p

    def stop(self) -> None:
        for p in reversed(self.started):
            p.stop()


def run(python: Path, args: list[str], timeout: float = 40.0) -> tuple[int, Any, str]:
    """Run to completion: (exit code, the last stdout line as JSON or None, stderr)."""
    done = subprocess.run(
        [str(require(python)), *args],
        capture_output=True,
        text=True,
        env=env(),
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    try:
        out = json.loads(last) if last else None
    except json.JSONDecodeError:
        out = None
    return done.returncode, out, done.stderr[-3000:]


@pytest.fixture
def aurora_procs(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.stop()
