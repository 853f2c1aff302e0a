"""The ``watch`` view, frame by frame, from statuses made here (no DDS): status age and
"no executive", elapsed times, progress, the watchdog shown as clear, text as text."""

from __future__ import annotations

import io
import json
import re
import time
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from executive.operator import watch
from executive.operator.watch import Progress, Tracker, frame, plain, progress_of
from executive.seam.ports import Stamped

HOSTILE = "\x1b[2J\x1b[Hstate: IDLE\nsafety: CLEAR\x07[red]x[/red]"


def node(path: str, status: str, depth: int, kind: str = "Behaviour", **extra: Any) -> Any:
    return SimpleNamespace(path=path, kind=kind, status=status, feedback="", depth=depth, **extra)


def status(seq: int = 1, *, executive: str = "robot:42", run_id: str = "r1", **over: Any) -> Any:
    tree = over.pop(
        "tree",
        [
            node("Atom", "RUNNING", 0, "Sequence"),
            node("Atom/Priorities", "RUNNING", 1, "Selector"),
            SimpleNamespace(
                path="Atom/Priorities/Safety Watchdog",
                kind="SafetyWatchdog",
                status="FAILURE",
                feedback="clear",
                depth=2,
            ),
            node("Atom/Priorities/Mission Slot", "RUNNING", 2, "MissionSlot"),
            node("Atom/Priorities/Mission Slot/Demo", "RUNNING", 3, "Sequence"),
            node("Atom/Priorities/Mission Slot/Demo/Move to pose home", "SUCCESS", 4, "MoveJoints"),
            node("Atom/Priorities/Mission Slot/Demo/Drive to tag 3", "RUNNING", 4, "NavigateToTag"),
            node("Atom/Priorities/Mission Slot/Demo/Move to pose home", "INVALID", 4, "MoveJoints"),
            node("Atom/Priorities/Idle", "INVALID", 2, "Idle"),
        ],
    )
    fields = {
        "executive_id": executive,
        "seq": seq,
        "stamp_ns": 1_700_000_000 * 10**9,
        "state": "RUNNING",
        "mission": "demo",
        "run_id": run_id,
        "active_node": "Atom/Priorities/Mission Slot/Demo/Drive to tag 3",
        "safety": "CLEAR",
        "safety_reason": "",
        "last_result": "",
        "last_reason": "",
        "version": "0.1.0",
        "tree": tree,
    }
    return SimpleNamespace(**{**fields, **over})


def lines_of(text: str) -> dict[str, str]:
    """Node name -> the rest of its line, spaces squeezed."""
    out = {}
    for line in text.splitlines():
        for mark in ("● ", "✓ ", "✗ ", "· ", "◆ ", "○ "):
            if line.lstrip().startswith(mark):
                name_and_rest = line.lstrip()[2:]
                name, _, rest = name_and_rest.partition("  ")
                out.setdefault(name, " ".join(rest.split()))
    return out


def test_status_age_then_no_executive_when_status_stops() -> None:
    tracker = Tracker()
    s = status()
    tracker.arrived(s, 100.0)
    text = plain(frame(s, tracker, 100.4))
    assert "status 0.4 s old" in text.splitlines()[0]
    assert "no executive" not in text
    gone = plain(frame(s, tracker, 107.2))
    first = gone.splitlines()[0]
    assert first.startswith("no executive for 7 s") and "robot:42" in first
    assert "what it last said, not now" in first
    # the red line: what rich draws for it
    red = frame(s, tracker, 107.2)[0]
    assert any("red" in str(span.style) for span in red.spans), red.spans


