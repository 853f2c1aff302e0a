"""The status as lines of text: what ``status`` prints, ``watch`` colours and the fleet view
reuses, one home for each line.

Plain strings, no terminal machinery (``status`` answers without importing ``rich``), and
no import of the commands or the live view, which both build on it. Every string from the
service passes ``printable``: mission files and anyone on the domain write them. A status
is read through ``read``, which takes attributes (the DDS ``Status_``) or keys (the JSON
status document), so each line serves both.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from executive.text import printable

if TYPE_CHECKING:
    from executive.wire.gen.own.atom_executive.msg import Status_

WATCHDOG_KINDS = frozenset({"SafetyWatchdog"})  # its FAILURE means "no fault"
MAX_DEPTH_SHOWN = 64  # indent levels drawn; a deeper (or absurd) depth is drawn at this one


def read(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a status or node: an attribute (``Status_``) or a key (JSON)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def telemetry(status: Any) -> Mapping[str, Any] | None:
    """The robot telemetry a status carries: a JSON document's ``telemetry``, or that of
    the document in a ``Status_``'s ``document``; None when there is none (an older
    executive, or a document that is not one)."""
    found = read(status, "telemetry", None)
    if isinstance(found, Mapping):
        return found
    text = read(status, "document", None)
    if not isinstance(text, str) or not text:
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    found = document.get("telemetry") if isinstance(document, dict) else None
    return found if isinstance(found, Mapping) else None


def motion(status: Any) -> tuple[bool, str] | None:
    """``MOVING (task walk (965) in process: ...) · task walk (965) in process · axes
    sent +0.50/+0.00/+0.00 · seen ... · base task 12 · base 0.31 m/s 0.00 rad/s · joints up to
    0.42/s (upper) · streams upper``: what the robot itself reports about moving (the status
    document's ``telemetry.motion``), and whether it moves; None when the document has none
    (an executive before it). Values, not ages: a line that changes with every sample."""
    t = telemetry(status)
    m = t.get("motion") if t is not None else None
    if not isinstance(m, Mapping):
        return None
    moving = m.get("moving")
    reasons = m.get("reasons")
    why = "; ".join(printable(str(r)) for r in reasons) if isinstance(reasons, list) else ""
    head = {True: "MOVING", False: "still"}.get(moving, "not reported")  # type: ignore[arg-type]
    parts = [f"{head} ({why})" if moving and why else head]
    task = m.get("task")
    if isinstance(task, Mapping) and (tid := number(task.get("id"))) is not None:
        name = printable(str(task.get("name") or "unnamed"))
        busy = " in process" if task.get("in_process") else ""
        parts.append(f"task {name} ({tid:.0f}){busy}")
    for key, label in (("velocity_sent", "sent"), ("velocity_seen", "seen")):
        v = m.get(key)
        if isinstance(v, Mapping):
            rates = [
                r for k in ("forward", "lateral", "yaw") if (r := number(v.get(k))) is not None
            ]
            if len(rates) == 3:
                parts.append(f"axes {label} " + "/".join(f"{r:+.2f}" for r in rates))
    base_task = m.get("base_task")
    if isinstance(base_task, Mapping) and (bid := number(base_task.get("id"))) is not None:
        parts.append(f"base task {bid:.0f}")
    speed = m.get("base_speed")
    if isinstance(speed, Mapping):
        linear, angular = number(speed.get("linear")), number(speed.get("angular"))
        if linear is not None and angular is not None:
            parts.append(f"base {linear:.2f} m/s {angular:.2f} rad/s")
    joints = m.get("joint_speed")
    if isinstance(joints, Mapping):
        speeds = [
            (v, str(k))
            for k, j in joints.items()
            if isinstance(j, Mapping) and (v := number(j.get("max"))) is not None
        ]
        if speeds:
            fastest, stream = max(speeds)
            parts.append(f"joints up to {fastest:.2f}/s ({printable(stream)})")
    engaged = m.get("streams_engaged")
    if isinstance(engaged, list):
        parts.append("streams " + (", ".join(printable(str(e)) for e in engaged) or "none"))
    return moving is True, " · ".join(parts)


def render_tree(status: Status_) -> str:
    """The tree of a status sample as indented text, one node a line, every name and
    feedback made printable (they may hold anything a mission file or sender put there)."""
    p = printable
    marks = {"RUNNING": "*", "SUCCESS": "✓", "FAILURE": "✗", "INVALID": "-"}
    lines = []
    for node in cast(list[Any], status.tree):
        name = node.path.rsplit("/", 1)[-1]
        indent = "    " * min(int(node.depth), MAX_DEPTH_SHOWN)
        if getattr(node, "kind", "") in WATCHDOG_KINDS:  # its FAILURE means "no fault"
            said = "clear" if node.status != "RUNNING" else p(node.feedback or "SAFE_STOP")
            lines.append(f"{indent}◆ {p(name)}  [{said}]")
            continue
        tail = f"  [{p(node.feedback)}]" if node.feedback and node.status != "INVALID" else ""
        lines.append(f"{indent}{marks.get(node.status, '?')} {p(name)}{tail}")
    return "\n".join(lines)


def paused_line(paused: dict[str, Any]) -> str:
    """A status document's ``paused``, one line: PAUSING while the robot comes to rest,
    then PAUSED since it was measured at rest (the hold), when it was asked, and how far
    a held joint has moved since; then what is held. An executive from before
    ``held_since`` (da3f944): PAUSED since the request."""
    what = paused.get("what")
    held = ", ".join(map(str, what)) if isinstance(what, list) else "?"
    since, for_s = paused.get("since", "?"), paused.get("for_s", "?")
    if "held_since" not in paused:
        return f"PAUSED since {since} ({for_s} s): {held}"
    if paused.get("held_since") is None:
        return f"PAUSING since {since} ({for_s} s; coming to rest): {held}"
    return (
        f"PAUSED since {paused['held_since']} (asked {since}, {paused.get('rest_after_s', '?')}"
        f" s to rest, {for_s} s paused; joints within {paused.get('drift_mrad', '?')} mrad):"
        f" {held}"
    )


def summary(status: Status_) -> str:
    """State, mission, active node, safety and the last result, one printable line each."""
    p = printable
    parts = [f"state: {p(status.state)}"]
    if status.mission:
        parts.append(f"mission: {p(status.mission)} ({p(status.run_id)})")
    document = status_document(status)
    paused = document.get("paused") if document is not None else None
    if isinstance(paused, dict):  # the run holds where it is until resume
        parts.append(f"paused: {p(paused_line(paused))}")
    if status.active_node:
        parts.append(f"active: {p(status.active_node)}")
    parts.append(
        f"safety: {p(status.safety)}"
        + (f" ({p(status.safety_reason)})" if status.safety_reason else "")
    )
    if status.last_result:
        parts.append(
            f"last: {p(status.last_result)}"
            + (f" ({p(status.last_reason)})" if status.last_reason else "")
        )
    if getattr(status, "not_ready", ""):  # why a start is refused now: silence, a peer ...
        parts.append(f"not ready: {p(status.not_ready)}")
    problems: list[str] = list(getattr(status, "problems", ()))
    parts += [f"problem: {p(problem)}" for problem in problems]
    sources: list[Any] = list(getattr(status, "sources", ()))
    parts += [
        f"decode errors: {p(s.topic)} {s.decode_errors} ({p(s.last_error)})"
        for s in sources
        if s.decode_errors
    ]
    return "\n".join(parts)


def robot_lines(status: Status_) -> str:
    """``robot: grx (Fourier GRX, ...)`` and the motion line (``motion``), each
    after a newline; '' for a status without a document (an older executive)."""
    document = status_document(status)
    if document is None:
        return ""
    p = printable
    robot = p(str(document.get("robot", "?")))
    described = document.get("robot_description")
    out = f"\nrobot: {robot}" + (f" ({p(str(described))})" if described else "")
    found = motion(status)
    return out + (f"\nmotion: {found[1]}" if found is not None else "")


def status_document(status: Status_) -> dict[str, Any] | None:
    """The JSON status document a sample carries (``executive.service.status``; its JSON Schema:
    ``executive/resources/status.schema.json``), or None if it carries none that is one
    (an older executive; anyone on the domain can write a status). It is printed as
    JSON, which escapes every control character."""
    try:
        document = json.loads(getattr(status, "document", "") or "null")
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("schema") != "atom-executive/status":
        return None
    return document
