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


def rows_of(*specs: tuple[str, str, str, str]) -> list[dict[str, object]]:
    """Rows of robots (id, state, safety, membership condition), live ones fresh."""
    from executive.service.fleet_members import Member

    out = []
    for robot_id, state, safety, condition in specs:
        doc = document(state=state, safety={"condition": safety, "causes": []})
        member = Member(robot_id, condition=condition, since=50.0, instance="i")
        out.append(Robot(robot_id, doc, received=99.9).row(100.0, member=member, wall=100.0))
    return out


def test_a_row_says_its_condition_and_since_when() -> None:
    from executive.service.fleet_members import Member

    lost = Member("atom-1", condition="lost", since=40.0)
    row = Robot("atom-1", document(), received=90.0).row(100.0, member=lost, wall=100.0)
    assert row["condition"] == "lost" and row["for_s"] == 60.0 and row["stale"]
    assert row["since"] == "1970-01-01T00:00:40Z"
    assert "LOST since 00:00:40" in plain([row])
    silent = Robot("b", document(), received=90.0).row(100.0, member=Member("b", "live", 1.0))
    assert silent["condition"] == "stale"
    missing = Robot("ghost").row(100.0, member=Member("ghost"))
    assert missing["condition"] == "missing" and missing["state"] is None
    assert "MISSING (never came)" in plain([missing])


def test_rows_are_filtered_by_state_safety_and_site_and_sorted_for_attention() -> None:
    from executive.operator.fleet import pick, summary

    rows = rows_of(
        ("cafe-1", "RUNNING", "CLEAR", "live"),
        ("cafe-2", "IDLE", "CLEAR", "lost"),
        ("lab-1", "SAFE_STOP", "SAFE_STOP", "live"),
        ("lab-2", "IDLE", "CLEAR", "left"),
        ("lab-3", "IDLE", "CLEAR", "live"),
    )
    assert [r["robot_id"] for r in pick(rows)] == ["lab-1", "cafe-2", "cafe-1", "lab-3", "lab-2"]
    assert [r["robot_id"] for r in pick(rows, sites=("cafe",))] == ["cafe-2", "cafe-1"]
    assert [r["robot_id"] for r in pick(rows, states=("lost", "running"), sort="id")] == [
        "cafe-1",
        "cafe-2",
    ]
    assert [r["robot_id"] for r in pick(rows, safety=("safe_stop",))] == ["lab-1"]
    assert [r["robot_id"] for r in pick(rows, sites=("*-2",), sort="id")] == ["cafe-2", "lab-2"]
    assert summary(rows) == "5 robots: 1 running, 1 idle, 1 safe stop, 1 lost, 1 left"


def test_the_plain_log_prints_a_line_on_each_change_and_none_while_only_ages_tick() -> None:
    from executive.operator.fleet import plain_log

    class Views:
        """The rows a client would give, one list a refresh."""

        def __init__(self, frames: list[list[dict[str, object]]]) -> None:
            self.frames = frames

        def rows(self, stale_s: float) -> list[dict[str, object]]:
            return self.frames.pop(0) if len(self.frames) > 1 else self.frames[0]

    live = rows_of(("a", "RUNNING", "CLEAR", "live"), ("b", "IDLE", "CLEAR", "live"))
    older = [dict(r, age_s=0.9) for r in live]  # only the ages moved
    lost = [live[0], rows_of(("b", "IDLE", "CLEAR", "lost"))[0]]
    out: list[str] = []
    ticks = iter(range(100))  # four refreshes, no sleeping
    frames = Views([live, older, older, lost])
    plain_log(frames, 1.5, lambda rows: rows, 3.0, out.append, clock=lambda: next(ticks), refresh=0)
    assert out[0].startswith("2 robots: 1 running, 1 idle") and "a " in out[0]
    changes = out[1:]
    assert len(changes) == 1, out  # ages alone print nothing; b's loss prints its line
    assert " b " in changes[0] and "LOST since" in changes[0] and "1 lost" in changes[0]
