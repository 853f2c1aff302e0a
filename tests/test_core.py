"""The executive's core tree over real DDS (in-process robot side): missions, e-stop, faults."""

from __future__ import annotations

import threading
import time
from typing import Any

import py_trees
import pytest
import structlog
from py_trees.common import Status

from behaviours.actions.basic import Log, Wait
from executive.core.tree import ExecState
from executive.motion.trajectory import plan
from executive.seam.profile import load_profile
from executive.wire.codec import raw_write
from tests.rigs import Rig

pytestmark = pytest.mark.dds
PROFILE = load_profile()


class Probe(py_trees.behaviour.Behaviour):
    """A leaf that runs forever (or raises) and counts its terminations."""

    def __init__(self, name: str = "Probe", explode: bool = False) -> None:
        super().__init__(name)
        self.explode = explode
        self.terminated: list[Status] = []

    def update(self) -> Status:
        if self.explode:
            raise ZeroDivisionError("leaf bug")
        return Status.RUNNING

    def terminate(self, new_status: Status) -> None:
        self.terminated.append(new_status)


def test_mission_runs_to_success_and_is_pruned(rig: Rig) -> None:
    mission = py_trees.composites.Sequence("hello", memory=True, children=[Log("hi"), Wait(0.05)])
    ok, run_id = rig.ex.start_mission("hello", mission)
    assert ok and rig.ex.state is ExecState.RUNNING
    rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING)
    assert rig.ex.state is ExecState.SUCCEEDED
    assert rig.ex.last_run is not None and rig.ex.last_run.run_id == run_id
    assert rig.ex.slot.children == []
    assert [m for _, m in rig.ex.context.feed] == ["hi"]
    mission = py_trees.composites.Sequence("again", memory=True, children=[Log("ho")])
    assert rig.ex.start_mission("again", mission)[0]
    rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING)
    assert [m for _, m in rig.ex.context.feed] == ["ho"]  # the run's feed, not every run's


def test_second_start_is_refused_while_running(rig: Rig) -> None:
    assert rig.ex.start_mission("a", Probe())[0]
    ok, message = rig.ex.start_mission("b", Probe())
    assert not ok and "'a' is running" in message


def test_stop_preempts_and_terminates_once(rig: Rig) -> None:
    probe = Probe()
    rig.ex.start_mission("forever", probe)
    rig.tick_until(lambda: probe.status is Status.RUNNING)
    assert rig.ex.stop_mission("operator")[0]
    assert rig.ex.state is ExecState.ABORTED and probe.terminated == [Status.INVALID]


def test_estop_preempts_latches_and_needs_a_reset(rig: Rig) -> None:
    probe = Probe()
    rig.ex.start_mission("forever", probe)
    rig.tick_until(lambda: probe.status is Status.RUNNING)
    rig.state(hard_emergency_triggered=True)
    deadline = time.monotonic() + 5
    while not rig.ex.monitor.latched:  # the fast path latches without a tick
        assert time.monotonic() < deadline
        time.sleep(0.005)
    assert rig.ex.streamer.held
    cancel = rig.robot.readers["amr_cmd"].wait_for(
        lambda s: s.command_type.name == "CANCEL_TASK", 5.0
    )
    assert cancel is not None
    rig.ex.tick()
    assert rig.ex.state is ExecState.SAFE_STOP and probe.terminated == [Status.INVALID]
    assert rig.ex.last_run is not None and "hard_emergency_triggered" in rig.ex.last_run.reason
    assert not rig.ex.start_mission("again", Probe())[0]
    rig.state(hard_emergency_triggered=True)
    rig.ex.tick()
    ok, message = rig.ex.reset()
    assert not ok and "still present" in message
    for _ in range(20):
        rig.state()
        rig.ex.tick()
        time.sleep(0.005)
    ok, _ = rig.ex.reset()
    assert ok and rig.ex.state is ExecState.IDLE and not rig.ex.streamer.held
    rig.ex.tick()
    assert rig.ex.state is ExecState.IDLE and rig.ex.run is None  # nothing resumes


