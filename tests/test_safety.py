"""Safety monitor: every trigger, hysteresis, the latch, reset refusal, the e-stop fast path."""

from __future__ import annotations

from typing import Any

import py_trees
import pytest

from executive.core.safety import (
    Activity,
    Cause,
    EstopFastPath,
    SafetyConfig,
    SafetyMonitor,
    SafetyWatchdog,
)
from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.state import AtomState, estop_flags
from executive.robots.atom.topics import STATE_TOPICS, TOPICS
from executive.seam.ports import ReaderHealth, RobotSnapshot, Stamped
from executive.seam.profile import load_profile
from executive.wire.codec import Codec

IFACE = Interface()
TYPES = {topic: TOPICS[topic].type_name for topic in STATE_TOPICS}


class World:
    """A snapshot of healthy robot state, to break one piece at a time."""

    def __init__(self, iface: Interface = IFACE) -> None:
        self.now = 50.0
        self.rec = {t: Codec(getattr(iface, n)).zeros() for t, n in TYPES.items()}
        for t in ("upper_state", "lower_state"):
            self.rec[t]["bms_state"]["battery_level"] = 80
        self.rec["upper_state"]["is_upper_control"] = True
        self.received = dict.fromkeys(TYPES, self.now)

        self.atom = AtomState(iface, {}, {}, STATE_TOPICS, clock=lambda: self.now)

    def snapshot(
        self, health: dict[str, ReaderHealth] | None = None, missing: tuple[str, ...] = ()
    ) -> RobotSnapshot:
        """The Atom adapter's snapshot of these records (executive.robots.atom.state)."""
        state = {
            t: None if t in missing else Stamped(r, self.received[t]) for t, r in self.rec.items()
        }
        return self.atom.build(state, health or {}, self.now)


def codes(causes: list[Cause]) -> list[str]:
    return [c.code for c in causes]


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def monitor(world: World) -> SafetyMonitor:
    return SafetyMonitor(
        SafetyConfig(max_state_age=0.5, battery_critical=10, battery_hysteresis=5),
        clock=lambda: world.now,
        max_age=load_profile().safety_sources,
    )


def test_healthy_robot_has_no_cause(world: World, monitor: SafetyMonitor) -> None:
    assert monitor.evaluate(world.snapshot(), Activity(True, True, True)) == []


@pytest.mark.parametrize(
    "flag", ["soft_emergency_triggered", "hard_emergency_triggered", "amr_emergency_triggered"]
)
def test_each_estop_flag_trips(world: World, monitor: SafetyMonitor, flag: str) -> None:
    world.rec["emergency_state"][flag] = True
    (cause,) = monitor.evaluate(world.snapshot(), Activity())
    assert cause.code == "estop" and flag in cause.message


def test_the_fourth_estop_flag_of_sdk_1_1(monitor: SafetyMonitor) -> None:
    w = World(Interface(Variant("sdk-1.1.0")))
    w.rec["emergency_state"]["di_emergency_triggered"] = True
    assert codes(monitor.evaluate(w.snapshot(), Activity())) == ["estop"]


@pytest.mark.parametrize(
    ("breakage", "code"),
    [
        (lambda w: w.rec["upper_state"]["bms_state"].__setitem__("bms_alarms", 4), "bms_alarm"),
        (lambda w: w.rec["lower_state"]["bms_state"].__setitem__("bms_alarms", 1), "bms_alarm"),
        (
            lambda w: w.rec["amr_state"]["amr_event"].__setitem__("emergency_stop_pressed", True),
            "amr_estop",
        ),
        (
            lambda w: w.rec["main_nodes_state"]["left_arm"]["error_code"].__setitem__(3, 0x21),
            "servo_error",
        ),
        (lambda w: w.rec["main_nodes_state"]["waist"].__setitem__("error_code", 7), "servo_error"),
        (lambda w: w.received.__setitem__("upper_state", 49.0), "stale_state"),
        (
            lambda w: w.rec["upper_state"]["bms_state"].__setitem__("battery_level", 9),
            "battery_critical",
        ),
        (lambda w: w.rec["upper_state"].__setitem__("is_upper_control", False), "control_revoked"),
    ],
)
def test_each_trigger(world: World, monitor: SafetyMonitor, breakage: Any, code: str) -> None:
    breakage(world)
    assert codes(monitor.evaluate(world.snapshot(), Activity(True, True, True))) == [code]


def test_stale_state_and_revoked_control_only_trip_during_a_mission(
    world: World, monitor: SafetyMonitor
) -> None:
    world.received["upper_state"] = 0.0
    world.rec["upper_state"]["is_upper_control"] = False
    assert monitor.evaluate(world.snapshot(), Activity(mission_running=False)) == []
    # a running mission commands the robot (the base, the FSM) even when no joint moves
    assert codes(monitor.evaluate(world.snapshot(), Activity(True, False, False))) == [
        "stale_state"
    ]


