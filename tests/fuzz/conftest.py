"""The fuzz tests' summary: cases, time and outcomes of every fuzz test that ran."""

from __future__ import annotations

from typing import Any

from tests.fuzz.fuzzing import MODE, STATS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not STATS:
        return
    terminalreporter.section(f"fuzz ({MODE})")
    for s in STATS.values():
        terminalreporter.write_line(s.line())
