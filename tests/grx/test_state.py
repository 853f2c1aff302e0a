"""The GRX's server maps read as safety state, without zenoh: what counts as heard, and
what a map that says less than its schema promises is (a fault, never "no fault")."""

from __future__ import annotations

from typing import Any

import pytest

from executive.robots.grx import interface as wire
from executive.robots.grx.state import GrxState


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _state(schema: str = "seed") -> tuple[GrxState, list[tuple[str, str, str]], Clock]:
    problems: list[tuple[str, str, str]] = []
    clock = Clock()
    state = GrxState(wire.schema(schema), lambda *p: problems.append(p), clock)
    return state, problems, clock


def _send(state: GrxState, category: str, fields: dict[str, Any]) -> None:
    state.receive(category, wire.encode(fields))


def test_a_grx_map_without_its_error_codes_is_a_fault_not_no_error() -> None:
    state, problems, _ = _state()
    _send(state, "grx", {"robot_error_codes": 0, "fourier_grx_version": "3.1"})
    snap = state.snapshot()
    assert snap.servo_errors is not None and snap.servo_errors.sample == ()
    assert not snap.sources["grx"].health.undecodable and problems == []

    _send(state, "grx", {"fourier_grx_version": "3.1"})  # says nothing about errors
    health = state.snapshot().sources["grx"].health
    assert health.undecodable and health.errors == 1
    assert health.last_error == "no robot_error_codes (a safety field of this map)"
    assert problems == [
        (
            "grx",
            "undecodable",
            "fourier-grx/dynalink_interface/grx/server: undecodable sample "
            "(no robot_error_codes (a safety field of this map))",
        )
    ]
    _send(state, "grx", {"robot_error_codes": 0})  # a good map clears it
    assert not state.snapshot().sources["grx"].health.undecodable


@pytest.mark.parametrize(
    ("category", "fields", "missing"),
    [
        ("robot", {"flag_robot_fault": False}, "flag_robot_emergent_stop"),
        ("robot", {"flag_robot_emergent_stop": False}, "flag_robot_fault"),
        ("grx", {"robot_error_codes": [0, 0]}, "robot_battery_percentage"),
        ("comm", {}, "flag_heart_beat"),
    ],
)
def test_an_m4_map_without_a_safety_field_is_a_fault(
    category: str, fields: dict[str, Any], missing: str
) -> None:
    """m4's e-stop flag read as absent was "not stopped"; now the map is undecodable."""
    state, problems, _ = _state("m4")
    _send(state, category, fields)
    health = state.snapshot().sources[category].health
    assert health.undecodable and missing in health.last_error
    assert [(c, code) for c, code, _ in problems] == [(category, "undecodable")]
    assert missing in problems[0][2]


@pytest.mark.parametrize(("beat", "heard"), [(True, True), (1, True), (False, False), (0, False)])
def test_the_heartbeat_is_heard_as_a_bool_or_the_seeds_0_1(beat: object, heard: bool) -> None:
    """The seed says flags are "bool 0/1": a robot sending 1 was never heard (silence, a
    stale_state trip on every mission), while 0 and false are the robot saying it is not
    running (silence, rightly)."""
    state, problems, clock = _state()
    _send(state, "comm", {"flag_heart_beat": beat})
    source = state.snapshot().sources["comm"]
    assert (source.received == clock.now) is heard
    assert not source.health.undecodable and problems == []


@pytest.mark.parametrize("beat", [2, -1, 1.0, "true", None])
def test_a_heartbeat_that_is_not_a_flag_is_undecodable(beat: object) -> None:
    state, problems, _ = _state()
    _send(state, "comm", {"flag_heart_beat": beat})
    source = state.snapshot().sources["comm"]
    assert source.received is None and source.health.undecodable
    assert [code for _, code, _ in problems] == ["undecodable"]


def test_an_estop_and_an_error_in_one_map_both_reach_the_fast_path() -> None:
    state, problems, _ = _state("m4")
    _send(state, "grx", {"robot_error_codes": [0, 0x10], "robot_battery_percentage": 0.8})
    _send(state, "robot", {"flag_robot_emergent_stop": True, "flag_robot_fault": False})
    assert [code for _, code, _ in problems] == ["servo_error", "estop"]
    snap = state.snapshot()
    assert snap.estop is not None and snap.estop.sample == ("flag_robot_emergent_stop",)
    assert snap.battery is not None and snap.battery.sample == pytest.approx(80.0)


