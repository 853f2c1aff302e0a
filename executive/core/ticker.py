"""A periodic loop on monotonic deadlines: the tick loop's clock.

Waits for the next deadline rather than sleeping a period after the work (the drift
py_trees' own ``tick_tock`` admits), counts overruns, and skips — rather than bunches
up — periods that a long tick has already missed. ``healthy()`` says whether ticks
are still completing, which is what the systemd watchdog ping must follow.

The loop never dies of an exception: ``work()`` raising is counted, handed to
``on_error`` (the runtime holds motion and latches SAFE_STOP ``internal``), and the
loop goes on; such a tick does not count as completed, so a loop that fails every tick
is as unhealthy as a hung one. ``where()`` names the line of ours a hung tick is stuck
on (``our_line``: the innermost frame in ``executive/`` or ``behaviours/``, not a line of
the standard library or a dataclass's generated ``<string>`` that says nothing).

Overruns are logged quietly (``executive.logs.RateLimitedLog``): the first, then at most
one line per 10 s with how many were not logged since and the running total; the
status carries the exact count.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

import structlog

from executive.logs import RateLimitedLog

log = structlog.get_logger(__name__)

# where our code lives: a location in a cause or a log line is a line of these
OUR_DIRS = tuple(
    str(Path(__file__).resolve().parents[n] / name) + "/"
    for n, name in ((1, ""), (2, "behaviours"))
)


def our_line(frames: Iterable[traceback.FrameSummary]) -> str:
    """``file:line in function`` of the innermost frame in our code (``executive/`` or
    ``behaviours/``), file relative to the repository; "" if none is ours."""
    found = None
    for frame in frames:
        if frame.filename.startswith(OUR_DIRS):
            found = frame
    if found is None:
        return ""
    root = str(Path(__file__).resolve().parents[2]) + "/"
    return f"{found.filename.removeprefix(root)}:{found.lineno} in {found.name}"


class Ticker:
    """Calls ``work()`` at ``rate_hz`` on its own thread until stopped."""

    def __init__(
        self,
        work: Callable[[], None],
        rate_hz: float,
        name: str = "ticker",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate_hz <= 0:
            raise ValueError("rate_hz must be > 0")
        self.work = work
        self.period = 1.0 / rate_hz
        self.name = name
        self.clock = clock
        self.ticks = 0
        self.overruns = 0
        self.last_tick_end = clock()
        self.max_tick = 0.0
        self.errors = 0
        self.on_error: Callable[[Exception], None] | None = None
        # overruns: the first logged, then one line per interval with the count since
        self.overrun_log = RateLimitedLog(log, clock=clock)
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by ``wake`` and ``stop``: the wait ends early
        self._thread: threading.Thread | None = None

    def healthy(self, tolerance_periods: float = 10.0) -> bool:
        """True while the loop keeps completing ticks (a hung or failing tick makes it false)."""
        return self.stalled_for() < tolerance_periods * self.period + 0.1

    def stalled_for(self) -> float:
        """Seconds since the last tick that completed."""
        return self.clock() - self.last_tick_end

    def where(self) -> str:
        """``file:line in function`` of ours the loop's thread is executing now ("" if not
        running): the innermost frame in our code, where a hung call was made from."""
        thread = self._thread
        frame = sys._current_frames().get(thread.ident) if thread and thread.ident else None
        if frame is None:
            return ""
        # no source lines: linecache would read (and keep) files on the supervisor's thread
        stack = traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
        return our_line(reversed(stack))

    def _run(self) -> None:
        deadline = self.clock()
        while not self._stop.is_set():
            start = self.clock()
            try:
                self.work()
            except Exception as e:  # noqa: BLE001 - the loop must outlive any bug in a tick
                self.errors += 1
                if self.on_error is not None:
                    try:
                        self.on_error(e)
                    except Exception as again:  # noqa: BLE001
                        log.error("tick error handler failed", error=repr(again))
                end = self.clock()
            else:
                end = self.last_tick_end = self.clock()
            self.ticks += 1
            self.max_tick = max(self.max_tick, end - start)
            deadline += self.period
            if end > deadline:
                missed = int((end - deadline) / self.period) + 1
                self.overruns += missed
                deadline += missed * self.period
                self.overrun_log.log(
                    "warning",
                    "tick overrun",
                    loop=self.name,
                    took=round(end - start, 4),
                    missed=missed,
                    overruns=self.overruns,
                )
            if self._wake.wait(max(0.0, deadline - self.clock())):
                self._wake.clear()
                deadline = self.clock()  # the woken tick starts the periods anew

    def wake(self) -> None:
        """Tick now rather than at the next deadline (any thread): a request or a latch
        must not wait out a long idle period."""
        self._wake.set()

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
