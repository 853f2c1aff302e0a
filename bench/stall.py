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

``atom_stall_row`` is in ``bench/faults.py`` (it needs the matrix's stack); the Adam's row
runs in a stack of its own here (``adam_stall_row``).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import time
from pathlib import Path
from typing import Any, Protocol

from executive.core.safety import STALL_S
from executive.harness.stack import LogTail, log_time, running_stack
from executive.motion import native
from executive.seam.profile import RobotProfile, load_profile
from executive.service import faultpoints

ROOT = Path(__file__).resolve().parents[1]
# a stream silent this long while blocked went silent (the Python stream: the whole block).
# The record shows what the sim took: it polls a depth-1 reader, so a starved sim (this
# 2-core machine under load) shows gaps of its own; the longest is in the details
SILENT_S = 0.25


class RowLike(Protocol):
    reaction: str
    reason: str
    hold_ms: float | None
    motion_after: int | None
    latched: bool | None
    reset_present: str
    reset_clear: str
    details: dict[str, Any]
    notes: list[str]

    def expect(self, ok: bool, what: str) -> bool: ...


def hold_bound_s(profile: RobotProfile) -> float:
    """The latest a stream may hold after the interpreter blocks (see the module)."""
    return profile.stream_deadman_s + native.RENEW_S + 2.0 / profile.command_hz


def judge_stall(
    row: RowLike,
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


def latched_or_noted(row: RowLike, state: str) -> bool:
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


def adam_stall_row(row: RowLike, workdir: Path | None, keep: bool) -> None:
    """The real service (profile adam-pro, ``gil-hog`` armed) and the simulated Adam Pro
    in a stack of their own: the interpreter blocked for 3 s mid-wave."""
    from executive.robots.adam.sim.client import client_for
    from executive.robots.adam.sim.record import BODY_TOPIC, Recording

    profile = load_profile("adam-pro")
    row.details["expected"] = (
        f"rt/lowcmd and rt/handcmd streamed while blocked and held within "
        f"{hold_bound_s(profile) * 1e3:.0f} ms; no motion after; SAFE_STOP (internal: the "
        "stall) once Python runs; reset accepted; IDLE"
    )
    row.details["stream_mode"] = native.mode(profile.stream_mode)
    with running_stack(workdir, keep=keep) as st:
        st.write_config(
            profile="adam-pro", interface="sdk-1.2", missions_dir=str(ROOT / "missions" / "adam")
        )
        st.start_sim(
            *("--profile", "adam-pro", "--interface", "sdk-1.2", "--seed", "2"),
            record=True,
            sim_ready=lambda s, pid: client_for(s.dds).wait_status(lambda x: x.pid == pid, 30)
            is not None,
        )

        proc = st.start_service(env={faultpoints.ENV: "gil-hog"})
        log = LogTail(st.log_path("executive"))
        reply = st.client.request("start", {"mission": "arms_wave", "params": {"waves": 5}})
        if reply.code != 0:
            raise RuntimeError(f"start arms_wave refused: {reply.message}")

        def waving() -> bool:  # the body's target changing in the last 0.3 s sent
            rec = Recording.load(st.record_path)
            return any(not c.repeat for c in rec.commands(BODY_TOPIC, after=time.monotonic() - 0.3))

        row.expect(st.wait_for(waving, 15.0, every=0.1), "the body never moved")
        log.skip()
        t_signal = time.monotonic()
        os.kill(proc.pid, signal.SIGUSR2)
        events: list[dict[str, Any]] = []

        def seen(event: str, after: float, timeout: float) -> float | None:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                events.extend(log.read())
                for e in events:
                    t = log_time(e)
                    if e.get("event") == event and t is not None and t > after:
                        return t
                time.sleep(0.05)
            return None

        t_blocked = seen("fault point: the interpreter is blocked", t_signal - 0.5, 5.0)
        t_free = seen("fault point: the interpreter runs again", t_signal, 10.0)
        row.expect(t_blocked is not None and t_free is not None, "the interpreter never blocked")
        status = st.client.wait_status(lambda s: s.state == "SAFE_STOP", 10.0)
        status = status or st.client.status()
        row.reaction = f"{row.details['stream_mode']} stream; {status.state} after"
        row.reason, row.latched = status.safety_reason, status.safety == "SAFE_STOP"
        time.sleep(0.5)  # the sim's record is flushed at 10 Hz
        reply = st.client.request("reset")
        row.reset_clear = "accepted" if reply.code == 0 else f"REFUSED: {reply.message}"
        row.expect(reply.code == 0, f"reset after the stall: {reply.message}")
        time.sleep(1.0)
        if t_blocked is not None and t_free is not None:
            rec = Recording.load(st.record_path)
            if judge_stall(row, rec, profile, t_blocked, t_free):
                latched_or_noted(row, status.state)
        row.details["log"] = [
            json.dumps(e)[:300] for e in events if "native" in json.dumps(e) or "held" in str(e)
        ][:8]
