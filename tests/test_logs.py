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


def test_console_lines_show_escapes_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    """Console mode (the operator CLI): a mission's log message, a client id, a field
    name, an exception's message: none reaches the terminal as a control character."""
    hostile = "\x1b[2J\x1b[Hstate: IDLE\nsafety: CLEAR\x07"
    logs.configure(journal=False, console=True)
    log = structlog.get_logger("t")
    log.warning(hostile, mission="m" + hostile, client="c d" + hostile, n=3, **{"k\x1b": [hostile]})
    try:
        raise ValueError(hostile)
    except ValueError:
        log.exception("failed", feedback=hostile)
    logs.configure(journal=False)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err, repr(err)
    first = err.splitlines()[0]
    assert "\\x1b[2J\\x1b[Hstate: IDLE\\nsafety: CLEAR\\x07" in first
    assert "mission='m\\x1b[2J" in first and "k\\x1b=" in first and "n=3" in first
    assert not any(line.startswith(("state:", "safety:")) for line in err.splitlines())
    assert "ValueError: \\x1b[2J" in err  # the traceback: its own lines, each printable
