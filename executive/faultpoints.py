"""Fault points for tests of the service as a whole; off unless the environment names them.

Some faults cannot be injected from outside the process: a tick loop that hangs (a leaf
blocked in a call that never returns) is the one systemd's watchdog exists for. With
``ATOM_EXECUTIVE_FAULTPOINTS=tick-hang`` the service arms it: after SIGUSR2 the next
tick blocks for an hour, so a test can watch the watchdog pings stop while the e-stop
fast path (which does not need the tick loop) still holds motion. Nothing is armed in
a normal start; the variable is named in the log when anything is.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

import structlog

log = structlog.get_logger(__name__)

ENV = "ATOM_EXECUTIVE_FAULTPOINTS"
KNOWN = frozenset({"tick-hang"})
HANG_S = 3600.0


def armed() -> set[str]:
    """The fault points named in the environment; an unknown name is an error naming it."""
    names = {n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()}
    if unknown := names - KNOWN:
        raise ValueError(
            f"{ENV}: unknown fault point(s) {sorted(unknown)} (known: {sorted(KNOWN)})"
        )
    return names


def tick_hooks() -> list[Callable[[], None]]:
    """Hooks to run after each tick for the armed fault points (main thread only)."""
    names = armed()
    if not names:
        return []
    log.warning("fault points armed; this is a test run", faultpoints=sorted(names), env=ENV)
    hooks: list[Callable[[], None]] = []
    if "tick-hang" in names:
        hang = threading.Event()
        signal.signal(signal.SIGUSR2, lambda *_: hang.set())

        def hang_tick() -> None:
            if hang.is_set():
                hang.clear()
                log.warning("fault point: the tick loop hangs", seconds=HANG_S)
                time.sleep(HANG_S)

        hooks.append(hang_tick)
    return hooks
