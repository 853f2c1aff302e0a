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
from executive.wire.robot_io import POLL_ENV, ArrivalClock, Kind, Side


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


# -- polled readers (issue 22: no Python per sample on high-rate state) -------------------


def test_a_polled_reader_decodes_when_asked_and_stamps_the_arrival(dds_domain: int) -> None:
    """A polled reader runs nothing per sample: its newest sample waits in DDS and is
    decoded when read. Read 0.3 s after it arrived (a taker that stalled), it is 0.3 s old,
    not fresh: the watchdog's silence is judged from arrivals."""
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER, records=["upper_state"], polled=["upper_state"])
        reader = ctl.readers["upper_state"]
        assert reader.polled and not ctl.readers["emergency_state"].polled
        rec = robot.codec("upper_state").zeros()
        assert _until(
            lambda: reader.latest is not None, lambda: robot.write_record("upper_state", rec)
        )
        decoded = reader.count
        for k in range(20):  # twenty samples, nobody reading: nothing decoded meanwhile
            rec["fsm_id"] = k
            robot.write_record("upper_state", rec)
            time.sleep(0.002)
        written = time.monotonic()
        time.sleep(0.3)
        stamped = reader.latest
        assert stamped is not None and int(stamped.sample["fsm_id"]) == 19  # the newest
        assert reader.count == decoded + 1  # one decode for twenty samples
        assert 0.25 < stamped.age() < 0.35, stamped.age()
        assert abs(stamped.received - written) < 0.05
        with pytest.raises(ValueError, match="polled reader has no per-sample callbacks"):
            reader.add_callback(lambda s: None)


def test_a_polled_reader_reports_an_undecodable_sample_from_poll_only(dds_domain: int) -> None:
    """Garbled bytes on a polled safety source: counted and named at the next read, and
    reported to ``on_undecodable`` by ``poll`` (the tick's thread), never by ``latest`` (the
    motion streamer reads it holding its lock; the fast path's hold takes that lock)."""
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT)
        ctl = AtomIO(p2, side=Side.CONTROLLER, records=["upper_state"], polled=["upper_state"])
        reader = ctl.readers["upper_state"]
        told: list[str] = []
        reader.on_undecodable(told.append)
        writer = robot.writers["upper_state"]
        assert _until(
            lambda: reader.health.errors >= 1,
            lambda: raw_write(writer, b"\x00\x01\x00\x00\x01\x00\x00\x00"),
        )
        assert reader.health.undecodable and reader.latest is None
        assert told == []  # read, not polled: nobody told yet
        reader.poll()
        assert told and told[0] == reader.health.last_error
        assert "too short for UpperState_" in told[0]
        good = robot.codec("upper_state").encode(robot.codec("upper_state").zeros())
        assert _until(lambda: reader.latest is not None, lambda: raw_write(writer, good))
        assert not reader.health.undecodable


def test_arrival_clock_survives_a_skewed_or_jumping_writer_clock() -> None:
    """The writer's clock is not ours: a skew is learnt from the least delay, and a jump
    only ever makes a sample older, by at most the time between two takes."""
    clock = ArrivalClock()
    skew = 5e9  # the writer's wall clock runs 5 s ahead of ours
    wall0 = 1_000_000_000_000_000_000
    now, since = 100.0, None
    arrivals = []
    for k in range(50):  # a take every 20 ms; each sample arrived 1..19 ms before it
        delay = 0.001 + (k % 19) * 0.001
        source = wall0 + int((now - 100.0 - delay) * 1e9 + skew)
        arrivals.append(now - clock.arrival(source, wall0 + int((now - 100.0) * 1e9), now, since))
        since, now = now, now + 0.02
    assert max(arrivals[20:]) < 0.019 + 1e-6  # learnt: within the least delay seen (1 ms)
    assert all(a >= -1e-9 for a in arrivals)  # never after the take
    # the writer's clock jumps back 10 s: the sample is older, never more than the interval
    source = wall0 + int((now - 100.0 - 0.001) * 1e9 + skew - 10e9)
    got = clock.arrival(source, wall0 + int((now - 100.0) * 1e9), now, since)
    assert got == since
    # no timestamp at all: the previous take (the earliest it can have arrived)
    assert clock.arrival(0, wall0, now + 0.02, now) == now


def test_poll_off_makes_every_reader_listen_as_before(
    participant: dds.DomainParticipant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ATOM_EXECUTIVE_POLL=off``: bench/parts/idle.py's "before" (a listener per sample)."""
    monkeypatch.setenv(POLL_ENV, "off")
    ctl = AtomIO(participant, records=["upper_state"], polled=["upper_state"])
    assert not ctl.readers["upper_state"].polled
    monkeypatch.delenv(POLL_ENV)
    assert (
        AtomIO(participant, records=["upper_state"], polled=["upper_state"])
        .readers["upper_state"]
        .polled
    )
