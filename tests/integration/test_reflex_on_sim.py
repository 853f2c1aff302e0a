"""The e-stop reflex against the simulated Atom, with the interpreter blocked or the tick hung.

The arm moves (``deliver_drink`` reaching for the cup, the streamer at 500 Hz), the e-stop
is pressed in the sim, and the sim's command record (``executive.robots.atom.sim.record``) is the
witness of what left the executive. The e-stop comes from another process, so this one
can be blocked in a C call that holds the GIL (``faultpoints.hold_gil``) before it lands.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from executive.core.tree import ExecState
from executive.robots import native
from executive.robots.atom.sim.record import Recording
from executive.robots.simkit.record import StreamCommand
from executive.service import faultpoints
from tests.integration.conftest import Live
from tests.integration.test_delivery import active, wait_for

pytestmark = pytest.mark.dds

BLOCK_S = 4.0  # how long the interpreter is blocked
MARGIN_S = 0.5  # the e-stop lands, and the hold leaves, at least this long before it ends
REFLEX_MS = 5.0  # sample taken -> hold and cancel written, in C; the bench has the distribution
TOL = 0.02  # rad: a command this close to the measured position does not pull the joints

PRESS = """
import ctypes, sys, time
from cyclonedds.internal import DDS, dds_c_t
from executive.wire import dds
from executive.robots.atom.sim.client import SimClient
with dds.open_participant() as p:
    client = SimClient(p, timeout=10.0)
    client.wait_ready(30)
    status = dds_c_t.publication_matched_status()
    get = DDS._dll_handle.dds_get_publication_matched_status
    get.argtypes = [dds_c_t.entity, ctypes.POINTER(dds_c_t.publication_matched_status)]
    deadline = time.monotonic() + 30
    while get(client._writer._ref, ctypes.byref(status)) == 0 and status.current_count == 0:
        assert time.monotonic() < deadline, "the sim never matched the fault writer"
        time.sleep(0.05)  # so the press is not lost to discovery and resent 0.25 s later
    print("ready", flush=True)
    sys.stdin.readline()
    time.sleep(0.3)  # the test's interpreter is blocked by now
    client.inject_spec("estop-soft")
    print("pressed", flush=True)
