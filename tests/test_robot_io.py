"""Robot I/O over real CycloneDDS on loopback: both sides of the wire in one process."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from executive import logs
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.wire import dds
from executive.wire.codec import raw_write
from executive.wire.robot_io import Kind, Side


def test_every_topic_has_exactly_one_writer_side(participant: dds.DomainParticipant) -> None:
    robot = AtomIO(participant, side=Side.ROBOT)
    ctl = AtomIO(participant, side=Side.CONTROLLER)
    assert set(robot.writers) == set(ctl.readers)
    assert set(ctl.writers) == set(robot.readers)
    assert set(robot.writers) | set(ctl.writers) == set(TOPICS)
    assert {k for k, s in TOPICS.items() if s.kind is Kind.STATE} == set(robot.writers)


def test_state_reaches_controller_with_age(dds_domain: int) -> None:
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER)
        i = ctl.interface
        reader = ctl.readers["emergency_state"]
        sample = None
        for _ in range(100):  # best-effort state: publish until discovery has matched
            robot.write("emergency_state", i.EmergencyState_(True, False, False))
            sample = reader.wait_for(lambda s: s.soft_emergency_triggered, timeout=0.05)
            if sample is not None:
                break
        assert sample is not None
        stamped = reader.latest
        assert stamped is not None
        assert 0.0 <= stamped.age() < 5.0
        assert reader.count >= 1


def test_command_reaches_robot(dds_domain: int) -> None:
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER)
        i = ctl.interface
        cmd = i.UpperCmd_(motor_cmd=[i.MotorCmd_(11, 0.25, 0.0, 0.0, 40.0, 2.0)] * 17)
        got = None
        for _ in range(100):
            ctl.write("upper_cmd", cmd)
            got = robot.readers["upper_cmd"].wait_for(lambda s: True, timeout=0.05)
            if got is not None:
                break
        assert got is not None
        assert got.motor_cmd[16].q == 0.25
        assert got.motor_cmd[0].kp == 40.0


def test_records_mode_reads_numpy_records(dds_domain: int) -> None:
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER, records=["upper_state"])
        rec = robot.codec("upper_state").zeros()
        rec["motor_state"]["q"][:] = 0.5
        rec["fsm_id"] = 3
        got = None
        for _ in range(100):
            robot.write_record("upper_state", rec)
            got = ctl.readers["upper_state"].wait_for(lambda s: s["fsm_id"] == 3, timeout=0.05)
            if got is not None:
                break
        assert got is not None
        assert list(got["motor_state"]["q"]) == [0.5] * 17


def test_a_leased_domain_is_not_leased_twice() -> None:
    a, b = dds.lease_domain(), dds.lease_domain()
    try:
        assert a.domain != b.domain
        try:
            dds.lease_domain(a.domain, a.domain)
            raise AssertionError("leased the same domain twice")
        except RuntimeError as e:
            assert "leased by another process" in str(e)
        a.release()
        again = dds.lease_domain(a.domain, a.domain)  # free again once released
        again.release()
    finally:
        a.release()
        b.release()


def _until(predicate: Callable[[], bool], act: Callable[[], None], tries: int = 200) -> bool:
    """Repeat ``act`` (best-effort state: until discovery has matched) until ``predicate``."""
    for _ in range(tries):
        act()
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_an_undecodable_sample_is_counted_named_and_never_raises(
    dds_domain: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Garbled bytes on the wire: no traceback through the listener, a count, one log line,
    the reader's health says so until a good sample arrives, and the hook is told why."""
    logs.configure("test")
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER, records=["emergency_state"])
        reader = ctl.readers["emergency_state"]
        told: list[str] = []
        reader.on_undecodable(told.append)
        writer = robot.writers["emergency_state"]
        assert _until(
            lambda: reader.health.errors >= 5,
            lambda: raw_write(writer, b"\x12\x34\x00\x00\x01\x00\x00\x00"),
        )
        health = reader.health
        assert health.undecodable and health.topic == "rt/emergency/state"
        assert health.last_error.startswith("unknown encapsulation 12340000")
        assert told[0] == health.last_error and len(told) == health.errors
        assert reader.latest is None
        good = robot.codec("emergency_state").encode(robot.codec("emergency_state").zeros())
        assert _until(lambda: reader.latest is not None, lambda: raw_write(writer, good))
        assert not reader.health.undecodable and reader.health.errors >= 5
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [json.loads(x) for x in err.splitlines() if "undecodable sample" in x]
    assert len(lines) == 1, "one line per topic and interval, not one per sample"
    assert lines[0]["topic"] == "rt/emergency/state" and lines[0]["level"] == "error"


def test_a_raising_callback_does_not_stop_the_others(dds_domain: int) -> None:
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER, records=["emergency_state"])
        reader = ctl.readers["emergency_state"]
        seen: list[Any] = []

        def broken(sample: Any) -> None:
            raise RuntimeError("a bug in a fast path")

        reader.add_callback(broken)
        reader.add_callback(seen.append)
        rec = robot.codec("emergency_state").zeros()
        assert _until(lambda: len(seen) >= 3, lambda: robot.write_record("emergency_state", rec))
        assert reader.health.callback_errors >= 3
        assert reader.latest is not None
