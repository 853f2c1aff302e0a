"""Every part of ``make bench`` runs in its smallest form through the interface ``bench.run``
loops over (``bench.parts.Part``), and gives its table and its summary rows with their
verdicts: the full run (20 minutes and more) finds no broken part at its end. The figures
of a smallest run mean nothing (seconds, a few events, a loaded machine), so only their
shape is checked: every row has its six cells and a verdict ``bench.run`` prints."""

from __future__ import annotations

from typing import Any

import pytest

from bench import run
from bench.parts import Part, options

VERDICTS = {"met", "MISSED", "-"}
# the rows each part gives in its smallest form, by their first cell
ROWS = {
    "codec": "encode UpperCmd_ encode (us)",
    "startup": "start to READY=1 (s)",
    "reach": "IK solve, right arm (ms)",
    "paths": "path plan, right arm (ms)",
    "tick": "tick, 100 nodes",
    "stream": "stream 500 Hz lateness",
    "estop": "e-stop -> first hold",
    "estop_c": "e-stop from C -> first hold",
    "grx": "GRX error code -> zero axes",
    "reflex": "first hold p99 <= 0.5 ms",
    "memory": "RSS after 20 runs (MB)",
    "cli": "atom-executive status (s)",
    "idle": "idle CPU %, service idle beside atom",
    "fleet": "fleet: status to view (ms)",
    "fleet_scale": "fleet at scale: view status (ms)",
    "groot2": "groot2: loop tick, S at 50 Hz",
    "scenarios": "all shipped scenarios, simulated time (s)",
}


def test_every_part_is_named_once_and_has_its_expected_row() -> None:
    assert [part.name for part in run.PARTS] == run.NAMES
    assert sorted(run.NAMES) == sorted(ROWS)


@pytest.mark.dds
@pytest.mark.serial
@pytest.mark.parametrize("part", run.PARTS, ids=lambda part: part.name)
def test_the_smallest_form_of_each_part_gives_its_rows_and_verdicts(part: Part) -> None:
    earlier: dict[str, Any] = {}
    result = part.run(options("smallest"), earlier)
    assert part.report(result).strip()
    rows = part.rows(result)
    assert rows, f"{part.name}: no summary rows"
    for row in rows:
        assert len(row) == 6 and all(isinstance(cell, str) for cell in row), row
        assert row[-1] in VERDICTS, row
    assert ROWS[part.name] in [row[0] for row in rows], [row[0] for row in rows]
    assert run.summary_rows({part.name: result}) == rows
