"""What ``bench/faults.py`` and ``bench/soak.py`` share: watching the service from outside.

Both run the simulated Atom and the service as separate processes (``executive.harness.stack``)
and judge only by what can be seen from outside the service, as an operator or a test
rig would:

- ``RecordTail``: the sim's command record (``--record``), read as it grows. The record
  is the witness of what the executive *sent*: the time to hold and any motion after a
  trigger come from it (``hold_report``).
- ``RawRequests``: requests written exactly as given (garbled, unsigned, replayed...)
  with each reply awaited, beside the stack's well-behaved signed client.
- ``run_events``: a run's record, ``<data_dir>/runs/<run_id>.jsonl``.
- ``table``: the plain-text tables both print.
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cyclonedds.core import Listener
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.harness.stack import service_time
from executive.robots.atom.sim.client import SimClient
from executive.robots.atom.sim.record import STREAM_TOPICS, Recording
from executive.service.auth import new_nonce, sign
from executive.service.protocol import MUTATING, REPLY_TOPIC, REQUEST_QOS, REQUEST_TOPIC
from executive.wire import dds
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_

RECORD_FLUSH_S = 0.1  # the sim writes its record out at 10 Hz


# -- the sim's record --------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """A place in the record: its byte offset and the last full line of each stream
    before it (a ``same`` line only makes sense after the line it repeats)."""

    offset: int
    carry: tuple[dict[str, Any], ...]


class RecordTail:
    """The sim's record from a ``mark`` on, without re-reading what came before."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._scanned = 0
        self._carry: dict[str, dict[str, Any]] = {}

    def _lines(self, start: int) -> tuple[list[str], int]:
        if not self.path.exists():
            return [], start
        with self.path.open("rb") as f:
            f.seek(start)
            data = f.read()
        end = data.rfind(b"\n") + 1  # the sim may be mid-line
        return data[:end].decode("utf-8").splitlines(), start + end

    def mark(self) -> Mark:
        """Here, now: what ``since`` will read from."""
        lines, self._scanned = self._lines(self._scanned)
        for line in lines:
            if '"same":true' in line or '"topic":"' not in line:
                continue
            obj = json.loads(line)
            if obj.get("topic") in STREAM_TOPICS:
                self._carry[obj["topic"]] = obj
        return Mark(self._scanned, tuple(self._carry.values()))

    def since(self, mark: Mark) -> Recording:
        """Everything recorded after ``mark`` (the carried lines come first, older)."""
        lines, _ = self._lines(mark.offset)
        return Recording([*mark.carry, *(json.loads(line) for line in lines)])


def wait_record_flushed(sim: SimClient, t: float, timeout: float = 5.0) -> bool:
    """Wait until the sim's record holds everything the sim took up to ``t`` (monotonic):
    its status is written by the same scheduler that flushes the record, in time order."""
    return (
        sim.wait_status(lambda s: float(s.monotonic) >= t + 2.5 * RECORD_FLUSH_S, timeout)
        is not None
    )


def fault_time(rec: Recording, kind: str, action: str = "set", after: float = -math.inf) -> float:
    """When the sim applied a fault (its own clock); NaN if the record has no such line."""
    times = [t for t, f in rec.faults if f["kind"] == kind and f["action"] == action and t > after]
    return times[0] if times else math.nan


@dataclass
class HoldReport:
    """What the executive sent after a trigger, from the sim's record.

    ``hold_ms``: from the fault's application in the sim (``t_fault``) to the send time of
    the last change of target on any joint stream before ``until`` (the hold: every later
    command repeats it); None when no stream changed target (nothing was moving or
    streaming). ``motion_after``: commands sent after the executive saw the trigger
    (``seen``) that pull the joints or change the target other than onto the measured
    position (``Recording.motion_commands``). ``in_flight``: such commands between the
    fault and ``seen``, sent before the executive could know.
    """

    hold_ms: float | None
    motion_after: int
    first_motion: str
    in_flight: int
    streamed: int  # joint commands in (t_fault, until]
    cancels: int  # AMR CANCEL_TASK in (t_fault, until]
    moves_after: int  # AMR MOVE_TO_TAG sent after seen
    cancel_ms: float | None  # t_fault -> first CANCEL_TASK taken by the sim

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def hold_report(
    rec: Recording, t_fault: float, seen: float, until: float, *, tol: float = 0.02
) -> HoldReport:
    window = [c for c in rec.streams if t_fault < c.sent <= until]
    last_change = [
        max((c.sent for c in window if c.topic == topic and not c.repeat), default=None)
        for topic in STREAM_TOPICS
    ]
    changes = [t for t in last_change if t is not None]
    hold_ms = (max(changes) - t_fault) * 1e3 if changes else None
    motion = rec.motion_commands(seen, before=until, tol=tol)
    first = ""
    if motion:
        m = motion[0]
        first = (
            f"{m.topic} +{(m.sent - seen) * 1e3:.1f} ms after seen, dev {m.dev:.3f} rad, "
            f"change {m.change:.3f} rad, {m.result}"
        )
    in_flight = rec.motion_commands(t_fault, before=seen, tol=tol)
    amr = [e for e in rec.event_commands("amr_cmd", after=t_fault) if e.t <= until]
    cancels = [e.t for e in amr if e.fields.get("command_type") == "CANCEL_TASK"]
    moves = [e for e in amr if e.fields.get("command_type") == "MOVE_TO_TAG" and e.t > seen]
    return HoldReport(
        hold_ms=hold_ms,
        motion_after=len(motion),
        first_motion=first,
        in_flight=len(in_flight),
        streamed=len(window),
        cancels=len(cancels),
        moves_after=len(moves),
        cancel_ms=(cancels[0] - t_fault) * 1e3 if cancels else None,
    )


