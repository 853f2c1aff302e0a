"""The fleet view's rows and rendering (executive/operator/fleet.py), from status documents
as the fleet plane carries them: what it shows of each robot, when a robot is stale, and
that a robot's strings are shown as written (never rich markup, never a raw escape)."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from executive.operator.fleet import STALE_S, Claims, Robot, plain, table
from executive.service.fleet import parse_request


def document(**overrides: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "schema": "atom-executive/status",
        "robot": "atom",
        "profile": "atom-sdk",
        "state": "SAFE_STOP",
        "mission": None,
        "active_node": None,
        "safety": {"condition": "SAFE_STOP", "causes": [{"code": "estop", "message": "soft"}]},
        "telemetry": {"battery": {"percent": 84.6, "age_s": 0.1}},
        "seq": 7,
    }
    doc.update(overrides)
    return doc


def test_a_row_says_kind_state_safety_causes_battery_and_age() -> None:
    row = Robot("atom-1", document(), received=100.0).row(now=100.5)
    assert row["kind"] == "atom" and row["state"] == "SAFE_STOP" and row["safety"] == "SAFE_STOP"
    assert row["causes"] == ["estop: soft"] and row["battery"] == 84.6
    assert row["age_s"] == 0.5 and not row["stale"]
    assert Robot("atom-1", document(), received=100.0).row(now=100.0 + STALE_S + 0.01)["stale"]
    assert "STALE" in plain([Robot("a", document(), 0.0).row(now=10.0)])


def not_ready_document() -> dict[str, object]:
    """What an executive that never heard its robot publishes (issue 35, 3): IDLE, nothing
    latched (nothing was heard), its safety sources silent, ``not_ready`` saying so."""
    silent = {"max_age_s": 0.5, "age_s": None, "silent": True, "undecodable": False}
    return document(
        state="IDLE",
        safety={"condition": "CLEAR", "latched": False, "causes": []},
        not_ready=["the robot's safety state is not known: rt/upper/state never received"],
        telemetry={
            "battery": None,
            "sources": [{"key": "upper", "name": "rt/upper/state", **silent}],
        },
    )


def test_an_executive_that_is_not_ready_is_not_shown_idle_and_clear() -> None:
    row = Robot("atom-1", not_ready_document(), received=1.0).row(now=1.1)
    assert row["ready"] is False and row["state"] == "IDLE"  # the data as sent
    assert row["not_ready"] == [
        "the robot's safety state is not known: rt/upper/state never received"
    ]
    assert row["safety"] == "UNKNOWN", row  # nothing latched because nothing was heard
    line = plain([row])
    assert "NOT READY  (the robot's safety state is not known: rt/upper" in line, line
    assert " IDLE " not in line and "CLEAR" not in line, line
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(table([row]))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "NOT READY" in out and "UNKNOWN" in out and "CLEAR" not in out, out
    heard = document(state="IDLE", safety={"condition": "CLEAR", "causes": []}, not_ready=[])
    ready = Robot("atom-1", heard, received=1.0).row(now=1.1)
    assert ready["ready"] is True and ready["safety"] == "CLEAR"
    assert "IDLE" in plain([ready]) and "NOT READY" not in plain([ready])


def test_a_duplicate_robot_id_is_said_on_its_row() -> None:
    claims = Claims(holders={"a" * 32}, refused={"b" * 32})
    row = Robot("atom-1", document(), received=1.0).row(now=1.1, claims=claims)
    assert row["duplicate"] and row["holders"] == ["a" * 32] and row["refused"] == ["b" * 32]
    assert "DUPLICATE ID: refused to bbbbbbbb" in plain([row])
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(table([row]))
    assert "DUPLICATE ID" in console.file.getvalue()  # type: ignore[attr-defined]
    both = Robot("atom-1", document(), 1.0).row(1.1, claims=Claims(holders={"a", "b"}))
    assert both["duplicate"] and "claimed at once by a, b" in plain([both])
    alone = Robot("atom-1", document(), 1.0).row(1.1, claims=Claims(holders={"a"}))
    assert not alone["duplicate"] and "DUPLICATE" not in plain([alone])


def test_a_robots_strings_are_shown_as_written() -> None:
    doc = document(mission="[red]x[/red]\x1b[2J", active_node="n")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(table([Robot("grx-1", doc, 0.0).row(now=0.1)]))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[red]x[/red]" in out and "\x1b" not in out


def test_a_query_payload_that_is_no_request_is_refused_in_words() -> None:
    assert parse_request(b"[1]") == "the payload must be a JSON object of the request's fields"
    assert parse_request(b'{"verb": 3}') == "verb: must be text"
    assert "timestamp_ns" in str(parse_request(b'{"timestamp_ns": -1}'))
    request = parse_request(b'{"request_id": "r", "verb": "status", "timestamp_ns": 5}')
    assert not isinstance(request, str) and request.verb == "status"


def test_the_fleet_command_with_no_router_says_so_within_its_timeout(tmp_path: Path) -> None:
    from executive.cli import main
    from executive.harness.fleet import client_config_file, free_port

    port = free_port()  # nobody listens on it
    config = client_config_file(tmp_path / "client.json5", port)
    began = time.monotonic()
    with pytest.raises(SystemExit) as exited:
        main(["fleet", "--zenoh-config", str(config), "--json", "--timeout", "1"])
    assert time.monotonic() - began < 5.0
    assert f"no router at tcp/127.0.0.1:{port} within 1 s" in str(exited.value.code)
