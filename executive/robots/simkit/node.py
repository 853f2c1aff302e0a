"""What every simulated robot does beside being its robot: the sim's side of the kit's topics.

A robot's sim (``SimAtom``, ``SimAdam``) subclasses ``SimNode`` and keeps only the robot:
its wire, its models, what it obeys and what it publishes. ``SimNode`` holds the rest, the
same for every robot:

- the fault requests on the sim's own topic (``topics``): each request id applied once,
  refused with a reason the client reads back from the status, resends ignored;
- the book of active faults (``faults``), expiry of timed ones, each change logged and
  recorded;
- the status sample, written on change and at ``status_hz``;
- the command record (``record``), flushed at 10 Hz and closed with the counters;
- commands taken off their readers by polling, their source timestamps mapped onto
  ``time.monotonic()``;
- ``run``/``stop``/``close`` around one ``Scheduler`` thread that owns the model.

A subclass sets ``counters`` (stream -> ``joints.Counters``), creates ``scheduler`` with
its own jobs before calling ``_schedule_sim_jobs``, and implements ``_drain`` (apply what
arrived since the last wake-up), ``_validate`` and ``_target`` (a fault spec checked
against the robot), ``_sync_faults`` (the model made to agree with the book), ``status``
and ``_published``.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import structlog
from cyclonedds._clayer import ddspy_take
from cyclonedds.core import DDSException
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader

from executive.clock import wall_offset
from executive.robots.simkit.faults import (
    KINDS,
    FaultBook,
    FaultError,
    FaultSpec,
    canonical_kind,
)
from executive.robots.simkit.joints import Counters
from executive.robots.simkit.record import Recorder
from executive.robots.simkit.scheduler import Scheduler
from executive.robots.simkit.topics import (
    ACTIONS,
    FAULT_QOS,
    STATUS_QOS,
    ActiveFault_,
    Fault_,
    types,
)
from executive.wire import dds, loop
from executive.wire.loop import LoopBus

log = structlog.get_logger(__name__)

_RECENT_REQUESTS = 32  # request ids the status lists as applied (and as refused)
_ACTION_OF = {name: action for action, name in ACTIONS.items()}  # FaultAction name -> word

# (now, the writer's send time on the monotonic clock, the command as taken)
Handler = Callable[[float, float, Any], None]
Take = Callable[[], list[tuple[Any, int]]]  # (command, source timestamp ns), oldest first


class RawReader:
    """A command topic read by polling, as raw bytes with source timestamps.

    Polling at the scheduler's wake-up, not a listener callback per sample: at 500 Hz a
    callback costs a thread switch and the GIL each time. On the in-process wire of
    simulated time (``executive.wire.loop``) it reads the loop's reader.
    """

    def __init__(self, participant: DomainParticipant | LoopBus, name: str, idl_type: Any) -> None:
        self.name = name
        # The QoS RobotIO gives every reader of a controller-written topic.
        self.reader: Any = loop.reader(
            participant, loop.topic(participant, name, idl_type), dds.EVENT_READER_QOS
        )
        self._loop = self.reader if isinstance(self.reader, loop.LoopReader) else None
        self._ref = None if self._loop is not None else self.reader._ref

    def take(self, n: int = 64) -> list[tuple[bytes, int]]:
        if self._loop is not None:
            return self._loop.take_raw(n)
        ret = ddspy_take(self._ref, n)
        if isinstance(ret, int):
            raise DDSException(ret, f"take on {self.name}")
        if not ret:  # the usual wake-up at idle: no comprehension's frame for nothing
            return []
        return [(data, info.source_timestamp) for data, info in ret if info.valid_data]


def state_rates(
    defaults: Mapping[str, float], overrides: Mapping[str, float], key: Callable[[str], str]
) -> dict[str, float]:
    """The profile's state rates with ``overrides`` (names normalised by ``key``) applied."""
    rates = dict(defaults)
    for name, hz in overrides.items():
        topic = key(name)
        if not (math.isfinite(hz) and hz > 0):
            raise ValueError(f"rate of {topic} must be > 0 Hz, got {hz}")
        rates[topic] = hz
    return rates