def test_elapsed_per_running_node_and_time_taken() -> None:
    tracker = Tracker()
    tracker.arrived(status(1), 10.0)  # the watch starts: already running, a lower bound
    shown = lines_of(plain(frame(status(1), tracker, 12.0)))
    assert shown["Drive to tag 3"] == "≥ 2.0 s"
    tree = status(2).tree
    tree[6] = node(tree[6].path, "SUCCESS", 4, "NavigateToTag")
    tree[7] = node(tree[7].path, "RUNNING", 4, "MoveJoints")  # the second 'home', same path
    tracker.arrived(status(2, tree=tree), 13.0)
    text = plain(frame(status(2, tree=tree), tracker, 14.5))
    rows = [line.strip() for line in text.splitlines() if "Move to pose home" in line]
    assert rows[0] == "✓ Move to pose home"  # the first one: finished before the watch
    assert rows[1].startswith("● Move to pose home") and rows[1].endswith(" 1.5 s"), rows
    assert "≥" not in rows[1]  # seen starting: exact
    assert lines_of(text)["Drive to tag 3"] == "took 3.0 s"


def test_elapsed_stops_at_the_last_status_once_it_is_stale() -> None:
    tracker = Tracker()
    tracker.arrived(status(1), 10.0)
    tracker.arrived(status(2), 11.0)
    text = plain(frame(status(2), tracker, 30.0))
    assert lines_of(text)["Drive to tag 3"] == "≥ 1.0 s"


def test_a_new_run_or_executive_starts_the_clocks_afresh() -> None:
    tracker = Tracker()
    tracker.arrived(status(1), 10.0)
    tracker.arrived(status(1, executive="robot:43"), 20.0)  # restarted under the watch
    assert lines_of(plain(frame(status(1, executive="robot:43"), tracker, 21.0)))[
        "Drive to tag 3"
    ] == ("≥ 1.0 s")


def test_the_watchdog_reads_clear_not_failed() -> None:
    tracker = Tracker()
    tracker.arrived(status(), 0.0)
    text = plain(frame(status(), tracker, 0.1))
    assert lines_of(text)["Safety Watchdog"] == "clear"
    assert "✗ Safety Watchdog" not in text and "[clear]" not in text
    tree = status().tree
    tree[2] = SimpleNamespace(
        path=tree[2].path,
        kind="SafetyWatchdog",
        status="RUNNING",
        feedback="SAFE_STOP: estop",
        depth=2,
    )
    stopped = plain(frame(status(tree=tree, safety="SAFE_STOP"), tracker, 0.1))
    assert lines_of(stopped)["Safety Watchdog"] == "SAFE_STOP estop"


def test_an_empty_mission_slot_is_empty_not_failed() -> None:
    tree = [
        node("Atom", "RUNNING", 0),
        node("Atom/Priorities/Mission Slot", "FAILURE", 1, "MissionSlot"),
        node("Atom/Priorities/Idle", "RUNNING", 1, "Idle"),
    ]
    tracker = Tracker()
    tracker.arrived(status(tree=tree), 0.0)
    assert lines_of(plain(frame(status(tree=tree), tracker, 0.1)))["Mission Slot"] == "empty"


@pytest.mark.parametrize(
    ("fields", "feedback", "expected"),
    [
        ({"progress": 0.42}, "", Progress(0.42, None)),
        ({"progress": {"percent": 50, "time_left_s": 3.5}}, "", Progress(0.5, 3.5)),
        ({"progress": {"elapsed_s": 1.0, "total_s": 4.0}}, "", Progress(0.25, 3.0)),
        ({"percent": 80.0, "time_left_s": 1.0}, "", Progress(0.8, 1.0)),
        ({}, "driving: 30 % · 12.5 s left", Progress(0.3, 12.5)),
        ({}, "press A (41 s remaining)", Progress(None, 41.0)),
        ({}, "driving", None),
        ({"progress": float("nan")}, "", None),
        ({"progress": 7}, "", Progress(1.0, None)),  # clamped
    ],
)
def test_progress_is_read_from_fields_or_feedback(
    fields: dict[str, Any], feedback: str, expected: Progress | None
) -> None:
    n = SimpleNamespace(path="a", status="RUNNING", feedback=feedback, depth=0, **fields)
    assert progress_of(n) == expected
    assert progress_of({"feedback": feedback, **fields}) == expected  # a JSON status node


