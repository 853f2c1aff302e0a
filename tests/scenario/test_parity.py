"""Parity: the simulated-time path may not drift from what the service really does.

A set of shipped scenarios runs both ways, in simulated time (the service's assembly
against the simulator in one process, stepped in lockstep) and against the real service and
simulator processes over the robot's wire (``--realtime``: DDS, the GRX's zenoh), and must
end the same: the same result, the same causes, and the same nodes run in the same order
(the run's record, as the service wrote it, both ways). Each way must also pass the
scenario's own expectations.

The set covers every end (SUCCEEDED, FAILED, ABORTED, SAFE_STOP) and every kind of event
(a fault, a button, an operator's request), on each robot with a lockstep part; each
takes its mission's real seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from executive.scenario.load import load_scenario
from executive.scenario.realtime import RealtimeRun
from executive.scenario.simtime import SimulatedRun, lockstep_part
from executive.scenario.verdict import judge
from executive.seam.profile import load_profile

pytestmark = pytest.mark.dds

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "missions" / "tests"
PARITY = [
    "atom/operator_confirmed_step.succeeds",  # SUCCEEDED, a button
    "atom/head_scan.battery",  # FAILED, a fault (the battery)
    "atom/greeting_wave.stop",  # ABORTED, an operator's stop
    "atom/operator_confirmed_step.estop",  # SAFE_STOP, an e-stop
    "atom/deliver_drink.succeeds",  # SUCCEEDED, the base where the robot reports it, the hand
    "adam/arms_wave.servo_error",  # SAFE_STOP, the PND Adam's own sim and wire
    "grx/walk_square.servo_error",  # SAFE_STOP on zenoh: a servo error mid-walk
    # the Fourier Aurora: the adapter's bridge in-process against the bridge child and the
    # sim in .venv-aurora (cyclonedds 11): the bridge's own trip; a pause and a walk
    "aurora/arm_wave.group_error",  # SAFE_STOP, a group error
    "aurora/arm_hand_walk.pause",  # SUCCEEDED, a pause and a resume, FSMs and a walk
]


@pytest.mark.parametrize("name", PARITY)
def test_both_ways_end_alike(name: str, tmp_path: Path) -> None:
    scenario, problems = load_scenario(TESTS / f"{name}.test.yaml")
    assert scenario is not None, problems
    profile = load_profile(scenario.profile)
    part = lockstep_part(profile)
    (tmp_path / "sim").mkdir()
    simulated = SimulatedRun(scenario, tmp_path / "sim").run()
    real = RealtimeRun(scenario, tmp_path / "real").run()
    for outcome in (simulated, real):
        failures = judge(scenario, outcome, part, profile)
        assert not failures, (outcome.simulated, [str(f) for f in failures])
    a, b = simulated.story, real.story
    assert a is not None and b is not None
    assert (a.result, set(a.causes)) == (b.result, set(b.causes))
    assert a.started == b.started, "the nodes ran in another order"
    assert a.failed_at == b.failed_at
