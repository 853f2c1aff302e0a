"""``make faults`` and ``make soak`` kept working: a few rows of the fault matrix and a
five-run soak, through the same code, against the sim and the service as processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import soak
from bench.faults import matrix
from bench.faults.rows import Row
from executive.mission.loader import validate_files
from executive.seam.profile import load_profile

MISSIONS = Path(__file__).resolve().parents[2] / "bench" / "missions"


def test_the_bench_missions_are_valid() -> None:
    results = validate_files(sorted(MISSIONS.glob("*.yaml")), load_profile())
    assert results and all(r.ok for r in results), [str(e) for r in results for e in r.errors]


def _judged(rows: list[Row]) -> str:
    return "\n".join(f"{r.key}: {r.deviations} {r.details}" for r in rows if not r.ok)


@pytest.mark.dds
def test_fault_matrix_rows_latch_fail_and_refuse_as_designed() -> None:
    rows = matrix.run_matrix(["estop-soft", "amr-failed", "bad-requests"])
    assert [r.key for r in rows] == ["estop-soft", "amr-failed", "bad-requests"]
    assert all(r.ok for r in rows), _judged(rows)
    estop, amr, bad = rows
    assert estop.latched and estop.motion_after == 0 and estop.hold_ms is not None
    assert estop.reset_present == "refused" and estop.reset_clear.startswith("accepted")
    assert amr.reaction == "FAILED" and not amr.latched and "Drive" in amr.reason
    assert bad.reaction.endswith("refused; mission SUCCEEDED")
    text, data = matrix.report(rows, 1.0)
    assert data["ok"] and "e-stop soft" in text and len(data["rows"]) == 3


@pytest.mark.dds
def test_fault_matrix_tick_hang_row() -> None:
    (row,) = matrix.run_matrix(["tick-hang"])
    assert row.ok, _judged([row])
    assert row.details["ping_gap_s"] > matrix.WATCHDOG_S
    assert row.motion_after == 0 and row.hold_ms is not None


@pytest.mark.dds
def test_a_five_run_soak_ends_every_run() -> None:
    data = soak.soak(5, seed=2, fault_fraction=0.8, sample_every=2, progress=False)
    assert data["runs"] == 5 and data["faults_injected"] == 3
    assert data["stuck"] == [] and data["anomalies"] == [], data["per_run"]
    assert data["service_runs_counter"] == data["starts_accepted"] == 5
    assert data["latched"] >= 2 and data["resets"] >= 2
    assert len(data["rss_samples"]) == 4


@pytest.mark.dds
def test_the_soak_kills_and_restarts_the_service_and_weighs_each_restart() -> None:
    """Each restart (SIGKILL mid-run, started again on the same data directory) comes back
    to a start it accepts; the sim's and the restarted service's RSS are sampled each time."""
    data = soak.soak(2, seed=3, fault_fraction=0.0, sample_every=1, restarts=3, progress=False)
    restarts = data["restarts"]
    assert restarts["problems"] == [] and restarts["restarts"] == 3, restarts
    assert len(restarts["sim_kib"]) == len(restarts["service_kib"]) == 3
    assert all(kib > 0 for kib in restarts["sim_kib"] + restarts["service_kib"])
    assert isinstance(restarts["flat"], bool)
    text, _ = soak.report(data)
    assert "restarts (SIGKILL mid-run)" in text


def test_raw_requests_delete_their_entities_listeners_first(dds_domain: int) -> None:
    """Left to the garbage collector on a participant that lives on, its reader stayed
    alive in C with its listener freed, and a later row's service restart called into it
    (``make faults`` died with a segmentation fault); closed, both entities are gone."""
    import gc

    from cyclonedds.core import DDSException

    from bench.faults.watch import RawRequests
    from executive.wire import dds

    with dds.open_participant(dds_domain) as participant:
        with RawRequests(participant, b"k" * 32) as raw:
            reader, writer = raw.reader, raw.writer
            assert reader.get_listener() is not None
        del raw
        gc.collect()
        with pytest.raises(DDSException):
            reader.take()
        with pytest.raises(DDSException):
            writer.get_qos()