@pytest.mark.parametrize("topic", STATE_TOPICS)
def test_every_safety_source_has_a_maximum_age(
    world: World, monitor: SafetyMonitor, topic: str
) -> None:
    """Silence on any source trips while a mission runs: once only two topics were checked,
    and a silenced rt/emergency/state let a mission run on (and miss the e-stop after it)."""
    world.received[topic] = world.now - 0.6
    (cause,) = monitor.evaluate(world.snapshot(), Activity(mission_running=True))
    assert cause.code == "stale_state" and TOPICS[topic].name in cause.message
    assert "silent for 0.60 s" in cause.message


def test_the_profile_gives_each_source_its_age(world: World) -> None:
    monitor = SafetyMonitor(clock=lambda: world.now, max_age={"main_nodes_state": 1.0})
    world.received["main_nodes_state"] = world.now - 0.9
    world.received["upper_state"] = world.now - 9  # not a safety source of this monitor
    assert monitor.evaluate(world.snapshot(), Activity(mission_running=True)) == []
    world.received["main_nodes_state"] = world.now - 1.1
    assert codes(monitor.evaluate(world.snapshot(), Activity(mission_running=True))) == [
        "stale_state"
    ]
    override = SafetyMonitor(SafetyConfig(max_state_age=2.0), max_age={"amr_state": 0.5})
    assert override.max_age == {"amr_state": 2.0}


def test_a_stalled_executive_does_not_blame_the_robot_s_topics(world: World) -> None:
    """After the executive itself stalled (SIGSTOP, starved: no evaluation for stall_s), the
    samples' ages are its own, not the robot's: no stale_state for topics the robot kept
    publishing (their samples wait in the readers' queues). One that is really silent
    trips a limit after the executive runs again (issue 25)."""
    monitor = SafetyMonitor(clock=lambda: world.now, max_age={"upper_state": 0.5}, stall_s=1.0)
    running = Activity(mission_running=True)
    assert monitor.evaluate(world.snapshot(), running) == []
    world.now += 8.0  # stopped for 8 s: no tick, no sample delivered
    assert monitor.evaluate(world.snapshot(), running) == []
    assert monitor.not_ready(world.snapshot()) == []
    world.now += 0.02
    world.received["upper_state"] = world.now  # the queued samples arrive: fresh
    assert monitor.evaluate(world.snapshot(), running) == []
    world.now += 0.3  # then the robot really goes silent: counted from its last sample
    assert monitor.evaluate(world.snapshot(), running) == []
    world.now += 0.3
    assert codes(monitor.evaluate(world.snapshot(), running)) == ["stale_state"]


def test_a_robot_silent_through_the_executive_s_stall_trips_a_limit_after_it(
    world: World,
) -> None:
    monitor = SafetyMonitor(clock=lambda: world.now, max_age={"upper_state": 0.5}, stall_s=1.0)
    running = Activity(mission_running=True)
    assert monitor.evaluate(world.snapshot(), running) == []
    world.now += 8.0
    assert monitor.evaluate(world.snapshot(), running) == []  # not evidence yet
    world.now += 0.51  # nothing arrived in the executive's own 0.51 s awake: silent
    (cause,) = monitor.evaluate(world.snapshot(), running)
    assert cause.code == "stale_state" and "silent for 8.51 s" in cause.message


def test_slow_ticks_are_no_stall(world: World) -> None:
    """Ticks 0.9 s apart (under the stall) judge ages as they are: no grace."""
    monitor = SafetyMonitor(clock=lambda: world.now, max_age={"upper_state": 0.5}, stall_s=1.0)
    running = Activity(mission_running=True)
    assert monitor.evaluate(world.snapshot(), running) == []
    world.now += 0.9
    assert codes(monitor.evaluate(world.snapshot(), running)) == ["stale_state"]


def test_idle_robot_that_is_silent_is_not_ready(world: World, monitor: SafetyMonitor) -> None:
    assert monitor.not_ready(world.snapshot()) == []
    world.received["amr_state"] = world.now - 3.25
    state = world.snapshot(missing=("emergency_state",))
    assert monitor.not_ready(state) == [
        "rt/amr/state silent for 3.25 s (limit 0.5 s)",
        "rt/emergency/state never received",
    ]
    assert monitor.evaluate(state, Activity()) == []  # idle: not a trip


def test_an_undecodable_safety_source_is_a_cause(world: World, monitor: SafetyMonitor) -> None:
    bad = ReaderHealth("rt/emergency/state", 3, "unknown encapsulation 12340000", 49.9, 0, True)
    recovered = ReaderHealth("rt/main/nodes/state", 1, "too short", 49.0, 0, False)
    health = {"emergency_state": bad, "main_nodes_state": recovered}
    (cause,) = monitor.evaluate(world.snapshot(health), Activity())
    assert cause == Cause(
        "undecodable", "rt/emergency/state: undecodable sample (unknown encapsulation 12340000)"
    )
    assert monitor.not_ready(world.snapshot(health)) == [cause.message]


