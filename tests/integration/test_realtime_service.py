"""``stream_priority`` takes effect in the running service, and the bench's realtime
conditions (``make bench``) measure what they say: the service as its own process, the
kernel asked which of its threads run under SCHED_FIFO. Where this machine grants no
SCHED_FIFO the tests skip with the reason; ``test_realtime.py`` covers the refusals."""

from __future__ import annotations

import pytest

from bench.harness import REALTIME_PRIORITY, realtime_available
from bench.parts import estop, stream

pytestmark = pytest.mark.dds


@pytest.fixture(autouse=True)
def _needs_sched_fifo() -> None:
    refused = realtime_available()
    if refused is not None:
        pytest.skip(refused)


def test_the_streamer_runs_sched_fifo_in_the_service_and_keeps_streaming() -> None:
    results = stream.run(2.0, (False,), realtime=True)
    r = results["idle, realtime"]
    assert r["scheduling"] == f"SCHED_FIFO {REALTIME_PRIORITY}"
    assert r["periods"] > 0.8 * r["expected_periods"]


def test_an_estop_held_by_a_service_with_a_realtime_streamer_with_no_event_lost() -> None:
    """Only the streamer: CycloneDDS's receive thread, where the fast path runs, stays
    ordinary; the hold still preempts the stream."""
    results = estop.run(5, (False,), use_ddsperf=False, realtime=True)
    c = results["conditions"]["idle, realtime"]
    assert c["service_threads"] == {
        "recv": "SCHED_OTHER",
        "motion-streamer": f"SCHED_FIFO {REALTIME_PRIORITY}",
    }
    assert c["lost"] == 0 and c["hold_ms"]["n"] == 5 and c["cancel_ms"]["n"] == 5
