"""The bridge on its own (executive/robots/aurora/bridge.py), driven through the adapter with
no service around it, against the simulated Aurora on this test's DDS domain."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from executive.harness.aurora import SIM_PYTHON, RobotProcess
from executive.robots.aurora.adapter import RESPAWNS, SEND_TIMEOUT_S, AuroraAdapter, open
from executive.seam.profile import load_profile
from tests.sim.conftest import wait_until

pytestmark = pytest.mark.dds


@pytest.fixture
def arm(tmp_path: Path, dds_domain: int) -> Iterator[tuple[AuroraAdapter, RobotProcess, list]]:
    """The adapter (its bridge) holding upper-body control, its left arm commanded."""
    argv = [str(SIM_PYTHON), "-m", "executive.robots.aurora.sim", "--domain", str(dds_domain)]
    robot = RobotProcess(argv, tmp_path / "robot.jsonl", tmp_path / "robot.log")
    adapter = open(load_profile("aurora"), domain=dds_domain)
    events: list[tuple[str, str]] = []
    adapter.on_safety_event(lambda code, message: events.append((code, message)))
    try:
        heard = lambda: all(src.received for src in adapter.snapshot().sources.values())  # noqa: E731
        assert wait_until(heard, 10)  # as the service waits for every safety source
        adapter.request_control(True)
        assert wait_until(lambda: (c := adapter.snapshot().control) is not None and c.sample, 5)
        stream = next(s for s in adapter.streams if s.name == "left_manipulator")
        for i in range(20):
            stream.write(stream.encode(np.full(7, 0.01 * i)))
            time.sleep(0.01)
        yield adapter, robot, events
    finally:
        adapter.close()
        robot.close()


def test_a_command_the_bridge_cannot_carry_out_holds_and_is_a_trip(arm) -> None:
    adapter, robot, events = arm
    t = time.monotonic()
    adapter.send({"t": "velocity", "vx": 0.1})  # no vy, yaw, ttl: the bridge's KeyError
    assert wait_until(lambda: events, 5)
    code, message = events[0]
    assert code == "internal" and "could not carry out 'velocity'" in message
    time.sleep(0.3)
    rec = robot.records()
    holds = rec.holds(t)
    assert holds and not rec.moving(holds[0])
    # latched: the arm's next command is dropped until the reset
    stream = next(s for s in adapter.streams if s.name == "left_manipulator")
    stream.write(stream.encode(np.full(7, 0.5)))
    time.sleep(0.3)
    assert not robot.records().moving(holds[0])


def test_the_hold_and_the_reset(arm) -> None:
    adapter, robot, _ = arm
    t = time.monotonic()
    adapter.safe_stop()
    stream = next(s for s in adapter.streams if s.name == "left_manipulator")
    stream.write(stream.encode(np.full(7, 0.5)))  # dropped: latched
    time.sleep(0.3)
    rec = robot.records()
    holds = rec.holds(t)
    assert holds and not rec.moving(holds[0])
    adapter.install_reflex(None, lambda trip: None).reset()
    stream.write(stream.encode(np.full(7, 0.5)))
    assert wait_until(lambda: robot.records().moving(holds[0]), 3)


@pytest.mark.serial  # a send's wall time is bounded (0.2 s + 0.1): a busy neighbour adds to it
def test_a_bridge_that_stops_reading_is_killed_and_named_and_no_send_waits_long(arm) -> None:
    """SIGSTOP the bridge: the socket's buffer fills; no send waits more than the adapter's
    bound, the bridge is killed and its end reported as the fault it is."""
    adapter, robot, events = arm
    pid, process = adapter.pid, adapter.process
    os.kill(pid, signal.SIGSTOP)
    stream = next(s for s in adapter.streams if s.name == "left_manipulator")
    frame = stream.encode(np.full(7, 0.1))
    longest = 0.0
    deadline = time.monotonic() + 20
    while not events and time.monotonic() < deadline:
        t = time.perf_counter()
        stream.write(frame)
        longest = max(longest, time.perf_counter() - t)
    assert events, "the stuck bridge was never reported"
    code, message = events[0]
    assert code == "stale_state"
    assert f"Aurora bridge (pid {pid}) stopped reading its link" in message
    assert longest < SEND_TIMEOUT_S + 0.1
    assert process.wait(5) == -signal.SIGKILL


def test_a_bridge_that_keeps_dying_is_replaced_a_bounded_number_of_times(arm) -> None:
    """Each death is a stale_state naming it and a fresh bridge holding the robot; past
    ``RESPAWNS`` of them (within a minute) none is started, and the sources say to restart
    the service (what the reset's refusal and the status name)."""
    adapter, robot, events = arm
    dead = []
    for i in range(RESPAWNS + 1):
        pid = adapter.pid
        os.kill(pid, signal.SIGKILL)
        dead.append(pid)
        assert wait_until(partial(reported, events, i + 1), 5), events
        if i < RESPAWNS:
            assert wait_until(partial(replaced, adapter, pid), 15), adapter.snapshot().sources
    assert [code for code, _ in events] == ["stale_state"] * len(dead)
    for pid, (_, message) in zip(dead, events, strict=True):
        assert f"the Aurora bridge (pid {pid}) was killed by signal 9" in message
    names = [s.name for s in adapter.snapshot().sources.values()]
    assert all("restart the service" in name for name in names), names
    assert all(s.received is None for s in adapter.snapshot().sources.values())
    assert adapter.pid == dead[-1]  # no fresh one
    time.sleep(0.3)
    assert not robot.records().moving(robot.records().holds()[0])


def reported(events: list[tuple[str, str]], n: int) -> bool:
    return len(events) >= n


def replaced(adapter: AuroraAdapter, pid: int) -> bool:
    """A fresh bridge (not ``pid``) runs and has heard every source."""
    sources = adapter.snapshot().sources.values()
    return adapter.pid != pid and all(s.received is not None for s in sources)
