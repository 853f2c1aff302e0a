"""The executive reads the robot's high-rate state at its tick rate, not the topics' (issue 22).

The executive's real assembly (``Runtime``) ticking in this process against the simulated
Atom as its own process, which publishes upper and lower state at 500 Hz and the hands at
100 Hz: over a few seconds of an idle executive, each of those readers decodes no more
samples than the tick loop ticks, and what the tick reads is still fresh.
"""

from __future__ import annotations

import time

import pytest

from executive.records.runchannels import RunChannels
from executive.robots import native
from executive.robots.atom.adapter import POLLED, AtomAdapter
from executive.seam.profile import load_profile
from executive.service.status import StatusPublisher
from tests.integration.conftest import Live

pytestmark = pytest.mark.dds

HIGH_RATE = ("upper_state", "lower_state", "hands_state")


def test_high_rate_state_is_decoded_at_tick_rate_and_stays_fresh(live: Live) -> None:
    _decoded_at_tick_rate(live)


def test_the_status_and_the_recording_read_the_tick_s_snapshot(live: Live) -> None:
    """With what the service hangs after each tick (the status publisher, the run's
    channels: the MCAP pre-roll), still no more decodes than ticks: both read the snapshot
    the tick gathered, not the robot's readers again."""
    ex = live.runtime.executive
    publisher = StatusPublisher(
        live.runtime.participant, ex, interface_variant="seed", profile="atom-sdk"
    )
    channels = RunChannels(ex, load_profile(), [])

    def after_tick() -> None:
        channels.on_tick(ex)
        publisher.maybe_publish()

    live.runtime.after_tick.append(after_tick)
    try:
        _decoded_at_tick_rate(live)
    finally:
        live.runtime.after_tick.remove(after_tick)
        channels.close()


def _decoded_at_tick_rate(live: Live) -> None:
    adapter = live.runtime.executive.adapter
    assert isinstance(adapter, AtomAdapter)
    readers = adapter.io.readers
    assert set(HIGH_RATE) <= POLLED
    # the e-stop too, where the reflex watches it in C
    assert readers["emergency_state"].polled == native.available()
    ticker = live.runtime.ticker
    before = {k: readers[k].count for k in HIGH_RATE}
    ticks_before, t0 = ticker.ticks, time.monotonic()
    time.sleep(3.0)
    ticks, took = ticker.ticks - ticks_before, time.monotonic() - t0
    decoded = {k: readers[k].count - before[k] for k in HIGH_RATE}
    rates = {k: n / took for k, n in decoded.items()}
    tick_hz = 1.0 / ticker.period
    # before issue 22: every sample, 500 Hz (upper, lower) and 100 Hz (hands), by a listener;
    # now one read a tick, and the status document's (2 Hz: the state, motion, readiness)
    for key in ("upper_state", "lower_state"):
        assert rates[key] <= 1.5 * tick_hz, (rates, ticks)
        assert rates[key] >= 0.5 * min(tick_hz, 100.0), rates  # and read: the tick needs it
    snap = adapter.snapshot()
    for stream in ("upper", "lower", "hands"):
        assert snap.joints[stream].age(snap.taken) < 0.1, (stream, snap.joints[stream])
    assert not live.runtime.executive.not_ready()


def test_polled_readers_wake_no_python_on_the_reflex_s_thread(live: Live) -> None:
    """The reflex stamps the arrival of every state reader it takes over (its hold at the
    newest measurement needs it), but a polled reader has no Python listener: before, its
    no-op default ran per sample on ``dds-to-python`` (about 1,100 GIL wakes a second at
    idle, most of the idle service's CPU). Now only listening readers call Python: none
    (the e-stop topic is polled too where the reflex watches it)."""
    reflex = live.runtime.executive.reflex
    assert isinstance(reflex, native.Reflex), "the native reflex is built and armed here"
    adapter = live.runtime.executive.adapter
    assert isinstance(adapter, AtomAdapter)
    before = reflex.stats()
    t0 = time.monotonic()
    time.sleep(3.0)
    after, took = reflex.stats(), time.monotonic() - t0
    calls = sum(after[k] - before[k] for k in ("deferred", "synchronous"))
    listening = [k for k, r in adapter.io.readers.items() if not r.polled]
    rates = load_profile().state_hz
    allowed = 1.5 * sum(rates.get(k, 50) for k in listening) * took + 10
    assert calls <= allowed, (calls, allowed, listening)