# -- requests as they come ---------------------------------------------------------------


class RawRequests:
    """A request writer and reply reader that send ``Request_`` samples exactly as made.

    ``close()`` (or ``with``) deletes them, listeners first (``dds.delete_entities``): on a
    participant that outlives it, one left to the garbage collector stays alive in C with
    its listener's callbacks freed, and the next match change (the service restarted by a
    later row) called into them on CycloneDDS's gc thread: ``make faults`` died with a
    segmentation fault at the row after the one that made it.
    """

    def __init__(self, participant: DomainParticipant, key: bytes, client_id: str = "operator"):
        self.key = key
        self.client_id = client_id
        self._cond = threading.Condition()
        self._replies: dict[str, Reply_] = {}
        self._matched = [threading.Event(), threading.Event()]
        self.reader: DataReader[Reply_] = DataReader(
            participant,
            Topic(participant, REPLY_TOPIC, Reply_),
            qos=REQUEST_QOS,
            listener=Listener(  # type: ignore[no-untyped-call]
                on_data_available=self._on_reply,
                on_subscription_matched=lambda r, s: self._matched[1].set(),
            ),
        )
        self.writer: DataWriter[Request_] = DataWriter(
            participant,
            Topic(participant, REQUEST_TOPIC, Request_),
            qos=REQUEST_QOS,
            listener=Listener(on_publication_matched=lambda w, s: self._matched[0].set()),  # type: ignore[no-untyped-call]
        )

    def close(self) -> None:
        """Delete the reader and the writer now (idempotent)."""
        dds.delete_entities([self.reader, self.writer])

    def __enter__(self) -> RawRequests:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _on_reply(self, reader: DataReader[Reply_]) -> None:
        with self._cond:
            for reply in reader.take(N=64):
                if isinstance(reply, Reply_):
                    self._replies[reply.request_id] = reply
            self._cond.notify_all()

    def make(
        self,
        verb: str,
        args: dict[str, Any] | str = "",
        *,
        signed: bool = True,
        key: bytes | None = None,
        client_id: str | None = None,
        timestamp_ns: int | None = None,
        nonce: str | None = None,
        request_id: str | None = None,
    ) -> Request_:
        """A request; ``args`` as text is sent as is (not JSON-encoded)."""
        text = args if isinstance(args, str) else json.dumps(args)
        rid = uuid.uuid4().hex if request_id is None else request_id
        cid = self.client_id if client_id is None else client_id
        stamp = time.time_ns() if timestamp_ns is None else timestamp_ns
        if nonce is None:  # a command is bound to the service instance, as the client binds it
            once = new_nonce(self.instance() if signed and verb in MUTATING else None)
        else:
            once = nonce
        signature = sign(key or self.key, rid, cid, verb, text, stamp, once) if signed else ""
        return Request_(rid, cid, verb, text, stamp, once, signature)

    def instance(self, timeout: float = 10.0) -> str | None:
        """The instance id the service binds commands to (its ``status`` reply)."""
        reply = self.ask(self.make("status", signed=False, nonce=""), timeout)
        if reply is None or reply.code != 0 or not reply.payload:
            return None
        payload = json.loads(reply.payload)
        return payload.get("instance") if isinstance(payload, dict) else None

    def ask(self, request: Request_, timeout: float = 10.0) -> Reply_ | None:
        """Send ``request``; its reply, or None if none came within ``timeout``."""
        if not (self._matched[0].wait(timeout) and self._matched[1].wait(timeout)):
            return None
        rid = request.request_id[:256]  # the service echoes at most 256 characters of it
        self.writer.write(request)
        with self._cond:
            self._cond.wait_for(lambda: rid in self._replies, timeout)
            return self._replies.pop(rid, None)


# -- run records -------------------------------------------------------------------------


def run_events(data_dir: Path, run_id: str) -> list[dict[str, Any]]:
    path = data_dir / "runs" / f"{run_id}.jsonl"
    if not run_id or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_result(events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The run's end (the first state event with a result), or None if it never ended."""
    return next((e for e in events if e.get("event") == "state" and "result" in e), None)


def left_running(events: Sequence[dict[str, Any]]) -> list[str]:
    """Nodes whose last recorded status is RUNNING: a preemption that missed a leaf."""
    last: dict[str, str] = {}
    for e in events:
        if e.get("event") == "node":
            last[e["node"]] = e["status"]
    return [node for node, status in last.items() if status == "RUNNING"]


# -- output ------------------------------------------------------------------------------


@dataclass
class Table:
    headers: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)
    limit: int = 60  # widest a cell is printed

    def add(self, cells: Iterable[Any]) -> None:
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        def cut(text: str) -> str:
            return text if len(text) <= self.limit else text[: self.limit - 1] + "…"

        rows = [[cut(c) for c in r] for r in self.rows]
        widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(self.headers)]
        line = "-+-".join("-" * w for w in widths)
        out = [" | ".join(h.ljust(w) for h, w in zip(self.headers, widths, strict=True)), line]
        out += [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        return "\n".join(out)


def run_row(row: Any, label: str, body: Callable[[], None]) -> Any:
    """One fault-matrix row (the Atom's in ``faults.py``, the GRX's in ``grx_faults.py``):
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