def test_a_reset_before_the_next_tick_judges_the_estop_as_it_is_now(rig: Rig) -> None:
    """The fast path latches between ticks. A reset in that window used to be judged on the
    last tick's view, from before the trip: accepted with the e-stop still pressed, and the
    mission left running (found by bench/parts/estop.py). Now it is refused while pressed; after
    a pulse already released it applies the stop (the mission preempted) and then resets.
    Either way, every command after the trigger is the hold, and nothing resumes."""
    published: list[bool] = []
    rig.ex.streamer.on_publish = lambda topic, q, held: published.append(held)
    for pressed_at_reset in (True, False):
        probe = Probe()
        assert rig.ex.start_mission("forever", probe)[0]
        rig.tick_until(lambda p=probe: p.status is Status.RUNNING)
        measured = rig.ex.streamer.measured_joints(["left_elbow_pitch"])
        rig.ex.streamer.submit(
            plan(PROFILE, {"left_elbow_pitch": 0.5}, measured, time.monotonic(), duration=10.0)
        )
        rig.ex.streamer.step()
        assert published == [False]  # moving
        published.clear()
        rig.state(hard_emergency_triggered=True)
        deadline = time.monotonic() + 5
        while not rig.ex.monitor.latched:  # latched by the fast path, no tick since
            assert time.monotonic() < deadline
            time.sleep(0.002)
        if pressed_at_reset:
            ok, message = rig.ex.reset()
            assert not ok and "still present" in message
            assert rig.ex.state is ExecState.SAFE_STOP
        else:
            rig.state()  # released again before any tick
            estop = rig.ex.adapter.io.readers["emergency_state"]
            clear = estop.wait_for(lambda s: not any(s[n] for n in s.dtype.names), 5.0)
            assert clear is not None
            ok, message = rig.ex.reset()
            assert ok, message
            assert rig.ex.state is ExecState.IDLE and rig.ex.streamer.engaged() == []
        assert rig.ex.run is None and probe.terminated == [Status.INVALID]
        rig.ex.streamer.step()
        rig.ex.tick()
        assert published and all(published)  # the hold, and nothing else
        assert rig.ex.run is None
        if pressed_at_reset:  # released: now the reset goes through
            rig.tick_until(lambda: rig.ex.reset()[0])
            published.clear()


def test_the_estop_reaction_holds_then_cancels_then_logs_and_nothing_moves_after(
    rig: Rig,
) -> None:
    """The fast path on the streamer running at 500 Hz mid-trajectory: every command that
    leaves after the first hold is the hold; the CANCEL_TASK follows the hold of every
    engaged stream; "motion held" is logged only after the cancel (a log line is slow on
    a cold path), and the robot reads the cancel (written through the codec)."""
    order: list[tuple[str, object]] = []
    ex = rig.ex
    ex.streamer.on_publish = lambda topic, q, held: order.append((topic, held))
    commands = ex.context.commands
    send = commands.amr

    with structlog.testing.capture_logs() as logs:

        def amr(command: str, **kw: Any) -> int:
            order.append(("amr " + command, [e["event"] for e in logs]))
            return send(command, **kw)

        commands.amr = amr  # type: ignore[method-assign]
        probe = Probe()
        assert ex.start_mission("forever", probe)[0]
        rig.tick_until(lambda: probe.status is Status.RUNNING)
        for name in ("left_elbow_pitch", "left_knee"):
            measured = ex.streamer.measured_joints([name])
            ex.streamer.submit(plan(PROFILE, {name: 0.3}, measured, time.monotonic(), duration=5))
        ex.streamer.start()
        try:
            time.sleep(0.05)
            rig.state(hard_emergency_triggered=True)
            cancel = rig.robot.readers["amr_cmd"].wait_for(
                lambda s: s.command_type.name == "CANCEL_TASK", 5.0
            )
            assert cancel is not None
            time.sleep(0.05)  # the thread goes on publishing
        finally:
            ex.streamer.stop()
    trip = next(i for i, (_, held) in enumerate(order) if held is True)
    assert any(held is False for _, held in order[:trip])  # it was moving
    after = order[trip:]
    cancel_at = next(i for i, (what, _) in enumerate(after) if what == "amr CANCEL_TASK")
    assert {what for what, _ in after[:cancel_at]} == {"upper", "lower"}  # held, both
    assert all(held is True for what, held in after if what in ("upper", "lower"))
    assert "motion held" not in after[cancel_at][1]  # not logged before the cancel
    assert "motion held" in [e["event"] for e in logs]


