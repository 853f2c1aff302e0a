"""Fault points for tests of the service as a whole; off unless the environment names them.

Some faults cannot be injected from outside the process: a tick loop that hangs (a leaf
blocked in a call that never returns) is the one systemd's watchdog exists for. With
``ATOM_EXECUTIVE_FAULTPOINTS=tick-hang`` the service arms it: after SIGUSR2 the next
tick blocks for an hour, so a test can watch the watchdog pings stop while the e-stop
fast path (which does not need the tick loop) still holds motion. Nothing is armed in
a normal start; the variable is named in the log when anything is.

``gil-hog`` is the other way the interpreter stops: after SIGUSR2 the next tick makes one
long C-level call that never lets go of the GIL (``hold_gil``), so no Python thread runs
at all for ``GIL_HOG_S``: not the tick loop, not the streamer, not a DDS listener's
Python. The e-stop reflex (``executive.robots.native``) must hold through it. Both points may be
armed; one SIGUSR2 then blocks, then hangs.

``close-hang`` needs no SIGUSR2: a stopping service, motion held and control handed back,
blocks for an hour before it closes its records (``hang_in_close``), so a test can watch
the shutdown guard write every thread's stack and end the process (``service/run.py``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

ENV = "ATOM_EXECUTIVE_FAULTPOINTS"
KNOWN = frozenset({"tick-hang", "gil-hog", "close-hang"})
HANG_S = 3600.0
GIL_HOG_S = 3.0
# a call through PyDLL keeps the GIL for as long as it runs
_LIBC = ctypes.PyDLL(None)
_CLOCK_MONOTONIC, _TIMER_ABSTIME, _EINTR = 1, 1, 4


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def hold_gil(seconds: float) -> float:
    """Block every Python thread of this process for ``seconds``; the time it took.

    One C call that keeps the GIL (``clock_nanosleep`` to a CLOCK_MONOTONIC deadline through
    ``ctypes.PyDLL``): no bytecode runs, so no other thread and no signal handler until it
    returns, as in a C extension's long call or a garbage collection. A duration, not a
    count: ``sum(range(n))`` with ``n`` from a 5 ms calibration was a count, and a
    calibration preempted on a loaded machine made 0.15 s asked a 0.09 s block, shorter
    than the dead man it was meant to outlast (issue 35). A signal ends the sleep early
    (EINTR): the wait goes on to the same deadline, one bytecode between."""
    started = time.monotonic()
    until = int((started + seconds) * 1e9)
    deadline = _Timespec(until // 1_000_000_000, until % 1_000_000_000)
    while (
        _LIBC.clock_nanosleep(_CLOCK_MONOTONIC, _TIMER_ABSTIME, ctypes.byref(deadline), None)
        == _EINTR
    ):
        pass
    return time.monotonic() - started


def armed() -> set[str]:
    """The fault points named in the environment; an unknown name is an error naming it."""
    names = {n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()}
    if unknown := names - KNOWN:
        raise ValueError(
            f"{ENV}: unknown fault point(s) {sorted(unknown)} (known: {sorted(KNOWN)})"
        )
    return names


def hang_in_close() -> None:
    """With ``close-hang`` armed, block the stopping service's close for ``HANG_S``."""
    if "close-hang" in armed():
        log.warning("fault point: the close hangs", seconds=HANG_S)
        time.sleep(HANG_S)


def tick_hooks() -> list[Callable[[], None]]:
    """Hooks to run after each tick for the armed fault points (main thread only)."""
    names = armed()
    if not names:
        return []
    log.warning("fault points armed; this is a test run", faultpoints=sorted(names), env=ENV)
    hooks: list[Callable[[], None]] = []
    hog, hang = threading.Event(), threading.Event()  # one SIGUSR2 sets both

    def on_usr2(*_: object) -> None:
        hog.set()
        hang.set()

    signal.signal(signal.SIGUSR2, on_usr2)
    if "gil-hog" in names:

        def hog_gil() -> None:
            if hog.is_set():
                hog.clear()
                log.warning("fault point: the interpreter is blocked", seconds=GIL_HOG_S)
                took = hold_gil(GIL_HOG_S)
                log.warning("fault point: the interpreter runs again", seconds=round(took, 3))

        hooks.append(hog_gil)
    if "tick-hang" in names:

        def hang_tick() -> None:
            if hang.is_set():
                hang.clear()
                log.warning("fault point: the tick loop hangs", seconds=HANG_S)
                time.sleep(HANG_S)

        hooks.append(hang_tick)
    return hooks
