"""Watching the service from outside, as an operator or a test rig would: the fault matrix's eyes.

The rows run the simulated robot and the service as separate processes
(``executive.harness.stack``) and judge only by what can be seen from outside the service:

- ``RecordTail``: the sim's command record (``--record``), read as it grows. The record
  is the witness of what the executive *sent*: the time to hold and any motion after a
  trigger come from it (``hold_report``).
- ``RawRequests``: requests written exactly as given (garbled, unsigned, replayed...)
  with each reply awaited, beside the stack's well-behaved signed client.
- ``run_events``: a run's record, ``<data_dir>/runs/<run_id>.jsonl``.
"""

from __future__ import annotations

import json
import math
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cyclonedds.core import Listener
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

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
