"""``--realtime`` when the processes do not come up: the scenario's error says why in one
line, at once (not a traceback, not a 30 s wait for a process that has exited), and the
logs go with the scenario's files (``--keep``).

The simulated Atom refuses an unknown ``--physics`` at start; a scenario's world is
checked before it runs, so the world is changed after loading, as a world key the checks
missed would reach the sim. The service refuses a config key at start the same way.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from executive.harness.stack import running_stack
from executive.scenario.load import load_scenario
from executive.scenario.realtime import RealtimeRun
from executive.scenario.simtime import lockstep_part
from executive.scenario.verdict import judge
from executive.seam.profile import load_profile

pytestmark = pytest.mark.dds

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "missions" / "tests" / "atom" / "head_scan.battery.test.yaml"


def test_a_sim_that_exits_at_start_is_the_scenarios_error_at_once(tmp_path: Path) -> None:
    scenario, problems = load_scenario(SCENARIO)
    assert scenario is not None, problems
    broken = dataclasses.replace(scenario, world={**scenario.world, "physics": "bullet"})
    started = time.monotonic()
    outcome = RealtimeRun(broken, tmp_path / "real").run()
    assert time.monotonic() - started < 20  # the sim's exit seen, not its 30 s timeout
    assert outcome.story is None
    assert "the sim exited (2) before it came up" in outcome.error, outcome.error
    assert "bullet" in outcome.error, outcome.error  # the sim's own words, its last line
    assert "\n" not in outcome.error
    assert set(outcome.files) == {"sim log", "executive log"}  # kept with --keep
    profile = load_profile(scenario.profile)
    (failure,) = judge(broken, outcome, lockstep_part(profile), profile)
    assert failure.what == "run" and "bullet" in str(failure)


def test_a_service_that_refuses_its_config_is_said_with_the_key(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        stack.write_config(no_such_key=1)
        started = time.monotonic()
        with pytest.raises(ChildProcessError, match=r"the service exited \(\d+\)") as e:
            stack.start_service()
        assert time.monotonic() - started < 20
        assert "no_such_key" in str(e.value)
