"""Giving the memory a run freed back to the system (glibc's ``malloc_trim``).

What each run leaves behind is not objects: ``make soak`` with ``tracemalloc`` snapshots
and ``gc`` counts by type diffed across 80 runs inside the service shows neither growing.
It is freed memory that glibc keeps. Every thread that allocates gets a malloc arena of
its own (the tick loop, the motion streamer, the encoders and writers of the run's
recording, CycloneDDS's threads), and a non-main arena is only ever shrunk from its top:
a few long-lived bytes above a run's freed buffers pin the pages beneath them. The
service's anonymous memory grew ~5 KiB a run that way (536 KiB per 100 runs after the
warm-up, ``bench/soak.py --runs 200 --seed 27``), and ``malloc_trim(0)``, which returns
the free pages inside every arena, took all of it back each time.

So the recording trims once a run's file is finished (``McapRecorder``), on its writer
thread: ctypes releases the GIL for the call, and the arenas are locked one at a time.
Elsewhere than glibc there is no ``malloc_trim``, and ``trim`` does nothing.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        function = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to call
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


_TRIM = _malloc_trim()


def available() -> bool:
    """Whether this C library can give free memory back (glibc)."""
    return _TRIM is not None


def trim() -> float:
    """Return the free pages of every malloc arena to the system; the seconds it took
    (0.0 where there is no ``malloc_trim``)."""
    if _TRIM is None:
        return 0.0
    start = time.perf_counter()
    _TRIM(0)
    return time.perf_counter() - start
