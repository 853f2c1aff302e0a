"""A row of the fault matrix, and what its rows share: the verdicts, the run record's end,
back to a clean start, and the service killed and restarted.

A ``Row`` collects a deviation from what DESIGN.md requires with each ``expect``; a row
that raises is a failed row, not the end of the matrix (``run_row``). The restart rows
(``killed``, ``grx-killed``, ``adam-killed``) share one episode, ``kill_and_restart``:
SIGKILL, the service started again as systemd would, the robot made safe within the
profile's ``restart_safe_s`` of the new process's first line (``judge_restart``) and its
``recovery`` saying so (``judge_recovery``).
"""

from __future__ import annotations

import json
import math
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.faults.watch import left_running, run_events, run_result
from bench.harness import reset_until_accepted
from executive.harness.stack import NotifySocket, Stack, cpu_wait_s, service_time

TIMEOUT = 10.0  # s: any one reaction, reply or state change


def run_row(row: Any, label: str, body: Callable[[], None]) -> Any:
    """One fault-matrix row (the Atom's, the GRX's, the Adam's):
    announce it, run ``body``, time it and print its verdict. A row that raises is a failed
    row (reaction ERROR), not the end of the matrix."""
    started = time.monotonic()
    print(f"... {label}", flush=True)
    try:
        body()
    except Exception as e:  # noqa: BLE001 - a row that breaks is a failed row, not a crash
        row.expect(False, f"{type(e).__name__}: {e}")
        if row.reaction == "-":
            row.reaction = "ERROR"
    row.seconds = time.monotonic() - started
    print(
        f"    {'ok' if row.ok else 'DEVIATES'} in {row.seconds:.1f} s"
        + "".join(f"\n    ! {d}" for d in row.deviations),
        flush=True,
    )
    return row


def ms(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.0f}"


def recovery_document(client: Any, pid: int, timeout: float) -> dict[str, Any] | None:
    """The status document of the service ``pid`` once its look at start for what a previous
    instance left is done (``recovery.outcome`` not ``looking``); None on timeout."""
    own, found = f":{pid}", []

    def done(s: Any) -> bool:
        if not s.executive_id.endswith(own) or not s.document:
            return False
        doc = json.loads(s.document)
        if doc.get("recovery", {}).get("outcome", "looking") == "looking":
            return False
        found.append(doc)
        return True

    client.wait_status(done, timeout)
    return found[0] if found else None


def judge_recovery(row: Any, doc: dict[str, Any] | None, sent: str) -> None:
    """The restarted service's ``recovery``: made safe, having sent ``sent`` ('' for a robot
    with nothing to send); what it found and sent go in the row's details."""
    recovery = None if doc is None else doc.get("recovery")
    row.details["recovery"] = recovery
    row.expect(recovery is not None, "no recovery in the restarted service's status")
    if recovery is None:
        return
    row.expect(recovery["outcome"] == "made_safe", f"recovery: {recovery['outcome']}")
    if sent:
        row.expect(any(sent in s for s in recovery["sent"]), f"not sent: {sent!r}: {recovery}")
    else:
        row.expect(recovery["sent"] == [], f"sent to a robot with nothing to send: {recovery}")


def judge_restart(
    row: Any,
    *,
    killed: float,
    spawned: float,
    safe: float | None,
    cpu_wait: float | None,
    doc: dict[str, Any] | None,
    ready: float | None,
    bound: float,
    seen: dict[str, float | None] | None = None,
) -> None:
    """A restart row's times to safe (``safe``: when the bench saw the robot safe, None if it
    never did; ``cpu_wait``: the new process's ``cpu_wait_s`` then), each in the row's
    details: from the kill, from the new process's first line of our code (its status'
    ``recovery.started``, on the same CLOCK_MONOTONIC) and from its READY. The bound (the
    profile's ``restart_safe_s``) holds on the part the service controls: from its first
    line, less the time the machine kept its main thread from a CPU (``service_time``; the
    interpreter's start before the first line is the machine's too). *Time to hold* is that
    part. ``seen``: other moments the bench saw (monotonic), as seconds after the first line."""
    recovery = (doc or {}).get("recovery") or {}
    started = recovery.get("started")
    first_line = None if safe is None or started is None else safe - float(started)
    service = (
        None
        if safe is None or started is None
        else service_time(spawned, float(started), safe, cpu_wait)
    )
    figures = {
        "from_kill_s": None if safe is None else round(safe - killed, 3),
        "from_first_line_s": None if first_line is None else round(first_line, 3),
        "service_s": None if service is None else round(service, 3),
        "cpu_wait_s": None if cpu_wait is None else round(cpu_wait, 3),
        "from_ready_s": None if safe is None or ready is None else round(safe - ready, 3),
        "first_line_after_kill_s": None if started is None else round(float(started) - killed, 3),
        "first_sent_s": recovery.get("first_sent_s"),
        "bound_s": bound,
    }
    for what, at in (seen or {}).items():
        figures[what] = None if at is None or started is None else round(at - float(started), 3)
    row.details["restart_to_safe"] = figures
    row.hold_ms = None if service is None else service * 1e3
    row.expect(safe is not None, "not made safe after the restart")
    row.expect(ready is not None, "no READY=1 after the restart")
    row.expect(
        service is not None and service <= bound,
        f"made safe {figures['service_s']} s of the restarted service's own time after its "
        f"first line (bound {bound:g} s; {figures['from_first_line_s']} s on the wall)",
    )


