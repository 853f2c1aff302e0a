"""The e-stop reflex's parts, one at a time: the seqlock, the gate, the latch, the holds.

The whole path against the simulated Atom, with the interpreter blocked, is in
``tests/integration/test_reflex_on_sim.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import structlog

from executive.core.tree import ExecState
from executive.motion.trajectory import plan
from executive.robots import native
from executive.robots.atom import reflex as atom_reflex
from executive.robots.atom.topics import AtomIO
from executive.seam.profile import load_profile
from executive.wire import dds
from executive.wire.codec import raw_write
from executive.wire.robot_io import Side
from tests.rigs import Rig, make_rig

PROFILE = load_profile()
# not skipped when missing: make test builds it, and a service without it is slower and
# holds nothing while Python is blocked (native.MISSING says why the import failed)
assert native.MISSING is None, f"the reflex extension is not built: {native.MISSING} (make venv)"
_reflex: Any = native._reflex


def bare_core(streams: int = 3) -> Any:
    """A Core with stream slots and no DDS: the buffers and the latch alone."""
    return native.bare_core([0] * streams, nflags=3)


# -- the seqlock ------------------------------------------------------------------------


def test_a_hold_is_stored_and_loaded_whole_and_none_means_not_engaged() -> None:
    core = bare_core()
    assert core.load_hold(0) is None  # nothing stored: not engaged
    core.store_hold(0, b"\x00\x01\x00\x00abcd")
    core.store_hold(1, b"\x00\x01\x00\x00efgh", True)
    assert core.load_hold(0) == b"\x00\x01\x00\x00abcd"
    assert core.load_hold(1) == b"\x00\x01\x00\x00efgh"
    core.store_hold(0, b"\x00\x01\x00\x00ijkl")  # the other buffer: both flip in turn
    core.store_hold(0, b"\x00\x01\x00\x00mnop")
    assert core.load_hold(0) == b"\x00\x01\x00\x00mnop"
    core.store_hold(0, None)
    assert core.load_hold(0) is None
    with pytest.raises(ValueError, match="1..2048"):
        core.store_hold(0, b"x" * (_reflex.MAX_SAMPLE + 1))
    with pytest.raises(IndexError):
        core.store_hold(3, b"x")
    core.close()
    with pytest.raises(RuntimeError, match="closed"):
        core.load_hold(0)


@pytest.mark.parametrize("stall", [False, True], ids=["busy writer", "writer stalls mid-write"])
def test_the_reader_never_sees_a_torn_hold(stall: bool) -> None:
    """A C writer thread stores holds of varying length and content as fast as it can while
    the reader loads them, both without the GIL. Every load is one whole hold. ``stall``:
    the writer stops for 1 ms in the middle of a store every 1,000 (as a preempted streamer
    would); the reader, pointed at the other buffer, does not wait for it."""
    r = _reflex.seqlock_selftest(0.5, stall)
    assert r["torn"] == 0, r
    assert r["reads"] > 10_000 and r["stores"] > 1_000, r
    assert r["newest_seen"] > 0, r
    # a stalled writer never makes the reader give up: it reads the complete buffer
    assert r["lapped"] <= r["reads"] // 1000, r


# -- the gate and the latch, on the in-process rig ------------------------------------------


@pytest.fixture
def moving(dds_domain: int) -> Iterator[tuple[Rig, list[tuple[str, np.ndarray, bool]]]]:
    """The rig with an elbow moving (the streamer stepped by hand) and what it published."""
    with make_rig(dds_domain) as rig:
        published: list[tuple[str, np.ndarray, bool]] = []
        ex = rig.ex
        assert ex.reflex is not None
        ex.streamer.on_publish = lambda topic, q, held: published.append((topic, q, held))
        measured = ex.streamer.measured_joints(["left_elbow_pitch"])
        ex.streamer.submit(
            plan(PROFILE, {"left_elbow_pitch": 0.6}, measured, time.monotonic(), duration=5.0)
        )
        ex.streamer.step()
        yield rig, published


def test_the_streamer_stores_the_hold_at_the_measured_position_every_period(
    moving: tuple[Rig, list[Any]],
) -> None:
    rig, published = moving
    ex = rig.ex
    assert ex.reflex is not None
    codec = ex.adapter.io.codec("upper_cmd")
    stored = ex.reflex.load_hold(0)
    assert stored is not None and ex.reflex.load_hold(1) is None  # lower and hands: idle
    q = codec.decode(stored)["motor_cmd"]["q"]
    measured = ex.adapter.io.readers["upper_state"].latest
    assert measured is not None
    np.testing.assert_allclose(q, measured.sample["motor_state"]["q"], atol=1e-6)
    assert published[-1][2] is False  # while the command itself moves on


def test_a_trip_writes_the_stored_holds_then_the_cancel_and_refuses_what_was_computed_before(
    moving: tuple[Rig, list[Any]],
) -> None:
    rig, published = moving
    ex = rig.ex
    assert ex.reflex is not None
    stored = ex.reflex.load_hold(0)
    seen = ex.reflex.trips()
    amr: list[Any] = []
    rig.robot.readers["amr_cmd"].add_callback(amr.append)
    rig.state(soft_emergency_triggered=True)  # delivered here, in this thread: Python at once
    trip = ex.reflex.last_trip()
    assert trip is not None and trip.code == "estop" and trip.held == ("upper_cmd",)
    assert trip.message == "emergency stop: soft_emergency_triggered"
    assert 0 < trip.sample_ns <= trip.first_hold_ns <= trip.cancel_ns
    assert ex.reflex.fired(0) == stored  # what it wrote is what the streamer stored
    # the reflex's CANCEL_TASK first (its own ids, stamped when written), then Python's
    assert [a.command_type.name for a in amr] == ["CANCEL_TASK", "CANCEL_TASK"]
    assert amr[0].command_id >= atom_reflex.CANCEL_ID_BIT > amr[1].command_id
    assert abs(amr[0].timestamp - time.time_ns()) < 5e9
    # a command computed before the streamer saw this trip is refused, not written
    assert ex.reflex.publish(0, stored or b"", seen) is False
    assert ex.monitor.latched and ex.streamer.held
    # the streamer has taken the reflex's hold: what it sends now is byte for byte the same
    published.clear()
    ex.streamer.step()
    assert [held for _, _, held in published] == [True]
    codec = ex.adapter.io.codec("upper_cmd")
    record = codec.zeros()
    record["motor_cmd"] = codec.decode(stored or b"")["motor_cmd"]
    assert codec.encode(record) == stored  # decoded and encoded again: the same bytes
    np.testing.assert_array_equal(
        published[0][1], codec.decode(stored or b"")["motor_cmd"]["q"].astype(np.float64)
    )


def test_the_latch_survives_release_and_a_start_and_only_the_reset_clears_it(
    moving: tuple[Rig, list[Any]],
) -> None:
    rig, _ = moving
    ex = rig.ex
    assert ex.reflex is not None
    rig.state(hard_emergency_triggered=True)
    assert ex.reflex.tripped()
    ex.streamer.release()  # as a mission start does: not while the reflex holds
    assert ex.streamer.held and ex.reflex.tripped()
    more = ex.reflex.trips()
    rig.state(hard_emergency_triggered=True)  # pressed still: no second reaction
    assert ex.reflex.trips() == more
    ok, message = ex.reset()
    assert not ok and "still present" in message and ex.reflex.tripped()
    rig.tick_until(lambda: ex.reset()[0])
    assert not ex.reflex.tripped() and not ex.streamer.held
    assert ex.state is ExecState.IDLE


def test_an_undecodable_estop_sample_trips_it_with_the_codecs_words(
    moving: tuple[Rig, list[Any]],
) -> None:
    rig, _ = moving
    ex = rig.ex
    raw_write(rig.robot.writers["emergency_state"], b"\x00\x01\x00\x00")  # a header, no flags
    assert ex.reflex is not None and ex.reflex.tripped()
    (cause,) = ex.monitor.reasons
    assert cause.code == "undecodable"
    assert cause.message == (
        "rt/emergency/state: undecodable sample "
        "(4 bytes is too short for EmergencyState_ (7 with the encapsulation header))"
    )


def test_the_reflex_holds_at_a_measurement_newer_than_its_stored_hold(dds_domain: int) -> None:
    """Python blocked: the streamer stored a hold at q0, then the arm moved on. The reflex
    finds the newer state sample Python has not taken yet and holds there instead, clipped
    to the limits; a hold stored while already holding is sent as it is."""
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT, records=["upper_cmd"])
        ctl = AtomIO(p2, side=Side.CONTROLLER, records=["upper_state", "emergency_state"])
        trips: list[int] = []
        core = _reflex.Core(
            participant=p2._ref,
            estop_topic=ctl.readers["emergency_state"].reader.topic._ref,
            estop_qos_from=ctl.readers["emergency_state"].reader._ref,
            nflags=3,
            stream_writers=[ctl.writers["upper_cmd"]._ref],
            cancel_writer=0,
            cancel=b"",
            cancel_id_at=0,
            cancel_stamp_at=0,
            cancel_id=0,
            on_trip=lambda: trips.append(1),
        )
        state_reader = ctl.readers["upper_state"].reader
        core.divert(state_reader._ref, lambda reader: None, state_reader)  # nobody takes
        lo, hi = PROFILE.limits("upper")
        # what MotionStreamer.measured_from gives, by hand: no streamer here
        m = native.Measured(
            "upper_state", "motor_cmd", "motor_state", lo.tolist(), hi.tolist(), 1.0
        )
        native._measure(core, ctl, 0, "upper_cmd", m)
        cmd_codec = ctl.codec("upper_cmd")
        hold = cmd_codec.zeros()
        hold["motor_cmd"]["kp"] = 10.0
        core.store_hold(0, cmd_codec.encode(hold), True)  # frozen at q = 0
        state = robot.codec("upper_state").zeros()
        state["motor_state"]["q"] = np.clip(0.3, lo, hi)
        state["motor_state"]["q"][0] = hi[0] + 1.0  # beyond the limit: clipped
        robot.write_record("upper_state", state)
        deadline = time.monotonic() + 5
        while state_reader.read(N=1) == [] and time.monotonic() < deadline:
            time.sleep(0.01)
        estop = robot.codec("emergency_state").zeros()
        estop["soft_emergency_triggered"] = True
        robot.write_record("emergency_state", estop)
        deadline = time.monotonic() + 5
        while not core.tripped() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert core.tripped()
        fired = core.fired(0)
        q = cmd_codec.decode(fired)["motor_cmd"]["q"]
        want = np.clip(np.full(len(lo), 0.3), lo, hi).astype(np.float32)
        want[0] = np.float32(hi[0])
        np.testing.assert_array_equal(q, want)
        assert cmd_codec.decode(fired)["motor_cmd"]["kp"][0] == 10.0  # the rest as stored
        assert core.last_trip()["measured"] == 1
        core.reset()
        core.store_hold(0, cmd_codec.encode(hold))  # a hold already being sent: as it is
        robot.write_record("upper_state", state)
        time.sleep(0.05)
        estop["soft_emergency_triggered"] = False
        robot.write_record("emergency_state", estop)
        estop["soft_emergency_triggered"] = True
        robot.write_record("emergency_state", estop)
        deadline = time.monotonic() + 5
        while not core.tripped() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert core.fired(0) == cmd_codec.encode(hold)
        core.close()


def test_without_the_extension_the_python_fast_path_holds_with_one_warning(
    dds_domain: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "_reflex", None)
    with structlog.testing.capture_logs() as logs, make_rig(dds_domain) as rig:
        assert rig.ex.reflex is None
        warnings = [e for e in logs if e["event"].startswith("e-stop reflex not built")]
        assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"
        rig.state(soft_emergency_triggered=True)  # the listener's Python fast path
        assert rig.ex.monitor.latched and rig.ex.streamer.held


def test_the_reflex_can_be_turned_off(dds_domain: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.ENV, "off")
    with make_rig(dds_domain) as rig:
        assert rig.ex.reflex is None
        rig.state(hard_emergency_triggered=True)
        assert rig.ex.monitor.latched


def test_an_estop_polled_for_a_reflex_that_did_not_arm_listens_again(
    dds_domain: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Atom polls its e-stop topic where the reflex can arm (the reflex watches it in
    C); should the reflex not arm after all, the topic listens again and the Python fast
    path holds on the sample, not at the next tick."""
    from executive.robots.atom import reflex as atom_reflex

    assert native.available()
    monkeypatch.setattr(atom_reflex, "install", lambda *args, **kwargs: None)
    with make_rig(dds_domain) as rig:
        assert rig.ex.reflex is None
        estop = rig.ex.adapter.io.readers["emergency_state"]  # type: ignore[attr-defined]
        assert not estop.polled
        rig.state(soft_emergency_triggered=True)  # the listener's Python fast path
        assert rig.ex.monitor.latched and rig.ex.streamer.held
