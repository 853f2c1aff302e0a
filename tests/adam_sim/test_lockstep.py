"""The simulated Adam in simulated time (``executive.robots.adam.lockstep``): the sim and
the executive's adapter on the in-process wire carry what stock cyclonedds-python reads;
a scenario runs the same on every run; ``world:`` starts the same sim as ``--realtime``'s
command line; what the Adam cannot have (an e-stop, a button, a physics) is refused before
anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from executive.clock import SimClock
from executive.robots.adam.adapter import AdamAdapter
from executive.robots.adam.interface import AdamInterface
from executive.robots.adam.lockstep import PART, _config
from executive.robots.adam.sim.cli import build_parser
from executive.robots.adam.sim.node import AdamSimConfig
from executive.robots.adam.sim.record import Recording
from executive.robots.simkit import cli as kit
from executive.scenario.load import load_scenario
from executive.scenario.simtime import SimulatedRun
from executive.seam.profile import load_profile
from executive.wire import dds, loop

ROOT = Path(__file__).resolve().parents[2]
ADAM = ROOT / "missions" / "adam"
SCENARIOS = ROOT / "missions" / "tests" / "adam"
PROFILE = load_profile("adam-pro")


def test_the_sim_and_the_adapter_speak_on_the_loop_as_stock_reads_it(tmp_path: Path) -> None:
    """``SimAdam``'s ``LowState_`` on the loop is what cyclonedds-python's own deserializer
    reads; the adapter's snapshot is timed by the simulated clock; the adapter's whole-body
    ``LowCmd_`` reaches the sim and is applied."""
    clock = SimClock()
    robot = PART.open(PROFILE, clock, {"seed": 3}, tmp_path, tmp_path / "record.jsonl")
    bus = robot.participant
    iface = AdamInterface("sdk-1.2")
    stock = loop.reader(bus, loop.topic(bus, "rt/lowstate", iface.LowState_), dds.STATE_READER_QOS)
    adapter = AdamAdapter(PROFILE, bus, iface)
    try:
        clock.advance(0.1)
        robot.run_due(0.1)
        (sample,) = stock.take()
        assert len(sample.motor_state) == 31
        snap = adapter.snapshot()
        assert snap.taken == 0.1
        measured = snap.joints["body"].sample
        assert np.allclose(measured, [m.q for m in sample.motor_state], atol=1e-6)
        assert np.abs(measured).max() > 1e-4  # the seeded jitter: a start pose, not zeros
        body = adapter.streams[0]
        target = measured.copy()
        target[PROFILE.joints["right_elbow"].index] = -0.5
        body.write(body.encode(target))
        clock.advance(0.2)
        robot.run_due(0.2)
        assert robot.sim.counters["body"].as_dict()["applied"] == 1
        assert adapter.wire_mismatches() == []  # one table at both ends: nothing to discover
    finally:
        adapter.close()
        robot.close()


def _transitions(record: Path) -> list[tuple[str, str]]:
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    return [(e["node"], e["status"]) for e in lines if e["event"] == "node"]


def test_a_scenario_runs_the_same_every_time(tmp_path: Path) -> None:
    scenario, problems = load_scenario(SCENARIOS / "arms_wave.servo_error.test.yaml")
    assert scenario is not None, problems
    runs = []
    for name in ("1", "2"):
        (tmp_path / name).mkdir()
        runs.append(SimulatedRun(scenario, tmp_path / name).run())
    first, second = runs
    assert first.story is not None and first.story.result == "SAFE_STOP"
    assert _transitions(first.files["run record"]) == _transitions(second.files["run record"])
    a, b = Recording.load(first.files["sim record"]), Recording.load(second.files["sim record"])
    assert len(a.streams) > 1000
    assert [(c.t, c.topic, c.q) for c in a.streams] == [(c.t, c.topic, c.q) for c in b.streams]
    assert first.joints == second.joints


def test_world_starts_the_same_sim_as_the_realtime_command_line(tmp_path: Path) -> None:
    world = {
        "seed": 9,
        "interface": "seed",
        "battery": 40,
        "battery_drain": 2.0,
        "noise": 0.001,
        "joint_speed_scale": 1.5,
        "faults": ["servo-error:left_knee=7", "dropout:hand_state@2"],
    }
    assert PART.check_world(world, tmp_path) == []
    record = tmp_path / "r.jsonl"
    argv = PART.sim_argv(PROFILE, world, tmp_path)
    args = build_parser().parse_args([*argv, "--record", str(record)])
    assert AdamSimConfig(**kit.config_fields(args)) == _config(world, PROFILE, record)


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "s.test.yaml"
    path.write_text(f"test: t\nmission: arms_wave\nprofile: adam-pro\n{text}")
    scenario, problems = load_scenario(path, ADAM)
    assert scenario is None
    return [str(p) for p in problems]


def test_what_the_adam_cannot_have_is_refused_before_it_runs(tmp_path: Path) -> None:
    said = _problems(
        tmp_path,
        "world: {physics: kinematic, interface: seed}\nevents:\n"
        "  - {at: 1, fault: estop-soft}\n"
        "  - {at: 1, press: A}\n"
        "  - {at: 1, fault: 'servo-error:right_elbow_pitch'}\n"
        "  - {at: 1, fault: battery=15}\n"
        "expect: {result: SUCCEEDED}\n",
    )
    assert any("world.physics: not a world key of the simulated Adam" in s for s in said), said
    assert any("events[0].fault: the PND Adam has no estop-soft on DDS" in s for s in said), said
    assert any("events[1].press: no button 'A'" in s for s in said), said
    assert any("events[2].fault: servo-error needs a body joint" in s for s in said), said
    # the seed interface has no battery_data
    assert any("events[3].fault: battery-level needs an interface" in s for s in said), said
