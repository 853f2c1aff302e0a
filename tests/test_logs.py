"""Logs are JSON lines with the run's fields."""

from __future__ import annotations

import json

import pytest
import structlog

from executive import logs


def test_json_lines_carry_fields(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(journal=False)
    structlog.get_logger("t").warning(
        "safe stop", mission="delivery", run_id="r1", safety_reason="estop"
    )
    line = capsys.readouterr().err.strip().splitlines()[-1]
    entry = json.loads(line)
    assert entry["event"] == "safe stop" and entry["level"] == "warning"
    assert (
        entry["mission"] == "delivery"
        and entry["run_id"] == "r1"
        and entry["safety_reason"] == "estop"
    )
    assert entry["ts"].endswith("Z")


def test_level_filter(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure(journal=False, level="warning")
    structlog.get_logger("t").info("chatter")
    assert capsys.readouterr().err == ""
    logs.configure(journal=False)
