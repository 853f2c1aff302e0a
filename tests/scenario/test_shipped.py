"""Every shipped scenario (``missions/tests/<robot>/*.test.yaml``) passes in simulated time,
and every shipped mission of a robot that runs in simulated time has its three: its
success, a fault in its middle, and an operator's action (pause, stop).

No middleware: the service's own code against the robot's simulator, stepped in lockstep
(``executive.scenario.simtime``); each scenario takes a few seconds of CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from executive.scenario.cli import run_file
from executive.scenario.load import find_scenarios, load_scenario
from executive.scenario.report import PASS
from executive.seam.profile import load_profile
from executive.seam.registry import SPECS

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "missions" / "tests"
SCENARIOS = find_scenarios([TESTS])


def _id(path: Path) -> str:
    return str(path.relative_to(TESTS)).removesuffix(".test.yaml")


@pytest.mark.parametrize("path", SCENARIOS, ids=_id)
def test_shipped_scenario_passes(path: Path) -> None:
    verdict = run_file(path)
    assert verdict.status == PASS, "\n".join([*verdict.failures, *verdict.events])


def _missions(robot: str) -> list[Path]:
    """A robot's shipped missions: the Atom's at the top of missions/, the others' in a
    folder of their own."""
    folder = ROOT / "missions" / ("" if robot == "atom" else robot)
    return sorted(folder.glob("*.yaml"))


@pytest.mark.parametrize("robot", sorted(r for r, spec in SPECS.items() if spec.lockstep))
def test_every_shipped_mission_has_its_three_scenarios(robot: str) -> None:
    """Its success, a fault in its middle, an operator's action: for every mission of every
    robot that runs in simulated time (``RobotSpec.lockstep``)."""
    scenarios = [load_scenario(p)[0] for p in find_scenarios([TESTS / robot])]
    assert all(s is not None for s in scenarios)
    missing = []
    for mission in _missions(robot):
        mine = [s for s in scenarios if s is not None and s.mission_file == mission.resolve()]
        assert all(load_profile(s.profile).robot == robot for s in mine)
        kinds = {
            "success": any(s.expect.result == "SUCCEEDED" for s in mine),
            "fault": any(e.action == "fault" for s in mine for e in s.events),
            "operator": any(e.action == "request" for s in mine for e in s.events),
        }
        missing += [f"{mission.stem}: no {kind} scenario" for kind, ok in kinds.items() if not ok]
    assert not missing, missing
