"""Start the simulated Atom as its own process and drive it over DDS like a controller.

``start_sim(*args)`` runs ``python -m executive.robots.atom.sim`` on the test's domain (the
``dds_domain`` fixture exports ATOM_DDS_DOMAIN), waits until its state and status are
seen and every command writer of the test has matched the sim's reader (bounded waits on
events, never bare sleeps), and terminates it when the test ends, whatever happens.
"""

from __future__ import annotations

import ctypes as ct
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cyclonedds.internal import DDS, dds_c_t

from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.sim.client import SimClient
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.topics import STATE_TOPICS, AtomIO
from executive.seam.profile import RobotProfile, load_profile
from executive.wire import dds
from executive.wire.robot_io import Side

ROOT = Path(__file__).resolve().parents[2]
PROFILE = load_profile()
TIMEOUT = 15.0  # generous: the machine is shared
STREAM_FIELDS = {"upper_cmd": "motor_cmd", "lower_cmd": "motor_cmd", "hands_cmd": "hands"}
STREAM_TOPIC = {"upper_cmd": "upper", "lower_cmd": "lower", "hands_cmd": "hands"}


def wait_until(
    predicate: Callable[[], bool], timeout: float = TIMEOUT, every: float = 0.02
) -> bool:
    """Poll ``predicate`` (for conditions no reader can wait on); False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


@dataclass
class Sim:
    """A running sim and the controller side of the wire that talks to it."""

    proc: subprocess.Popen[bytes]
    ctl: AtomIO
    client: SimClient
    record_path: Path | None
    log_path: Path
    profile: RobotProfile = field(default_factory=lambda: PROFILE)

    @property
    def iface(self) -> Interface:
        return self.ctl.interface

    def state(self, key: str) -> Any:
        sample = self.ctl.latest(key)
        assert sample is not None, f"no {key} received"
        return sample

    def wait_state(
        self, key: str, predicate: Callable[[Any], bool], timeout: float = TIMEOUT
    ) -> Any:
        sample = self.ctl.readers[key].wait_for(predicate, timeout)
        assert sample is not None, (
            f"{key} never satisfied the condition; last: {self.ctl.latest(key)}"
        )
        return sample

    def fresh_state(self, key: str, timeout: float = TIMEOUT) -> Any:
        """A sample published after this call (not one cached before)."""
        reader = self.ctl.readers[key]
        count = reader.count
        assert wait_until(lambda: reader.count > count + 1, timeout), f"{key} stopped arriving"
        return self.state(key)

    def command_record(self, key: str, q: Any = None, kp: Any = None, kd: Any = None) -> Any:
        """A joint command record for ``key`` with the profile's gains and ``q`` targets."""
        topic = STREAM_TOPIC[key]
        rec = self.ctl.codec(key).zeros()
        motors = rec[STREAM_FIELDS[key]]
        default_kp, default_kd = self.profile.gains(topic)
        motors["mode"] = self.profile.motor_mode
        motors["kp"] = default_kp if kp is None else kp
        motors["kd"] = default_kd if kd is None else kd
        motors["q"] = self.q(topic) if q is None else q
        return rec

    def target(self, topic: str, offsets: dict[str, float]) -> Any:
        """The measured positions of ``topic`` with ``offsets`` (by joint name) added, clamped."""
        q = self.q(topic)
        names = list(self.profile.topics[topic])
        for name, dq in offsets.items():
            i = names.index(name)
            q[i] = self.profile.joints[name].clamp(q[i] + dq)
        return q

    def q(self, topic: str) -> Any:
        """Measured joint positions of ``upper``, ``lower`` or ``hands``."""
        key = f"{topic}_state"
        field_name = "hands" if topic == "hands" else "motor_state"
        return np.array(self.state(key)[field_name]["q"], dtype=np.float64)

    def stream(
        self,
        key: str,
        rec: Any,
        until: Callable[[], bool] | None = None,
        *,
        seconds: float | None = None,
        timeout: float = TIMEOUT,
        hz: float = 200.0,
    ) -> bool:
        """Write ``rec`` at ``hz`` until ``until()`` holds or for ``seconds``; True if it held."""
        end = time.monotonic() + (seconds if seconds is not None else timeout)
        next_at = time.monotonic()
        while time.monotonic() < end:
            self.ctl.write_record(key, rec)
            if until is not None and until():
                return True
            next_at += 1.0 / hz
            time.sleep(max(0.0, next_at - time.monotonic()))
        return until() if until is not None else True

    def send(self, key: str, sample: Any) -> None:
        self.ctl.write(key, sample)

    def amr(
        self, kind: str, command_id: int, target_id: int = 0, theta: float = 0.0, **kw: Any
    ) -> None:
        i = self.iface
        self.send(
            "amr_cmd",
            i.AMRCommand_(
                command_type=i.AMRCommandType[kind],
                target_id=target_id,
                linear_vel=float(kw.get("linear_vel", 0.0)),
                angular_vel=float(kw.get("angular_vel", 0.0)),
                command_id=command_id,
                timestamp=0,
                theta=theta,
            ),
        )

    def set_fsm(self, state: str | int) -> None:
        fsm_id = self.profile.fsm_id(state)
        i = self.iface
        fields = i.SetFsmId_.__dataclass_fields__
        sample = i.SetFsmId_(fsm_id, "") if "current_action" in fields else i.SetFsmId_(fsm_id)
        self.send("set_fsm_id", sample)
        self.wait_state("lower_state", lambda s: s["fsm_id"] == fsm_id)

    def upper_control(self, on: bool) -> None:
        self.send("switch_upper_control", self.iface.SwitchUpperControl_(on))

    def status(self) -> Any:
        status = self.client.status()
        assert status is not None
        return status

    def counters(self, stream: str, predicate: Callable[[dict[str, int]], bool]) -> dict[str, int]:
        """Wait until the sim's status counters of ``stream`` satisfy ``predicate``."""
        status = self.client.wait_status(
            lambda s: predicate(self._counters(s, stream)), timeout=TIMEOUT
        )
        assert status is not None, f"{stream} counters: {self.client.counters(stream)}"
        return self._counters(status, stream)

    @staticmethod
    def _counters(status: Any, stream: str) -> dict[str, int]:
        c = getattr(status, stream)
        return {n: int(getattr(c, n)) for n in c.__dataclass_fields__}

    def stop(self, sig: str = "TERM") -> int:
        if self.proc.poll() is None:
            if sig == "INT":
                self.proc.send_signal(signal.SIGINT)
            else:
                self.proc.terminate()
            try:
                self.proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(TIMEOUT)
        return int(self.proc.returncode)

    def recording(self) -> Recording:
        assert self.record_path is not None
        return Recording.load(self.record_path)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def matched_total(writer: Any) -> int:
    """How many readers ``writer`` has ever matched (the binding has no call for this)."""
    status = dds_c_t.publication_matched_status()
    get = DDS._dll_handle.dds_get_publication_matched_status
    get.argtypes = [dds_c_t.entity, ct.POINTER(dds_c_t.publication_matched_status)]
    get.restype = dds_c_t.returnv
    assert get(writer._ref, ct.byref(status)) == 0
    return int(status.total_count)


