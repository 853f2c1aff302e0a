"""With no mission the tick loop runs at its idle rate, and what must not wait does not
(issue 22: an idle service's tick was most of its CPU).

The executive's real assembly in this process against the simulated Atom as its own
process. The idle period is made long here (0.2 s) so that waiting one out is plain to
see: a request and a latch are ticked within a few milliseconds all the same, and a
mission ticks at the full rate.
"""

from __future__ import annotations

import time

import pytest

from executive.core.runtime import IDLE_AFTER_S
from executive.core.tree import ExecState, Executive
from tests.integration.conftest import Live
from tests.sim.conftest import wait_until

pytestmark = pytest.mark.dds

IDLE_PERIOD_S = 0.2
PROMPT_S = 0.06  # a woken tick, with room for a loaded machine: under a third of the period


def _ticks_per_second(live: Live, seconds: float) -> float:
    ticker = live.runtime.ticker
    before, t0 = ticker.ticks, time.monotonic()
    time.sleep(seconds)
    return (ticker.ticks - before) / (time.monotonic() - t0)


def test_idle_ticks_slowly_and_a_mission_at_the_full_rate(live: Live) -> None:
    runtime = live.runtime
    runtime.idle_period = IDLE_PERIOD_S
    time.sleep(IDLE_PERIOD_S)
    idle = _ticks_per_second(live, 1.5)
    assert idle <= 1.5 / IDLE_PERIOD_S, idle
    live.start("head_scan", sweeps=3)
    busy = _ticks_per_second(live, 1.0)
    assert busy >= 0.6 / runtime.busy_period, (busy, idle)
    ex = runtime.executive
    assert ex.run is not None, "the mission still runs: the rate measured is a run's"
    assert ex.submit(lambda: ex.stop_mission("test")).result(5)[0]
    time.sleep(IDLE_AFTER_S / 2)  # its MCAP tail: still the full rate
    assert runtime.ticker.period == runtime.busy_period
    assert wait_until(lambda: runtime.ticker.period == IDLE_PERIOD_S, IDLE_AFTER_S + 2)


def test_a_request_at_idle_is_ticked_at_once(live: Live) -> None:
    live.runtime.idle_period = IDLE_PERIOD_S
    ex = live.runtime.executive
    took = []
    for _ in range(5):
        time.sleep(IDLE_PERIOD_S * 0.37)  # somewhere inside a period
        t0 = time.monotonic()
        ex.submit(lambda: None).result(5)
        took.append(time.monotonic() - t0)
    assert max(took) < PROMPT_S, took


def test_a_latch_at_idle_is_safe_stop_at_once(live: Live) -> None:
    """An e-stop at the simulated robot: the C reflex latches on its thread, and the tick
    that settles SAFE_STOP (the state, the status, the recording) follows at once, not at
    the end of the idle period."""
    runtime = live.runtime
    runtime.idle_period = IDLE_PERIOD_S
    ex = runtime.executive
    states: list[tuple[ExecState, float]] = []

    def changed(e: Executive) -> None:
        states.append((e.state, time.monotonic()))

    latches: list[float] = []
    wake = ex.monitor.on_latch
    assert wake is not None, "the runtime wakes its tick loop on a latch"

    def latched() -> None:  # on the latching thread: the reflex's
        latches.append(time.monotonic())
        wake()

    ex.on_change, ex.monitor.on_latch = changed, latched
    took = []
    for _ in range(3):
        states.clear()
        latches.clear()
        live.sim.client.inject("estop-soft")
        assert wait_until(lambda: any(s is ExecState.SAFE_STOP for s, _ in states), 5)
        assert len(latches) == 1
        took.append(next(t for s, t in states if s is ExecState.SAFE_STOP) - latches[0])
        live.sim.client.clear("estop-soft")
        assert wait_until(lambda: ex.submit(ex.reset).result(5)[0], 5)
        assert wait_until(lambda: ex.state is not ExecState.SAFE_STOP, 5)
    assert max(took) < PROMPT_S, took
