"""Start the simulated Adam as its own process; talk to it with stock cyclonedds-python.

``start_adam(*args)`` runs ``python -m executive.robots.adam.sim`` on the test's domain (the
``dds_domain`` fixture exports ATOM_DDS_DOMAIN), waits until a stock reader has its state and
the sim's status, and until the test's command writers have matched the sim's readers
(bounded waits, never bare sleeps), and terminates it when the test ends.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.robots.adam.interface import AdamInterface
from executive.robots.adam.sim.client import AdamSimClient
from executive.robots.adam.sim.record import Recording
from executive.seam.profile import RobotProfile, load_profile
from executive.wire import dds
from tests.sim.conftest import matched_total, wait_until

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 15.0  # generous: the machine is shared


@dataclass
class Adam:
    """A running simulated Adam and a stock controller for it."""

    proc: subprocess.Popen[bytes]
    iface: AdamInterface
    profile: RobotProfile
    client: AdamSimClient
    low_state: DataReader[Any]
    hand_state: DataReader[Any]
    low_cmd: DataWriter[Any]
    hand_cmd: DataWriter[Any]
    record_path: Path
    log_path: Path

    @property
    def motors(self) -> int:
        return len(self.profile.topics["body"])

    def index(self, joint: str) -> int:
        return self.profile.joints[joint].index

    def fresh(self, reader: DataReader[Any], timeout: float = TIMEOUT) -> Any:
        """The newest sample published after this call."""
        reader.take(N=256)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            samples = [s for s in reader.take(N=256) if hasattr(s, "__dataclass_fields__")]
            if samples:
                return samples[-1]
            time.sleep(0.01)
        raise AssertionError(f"no fresh {reader.topic.get_name()}; sim log:\n{self.log()}")

    def body_command(self, q: list[float], *, mode: int = 1, motors: int | None = None) -> Any:
        """A LowCmd_ with the profile's gains (its first ``motors`` entries)."""
        kp, kd = self.profile.gains("body")
        n = self.motors if motors is None else motors
        extra = {"ki": 0.0} if "ki" in self.iface.MotorCmd_.__annotations__ else {}
        cmds = [
            self.iface.MotorCmd_(
                mode=mode,
                q=float(q[i % len(q)]),
                dq=0.0,
                tau=0.0,
                kp=float(kp[i % len(kp)]),
                kd=float(kd[i % len(kd)]),
                reserve=0,
                **extra,
            )
            for i in range(n)
        ]
        head = {"mode_pr": 0} if "mode_pr" in self.iface.LowCmd_.__annotations__ else {}
        return self.iface.LowCmd_(**head, motor_cmd=cmds, reserve=0)

    def stream(self, sample: Any, until: Callable[[], bool], hz: float = 100.0) -> bool:
        """Write ``sample`` at ``hz`` until ``until()`` holds; False after TIMEOUT."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            self.low_cmd.write(sample)
            if until():
                return True
            time.sleep(1.0 / hz)
        return until()

    def counters(self, stream: str, predicate: Callable[[dict[str, int]], bool]) -> dict[str, int]:
        """Wait until the sim's counters of ``stream`` satisfy ``predicate``."""

        def get(s: Any) -> dict[str, int]:
            c = getattr(s, stream)
            return {n: int(getattr(c, n)) for n in c.__dataclass_fields__}

        status = self.client.wait_status(lambda s: predicate(get(s)), TIMEOUT)
        assert status is not None, f"{stream} counters: {self.client.counters(stream)}"
        return get(status)

    def recording(self) -> Recording:
        return Recording.load(self.record_path)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _matched(writer: DataWriter[Any]) -> bool:
    return matched_total(writer) > 0


@pytest.fixture
def start_adam(dds_domain: int, tmp_path: Path) -> Iterator[Callable[..., Adam]]:
    """Start one simulated Adam with extra CLI args; always terminated at the end."""
    procs: list[subprocess.Popen[bytes]] = []
    with dds.open_participant(dds_domain) as dp:
        client = AdamSimClient(dp, timeout=TIMEOUT)

        def start(
            *args: str, profile: str = "adam-pro", interface: str = "sdk-1.2", stdin: bool = False
        ) -> Adam:
            assert not procs, "one sim per test"
            iface = AdamInterface(interface)
            record_path, log_path = tmp_path / "record.jsonl", tmp_path / "sim.log"

            def topic(name: str, idl_type: Any) -> Topic[Any]:
                return Topic(dp, name, idl_type)

            low_state: DataReader[Any] = DataReader(dp, topic("rt/lowstate", iface.LowState_))
            hand_state: DataReader[Any] = DataReader(dp, topic("rt/handstate", iface.HandState_))
            low_cmd: DataWriter[Any] = DataWriter(
                dp, topic("rt/lowcmd", iface.LowCmd_), qos=dds.EVENT_WRITER_QOS
            )
            hand_cmd: DataWriter[Any] = DataWriter(
                dp, topic("rt/handcmd", iface.HandCmd_), qos=dds.EVENT_WRITER_QOS
            )
            cmd = [
                sys.executable, "-m", "executive.robots.adam.sim",
                "--profile", profile, "--interface", interface,
                "--record", str(record_path), *args,
            ]  # fmt: skip
            with log_path.open("wb") as log:
                proc = subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                )
            procs.append(proc)
            adam = Adam(
                proc, iface, load_profile(profile), client,
                low_state, hand_state, low_cmd, hand_cmd, record_path, log_path,
            )  # fmt: skip
            assert client.wait_status(lambda s: s.pid == proc.pid) is not None, adam.log()
            for writer in (low_cmd, hand_cmd):  # so no command is lost to discovery
                assert wait_until(partial(_matched, writer)), adam.log()
            return adam

        yield start
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(TIMEOUT)


__all__ = ["TIMEOUT", "Adam", "DomainParticipant", "wait_until"]
