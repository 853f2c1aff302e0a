"""The stall rows of ``make faults`` (issue 22): the interpreter blocked mid-move.

``gil-hog`` (``executive.service.faultpoints``) makes one C call that holds the GIL for
3 s, so nothing of Python runs: not the tick loop, not a listener, not the stream's
renewals. With the native stream (``stream_mode: native``) the extension's thread goes on
streaming the move until the dead man lapses (``stream_deadman_s`` after Python's last
renewal), then holds every stream at what it sent last; once Python runs again the
executive has stalled for longer than ``stall_s`` and latches SAFE_STOP (internal). With
the Python stream, nothing is sent while the interpreter is blocked: the robot is left
with the last target it got (the row says so and deviates).

What the row judges, from the sim's record of every command (``sent``: the writer's
source time on the monotonic clock), for every stream that was commanded when the
interpreter blocked:

- the stream never went silent while blocked (its longest gap under ``SILENT_S``), and it
  was moving when the block began;
- it held: the last change of target, then only repeats until Python ran again, and the
  first repeat (the hold) within ``stream_deadman_s + RENEW_S + 2 periods`` of the block
  (the dead man's deadline is at most that long after the block: the last renewal was at
  most ``RENEW_S`` before it);
- no motion from the hold on (``Recording.motion_commands``), through the latch and reset.

The Atom's row is ``bench.faults.atom.stall_row`` (in the matrix's stack), the Adam's
``bench.faults.adam.stall_row`` (in a stack of its own).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from bench.faults.rows import Row
from executive.core.safety import STALL_S
from executive.motion import native
from executive.seam.profile import RobotProfile

# a stream silent this long while blocked went silent (the Python stream: the whole block).
# The record shows what the sim took: it polls a depth-1 reader, so a starved sim (this
# 2-core machine under load) shows gaps of its own; the longest is in the details
SILENT_S = 0.25


def hold_bound_s(profile: RobotProfile) -> float:
    """The latest a stream may hold after the interpreter blocks (see the module)."""
    return profile.stream_deadman_s + native.RENEW_S + 2.0 / profile.command_hz


def judge_stall(
    row: Row,
    rec: Any,
    profile: RobotProfile,
    t_blocked: float,
    t_free: float,
    stall_s: float = STALL_S,
) -> bool:
    """Fill ``row``'s hold figures from ``rec`` (a sim ``Recording``) for a block from
    ``t_blocked`` to ``t_free`` (monotonic s); a deviation for each expectation missed.

    A block of ``stall_s`` or more is the executive's stall: the hold stays (no command
    changes the target after it). A shorter one (a block asked shorter than ``stall_s``)
    is a late renewal: the moves resume where they
    were held, each step no larger than the largest before the block. True if a stall."""
    bound = hold_bound_s(profile)
    stalled = t_free - t_blocked >= stall_s
    row.details["blocked_s"] = round(t_free - t_blocked, 3)
    per_topic: dict[str, Any] = {}
    holds, moved_after = [], 0
    for topic in rec.stream_topics:
        before = [c for c in rec.commands(topic, after=t_blocked - 0.5) if c.sent <= t_blocked]
        if not before:
            continue  # not engaged when the interpreter blocked
        window = [c for c in rec.commands(topic, after=t_blocked) if c.sent < t_free]
        sent = [before[-1].sent] + [c.sent for c in window]
        gap = max((b - a for a, b in itertools.pairwise(sent)), default=t_free - sent[0])
        gap = max(gap, (t_free - sent[-1]) if window else t_free - t_blocked)
        changes = [i for i, c in enumerate(window) if not c.repeat]
        first_hold = window[changes[-1] + 1] if changes and changes[-1] + 1 < len(window) else None
        if not changes:
            first_hold = window[0] if window else None
        t_hold = first_hold.sent if first_hold is not None else None
        steps = [c.change for c in before[1:] if c.change != math.inf]
        later = [c for c in rec.commands(topic, after=t_hold) if not c.repeat] if t_hold else []
        moved_after += len(later)
        if not stalled and later:
            jump = max(c.change for c in later)
            row.expect(
                jump <= 2 * max(steps, default=0.0) + 1e-6,
                f"{topic}: a step of {jump:.4f} after the late renewal",
            )
        info = {
            "commands_while_blocked": len(window),
            "longest_gap_ms": round(gap * 1e3, 2),
            "hold_ms_after_block": None if t_hold is None else round((t_hold - t_blocked) * 1e3, 2),
            "moving_commands_while_blocked": len(changes),
            "changes_after_the_hold": len(later),
        }
        per_topic[topic] = info
        row.expect(
            gap <= SILENT_S,
            f"{topic}: silent for {gap * 1e3:.1f} ms while the interpreter was blocked",
        )
        row.expect(
            any(not c.repeat for c in before[-20:]) or bool(changes),
            f"{topic}: not moving when the interpreter blocked (nothing to hold)",
        )
        row.expect(t_hold is not None, f"{topic}: no hold while the interpreter was blocked")
        if t_hold is not None:
            holds.append(t_hold - t_blocked)
            row.expect(
                t_hold - t_blocked <= bound,
                f"{topic}: held {(t_hold - t_blocked) * 1e3:.1f} ms after the block "
                f"(bound {bound * 1e3:.1f} ms)",
            )
    row.expect(bool(per_topic), "no stream was commanded when the interpreter blocked")
    row.details["streams"] = per_topic
    row.details["hold_bound_ms"] = round(bound * 1e3, 2)
    row.hold_ms = round(max(holds) * 1e3, 2) if holds else None
    if stalled:  # the hold stays: through Python's return, the latch and the reset
        row.motion_after = moved_after
        row.expect(moved_after == 0, f"{moved_after} commands changed the target after the hold")
    else:
        row.notes.append(
            f"blocked {t_free - t_blocked:.2f} s, under stall_s: a late renewal, the moves "
            "resumed where they were held"
        )
    return stalled


def latched_or_noted(row: Row, state: str) -> bool:
    """After a stall the executive latches SAFE_STOP (internal) when its stall detection
    sees it (``core.runtime``); when the block ends inside a tick and both the tick thread
    and the supervisor run at once after it, neither does, and the run ends FAILED on its
    held moves instead. The stream's hold is what this row judges; that race is noted.
    True if latched."""
    if row.latched:
        return True
    row.notes.append(
        f"the executive did not latch the stall ({state}): core.runtime's stall detection "
        "missed a block that ended inside a tick; the stream held regardless"
    )
    return False
