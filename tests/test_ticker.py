"""The tick loop keeps its deadlines, counts overruns and reports a hung tick."""

from __future__ import annotations

import threading
import time

from executive.ticker import Ticker


def test_ticks_and_stops() -> None:
    done = threading.Event()
    count = [0]

    def work() -> None:
        count[0] += 1
        if count[0] == 20:
            done.set()

    t = Ticker(work, rate_hz=200)
    t.start()
    assert done.wait(5.0)
    t.stop()
    n = t.ticks
    time.sleep(0.02)
    assert t.ticks == n >= 20  # nothing ticks after stop()


def test_a_long_tick_counts_skipped_periods_and_a_hung_one_is_unhealthy() -> None:
    release = threading.Event()
    entered = threading.Event()

    def work() -> None:
        if t.ticks == 3:
            entered.set()
            release.wait(5.0)

    t = Ticker(work, rate_hz=100)
    t.start()
    assert entered.wait(5.0)
    deadline = time.monotonic() + 5.0
    while t.healthy(tolerance_periods=5) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not t.healthy(tolerance_periods=5)  # hung: the watchdog ping must stop
    release.set()
    while t.ticks < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    t.stop()
    assert t.overruns >= 5 and t.healthy(tolerance_periods=1e6)