def test_a_raising_on_problem_does_not_skip_the_next_report_of_the_same_map() -> None:
    """One m4 robot map brings an e-stop and a fault: a fast path that raises on the first
    did skip the second (and raised out of zenoh's callback); both are reported now, the
    map is read, and the failure is counted, not raised."""
    calls: list[str] = []

    def on_problem(category: str, code: str, message: str) -> None:
        calls.append(code)
        if code == "estop":
            raise RuntimeError("a fast path's bug")

    state = GrxState(wire.schema("m4"), on_problem, Clock())
    _send(state, "grx", {"robot_error_codes": [0], "robot_battery_percentage": 0.8})
    _send(state, "robot", {"flag_robot_emergent_stop": True, "flag_robot_fault": True})
    assert calls == ["estop", "servo_error"]
    snap = state.snapshot()
    assert snap.estop is not None and snap.estop.sample == ("flag_robot_emergent_stop",)
    assert snap.servo_errors is not None and "flag_robot_fault" in snap.servo_errors.sample
    assert not snap.sources["robot"].health.undecodable


@pytest.mark.parametrize("battery", [float("nan"), float("inf"), -0.1, 85, 1.5, True])
def test_an_m4_battery_that_is_not_a_fraction_is_undecodable(battery: object) -> None:
    """NaN never compares below the critical level and 85 (a percent) read as a fraction
    is 8500 %: each read as a healthy battery; now the grx map is undecodable."""
    state, problems, _ = _state("m4")
    _send(state, "grx", {"robot_error_codes": [0], "robot_battery_percentage": 0.5})
    assert not state.snapshot().sources["grx"].health.undecodable and problems == []
    _send(state, "grx", {"robot_error_codes": [0], "robot_battery_percentage": battery})
    health = state.snapshot().sources["grx"].health
    assert health.undecodable and "robot_battery_percentage" in health.last_error
    assert [code for _, code, _ in problems] == ["undecodable"]


def _joint_state(schema: str) -> tuple[GrxState, list[tuple[str, str, str]]]:
    problems: list[tuple[str, str, str]] = []
    layout = {"a": ("robot", 0), "b": ("robot", 1), "c": ("robot", 2)}
    state = GrxState(wire.schema(schema), lambda *p: problems.append(p), Clock(), 3, layout)
    return state, problems


@pytest.mark.parametrize(
    ("schema", "sent"), [("seed", [90.0, -45.0, 0]), ("m4", [1.5708, -0.7854, 0])]
)
def test_the_joints_are_read_in_radians_whatever_the_schemas_unit(
    schema: str, sent: list[float]
) -> None:
    """Below fourier-grx 4.0.0 the robot reports degrees, from it radians (robots.md 3.1):
    the snapshot holds radians by the profile's joint names either way."""
    state, problems = _joint_state(schema)
    assert state.snapshot().joints == {}  # no robot map yet
    flags = {"flag_robot_emergent_stop": False, "flag_robot_fault": False} if schema == "m4" else {}
    _send(state, "robot", {"joint_measured_position": sent, **flags})
    snap = state.snapshot()
    assert snap.positions(["a", "b", "c"]) == pytest.approx(
        {"a": 1.5708, "b": -0.7854, "c": 0.0}, abs=1e-4
    )
    assert problems == [] and snap.position("a").received == 100.0


@pytest.mark.parametrize(
    "joints", [[0.0] * 23, [0.0, "x", 0.0], [0.0, float("nan"), 0.0], 7, [0.0, True, 0.0]]
)
def test_joints_of_another_robot_or_not_numbers_make_the_robot_map_undecodable(
    joints: object,
) -> None:
    """The profile says how many joints the robot reports: 23 (an N1's) for the GR-1 T2's
    32 is a profile for another robot, and the map makes no sense here."""
    state, problems = _joint_state("seed")
    _send(state, "robot", {"joint_measured_position": joints})
    health = state.snapshot().sources["robot"].health
    assert health.undecodable and "joint_measured_position" in health.last_error
    assert [p[1] for p in problems] == ["undecodable"]
    assert state.snapshot().joints == {}
