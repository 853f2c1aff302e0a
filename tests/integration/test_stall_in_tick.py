"""A block of the whole interpreter that ends inside a tick is still a stall.

The tick thread itself holds the GIL for 1.5 s (a C sleep called through ``ctypes.PyDLL``,
which keeps the GIL for exactly as long as asked, as ``faultpoints.hold_gil`` does) in a hook
that runs inside a tick. When it lets go, that tick completes at once, and the
supervisor, which could not run for 1.5 s, wakes to a loop that has just completed a tick; the
next tick then sees the supervisor fresh. Each thread took the stall for the other's, and no
one reported it: the run went on with no SAFE_STOP (found by the stream-in-C fault rows).
"""

from __future__ import annotations

import ctypes
import time

import pytest

from executive.robots.atom.sim.record import Recording
from tests.integration.conftest import Live
from tests.integration.test_delivery import active, wait_for
from tests.sim.conftest import wait_until

pytestmark = pytest.mark.dds


def test_a_gil_block_inside_a_tick_is_a_safe_stop_naming_the_stall(live: Live) -> None:
    ex = live.runtime.executive
    monitor = ex.monitor
    live.start("deliver_drink", table_tag=4)
    assert wait_for(lambda: "Reach for the cup" in active(live), 60), (ex.state, ex.last_run)
    time.sleep(0.4)  # the arm is moving
    usleep = ctypes.PyDLL(None).usleep  # PyDLL: the call keeps the GIL
    blocked: list[float] = []

    def block_once() -> None:
        if not blocked:
            started = time.monotonic()
            usleep(1_500_000)
            blocked.append(time.monotonic() - started)

    live.runtime.after_tick.append(block_once)
    assert wait_until(lambda: bool(blocked), timeout=10)
    assert not monitor.latched or blocked, "latched before the block"
    assert wait_until(lambda: monitor.latched, timeout=2.0), "no SAFE_STOP after the stall"
    said = [str(c) for c in monitor.reasons]
    assert any(c.startswith("internal") and "stalled" in c for c in said), said
    latched_at = monitor._latched_at
    assert latched_at is not None
    time.sleep(0.5)
    live.sim.stop()
    assert live.sim.record_path is not None
    record = Recording.load(live.sim.record_path)
    moved = record.last_motion()
    assert moved is not None and moved < latched_at, "the arm was not being moved first"
    record.assert_no_motion_after(latched_at, clock="sent")
