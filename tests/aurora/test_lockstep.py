"""The Aurora in simulated time (``executive/robots/aurora/lockstep.py``): the adapter and
its bridge are the service's, in one process with the simulated robot's model.

A group error mid-wave is held by the bridge's own trip (its message up, through the
adapter's fast path), after motion was being commanded, and nothing moves the robot after
it; the same scenario gives the same run twice; faults and world keys are checked before
anything runs; a mission broken (a timeout too short) fails a scenario naming the node.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from executive.clock import SimClock
from executive.core.runtime import Runtime
from executive.robots.aurora.adapter import AuroraAdapter
from executive.robots.aurora.bridge import Bridge
from executive.robots.aurora.lockstep import PART, clear_message, fault_message
from executive.robots.aurora.sim.record import Recorder, read
from executive.scenario.cli import run_file
from executive.scenario.load import load_scenario
from executive.scenario.model import Scenario
from executive.scenario.report import FAIL, PASS
from executive.scenario.simtime import SimulatedRun
from executive.scenario.story import Outcome
from executive.seam.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
MISSIONS = ROOT / "missions" / "aurora"
SCENARIOS = ROOT / "missions" / "tests" / "aurora"
GROUP_ERROR = SCENARIOS / "arm_wave.group_error.test.yaml"


def scenario(path: Path) -> Scenario:
    loaded, problems = load_scenario(path)
    assert loaded is not None, [str(p) for p in problems]
    return loaded


def run(s: Scenario, workdir: Path) -> Outcome:
    workdir.mkdir(parents=True, exist_ok=True)
    return SimulatedRun(s, workdir).run()


def test_the_service_opens_its_own_adapter_on_the_local_bridge(tmp_path: Path) -> None:
    """What runs is ``AuroraAdapter`` and ``bridge.Bridge``: heard, every source, as the
    service hears the robot (no child process, no DDS)."""
    profile = load_profile("aurora")
    clock = SimClock()
    robot = PART.open(profile, clock, {}, tmp_path, tmp_path / "sim.jsonl")
    runtime = Runtime.build(profile, robot.interface, participant=robot.participant, clock=clock)
    try:
        assert type(runtime.adapter) is AuroraAdapter
        assert type(robot.bridge) is Bridge
        while clock() < 0.2:
            clock.advance(robot.due())
            robot.run_due(clock())
        snap = runtime.adapter.snapshot()
        assert {k: s.received is not None for k, s in snap.sources.items()} == dict.fromkeys(
            profile.sources, True
        )
        assert snap.fsm is not None and snap.fsm.sample == 2  # PD stand, as the sim starts
        assert runtime.executive.not_ready() == []
    finally:
        robot.close()
        runtime.adapter.close()
    assert robot.bridge.latched is not None  # its bye: the bridge held, as on the robot


def test_a_group_error_is_held_by_the_bridge_and_nothing_moves_after(tmp_path: Path) -> None:
    outcome = run(scenario(GROUP_ERROR), tmp_path)
    assert outcome.story is not None and outcome.story.result == "SAFE_STOP"
    fired = outcome.fired[0]
    assert fired.t is not None
    # first: the arm was being commanded to move when the fault came
    assert PART.motion_after(outcome.record, fired.t - 0.5, fired.t), "nothing moved before"
    # the bridge's own trip, through the adapter's link and fast path
    record = [json.loads(line) for line in outcome.files["run record"].read_text().splitlines()]
    end = next(line for line in record if line.get("result") == "SAFE_STOP")
    assert "group_motion_state 3 (error) on left_manipulator" in end["reason"]
    assert "(the Aurora bridge held on its own)" in end["reason"]
    # then: no group command that moves, only the bridge's holds
    assert PART.motion_after(outcome.record, fired.t) == []
    after = [
        c
        for line in read(outcome.record)
        if line.get("topic") == "robot_control_group_cmd" and line["t"] > fired.t
        for c in line["fields"]["group_cmd"]
    ]
    assert after, "the bridge sent no hold"
    assert {c["group_motion_state"] for c in after} == {2}  # stopped, where it is


def _commands(record: Path) -> list[tuple[float, str, str, str]]:
    """The commands the robot took (time, topic, fields without the wall-clock header)."""
    out = []
    for line in read(record):
        if "topic" in line:
            fields = {k: v for k, v in line["fields"].items() if k != "header"}
            out.append((line["t"], line["topic"], json.dumps(fields), line["result"]))
    return out


def test_the_same_scenario_gives_the_same_run_every_time(tmp_path: Path) -> None:
    s = scenario(SCENARIOS / "arm_hand_walk.pause.test.yaml")
    first, second = run(s, tmp_path / "1"), run(s, tmp_path / "2")
    assert first.story is not None and second.story is not None
    assert first.story.started == second.story.started
    assert [f.t for f in first.fired] == [f.t for f in second.fired]
    a, b = _commands(first.record), _commands(second.record)
    assert len(a) > 500 and a == b  # every command the robot took, when, and what it did


def test_faults_are_the_sims_control_requests() -> None:
    assert fault_message("fsm9") == {"fault": "fsm9"}
    assert fault_message("group-error:left_hand") == {"fault": "group_error", "group": "left_hand"}
    assert fault_message("silence:aurora_state+base_data_pub@0.6") == {
        "fault": "silence",
        "topics": ["aurora_state", "base_data_pub"],
        "duration": 0.6,
    }
    assert fault_message("undecodable=2")["count"] == 2
    assert clear_message("group-error:left_hand") == {"clear": True}  # the sim clears all
    for bad, said in [
        ("group-error:left_foot", "is not one of left_leg"),
        ("silence:battery", "are not state topics"),
        ("estop-soft", "known: fsm9, group-error:GROUP"),
        ("fsm9@1", "not a fault of the simulated Aurora"),
    ]:
        with pytest.raises(ValueError, match=said):
            fault_message(bad)
    with pytest.raises(ValueError, match="not a fault of the simulated Aurora"):
        clear_message("all")


def test_the_gr3_body_is_stepped_as_the_sim_process_steps_it(tmp_path: Path) -> None:
    """``physics: mujoco`` (the sim's default, in both ways) gives the model the GR-3's
    body; ``kinematic`` none."""
    profile = load_profile("aurora")
    for physics, stepped in (("mujoco", True), ("kinematic", False)):
        robot = PART.open(profile, SimClock(), {"physics": physics}, tmp_path, tmp_path / "r")
        try:
            assert (robot.model.body is not None) is stepped
        finally:
            robot.close()
    default = PART.open(profile, SimClock(), {}, tmp_path, tmp_path / "r")
    try:
        assert default.model.body is not None
    finally:
        default.close()


def test_a_bad_fault_or_world_is_refused_before_anything_runs(tmp_path: Path) -> None:
    path = tmp_path / "bad.test.yaml"
    path.write_text(
        f"test: bad\nmission: arm_wave\nmissions: {MISSIONS}\nprofile: aurora\n"
        "world: {speed: 0, battery: 50, physics: bullet}\n"
        "events:\n  - {at: 1.0, fault: estop-soft}\n  - {at: 1.0, press: A}\n"
        "expect: {result: SUCCEEDED}\n"
    )
    loaded, problems = load_scenario(path)
    said = "\n".join(str(p) for p in problems)
    assert loaded is None
    assert "world.speed: must be a number > 0" in said
    assert "world.battery: not a world key of the simulated Aurora" in said
    assert "world.physics: must be one of mujoco, kinematic" in said
    assert "not a fault of the simulated Aurora" in said
    assert ":8:" in said  # the press, at its line: the Aurora has no buttons


def test_a_held_position_repeated_is_no_motion(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    rec = Recorder(record, {}, 0.0)

    def group(t: float, q: float, state: int = 1) -> None:
        cmd = {"group_name": "head", "group_motion_state": state, "position": [q, 0.0]}
        rec.add(t, {"topic": "robot_control_group_cmd", "fields": {"group_cmd": [cmd]}})

    group(1.0, 0.1)
    group(2.0, 0.2)
    group(3.0, 0.2)  # the same again: held
    group(4.0, 0.2, state=2)  # a stop
    rec.add(5.0, {"topic": "velocity_cmd", "fields": {"vx": 0.0, "vy": 0.0, "yaw": 0.0}})
    rec.add(6.0, {"topic": "velocity_cmd", "fields": {"vx": 0.2, "vy": 0.0, "yaw": 0.0}})
    rec.close()
    assert len(PART.motion_after(record, 0.0)) == 3
    assert PART.motion_after(record, 1.5, 5.5) == [
        "robot_control_group_cmd head at 2.000 s: change 0.1000 rad"
    ]
    assert PART.motion_after(record, 2.5, 5.5) == []
    assert PART.motion_after(record, 5.5) == ["velocity_cmd at 6.000 s: [0.2, 0.0, 0.0]"]


def test_a_timeout_too_short_fails_naming_the_node(tmp_path: Path) -> None:
    """An author who shortens the raise's timeout below what the arm needs sees the
    success scenario fail at that node, in about a second."""
    missions = tmp_path / "aurora"
    shutil.copytree(MISSIONS, missions)
    scenario_path = tmp_path / "arm_wave.succeeds.test.yaml"
    text = (SCENARIOS / "arm_wave.succeeds.test.yaml").read_text()
    scenario_path.write_text(text.replace("missions: ../../aurora", f"missions: {missions}"))
    assert run_file(scenario_path).status == PASS
    mission = missions / "arm_wave.yaml"
    old = "move_joints: {pose: left_raise, timeout: 8}"
    assert old in mission.read_text()
    mission.write_text(mission.read_text().replace(old, old.replace("8}", "0.5}")))
    verdict = run_file(scenario_path)
    assert verdict.status == FAIL
    assert "expect.result: expected SUCCEEDED; the run ended FAILED at " in verdict.failures[0]
    assert verdict.node == "Wave/Move to pose left_raise"
