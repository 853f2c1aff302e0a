"""The GRX in simulated time (``executive.robots.grx.lockstep``): the adapter and the
simulator on the in-process zenoh, stepped in lockstep with the tick.

The safety test in its words: a servo error mid-leg of walk_square, the robot walking
(non-zero axes) before it and told nothing that moves it from one map period after it;
and the same scenario with the adapter's zero axes taken out fails, naming the axes the
robot still walks on once the stream's dead man ends it without zeros (the GRX keeps the
last axes it received). Then: the same scenario
gives the same run every time; the joystick stream's dead man runs on the simulated
clock; world keys, faults and clears are checked as the simulator takes them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from executive.clock import SimClock
from executive.robots.grx import commands as commands_module
from executive.robots.grx import interface as wire
from executive.robots.grx.commands import ZERO_REPEATS, GrxCommands
from executive.robots.grx.lockstep import PART, undo
from executive.robots.grx.settings import settings_of
from executive.robots.grx.sim import model_of as sim_model
from executive.robots.grx.sim import parser as sim_parser
from executive.robots.simkit.scheduler import Scheduler
from executive.scenario.load import load_scenario
from executive.scenario.model import Scenario
from executive.scenario.simtime import SimulatedRun
from executive.scenario.story import Outcome
from executive.scenario.verdict import judge
from executive.seam.profile import load_profile
from executive.wire.zenoh_loop import ZenohLoop

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "missions" / "tests" / "grx"
PROFILE = load_profile("grx")


def scenario(name: str) -> Scenario:
    loaded, problems = load_scenario(SCENARIOS / f"{name}.test.yaml")
    assert loaded is not None, [str(p) for p in problems]
    return loaded


def run(s: Scenario, workdir: Path) -> Outcome:
    workdir.mkdir(parents=True, exist_ok=True)
    return SimulatedRun(s, workdir).run()


def test_a_servo_error_mid_leg_stops_the_walk_at_once(tmp_path: Path) -> None:
    s = scenario("walk_square.servo_error")
    outcome = run(s, tmp_path)
    assert outcome.story is not None and outcome.story.result == "SAFE_STOP"
    (fired,) = outcome.fired
    assert fired.t is not None and outcome.record is not None
    # first: it was walking, and told to
    assert fired.moving and "axes forward +0.50" in fired.moving[0]
    assert PART.motion_after(outcome.record, fired.t - 0.5, fired.t)
    # then nothing that moves it, from the next map the adapter hears (20 ms) on
    assert PART.motion_after(outcome.record, fired.t + wire.PERIOD) == []
    assert judge(s, outcome, PART, PROFILE) == []


def test_without_the_zero_axes_the_robot_walks_on_and_the_scenario_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bug: no zero axes, neither at the stop nor after the stream's dead man
    monkeypatch.setattr(GrxCommands, "stop", lambda self, latch=False: None)
    monkeypatch.setattr(commands_module, "ZERO_REPEATS", 0)
    s = scenario("walk_square.servo_error")
    failures = judge(s, run(s, tmp_path), PART, PROFILE)
    assert [f.what for f in failures] == ["expect.no_motion_after"]
    assert "axes [[0.0, 0.5], [0.0, 0.0]] held since" in failures[0].message


def test_the_same_scenario_gives_the_same_run_every_time(tmp_path: Path) -> None:
    s = scenario("walk_square.pause")
    first, second = run(s, tmp_path / "1"), run(s, tmp_path / "2")
    records = [o.record.read_text() for o in (first, second) if o.record is not None]
    assert len(records) == 2 and records[0] == records[1]  # every client map, at its time
    assert first.story is not None and second.story is not None
    assert (first.story.result, first.story.started) == (second.story.result, second.story.started)
    assert [f.t for f in first.fired] == [f.t for f in second.fired]


def test_the_joystick_stream_and_its_dead_man_run_on_the_simulated_clock() -> None:
    clock = SimClock()
    scheduler = Scheduler(clock=clock)
    net = ZenohLoop(clock, scheduler.add)
    settings = settings_of(PROFILE)
    heard: list[tuple[float, list[float]]] = []
    net.open().declare_subscriber(
        wire.client_key("grx"),
        lambda s: heard.append((clock(), wire.decode(s.payload.to_bytes())[wire.AXIS_LEFT])),
    )
    commands = GrxCommands(net.open(), wire.schema("seed"), settings, {})  # type: ignore[arg-type]
    assert commands._thread is None  # no thread: the loop's driver runs its periods
    commands.set_velocity(0.5, 0.0, 0.0, ttl=0.1)
    while scheduler.due() < 0.3:
        clock.advance(scheduler.due())
        scheduler.run_due(clock())
    walking = [t for t, left in heard if left == [0.0, 0.5]]
    assert walking == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08])  # until the dead man
    assert [left for _, left in heard[len(walking) :]] == [[0.0, 0.0]] * ZERO_REPEATS
    commands.close()


def test_world_faults_and_clears_are_checked_as_the_simulator_takes_them() -> None:
    base = Path(".")
    assert PART.check_world({"interface": "m4", "task_seconds": 0.3}, base) == []
    assert PART.check_world({"interface": "m5", "task_seconds": 0}, base) == [
        ("interface", "must be one of seed, m4"),
        ("task_seconds", "must be a number > 0"),
    ]
    assert PART.check_fault("error 0x2310", {}) is None
    assert PART.check_fault("estop on", {"interface": "m4"}) is None
    assert PART.check_fault("estop on", {}) == "the seed schema has no e-stop"
    assert (
        PART.check_fault("silence arms", {}) == "unknown category 'arms' (comm robot task grx all)"
    )
    assert "unknown command 'explode'" in (PART.check_fault("explode", {}) or "")
    assert "not a fault" in (PART.check_fault("status", {}) or "")
    assert undo("error 0x2310 2") == "error 0 2"
    assert undo("silence task") == "resume task"
    assert undo("heartbeat off") == "heartbeat on"
    with pytest.raises(ValueError, match="nothing to clear"):
        undo("garbage grx")


def test_the_sim_record_is_every_client_map_on_the_simulated_clock(tmp_path: Path) -> None:
    outcome = run(scenario("stand_up.succeeds"), tmp_path)
    assert outcome.record is not None
    lines = [json.loads(line) for line in outcome.record.read_text().splitlines()]
    tasks = [ln for ln in lines if ln["key"] == wire.client_key("task")]
    assert {wire.TASK_COMMAND: 35} in [ln["fields"] for ln in tasks]  # servo_on, by its TID
    assert all(0.0 <= ln["t"] < 5.0 for ln in lines)  # simulated seconds, not the wall's


@pytest.mark.parametrize("physics", ["mujoco", "kinematic"])
def test_the_joints_move_in_simulated_time_as_the_sim_process_moves_them(
    physics: str, tmp_path: Path
) -> None:
    """The lockstep's body is the sim process's (``--physics``): the same joints after the
    same simulated second as the process's model stepped by its own loop's period."""
    clock = SimClock()
    robot = PART.open(PROFILE, clock, {"physics": physics}, tmp_path, tmp_path / "record.jsonl")
    body = robot.sim.model.body
    assert body is not None and body.mode == physics
    start = body.positions()
    periods = 0
    while clock() < 1.0:
        clock.advance(robot.due())
        robot.run_due(clock())
        periods += 1
    robot.close()
    process = sim_model(sim_parser().parse_args(["--physics", physics]))
    for _ in range(periods):  # (its loop: step, then publish, every period)
        process.step(robot.sim.period)
    assert process.body is not None
    assert body.positions() == process.body.positions()
    sag = max(abs(a - b) for a, b in zip(body.positions(), start, strict=True))
    assert (sag > 1e-4) if physics == "mujoco" else (sag == 0.0), sag  # held under gravity
    assert PART.check_world({"physics": "bullet"}, Path(".")) == [
        ("physics", "must be one of mujoco, kinematic")
    ]
