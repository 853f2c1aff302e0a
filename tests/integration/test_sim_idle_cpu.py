"""The simulated Atom idles within its CPU budget beside the idle service (issue 22, 4).

Measured as ``bench/parts/idle.py`` measures it (its ``cpu_windows``): the sim's own process,
every thread, in 1 s windows after the bench's settling pause; the sim at its defaults
(MuJoCo stepping the body every 2 ms, the profile's state rates: upper and lower state at
500 Hz), the service running no mission beside it, as ``atom-executive sim`` and ``run``
run on a robot's PC.

The issue's target is 10 % of a core; the C robot publishing the same topics at the same
rates takes about 5 (the floor: the writes, the wake-ups). Before the idle work the sim
took 9-11 (the median of 1 s windows: bench/parts/idle.py 10 and 11, side by side with the new
one 9-10, at load 0.4-6), 7-8 after (the physics' numpy work around mj_step, the state
samples' encoding and fault checks, the scheduler's loop, empty command takes):
``BUDGET`` sits between, under the target. The median, not the mean: a window the
machine's other load lands in (11 % at load 4.6) does not decide.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from bench.parts.idle import SETTLE_S, TARGETS, cpu_windows
from executive.harness.stack import running_stack

pytestmark = [pytest.mark.dds, pytest.mark.serial]  # serial: it measures CPU

BUDGET = 8.5  # % of a core: the median of the windows
SECONDS = 10.0


def test_the_simulated_atom_idles_within_its_budget_beside_the_service(tmp_path: Path) -> None:
    assert TARGETS["sim"] > BUDGET
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config()
        sim = stack.start_sim()
        stack.start_service()  # ready: it has heard every state topic of the sim
        time.sleep(SETTLE_S)
        windows = cpu_windows({"sim": sim.pid}, SECONDS)["sim"]
        assert sim.poll() is None, f"the sim died; see {stack.log_path('sim')}"
    median, mean = statistics.median(windows), statistics.fmean(windows)
    figures = f"median {median:.1f}, mean {mean:.2f} % of a core; windows {windows}"
    assert median <= BUDGET, figures