SLOT = "Atom/Priorities/Mission Slot/"  # where every mission's node paths begin


@dataclass
class Row:
    key: str
    fault: str
    reaction: str = "-"
    reason: str = "-"
    hold_ms: float | None = None
    motion_after: int | None = None
    latched: bool | None = None
    reset_present: str = "-"
    reset_clear: str = "-"
    deviations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def expect(self, ok: bool, what: str) -> bool:
        """Record a deviation from what DESIGN.md requires unless ``ok``."""
        if not ok:
            self.deviations.append(what)
        return ok

    @property
    def ok(self) -> bool:
        return not self.deviations

    def cells(self) -> list[str]:
        latched = "-" if self.latched is None else ("yes" if self.latched else "no")
        motion = "-" if self.motion_after is None else str(self.motion_after)
        mark = "" if self.ok else " [DEVIATES]"
        return [
            self.fault + mark,
            self.reaction,
            self.reason.replace(SLOT, ".../"),
            ms(self.hold_ms),
            motion,
            latched,
            self.reset_present,
            self.reset_clear,
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "fault": self.fault,
            "reaction": self.reaction,
            "reason": self.reason,
            "time_to_hold_ms": self.hold_ms,
            "motion_after": self.motion_after,
            "latched": self.latched,
            "reset_while_present": self.reset_present,
            "reset_after_clear": self.reset_clear,
            "ok": self.ok,
            "deviations": self.deviations,
            "notes": self.notes,
            "seconds": round(self.seconds, 2),
            "details": self.details,
        }


def judge_run_record(row: Row, data_dir: Path, run_id: str, result: str) -> None:
    """The run's record ends with ``result``, and no node of it is left RUNNING."""
    deadline = time.monotonic() + TIMEOUT  # the record is written by its own thread
    while (end := run_result(events := run_events(data_dir, run_id))) is None:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    row.details["run_record"] = end
    row.expect(end is not None and end.get("result") == result, f"run record result: {end}")
    still = left_running(events)
    row.expect(not still, f"left RUNNING after the run ended: {still}")


def make_ready(client: Any) -> None:
    """No mission, no latch left over from the previous row."""
    if client.status(TIMEOUT).state == "RUNNING":
        client.request("stop")
        client.wait_status(lambda s: s.state != "RUNNING", TIMEOUT)
    if client.status().safety != "CLEAR":
        reset_until_accepted(client, TIMEOUT)
    if client.wait_status(lambda s: s.state != "RUNNING" and s.safety == "CLEAR", TIMEOUT) is None:
        raise RuntimeError(f"the service is not ready for the next row: {client.status().state}")


@dataclass
class Restarted:
    """The service killed and started again: the killed pid, the new one, when it was
    killed, and the new one's status document once its recovery was done."""

    old: int | None
    pid: int
    killed: float
    doc: dict[str, Any] | None


def kill_and_restart(
    row: Row,
    stack: Stack,
    notify: NotifySocket,
    *,
    made_safe: Callable[[int, float], bool],
    bound: float,
    sent: str,
    start: Callable[[], int] | None = None,
    at_kill: Callable[[], None] = lambda: None,
    seen: dict[str, float | None] | None = None,
) -> Restarted:
    """SIGKILL the service mid-motion and ``start`` it again (its pid; not waiting for it;
    default: as it was, with ``notify``), as systemd's ``Restart=on-failure`` would; ``at_kill``: what the row notes of the robot
    between the two. ``made_safe(pid, timeout)`` waits until the robot is safe; the time
    to it is judged against ``bound`` (the profile's ``restart_safe_s``), the recovery
    against ``sent`` (``judge_recovery``); ``seen``: other moments of the row (monotonic,
    filled by ``made_safe``), reported after the first line."""
    old = stack.pid("executive")
    killed = time.monotonic()
    stack.stop("executive", signal.SIGKILL)
    at_kill()
    spawned = time.monotonic()  # the kill's time counts what at_kill waited
    pid = start() if start is not None else stack.start_service(wait=False, env=notify.env()).pid
    safe = made_safe(pid, bound + 30.0)
    t_safe, waited = (time.monotonic(), cpu_wait_s(pid)) if safe else (None, None)
    doc = recovery_document(stack.client, pid, TIMEOUT)
    ready = notify.wait_for("READY=1", after=killed, timeout=TIMEOUT)
    row.details["restart_s"] = None if ready is None else round(ready - spawned, 2)
    judge_restart(
        row,
        killed=killed,
        spawned=spawned,
        safe=t_safe,
        cpu_wait=waited,
        doc=doc,
        ready=ready,
        bound=bound,
        seen=seen,
    )
    judge_recovery(row, doc, sent)
    return Restarted(old, pid, killed, doc)