def test_battery_hysteresis(world: World, monitor: SafetyMonitor) -> None:
    levels = [12, 9, 12, 14, 15, 16, 9]
    seen = []
    for level in levels:
        world.rec["lower_state"]["bms_state"]["battery_level"] = level
        seen.append("battery_critical" in codes(monitor.evaluate(world.snapshot(), Activity())))
    assert seen == [False, True, True, True, False, False, True]


def test_latch_escalates_and_reset_is_refused_while_present(
    world: World, monitor: SafetyMonitor
) -> None:
    assert monitor.trip([Cause("estop", "soft")])
    assert not monitor.trip([Cause("bms_alarm", "x"), Cause("estop", "again")])  # already latched
    assert codes(monitor.reasons) == ["estop", "bms_alarm"]  # stops only escalate
    ok, message = monitor.reset([Cause("estop", "soft")])
    assert not ok and "cause still present" in message and monitor.latched
    ok, _ = monitor.reset([])
    assert ok and not monitor.latched and monitor.trips == 1


def test_fast_path_reacts_before_latching(world: World, monitor: SafetyMonitor) -> None:
    order: list[str] = []
    fast = EstopFastPath(
        monitor, lambda reason: order.append(f"react {reason} latched={monitor.latched}")
    )
    assert estop_flags(world.rec["emergency_state"]) == ()  # all clear: the adapter is quiet
    sample = world.rec["emergency_state"].copy()
    sample["hard_emergency_triggered"] = True
    (flag,) = estop_flags(sample)
    fast("estop", f"emergency stop: {flag}")  # what the Atom adapter's e-stop callback sends
    assert order == ["react emergency stop: hard_emergency_triggered latched=False"]
    assert monitor.latched


def test_fast_path_holds_and_latches_on_an_undecodable_sample(
    world: World, monitor: SafetyMonitor
) -> None:
    order: list[str] = []
    fast = EstopFastPath(monitor, lambda reason: order.append(f"{reason} {monitor.latched}"))
    expected = "rt/emergency/state: undecodable sample (2 bytes is too short for EmergencyState_)"
    fast("undecodable", expected)
    assert order == [f"{expected} False"]
    assert monitor.reasons == [Cause("undecodable", expected)]


def test_fast_path_latches_even_if_the_reaction_raises(
    world: World, monitor: SafetyMonitor
) -> None:
    def broken(reason: str) -> None:
        raise RuntimeError("writer gone")

    with pytest.raises(RuntimeError):
        EstopFastPath(monitor, broken)("estop", "emergency stop: soft_emergency_triggered")
    assert monitor.latched


def test_the_watchdog_holds_before_it_latches(world: World, monitor: SafetyMonitor) -> None:
    """A cause the tick finds (here a BMS alarm) is held before the latch is stamped and
    logged, as on the fast path: the integration test measures "no motion after the latch"
    from that stamp, and a log line between latch and hold let one trajectory step out."""
    order: list[str] = []

    def react(reason: str) -> None:
        order.append(f"react latched={monitor.latched}")
        world.now += 0.001  # the hold takes time: the latch must be stamped after it

    dog = SafetyWatchdog(monitor, react, lambda: Activity(True, True, True))
    dog.snapshot = world.snapshot  # type: ignore[method-assign]
    world.rec["lower_state"]["bms_state"]["bms_alarms"] = 4
    held_at = world.now + 0.001
    assert dog.update() is py_trees.common.Status.RUNNING
    assert order == ["react latched=False"]
    assert monitor.latched and monitor._latched_at == held_at
    world.rec["upper_state"]["bms_state"]["battery_level"] = 5
    dog.update()  # latched: the causes escalate, the reaction is not repeated
    assert order == ["react latched=False"] and codes(monitor.reasons) == [
        "bms_alarm",
        "battery_critical",
    ]


def test_the_watchdog_latches_even_if_the_reaction_raises(
    world: World, monitor: SafetyMonitor
) -> None:
    def broken(reason: str) -> None:
        raise RuntimeError("writer gone")

    dog = SafetyWatchdog(monitor, broken, lambda: Activity(True, True, True))
    dog.snapshot = world.snapshot  # type: ignore[method-assign]
    world.rec["upper_state"]["bms_state"]["bms_alarms"] = 1
    with pytest.raises(RuntimeError):
        dog.update()
    assert monitor.latched


def test_a_record_changed_in_place_is_read_anew(world: World, monitor: SafetyMonitor) -> None:
    """The snapshot reads the slow topics (servo errors, the base) once per distinct record
    (issue 22): by its bytes, so the same record object changed in place is read again."""
    nodes, amr = world.rec["main_nodes_state"], world.rec["amr_state"]
    for _ in range(2):
        nodes["waist"]["error_code"] = 7
        amr["amr_event"]["emergency_stop_pressed"] = True
        assert codes(monitor.evaluate(world.snapshot(), Activity())) == ["amr_estop", "servo_error"]
        nodes["waist"]["error_code"] = 0
        amr["amr_event"]["emergency_stop_pressed"] = False
        assert monitor.evaluate(world.snapshot(), Activity()) == []