@pytest.fixture
def start_sim(dds_domain: int, tmp_path: Path) -> Iterator[Callable[..., Sim]]:
    """Start the sim with extra CLI args; one at a time per test; always terminated."""
    started: list[Sim] = []
    controllers: dict[str, AtomIO] = {}
    with dds.open_participant(dds_domain) as participant:
        client = SimClient(participant, timeout=TIMEOUT)

        def start(
            *args: str,
            interface: str = "seed",
            record: bool = True,
            wait_topics: tuple[str, ...] = STATE_TOPICS,
        ) -> Sim:
            assert all(s.proc.poll() is not None for s in started), "stop the previous sim first"
            n = len(started)
            record_path = tmp_path / f"sim-record-{n}.jsonl" if record else None
            log_path = tmp_path / f"sim-log-{n}.jsonl"
            cmd = [
                sys.executable,
                "-m",
                "executive.robots.atom.sim",
                "--interface",
                interface,
                *args,
            ]
            if record_path is not None:
                cmd += ["--record", str(record_path)]
            if interface not in controllers:
                controllers[interface] = AtomIO(
                    participant,
                    Interface(Variant.parse(interface)),
                    side=Side.CONTROLLER,
                    records=STATE_TOPICS,
                )
            ctl = controllers[interface]
            counts = {key: ctl.readers[key].count for key in wait_topics}
            matches = {key: matched_total(w) for key, w in ctl.writers.items()}
            with log_path.open("wb") as log:
                proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
            sim = Sim(proc, ctl, client, record_path, log_path)
            started.append(sim)
            for key in wait_topics:  # samples of this sim, not of an earlier one
                reader = ctl.readers[key]
                fresh = reader.wait_for(lambda _, r=reader, c=counts[key]: r.count > c, TIMEOUT)
                assert fresh is not None, f"no {key} from the sim; its log:\n{sim.log()}"
            assert client.wait_status(lambda s: s.pid == proc.pid) is not None
            for key, writer in ctl.writers.items():  # so no command is lost to discovery
                assert wait_until(lambda w=writer, k=key: matched_total(w) > matches[k]), (
                    f"{key} writer never matched the sim"
                )
            return sim

        try:
            yield start
        finally:
            for sim in started:
                sim.stop()
