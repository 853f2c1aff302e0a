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
