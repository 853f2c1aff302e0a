"""Wall-clock stamps on the monotonic clock: ``wall_offset()`` is ``time.time()`` minus
``time.monotonic()`` as of now, read so that a preemption cannot skew it.

DDS source timestamps and the status document's times are wall clock; durations are
measured on CLOCK_MONOTONIC, which is system-wide, so another process's times compare once
mapped. Two separate reads (``time.time() - time.monotonic()``) are off by however long the
thread waited for a CPU between them: on a loaded machine, milliseconds (issue 35: a first
command seen 10 ms late). So each read is bracketed by the monotonic clock, a few times, and
the tightest bracket's midpoint is taken.
"""

from __future__ import annotations

import time

_TRIES = 5


def wall_offset() -> float:
    """``time.time() - time.monotonic()`` now, from the tightest of a few bracketed reads."""
    best_gap, best = float("inf"), 0.0
    for _ in range(_TRIES):
        before = time.monotonic()
        wall = time.time()
        after = time.monotonic()
        if after - before < best_gap:
            best_gap, best = after - before, wall - (before + after) / 2
    return best


def wall_to_monotonic(wall: float) -> float:
    """A ``time.time()`` stamp (of any process on this machine) on ``time.monotonic()``'s
    clock."""
    return wall - wall_offset()


class SimClock:
    """Simulated monotonic time: a clock that stands still until it is moved.

    Passed where ``time.monotonic`` would be (``clock=``), it makes whatever reads it run in
    simulated time (``executive.scenario``: the tick, the motion streamer, the leaves'
    timeouts and the simulated robot all read one). Its wall clock is ``EPOCH`` plus the
    simulated time, so stamps that would be wall-clock times (a DDS sample's source
    timestamp) stay consistent with it and the same on every run.
    """

    EPOCH = 1_700_000_000.0  # the wall clock at simulated time 0 (2023-11-14 22:13:20 UTC)

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, to: float) -> None:
        """Move to ``to``; time never goes back."""
        if to < self.now:
            raise ValueError(f"simulated time goes forward only: {to} < {self.now}")
        self.now = to

    def wall_offset(self) -> float:
        """What ``wall_offset()`` is for the real clocks: wall time less this clock's."""
        return self.EPOCH

    def wall_ns(self) -> int:
        """The wall clock now, ns (``time.time_ns()``'s counterpart)."""
        return round((self.EPOCH + self.now) * 1e9)
