"""The tick loop keeps its deadlines, counts overruns and reports a hung tick."""

from __future__ import annotations

import threading
import time
import traceback
from pathlib import Path

import structlog

import behaviours
import executive
from executive.core.ticker import Ticker, our_line
from executive.logs import RateLimitedLog


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


def test_an_exception_does_not_end_the_loop_and_a_failing_loop_is_unhealthy() -> None:
    """A tick that raised once ended the tick thread while the process lived on, status
    still RUNNING / CLEAR. Now the loop goes on, hands each error over, and a loop that
    fails every tick stops counting as healthy (so the watchdog pings stop)."""
    failing = [True]
    seen: list[Exception] = []

    def work() -> None:
        if failing[0]:
            raise NotADirectoryError("data dir replaced by a file")

    t = Ticker(work, 200.0)
    t.on_error = seen.append
    t.start()
    try:
        deadline = time.monotonic() + 5
        while t.healthy(tolerance_periods=5) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not t.healthy(tolerance_periods=5)
        assert t.errors >= 5 and len(seen) == t.errors and t._thread is not None
        assert isinstance(seen[0], NotADirectoryError)
        failing[0] = False
        while not t.healthy(tolerance_periods=5) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert t.healthy(tolerance_periods=5)  # it recovered: the same thread ticks again
    finally:
        t.stop()


def test_where_names_the_line_of_ours_a_hung_tick_waits_on() -> None:
    """A line of ours (executive/, behaviours/), not the library's: 'threading.py:331 in
    wait' or a dataclass's '<string>:3 in __init__' named no call of ours (issue 25)."""
    release = threading.Event()

    def hang() -> None:  # (this test's code is not ours either)
        release.wait(5)

    t = Ticker(hang, 100.0)
    t.start()
    try:
        time.sleep(0.05)
        where = t.where()
        assert where.startswith("executive/core/ticker.py:") and where.endswith(" in _run"), where
    finally:
        release.set()
        t.stop()


def test_our_line_is_the_innermost_frame_of_ours() -> None:
    ours = str(Path(executive.__file__).parent / "core" / "tree.py")
    leaf = str(Path(behaviours.__file__).parent / "actions" / "tasks.py")
    frames = [
        traceback.FrameSummary(ours, 10, "tick", lookup_line=False),
        traceback.FrameSummary(leaf, 20, "update", lookup_line=False),
        traceback.FrameSummary("<string>", 3, "__init__", lookup_line=False),
        traceback.FrameSummary("/usr/lib/python3.11/threading.py", 331, "wait", lookup_line=False),
    ]
    assert our_line(frames) == "behaviours/actions/tasks.py:20 in update"
    assert our_line(frames[2:]) == ""


def test_overruns_are_logged_once_then_counted() -> None:
    """Every tick overruns here; the log gets the first, not one line per overrun."""
    t = Ticker(lambda: time.sleep(0.006), rate_hz=250)
    with structlog.testing.capture_logs() as lines:
        t.start()
        deadline = time.monotonic() + 5
        while t.overruns < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        t.stop()
    overruns = [line for line in lines if line["event"] == "tick overrun"]
    assert t.overruns >= 20
    assert len(overruns) == 1 and overruns[0]["since_last_line"] == 0, overruns
    assert t.overrun_log.unlogged("tick overrun") >= 10


def test_rate_limited_log_carries_the_count_to_the_next_line() -> None:
    now = [100.0]
    logger = structlog.get_logger("t")
    limited = RateLimitedLog(logger, interval=10.0, clock=lambda: now[0])
    with structlog.testing.capture_logs() as lines:
        assert limited.log("warning", "tick overrun", took=0.1)
        for _ in range(5):
            now[0] += 1.0
            assert not limited.log("warning", "tick overrun", took=0.2)
        assert limited.log("error", "other event")  # its own key, its own first line
        now[0] += 5.5  # 10.5 s after the first line
        assert limited.log("warning", "tick overrun", took=0.3)
        assert not limited.log("warning", "tick overrun", took=0.3)
    assert [(x["event"], x["log_level"], x["since_last_line"]) for x in lines] == [
        ("tick overrun", "warning", 0),
        ("other event", "error", 0),
        ("tick overrun", "warning", 5),
    ]
    assert lines[-1]["took"] == 0.3 and limited.unlogged("tick overrun") == 1