def test_progress_bars_for_running_nodes() -> None:
    tree = status().tree
    tree[6] = node(tree[6].path, "RUNNING", 4, "NavigateToTag", progress=0.5, time_left_s=4.0)
    tracker = Tracker()
    tracker.arrived(status(tree=tree), 0.0)
    row = lines_of(plain(frame(status(tree=tree), tracker, 1.0)))["Drive to tag 3"]
    assert row.endswith("━━━━━━━━━━────────── 50 % · 4.0 s left"), row


def test_a_json_status_document_is_shown_too() -> None:
    """The view reads keys as well as attributes: a versioned JSON status needs no rewrite."""
    s = vars(status())
    s["tree"] = [vars(n) for n in s["tree"]]
    doc = SimpleNamespace(**s)  # summary() reads attributes; the tree nodes are dicts
    tracker = Tracker()
    tracker.arrived(doc, 0.0)
    assert lines_of(plain(frame(doc, tracker, 0.5)))["Safety Watchdog"] == "clear"


def test_text_from_the_service_is_text() -> None:
    tree = [
        node("Atom", "RUNNING", 0),
        SimpleNamespace(
            path="Atom/" + HOSTILE, kind="Log", status="FAILURE", feedback=HOSTILE, depth=70_000
        ),
    ]
    s = status(tree=tree, mission="m" + HOSTILE, executive="x" + HOSTILE)
    tracker = Tracker()
    tracker.arrived(s, 0.0)
    lines = frame(s, tracker, 0.1)
    text = plain(lines)
    assert not set(text) & {"\x1b", "\x07", "\r"}, repr(text)
    assert "[red]x[/red]" in text  # shown as typed, not read as rich markup
    assert max(len(line) for line in text.splitlines()) < 600
    # and what rich writes to a terminal holds no escape of the service's either
    out = io.StringIO()
    from rich.console import Console, Group

    Console(file=out, force_terminal=True, width=200).print(Group(*lines))
    assert "\x1b[2J" not in out.getvalue() and "\x07" not in out.getvalue()


def test_plain_output_prints_a_frame_when_what_it_says_changes() -> None:
    """Not a terminal: a frame per change, one when the executive goes silent."""
    now = [0.0]
    samples = [status(1), status(2), status(3, state="SUCCEEDED")]
    given = iter(samples[1:])

    def latest(last: Any, timeout: float) -> Any:
        now[0] += timeout
        if now[0] < 1.0:
            return next(given, None)
        return None  # silent from 1 s on

    out = io.StringIO()
    assert (
        watch.run(latest, samples[0], duration=6.0, stale_after=3.0, out=out, clock=lambda: now[0])
        == 0
    )
    frames = re.split(r"\n\n(?=atom-executive watch|no executive for)", out.getvalue())
    assert [f.count("state: ") for f in frames] == [1, 1, 1], frames
    assert "state: SUCCEEDED" in frames[1] and "no executive for 3 s" in frames[2]


def test_a_short_terminal_keeps_the_header_the_running_node_and_the_legend() -> None:
    tree = [node("Atom", "RUNNING", 0, "Sequence")]
    tree += [node(f"Atom/done {i}", "SUCCESS", 1) for i in range(30)]
    tree += [node("Atom/now", "RUNNING", 1, "Wait")]
    tree += [node(f"Atom/later {i}", "INVALID", 1) for i in range(30)]
    s = status(tree=tree)
    tracker = Tracker()
    tracker.arrived(s, 0.0)
    lines = frame(s, tracker, 0.5, height=24)
    text = plain(lines)
    assert len(lines) == 24, text
    assert text.splitlines()[0].startswith("atom-executive watch")
    assert (
        "safety: CLEAR" in text and "● now" in text and text.splitlines()[-2].startswith("legend:")
    )
    assert "… 48 more nodes (a taller terminal shows them)" in text, text
    roomy = plain(frame(s, tracker, 0.5, height=50))
    assert "… 30 nodes not ticked yet" in roomy and "● now" in roomy and "done 0" in roomy