def test_an_exception_in_a_leaf_is_an_internal_safe_stop_not_the_end_of_the_service(
    rig: Rig,
) -> None:
    """Our own code failing mid-mission: hold, latch SAFE_STOP ``internal`` naming the node
    and the exception, keep serving; after a reset the next mission runs."""
    bad = Probe("Bad Leaf")
    published = _move_and_record(rig, bad)
    rig.ex.streamer.step()
    assert published == [False]  # moving
    bad.explode = True
    rig.ex.tick()
    assert rig.ex.state is ExecState.SAFE_STOP
    (cause,) = rig.ex.monitor.reasons
    assert cause.code == "internal"
    assert cause.message == "Atom/Priorities/Mission Slot/Bad Leaf: ZeroDivisionError: leaf bug"
    assert rig.ex.counters.tick_errors == 1
    published.clear()
    rig.ex.streamer.step()
    assert published == [True]  # the hold, nothing else
    assert not rig.ex.start_mission("next", Log("fine"))[0]
    rig.tick_until(lambda: rig.ex.reset()[0])
    assert rig.ex.start_mission("next", Log("fine"))[0]
    rig.tick_until(lambda: rig.ex.state is ExecState.SUCCEEDED)


def test_requests_from_other_threads_run_on_the_tick(rig: Rig) -> None:
    future = rig.ex.submit(lambda: rig.ex.start_mission("queued", Log("q")))
    assert not future.done()
    rig.ex.tick()
    assert future.result(0)[0]


class Reader(py_trees.behaviour.Behaviour):
    """A leaf with a blackboard client, as every robot leaf has."""

    def __init__(self) -> None:
        super().__init__("Reader")
        self.bb = self.attach_blackboard_client(name="Reader")
        self.bb.register_key("/robot/upper_state", access=py_trees.common.Access.READ)

    def update(self) -> Status:
        return Status.SUCCESS


def test_finished_and_refused_missions_leave_no_blackboard_clients(rig: Rig) -> None:
    """py_trees registers every client for good unless told: the soak saw the service grow."""
    before = len(py_trees.blackboard.Blackboard.clients)
    for _ in range(3):
        assert rig.ex.start_mission("read", Reader())[0]
        rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING)
        assert rig.ex.state is ExecState.SUCCEEDED
    assert rig.ex.start_mission("forever", Probe())[0]
    assert not rig.ex.start_mission("refused", Reader())[0]  # built, never run
    rig.ex.stop_mission()
    assert len(py_trees.blackboard.Blackboard.clients) == before


def _move_and_record(rig: Rig, probe: Probe | None = None) -> list[bool]:
    """Start a mission (``probe``), set the streamer moving an elbow at 500 Hz; the list
    fills with ``held`` for every command that leaves."""
    published: list[bool] = []
    rig.ex.streamer.on_publish = lambda topic, q, held: published.append(held)
    probe = probe or Probe()
    assert rig.ex.start_mission("forever", probe)[0]
    rig.tick_until(lambda: probe.status is Status.RUNNING)
    measured = rig.ex.streamer.measured_joints(["left_elbow_pitch"])
    rig.ex.streamer.submit(
        plan(PROFILE, {"left_elbow_pitch": 0.6}, measured, time.monotonic(), duration=10.0)
    )
    return published


