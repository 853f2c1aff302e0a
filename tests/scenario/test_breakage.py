"""An author who breaks a mission sees a named scenario fail, with the expectation and the
node, in seconds (issue 31's "done when"): a fallback removed, a timeout too short for the
speed caps, a pose moved so the hand misses the cup. Each break is made to a copy of the
shipped missions (or, for the fallback, a mission written here: no shipped mission has
one the simulated Atom can be made to need), and the scenario that passes on the
original fails on the copy, naming what broke."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from executive.scenario.cli import run_file
from executive.scenario.report import FAIL, PASS

ROOT = Path(__file__).resolve().parents[2]
MISSIONS = ROOT / "missions"
SCENARIOS = MISSIONS / "tests" / "atom"

FALLBACK = """\
mission: go_to_bar
description: Drive to the bar; if the base cannot, go and charge instead.
tree:
  fallback:
    name: The bar, else the charger
    children:
      - navigate_to_tag: {name: Drive to the bar, tag: 3, timeout: 30}
      - sequence:
          name: Charge instead
          children:
            - wait: {seconds: 1.0}
            - navigate_to_tag: {name: Drive to the charger, tag: 5, timeout: 30}
"""
FALLBACK_TEST = """\
test: go_to_bar goes to the charger when the base cannot reach the bar
mission: go_to_bar
events:
  - {on_start: Drive to the bar, after: 0.5, fault: amr-failure@1.0}
expect:
  result: SUCCEEDED
  ran: [Drive to the bar, Drive to the charger]
"""


@pytest.fixture
def missions(tmp_path: Path) -> Path:
    """A copy of the shipped missions an author may break (libraries, subtrees, missions)."""
    copy = tmp_path / "missions"
    shutil.copytree(MISSIONS, copy, ignore=shutil.ignore_patterns("tests", "adam", "grx", "aurora"))
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_a_fallback_removed(missions: Path) -> None:
    (missions / "go_to_bar.yaml").write_text(FALLBACK)
    scenario = missions / "go_to_bar.test.yaml"
    scenario.write_text(FALLBACK_TEST)
    assert run_file(scenario).status == PASS
    edit(missions / "go_to_bar.yaml", "  fallback:", "  sequence:")  # its alternative gone
    verdict = run_file(scenario)
    assert verdict.status == FAIL
    assert re.search(
        r"go_to_bar.test.yaml:6:3: expect.result: expected SUCCEEDED; the run ended FAILED "
        r"at 'The bar, else the charger/Drive to the bar'",
        verdict.failures[0],
    ), verdict.failures
    assert verdict.node == "The bar, else the charger/Drive to the bar"


def test_a_timeout_too_short_for_the_speed_caps(missions: Path) -> None:
    """The first move comes from wherever the joints are: the validator cannot know it is
    too short; the scenario does."""
    edit(
        missions / "greeting_wave.yaml",
        "            - move_joints:\n                pose: home\n                timeout: 12",
        "            - move_joints:\n                pose: home\n                timeout: 0.5",
    )
    verdict = run_file(SCENARIOS / "greeting_wave.succeeds.test.yaml", missions)
    assert verdict.status == FAIL
    assert "expect.result: expected SUCCEEDED; the run ended FAILED at " in verdict.failures[0]
    assert verdict.node == "Greet/Come to rest/Move to pose home"
    assert re.search(r"timeout: \w+ is [\d.]+ rad from its target after 0.5 s", verdict.failures[0])


def test_a_pose_moved_so_the_hand_misses_the_cup(missions: Path) -> None:
    """A pose whose author moved its joints and dropped its intent (which validation checks
    by forward kinematics, and would have refused): the hand closes short of the cup."""
    arms = missions / "poses" / "arms.yaml"
    edit(arms, "      right_shoulder_pitch: -0.82\n", "      right_shoulder_pitch: -0.62\n")
    edit(arms, "    intent:\n      right_hand: {at: [0.55, -0.25, 0.22], within: 0.03}\n", "")
    verdict = run_file(SCENARIOS / "deliver_drink.succeeds.test.yaml", missions)
    assert verdict.status == FAIL, verdict.failures
    assert "expect.body[0].hand: when 'Grasp the cup' ended: right_hand at [" in verdict.failures[0]
    assert verdict.node == "Grasp the cup"


def test_an_adam_gesture_swapped_so_the_hand_ends_closed(tmp_path: Path) -> None:
    """The PND Adam (no body model): its scenarios check poses and gestures by joint. An
    author who relaxes the right hand into a fist sees the end check fail, the finger
    named, in counts."""
    copy = tmp_path / "missions"
    shutil.copytree(MISSIONS / "adam", copy / "adam")
    (copy / "tests" / "adam").mkdir(parents=True)
    scenario = copy / "tests" / "adam" / "hands_open_close.succeeds.test.yaml"
    shutil.copy(MISSIONS / "tests" / "adam" / scenario.name, scenario)
    assert run_file(scenario).status == PASS
    edit(
        copy / "adam" / "hands_open_close.yaml",
        "gesture: right_relaxed\n                duration: 0.8",
        "gesture: right_closed\n                duration: 2.0",  # as long as a fist needs
    )
    verdict = run_file(scenario)
    assert verdict.status == FAIL
    assert verdict.failures == [
        f"{scenario}:9:3: expect.end.pose: not at 'right_relaxed' within 5 counts: "
        "right_index 750.000 counts off"
    ], verdict.failures


def test_a_table_tag_changed_so_the_base_stops_at_the_wrong_table(missions: Path) -> None:
    """The base where the robot reports it: the author who sends the cup to tag 2 instead
    of 4 sees the base check of 'Drive to the table' fail, with the distance."""
    edit(missions / "deliver_drink.yaml", "    default: 4\n", "    default: 2\n")
    scenario = missions / "deliver.test.yaml"
    text = (SCENARIOS / "deliver_drink.succeeds.test.yaml").read_text()
    scenario.write_text(text.replace("params: {table_tag: 4}\n", ""))
    verdict = run_file(scenario, missions)
    assert verdict.status == FAIL, verdict.failures
    assert verdict.failures == [
        f"{scenario}:13:7: expect.body[1].base: when 'Drive to the table' ended: the base at "
        "[2.000, 0.000], 2.500 m from [0.0, 1.5] (within 0.1 m expected)"
    ], verdict.failures
    assert verdict.node == "Drive to the table"


def test_a_heading_is_judged_the_shorter_way_round(missions: Path) -> None:
    scenario = missions / "deliver.test.yaml"
    text = (SCENARIOS / "deliver_drink.succeeds.test.yaml").read_text()
    at_bar = "  end: {base: {at: [2.0, 1.5], within: 0.1}}"
    assert at_bar in text
    verdict = run_file(scenario_with(scenario, text, at_bar, "heading: 3.0"), missions)
    assert verdict.status == FAIL, verdict.failures
    (said,) = verdict.failures
    got = float(re.findall(r"the base heading (-?[\d.]+) rad", said)[0])
    # the same heading given a turn further round passes
    turned = f"heading: {got + 6.283185307179586}, heading_within: 0.01"
    assert run_file(scenario_with(scenario, text, at_bar, turned), missions).status == PASS


def scenario_with(path: Path, text: str, end: str, extra: str) -> Path:
    path.write_text(text.replace(end, end.replace("within: 0.1}", f"within: 0.1, {extra}}}")))
    return path
