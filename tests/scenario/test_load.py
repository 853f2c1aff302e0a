"""A scenario file is refused before anything runs, every problem at its file:line:col,
and a valid one is what it says (``executive.scenario.load``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from executive.scenario.load import load_scenario
from executive.scenario.model import Still
from executive.seam.registry import SPECS

ROOT = Path(__file__).resolve().parents[2]
MISSIONS = ROOT / "missions"

GOOD = """\
test: deliver_drink stops on an e-stop on the way to the table
mission: deliver_drink
params: {table_tag: 4}
world: {battery: 80}
events:
  - {on_start: Drive to the table, after: 1.0, fault: estop-soft}
  - {on_start: Wait for button A, press: A}
  - {at: 12.5, request: pause}
expect:
  result: SAFE_STOP
  causes: [estop]
  ran: [Cup in hand]
  never_ran: [Offer the cup]
  no_motion_after: 0
  end: {pose: home, within: 0.02}
timeout: 120
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.test.yaml"
    path.write_text(text)
    return path


def _problems(tmp_path: Path, text: str, missions: Path | None = MISSIONS) -> list[str]:
    scenario, problems = load_scenario(_write(tmp_path, text), missions)
    assert scenario is None
    return [str(p) for p in problems if p.is_error]


def test_the_issues_example_loads_as_written(tmp_path: Path) -> None:
    scenario, problems = load_scenario(_write(tmp_path, GOOD), MISSIONS)
    assert scenario is not None, [str(p) for p in problems]
    assert scenario.mission == "deliver_drink" and scenario.params == {"table_tag": 4}
    assert scenario.world == {"battery": 80} and scenario.timeout == 120
    assert [(e.when, e.node, e.seconds, e.action, e.value) for e in scenario.events] == [
        ("on_start", "Drive to the table", 1.0, "fault", "estop-soft"),
        ("on_start", "Wait for button A", 0.0, "press", "A"),
        ("at", "", 12.5, "request", "pause"),
    ]
    e = scenario.expect
    assert (e.result, e.causes, e.ran, e.never_ran) == (
        "SAFE_STOP",
        ("estop",),
        ("Cup in hand",),
        ("Offer the cup",),
    )
    assert e.no_motion_after == Still(0) and e.end is not None and e.end.pose == "home"
    assert e.where["ran"].line == 12  # each expectation keeps its line for the report


@pytest.mark.parametrize(
    ("change", "where", "said"),
    [
        (("Drive to the table, after", "Drive to table, after"), ":6:16: events[0].on_start",
         "no node 'Drive to table' (did you mean 'Drive to the table'?) in deliver_drink"),
        (("ran: [Cup in hand]", "ran: [Cup in hnd]"), ":12:9: expect.ran[0]", "no node 'Cup in hnd'"),
        (("fault: estop-soft", "fault: estop-sof"), ":6:55: events[0].fault", "unknown fault kind 'estop-sof'"),
        (("request: pause", "request: pauze"), ":8:25: events[2].request", "did you mean 'pause'"),
        (("press: A", "press: Q"), ":7:42: events[1].press", "no button 'Q'"),
        (("{at: 12.5, request: pause}", "{at: 12.5, when: 3, request: pause}"), ":8:16: events[2].when",
         "unknown key"),
        (("{at: 12.5, request: pause}", "{at: 12.5}"), ":8:5: events[2]", "needs exactly one action"),
        (("battery: 80", "batery: 80"), ":4:9: world.batery", "did you mean 'battery'"),
        (("table_tag: 4", "table_tag: x"), ":3:9: params", "deliver_drink.yaml: start argument"),
        (("result: SAFE_STOP", "result: SAFESTOP"), ":10:11: expect.result", "did you mean 'SAFE_STOP'"),
        (("no_motion_after: 0", "no_motion_after: 3"), ":14:20: expect.no_motion_after",
         "the index of an event (0..2)"),
        (("pose: home", "pose: hom"), ":15:15: expect.end.pose", "no pose 'hom' (did you mean 'home'?)"),
        (("mission: deliver_drink", "mission: deliver_drinks"), ":2:10: mission", "no mission 'deliver_drinks'"),
        (("timeout: 120", "timeot: 120"), ":16:1: timeot", "did you mean 'timeout'"),
    ],
)  # fmt: skip
def test_a_wrong_name_is_refused_at_its_line(
    tmp_path: Path, change: tuple[str, str], where: str, said: str
) -> None:
    problems = _problems(tmp_path, GOOD.replace(*change))
    path = str(tmp_path / "x.test.yaml")
    assert any(p.startswith(path + where) and said in p for p in problems), problems