def _wait_latched(rig: Rig, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not rig.ex.monitor.latched:
        assert time.monotonic() < deadline, "never latched"
        time.sleep(0.002)


def test_a_garbled_estop_sample_holds_and_latches_undecodable(rig: Rig) -> None:
    """A sample on rt/emergency/state that does not decode may be an e-stop: the fast path
    holds on the listener thread, and the stop is latched as ``undecodable``, naming the
    topic and why. Every command after it is the hold; a reset waits for a good sample."""
    published = _move_and_record(rig)
    rig.ex.streamer.start()
    try:
        deadline = time.monotonic() + 5
        while published.count(False) < 10:  # moving first, so the test cannot pass on silence
            assert time.monotonic() < deadline
            time.sleep(0.005)
        # a parameter list: what a mutable type would send, not an EmergencyState_
        raw_write(rig.robot.writers["emergency_state"], b"\x00\x03\x00\x00\x01\x00\x00\x00")
        _wait_latched(rig)
        tripped = len(published)
        time.sleep(0.05)  # the streamer goes on publishing
    finally:
        rig.ex.streamer.stop()
    assert not all(published[:tripped]) and False in published[:tripped]
    first_hold = published.index(True)
    assert all(published[first_hold:]), "a moving command left after the hold"
    (cause,) = rig.ex.monitor.reasons
    assert cause.code == "undecodable"
    assert cause.message == (
        "rt/emergency/state: undecodable sample "
        "(PL_CDR_LE encapsulation is not a @final EmergencyState_ (XCDR1 or plain XCDR2 expected))"
    )
    rig.ex.tick()
    assert rig.ex.state is ExecState.SAFE_STOP
    health = rig.ex.adapter.io.readers["emergency_state"].health
    assert health.errors >= 1 and health.undecodable
    ok, message = rig.ex.reset()
    assert not ok and "undecodable" in message
    rig.tick_until(lambda: not rig.ex.adapter.io.readers["emergency_state"].health.undecodable)
    assert rig.ex.reset()[0]


def test_the_estop_topic_falling_silent_mid_motion_trips_stale_state(rig: Rig) -> None:
    """rt/emergency/state silenced mid-motion once let a mission run on, and an e-stop raised
    after that was never seen. Now its silence is a SAFE_STOP naming the topic."""
    published = _move_and_record(rig)
    rig.ex.streamer.step()
    assert published == [False]
    rig.silent.add("emergency_state")
    rig.tick_until(lambda: rig.ex.monitor.latched, timeout=5.0)
    (cause,) = rig.ex.monitor.reasons
    assert cause.code == "stale_state" and "rt/emergency/state silent for" in cause.message
    published.clear()
    rig.ex.streamer.step()
    assert published == [True]
    ok, message = rig.ex.reset()
    assert not ok and "rt/emergency/state silent for" in message
    rig.silent.clear()
    rig.tick_until(lambda: rig.ex.reset()[0])


def test_a_silent_robot_cannot_start_a_mission(rig: Rig) -> None:
    """With a safety source silent, start is refused naming it (once, with the whole robot
    silent, a reset was accepted, status said CLEAR, and start sent a MOVE_TO_TAG)."""
    rig.silent.update({"emergency_state", "main_nodes_state"})
    time.sleep(1.1)  # older than every source's maximum age
    rig.state()
    ok, message = rig.ex.start_mission("hello", Log("hi"))
    assert not ok
    assert "rt/emergency/state silent for" in message
    assert "rt/main/nodes/state silent for" in message
    assert rig.ex.not_ready() and rig.ex.state is ExecState.IDLE
    rig.silent.clear()
    rig.tick_until(lambda: not rig.ex.not_ready())
    assert rig.ex.start_mission("hello", Log("hi"))[0]


def test_a_start_racing_a_fast_path_trip_is_refused_and_the_hold_stays(rig: Rig) -> None:
    """The fast path holds, sends the robot's safe stop, then latches, on the adapter's
    thread. A start judged in that window used to see "not latched", release the hold and
    run its mission until the next tick (on a robot without the C reflex, its leaves could
    command motion from an undone hold). Now the two exclude each other: the start waits
    for the latch and is refused, and the hold stays."""
    published = _move_and_record(rig)
    rig.ex.streamer.step()
    assert published == [False]  # moving, so the test cannot pass on silence
    assert rig.ex.stop_mission("operator")[0]
    rig.ex.tick()

    in_safe_stop = threading.Event()
    go_on = threading.Event()
    safe_stop = rig.ex.reaction.safe_stop

    def slow_safe_stop() -> object:
        in_safe_stop.set()
        assert go_on.wait(5.0)
        return safe_stop()

    rig.ex.reaction.safe_stop = slow_safe_stop
    results: list[tuple[bool, str]] = []
    racer = threading.Thread(target=lambda: results.append(rig.ex.start_mission("b", Probe())))
    # written from a thread of its own: in-process, the trip runs on the writing thread
    pressed = threading.Thread(target=lambda: rig.state(hard_emergency_triggered=True))
    try:
        pressed.start()
        assert in_safe_stop.wait(5.0), "the trip never reached the safe stop"
        assert rig.ex.streamer.held and not rig.ex.monitor.latched  # the window
        racer.start()
        racer.join(0.3)  # unfixed, the start was accepted here, inside the window
    finally:
        go_on.set()
        racer.join(5.0)
    ((ok, message),) = results
    assert not ok and "SAFE_STOP is latched" in message
    assert rig.ex.monitor.latched and rig.ex.streamer.held and rig.ex.run is None
    published.clear()
    rig.ex.streamer.step()
    rig.ex.tick()
    rig.ex.streamer.step()
    assert all(published), "a moving command left after the trip"