def test_elapsed_freezes_at_the_watchs_own_stale_limit() -> None:
    tracker = Tracker(stale_after=2.0)
    tracker.arrived(status(1), 10.0)
    assert lines_of(plain(frame(status(1), tracker, 12.5, stale_after=2.0)))["Drive to tag 3"] == (
        "≥ 0.0 s"
    )


def _document_with_base(position: tuple[float, float, float] | None) -> str:
    """A status document as the service builds it (``status_document``), whose base is
    the Atom adapter's snapshot of a decoded ``AMRState_`` at ``position`` (None: a
    robot whose snapshot has no base at all)."""
    from executive.service.status import status_document
    from tests.test_status_document import amr_base, executive

    ex, adapter = executive()
    now = time.monotonic()
    base = None if position is None else amr_base(now, position)
    adapter.snap = replace(adapter.snap, base=base, battery=Stamped(87.0, now))
    ex.tick()
    return json.dumps(status_document(ex), allow_nan=False)


def test_the_robot_line_shows_the_base_pose_from_the_status_document() -> None:
    s = status(document=_document_with_base((1.25, -0.5, 1.5)))
    tracker = Tracker()
    tracker.arrived(s, 0.0)
    text = plain(frame(s, tracker, 0.5))
    [line] = [x for x in text.splitlines() if x.startswith("robot: ")]
    assert (
        line
        == "robot: control not held · fsm 3 · e-stop clear · battery 87 % · base COMPLETED at x +1.25 y -0.50 m yaw +86°"
    ), line
    # the same from the document itself (status --json's), not a DDS sample
    doc = json.loads(s.document)
    assert watch.robot_line(doc) is not None and watch.robot_line(doc).plain == line


def test_the_robot_line_without_a_pose_and_without_a_document() -> None:
    nan = float("nan")
    s = status(document=_document_with_base((nan, 0.0, 0.0)))
    line = watch.robot_line(s)
    assert (
        line is not None
        and line.plain
        == "robot: control not held · fsm 3 · e-stop clear · battery 87 % · base COMPLETED no pose"
    )
    no_base = watch.robot_line(status(document=_document_with_base(None)))
    assert (
        no_base is not None
        and no_base.plain == "robot: control not held · fsm 3 · e-stop clear · battery 87 %"
    )
    assert watch.robot_line(status()) is None  # an older executive: no document, no line
    assert watch.robot_line(status(document="{not json")) is None


def test_the_robot_line_shows_an_e_stop_in_red() -> None:
    doc = json.loads(_document_with_base(None))
    doc["telemetry"]["estop"] = {"on": ["soft_estop", "amr"], "any": True, "age_s": 0.01}
    line = watch.robot_line(status(document=json.dumps(doc)))
    assert line is not None and "E-STOP soft_estop, amr" in line.plain, line
    start = line.plain.index("E-STOP")
    assert any(s.start <= start < s.end and "red" in str(s.style) for s in line.spans), line.spans
    doc["telemetry"] = {"estop": None, "battery": None, "control": None, "fsm": None}
    assert watch.robot_line(status(document=json.dumps(doc))) is None  # reports none of them


def test_a_short_terminal_drops_the_robot_line_before_the_tree() -> None:
    tree = [node("Atom", "RUNNING", 0, "Sequence")]
    tree += [node(f"Atom/step {i}", "SUCCESS", 1) for i in range(20)]
    s = status(tree=tree, document=_document_with_base((0.0, 0.0, 0.0)))
    tracker = Tracker()
    tracker.arrived(s, 0.0)
    tall = plain(frame(s, tracker, 0.5, height=40))
    assert "base COMPLETED at x +0.00 y +0.00 m yaw +0°" in tall
    short = frame(s, tracker, 0.5, height=14)
    assert len(short) == 14 and "robot: " not in plain(short)
