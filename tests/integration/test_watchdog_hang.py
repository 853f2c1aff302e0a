"""The service as systemd runs it: a tick loop that hangs stops the WATCHDOG=1 pings.

``ATOM_EXECUTIVE_FAULTPOINTS=tick-hang`` arms a SIGUSR2 that blocks the next tick (a leaf
stuck in a call that never returns). Pings come only from a loop that ticks, so systemd,
listening on the notify socket, hears nothing for longer than WatchdogSec and would
restart the service. Meanwhile the service says so in its log, and SIGTERM still stops it.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from executive.harness.stack import LogTail, Stack, log_time, running_stack
from executive.service import faultpoints

pytestmark = pytest.mark.dds

WATCHDOG_S = 1.0  # WatchdogSec: pings every quarter of it from a healthy loop


def logged(log: LogTail, event: str, timeout: float = 10.0) -> float | None:
    """When the service logged ``event`` (monotonic), waiting up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for e in log.read():
            if e.get("event") == event:
                return log_time(e)
        time.sleep(0.05)
    return None


def test_a_hung_tick_loop_stops_the_watchdog_pings(tmp_path: Path) -> None:
    stack: Stack
    with running_stack(tmp_path) as stack:
        stack.write_config()
        notify = stack.notify_socket(WATCHDOG_S)
        proc = stack.start_service(env={**notify.env(), faultpoints.ENV: "tick-hang"})
        assert notify.wait_for("READY=1", timeout=30) is not None
        t0 = time.monotonic()
        pings = 0
        while pings < 3:  # a loop that ticks pings, again and again
            got = notify.wait_for("WATCHDOG=1", after=t0, timeout=5)
            assert got is not None, notify.messages
            t0, pings = got, pings + 1
        log = LogTail(stack.log_path("executive"))
        os.kill(proc.pid, signal.SIGUSR2)
        hung = logged(log, "fault point: the tick loop hangs")
        assert hung is not None
        # the tick that hangs may have pinged just before: none may follow it for 3x WatchdogSec
        late = notify.wait_for("WATCHDOG=1", after=hung + 0.05, timeout=3 * WATCHDOG_S)
        assert late is None, f"a ping {late - hung:.2f} s into the hang"
        assert logged(log, "tick loop is not ticking; the watchdog ping has stopped") is not None
        assert proc.poll() is None  # hung, not dead: systemd's watchdog is what ends it
        t_term = time.monotonic()
        proc.terminate()  # and a stop still stops it, within TimeoutStopSec (10 s)
        assert proc.wait(15) == 0
        assert notify.wait_for("STOPPING=1", after=t_term, timeout=5) is not None