def test_every_problem_is_said_at_once(tmp_path: Path) -> None:
    """Not the first only: a file is fixed in one pass, as a mission is."""
    text = GOOD.replace("Cup in hand", "Cup in hnd").replace("estop-soft", "estop-sof")
    text = text.replace("battery: 80", "batery: 80")
    assert len(_problems(tmp_path, text)) == 3


def test_a_mission_that_does_not_validate_is_named_in_its_own_file(tmp_path: Path) -> None:
    (tmp_path / "poses").mkdir()
    (tmp_path / "broken.yaml").write_text("mission: broken\ntree:\n  wait: {seconds: -1}\n")
    scenario = "test: t\nmission: broken\nexpect: {result: SUCCEEDED}\n"
    problems = _problems(tmp_path, scenario, None)  # found: the folder with poses/
    assert any(p.startswith(str(tmp_path / "broken.yaml") + ":3:") for p in problems), problems


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("mission: deliver_drink\nexpect: {result: SUCCEEDED}\n", "test: required"),
        ("test: t\nmission: deliver_drink\n", "expect: required"),
        ("test: t\nexpect: {result: SUCCEEDED}\n", "one of mission: NAME or file: PATH"),
        ("[1, 2]\n", "expected a mapping"),
        ("test: t\n  bad: [\n", "not valid YAML"),
    ],
)  # fmt: skip
def test_what_is_missing_is_said(tmp_path: Path, text: str, said: str) -> None:
    problems = _problems(tmp_path, text)
    assert any(said in p for p in problems), problems


def test_a_robot_without_a_lockstep_part_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SPECS, "grx", replace(SPECS["grx"], lockstep=""))  # as before it had one
    text = "test: t\nmission: deliver_drink\nprofile: grx\nexpect: {result: SUCCEEDED}\n"
    problems = _problems(tmp_path, text)
    assert any("robot 'grx' cannot run scenarios yet" in p for p in problems), problems


def test_a_node_is_named_by_its_path_where_its_name_is_not_enough(tmp_path: Path) -> None:
    text = (
        "test: t\nmission: serve_two_tables\nevents:\n"
        "  - {on_start: Serve the second table/Wait for button A, press: A}\n"
        "  - {on_start: Serve the third table/Wait for button A, press: A}\n"
        "expect: {result: SUCCEEDED}\n"
    )
    problems = _problems(tmp_path, text)
    assert len(problems) == 1 and "events[1].on_start: no node" in problems[0], problems


@pytest.mark.parametrize(
    ("end", "said"),
    [
        ("{base: {at: [1.0]}}", "15:20: expect.end.base.at: expected [x, y] in m"),
        ("{base: {at: [1, .nan]}}", "15:20: expect.end.base.at: expected [x, y] in m"),
        ("{base: {at: [1, 2], within: 0}}", "expect.end.base.within: expected a number > 0"),
        ("{base: {at: [1, 2], heading: east}}", "expect.end.base.heading: expected rad, got"),
        ("{base: {at: [1, 2], yaw: 1}}", "expect.end.base.yaw: unknown key; known: at, within"),
    ],
)  # fmt: skip
def test_a_base_end_is_checked_as_written(tmp_path: Path, end: str, said: str) -> None:
    text = GOOD.replace("  end: {pose: home, within: 0.02}", f"  end: {end}")
    problems = _problems(tmp_path, text)
    assert any(said in p for p in problems), problems


def test_a_base_end_is_refused_for_a_robot_that_reports_no_base_pose(tmp_path: Path) -> None:
    text = (
        "test: t\nprofile: grx\nmissions: grx\nmission: walk_square\n"
        "expect: {result: SUCCEEDED, end: {base: {at: [0, 0]}}}\n"
    )
    problems = _problems(tmp_path, text, None)
    assert any(
        "expect.end.base: profile 'grx' reports no base pose (a robot with navigation does)" in p
        for p in problems
    ), problems


def test_a_base_end_loads_as_written(tmp_path: Path) -> None:
    text = GOOD.replace(
        "  end: {pose: home, within: 0.02}",
        "  end: {base: {at: [0, 1.5], within: 0.2, heading: -1.5, heading_within: 0.05}}",
    )
    scenario, problems = load_scenario(_write(tmp_path, text), MISSIONS)
    assert scenario is not None, [str(p) for p in problems]
    end = scenario.expect.end
    assert end is not None and end.pose == ""
    assert (end.base, end.base_within, end.heading, end.heading_within) == (
        (0, 1.5),
        0.2,
        -1.5,
        0.05,
    )
