"""``make faults``'s gil-hog row kept working: the service as a process, its interpreter
blocked by the ``gil-hog`` fault point, an e-stop from the sim meanwhile."""

from __future__ import annotations

import pytest

from bench.faults import matrix

pytestmark = pytest.mark.dds


def test_fault_matrix_gil_hog_row() -> None:
    (row,) = matrix.run_matrix(["gil-hog"])
    assert row.ok, f"{row.deviations} {row.details}"
    assert row.motion_after == 0 and row.latched
    assert row.details["hold_sent_s_before_python_ran"] > 1.0  # held while Python could not
    assert row.details["cancel_ms_after_the_estop"] < 100  # the sim's e-stop period and DDS