class SimNode:
    """The robot-neutral part of a simulated robot on one participant (see the module)."""

    counters: Mapping[str, Counters]
    scheduler: Scheduler

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        # wall time less ``clock``'s: maps a command's source timestamp onto ``clock``
        # (a simulated clock says its own: ``executive.clock.SimClock``)
        self._wall_offset: Callable[[], float] = getattr(clock, "wall_offset", wall_offset)
        self.started = clock()
        self.faults = FaultBook()
        self.recorder: Recorder | None = None
        self._applied_requests: deque[int] = deque(maxlen=_RECENT_REQUESTS)
        self._rejected_requests: deque[int] = deque(maxlen=_RECENT_REQUESTS)
        self._last_rejection = ""
        self._status_dirty = True
        self._dropouts: tuple[int, frozenset[str]] = (-1, frozenset())  # (book version, targets)

    # -- set-up (the subclass calls these in its __init__) --------------------------------

    def _open_sim_topics(
        self,
        participant: DomainParticipant | LoopBus,
        fault_topic: str,
        status_topic: str,
        status: Any,
    ) -> None:
        """The sim's own topics: fault requests in, ``status`` (its type) out."""
        self._fault_reader: DataReader[Any] = loop.reader(
            participant, loop.topic(participant, fault_topic, Fault_), FAULT_QOS
        )
        self._status_writer: DataWriter[Any] = loop.writer(
            participant, loop.topic(participant, status_topic, status), STATUS_QOS
        )

    def _start_record(
        self, path: Path | None, header: Mapping[str, Any], faults: Iterable[FaultSpec]
    ) -> None:
        """Open the record (when ``path``) and set the faults active from start."""
        if path is not None:
            self.recorder = Recorder(path, header, self.started)
        for spec in faults:
            self.apply_fault("set", spec, self.started)

    def _schedule_sim_jobs(self, status_hz: float) -> None:
        """After the robot's jobs: fault requests, status and record flushing."""
        self.scheduler.add("faults", 20.0, self._poll_faults)
        self.scheduler.add("status", status_hz, self._publish_status)
        if self.recorder is not None:
            self.scheduler.add("record", 10.0, lambda now, n: self._flush_record())

    # -- the robot (the subclass) ---------------------------------------------------------

    def _drain(self, now: float) -> None:
        """Apply everything received since the last wake-up (the scheduler's before_each)."""
        raise NotImplementedError

    def _validate(self, spec: FaultSpec) -> FaultSpec:
        """``spec`` as this robot can have it (target normalised, value defaulted)."""
        raise NotImplementedError

    def _target(self, kind: str, target: str) -> str:
        """The canonical form of a non-empty ``target`` of ``kind``, to clear."""
        raise NotImplementedError

    def _sync_faults(self, now: float) -> None:
        """Make the model agree with the fault book after any change to it."""
        raise NotImplementedError

    def status(self, now: float) -> Any:
        """The status sample describing the sim now (see ``_status_fields``)."""
        raise NotImplementedError

    def _published(self) -> dict[str, int]:
        """Samples published per state topic, for the log line at ``close``."""
        raise NotImplementedError

    # -- running --------------------------------------------------------------------------

    def run(self) -> None:
        """Publish and obey until ``stop()``."""
        self.scheduler.run()

    def stop(self) -> None:
        """Make ``run`` return; safe to call from a signal handler."""
        self.scheduler.stop()

    def close(self) -> None:
        """Write the final counters and close the record (call after ``run`` returns)."""
        now = self.clock()
        counters = {name: c.as_dict() for name, c in self.counters.items()}
        if self.recorder is not None:
            self.recorder.note(now, "counters", counters)
            self.recorder.close()
            self.recorder = None
        log.info(
            "sim stopped",
            uptime=round(now - self.started, 3),
            counters=counters,
            published=self._published(),
            scheduler=self.scheduler.stats(),
        )

    # -- commands in ----------------------------------------------------------------------

    def _take(self, now: float, sources: Iterable[tuple[Take, Handler]]) -> None:
        """Hand every command each ``take`` returns to its handler, with its send time."""
        offset = None
        for take, handle in sources:
            taken = take()
            if not taken:
                continue
            if offset is None:  # source timestamps are wall-clock ns: map them to monotonic
                offset = self._wall_offset()
            for cmd, source_ns in taken:
                handle(now, source_ns * 1e-9 - offset, cmd)

    # -- faults ---------------------------------------------------------------------------

    def apply_fault(self, action: str, spec: FaultSpec, now: float, source: str = "cli") -> None:
        """Set, clear or clear all (``action``); FaultError if the spec is invalid."""
        if action == "set":
            spec = self._validate(spec)
            self.faults.set(spec, now)
            self._note_fault(now, "set", spec, source)
        elif action == "clear":
            target = self._target(canonical_kind(spec.kind), spec.target) if spec.target else ""
            for gone in self.faults.clear(spec.kind, target):
                self._note_fault(now, "clear", gone, source)
        elif action == "clear_all":
            for gone in self.faults.clear_all():
                self._note_fault(now, "clear", gone, source)
        else:
            raise FaultError(f"unknown fault action {action!r}")
        self._sync_faults(now)

    def _note_fault(self, now: float, action: str, spec: FaultSpec, source: str) -> None:
        info = {
            "action": action,
            "kind": spec.kind,
            "target": spec.target,
            "value": spec.value,
            "duration": spec.duration,
        }
        log.warning("fault", source=source, **info)
        if self.recorder is not None:
            self.recorder.note(now, "fault", {**info, "source": source})

    def _poll_faults(self, now: float, periods: int) -> None:
        for sample in self._fault_reader.take(N=16):
            if isinstance(sample, Fault_):  # not the InvalidSample of a writer leaving
                self._on_fault_request(sample, now)
        expired = self.faults.expire(now)
        for spec in expired:
            self._note_fault(now, "expire", spec, source="duration")
        if expired:
            self._sync_faults(now)
        if self._status_dirty:
            self._publish_status(now, 0)

    def _on_fault_request(self, sample: Any, now: float) -> None:
        rid = int(sample.request_id)
        if rid in self._applied_requests or rid in self._rejected_requests:
            return  # a resend of a request already handled
        action = _ACTION_OF[sample.action.name]
        try:
            spec = FaultSpec(
                canonical_kind(sample.kind.name),
                str(sample.target),
                float(sample.value),
                float(sample.duration),
            )
            self.apply_fault(action, spec, now, source="dds")
        except FaultError as e:
            self._rejected_requests.append(rid)
            self._last_rejection = f"{rid}: {e}"
            log.warning("fault request refused", request_id=rid, reason=str(e))
        else:
            self._applied_requests.append(rid)
        self._status_dirty = True

    # -- state out ------------------------------------------------------------------------

    def _dropped(self, topic: str) -> bool:
        """Whether ``topic`` is silenced by a dropout fault (of it, or of every topic).

        Asked before every state sample (over a thousand a second): the dropouts' targets
        are read off the book again only when it changed (its ``version``)."""
        version, targets = self._dropouts
        if version != self.faults.version:
            targets = frozenset(f.target for f in self.faults.of_kind("state-dropout"))
            self._dropouts = (self.faults.version, targets)
        return bool(targets) and ("" in targets or topic in targets)

    def _status_fields(self, now: float) -> dict[str, Any]:
        """The fields every sim's status has: who it is, requests handled, active faults."""
        return {
            "pid": os.getpid(),
            "monotonic": now,
            "applied_requests": list(self._applied_requests),  # the IDL sequences take lists
            "rejected_requests": list(self._rejected_requests),
            "last_rejection": self._last_rejection,
            "faults": [
                ActiveFault_(
                    kind=types.FaultKind[KINDS[f.spec.kind]],
                    target=f.spec.target,
                    value=f.spec.value,
                    remaining=f.remaining(now),
                )
                for f in self.faults.active()
            ],
        }

    def _publish_status(self, now: float, periods: int) -> None:
        self._status_writer.write(self.status(now))
        self._status_dirty = False

    def _flush_record(self) -> None:
        if self.recorder is not None:
            self.recorder.flush()


__all__ = ["RawReader", "SimNode", "state_rates"]