"""


def _moving(live: Live) -> native.Diversion:
    """The arm moving; the test harness's own Python readers (the fixture's view of the
    sim) moved off the receive thread as the executive's are, or the first state sample
    for them would hold it, and the e-stop behind it, until the GIL is free."""
    ex = live.runtime.executive
    assert ex.reflex is not None, "the e-stop reflex extension is not built (pip install -e .)"
    harness = [r.reader for r in live.sim.ctl.readers.values()]
    diversion = native.divert([*harness, live.sim.client._status.reader])
    assert diversion is not None
    live.start("deliver_drink", table_tag=4)
    assert wait_for(lambda: "Reach for the cup" in active(live), 60), (ex.state, ex.last_run)
    time.sleep(0.4)  # the arm is moving
    return diversion


def _record(live: Live) -> Recording:
    time.sleep(0.3)  # the sim flushes its record every 100 ms
    live.sim.stop()
    assert live.sim.record_path is not None
    return Recording.load(live.sim.record_path)


def _pressed_at(rec: Recording) -> float:
    (t,) = [t for t, f in rec.faults if f["kind"] == "estop-soft" and f["action"] == "set"]
    return t


def _reflex_hold(rec: Recording, trip: native.Trip) -> StreamCommand:
    """The reflex's first hold in the record: on the first stream it held, sent when it
    says. The record maps the writer's wall clock onto the monotonic one; that mapping is
    within a millisecond on a quiet machine and was 1-3 ms off on a loaded CI run, so the
    nearest command within 5 ms (at 500 Hz the neighbours are 2 ms apart: the nearest)."""
    t = trip.first_hold_ns / 1e9
    near = [c for c in rec.commands(trip.held[0]) if abs(c.sent - t) < 0.005]
    assert near, f"no {trip.held[0]} command sent at the reflex's hold"
    return min(near, key=lambda c: abs(c.sent - t))


def test_the_reflex_holds_and_cancels_while_the_interpreter_is_blocked(live: Live) -> None:
    ex = live.runtime.executive
    presser = subprocess.Popen(
        [sys.executable, "-c", PRESS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert presser.stdout is not None and presser.stdin is not None
        assert presser.stdout.readline().strip() == "ready"
        harness = _moving(live)
        presser.stdin.write("go\n")
        presser.stdin.flush()
        blocked = faultpoints.hold_gil(BLOCK_S)  # from here no Python thread runs
        t_free = time.monotonic()
        t_blocked = t_free - blocked
        assert presser.stdout.readline().strip() == "pressed"
    finally:
        presser.kill()
        presser.wait(10)
    harness.close()
    assert wait_for(lambda: ex.state is ExecState.SAFE_STOP, 10), (ex.state, ex.last_run)
    # (the tick supervisor and the stale state may latch first: Python was blocked too)
    assert wait_for(lambda: "estop" in {c.code for c in ex.monitor.reasons}, 5)
    assert ex.reflex is not None
    trip = ex.reflex.last_trip()
    assert trip is not None and trip.code == "estop"
    # Python learned afterwards: once the block ended (the thread that blocked may itself
    # wait a few ms for the GIL after it, hence the slack), long after the cancel
    latched_at = ex.monitor._latched_at
    assert latched_at is not None and latched_at > t_free - 0.05
    assert latched_at > trip.cancel_ns / 1e9 + MARGIN_S
    rec = _record(live)

    pressed = _pressed_at(rec)
    assert t_blocked < pressed < t_free - MARGIN_S, (
        "the e-stop did not land while Python was blocked"
    )
    # it was moving: the streamer retargeted the arm in the second before the e-stop
    assert rec.motion_commands(pressed - 1.0, before=pressed, tol=TOL), "nothing was moving"
    # (a) the hold and the cancel left while the interpreter was blocked, as fast as ever
    hold = _reflex_hold(rec, trip)
    cancels = [
        e
        for e in rec.event_commands("amr_cmd", after=pressed)
        if e.fields.get("command_type") == "CANCEL_TASK"
    ]
    assert pressed < hold.sent < t_free - MARGIN_S and hold.dev <= TOL, hold
    assert cancels and cancels[0].t < t_free - MARGIN_S, cancels
    assert (trip.first_hold_ns - trip.sample_ns) / 1e6 < REFLEX_MS
    assert (trip.cancel_ns - trip.sample_ns) / 1e6 < REFLEX_MS
    assert trip.first_hold_ns < trip.cancel_ns  # hold first, then the cancel
    assert trip.first_hold_ns / 1e9 < t_free
    # while blocked nothing but the reflex sent anything: one hold per engaged stream (the
    # ends left out: the blocking thread may wait for the GIL before and after its call).
    # The native stream (stream_mode: native) goes on without Python: its move up to the
    # hold (or its dead man's), then the hold repeated, nothing else
    during = [c for c in rec.streams if t_blocked + 0.05 < c.sent < t_free - 0.05]
    others = [c for c in during if abs(c.sent - trip.first_hold_ns / 1e9) > 0.001]
    if ex.streamer._core is not None:
        others = [c for c in others if c.sent > hold.sent and not c.repeat]
    assert others == [], others
    # (b) no command that moves after the hold, from the reflex's on through Python's
    assert rec.motion_commands(hold.sent - 1e-6, tol=TOL) == []


def test_the_reflex_holds_and_python_latches_while_the_tick_loop_hangs(live: Live) -> None:
    """A tick that never returns (a leaf stuck in a call) releases the GIL: the reflex
    holds, and the dispatcher still tells Python, which latches without a tick."""
    ex = live.runtime.executive
    harness = _moving(live)
    hang, hung = threading.Event(), threading.Event()

    def stuck() -> None:
        hung.set()
        hang.wait(30)

    live.runtime.after_tick.append(stuck)
    try:
        assert hung.wait(5)
        ticks = ex.counters.ticks
        live.sim.client.inject_spec("estop-soft")
        assert wait_for(lambda: ex.monitor.latched, 5), "Python never latched"
        assert ex.counters.ticks == ticks  # no tick ran meanwhile
        assert ex.reflex is not None
        trip = ex.reflex.last_trip()
        assert trip is not None
        assert (trip.first_hold_ns - trip.sample_ns) / 1e6 < REFLEX_MS
        assert (trip.cancel_ns - trip.sample_ns) / 1e6 < REFLEX_MS
    finally:
        hang.set()
        live.runtime.after_tick.remove(stuck)
        harness.close()
    assert wait_for(lambda: ex.state is ExecState.SAFE_STOP, 10), (ex.state, ex.last_run)
    rec = _record(live)
    pressed = _pressed_at(rec)
    hold = _reflex_hold(rec, trip)
    assert pressed < hold.sent and hold.dev <= TOL, hold
    assert rec.motion_commands(pressed - 1.0, before=pressed, tol=TOL), "nothing was moving"
    assert rec.motion_commands(hold.sent - 1e-6, tol=TOL) == []
    assert any(
        e.fields.get("command_type") == "CANCEL_TASK"
        for e in rec.event_commands("amr_cmd", after=pressed)
    )
