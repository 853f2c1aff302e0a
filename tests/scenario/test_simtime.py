"""Simulated time (``executive.scenario.simtime``): the same scenario gives the same run,
tick by tick; a scenario that never ends is ended by its own time limit and said so; an
e-stop holds the arm there as on the robot (nothing moves after it, and it was moving)."""

from __future__ import annotations

import json
from pathlib import Path

from executive.robots.atom.sim.record import Recording
from executive.scenario.load import load_scenario
from executive.scenario.model import Scenario
from executive.scenario.simtime import SimulatedRun, lockstep_part
from executive.scenario.story import Outcome
from executive.scenario.verdict import judge
from executive.seam.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
MISSIONS = ROOT / "missions"


def scenario(tmp_path: Path, text: str) -> Scenario:
    path = tmp_path / "s.test.yaml"
    path.write_text(text)
    loaded, problems = load_scenario(path, MISSIONS)
    assert loaded is not None, [str(p) for p in problems]
    return loaded


def run(s: Scenario, workdir: Path) -> Outcome:
    workdir.mkdir(parents=True, exist_ok=True)
    return SimulatedRun(s, workdir).run()


def transitions(outcome: Outcome) -> list[tuple[str, str, str]]:
    """The run record's node lines (node, status, feedback), without the wall stamps."""
    record = outcome.files["run record"]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    return [(e["node"], e["status"], e["feedback"]) for e in lines if e["event"] == "node"]


WAVE_STOPPED = """\
test: stopped mid-wave
mission: greeting_wave
world: {seed: 7}
events:
  - {on_start: One wave, after: 0.4, request: pause}
  - {on_start: One wave, after: 1.0, request: resume}
  - {on_start: Wave 3 times, after: 2.5, fault: estop-soft}
expect: {result: SAFE_STOP}
"""


def test_the_same_scenario_gives_the_same_run_every_time(tmp_path: Path) -> None:
    s = scenario(tmp_path, WAVE_STOPPED)
    first, second = run(s, tmp_path / "1"), run(s, tmp_path / "2")
    assert first.story is not None and second.story is not None
    assert first.story.result == "SAFE_STOP" and first.story.causes == ("estop",)
    assert transitions(first) == transitions(second)  # every node, every status, in order
    assert [f.t for f in first.fired] == [f.t for f in second.fired]
    assert [f.reply for f in first.fired] == [f.reply for f in second.fired]
    a, b = Recording.load(first.files["sim record"]), Recording.load(second.files["sim record"])
    assert len(a.streams) > 1000
    assert [(c.t, c.topic, c.q) for c in a.streams] == [(c.t, c.topic, c.q) for c in b.streams]
    assert first.joints == second.joints


def test_an_estop_holds_the_arm_as_on_the_robot(tmp_path: Path) -> None:
    """The fast path (an in-process wire has no C reflex) holds at the e-stop sample: the
    arm was being moved before it, and no joint command moves it after."""
    s = scenario(tmp_path, WAVE_STOPPED)
    outcome = run(s, tmp_path / "w")
    estop = outcome.fired[2]
    assert estop.t is not None
    record = Recording.load(outcome.files["sim record"])
    assert record.motion_commands(estop.t - 0.5, before=estop.t, clock="t"), "nothing moved"
    # the sim publishes its e-stop state at 50 Hz: the executive sees it within 20 ms
    record.assert_no_motion_after(estop.t + 0.02, clock="t")
    assert not judge(s, outcome, lockstep_part(load_profile()), load_profile())


def test_a_mission_waiting_forever_is_ended_by_the_time_limit(tmp_path: Path) -> None:
    s = scenario(
        tmp_path,
        "test: nobody confirms\nmission: operator_confirmed_step\n"
        "params: {confirm_timeout: 600}\nexpect: {result: SUCCEEDED}\ntimeout: 8\n",
    )
    outcome = run(s, tmp_path / "w")
    assert outcome.timed_out == "Confirmed placement/Operator confirms"
    assert 8.0 <= outcome.duration < 9.5  # its tail included
    failures = judge(s, outcome, lockstep_part(load_profile()), load_profile())
    assert [f.what for f in failures] == ["timeout", "expect.result"]
    assert "still running at 'Confirmed placement/Operator confirms'" in failures[0].message
    assert failures[0].node == "Confirmed placement/Operator confirms"
    assert outcome.story is not None and outcome.story.result == "ABORTED"  # stopped, recorded


def test_an_event_whose_node_never_comes_is_said(tmp_path: Path) -> None:
    s = scenario(
        tmp_path,
        "test: t\nmission: greeting_wave\nparams: {waves: 1}\nevents:\n"
        "  - {on_start: Acquire control, request: stop}\n"
        "  - {on_start: Back to rest, press: A}\nexpect: {result: ABORTED}\n",
    )
    outcome = run(s, tmp_path / "w")
    assert outcome.fired[0].reply == "stopped by request"
    assert outcome.fired[1].at is None and outcome.fired[1].missed == "'Back to rest' never started"


def test_a_check_at_the_end_of_the_missions_last_node_is_made(tmp_path: Path) -> None:
    """The mission's last node ends on the run's last tick: its body check (and an event
    on its end) comes then, as the run's record tells it to ``--realtime``."""
    s = scenario(
        tmp_path,
        "test: t\nmission: greeting_wave\nparams: {waves: 1}\nexpect:\n  result: SUCCEEDED\n"
        "  body: [{on_end: Release control, pose: home, within: 0.05}]\n",
    )
    outcome = run(s, tmp_path / "w")
    assert 0 in outcome.body, "the check at 'Release control' ended was never made"
    assert not judge(s, outcome, lockstep_part(load_profile()), load_profile())
