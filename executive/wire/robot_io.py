"""Typed access to the robot's DDS topics: latest-state readers and command writers.

``RobotIO`` is used from both ends of the wire. The executive side (``Side.CONTROLLER``)
reads the state topics and writes the command topics; a simulated robot (``Side.ROBOT``)
does the opposite with the same table, so the two can never disagree on which topic
carries which type. The tables are the robots' own (the Atom's:
``executive.robots.atom.topics``); nothing here names a robot.

Readers keep only the newest sample with the monotonic time it arrived, which is what a
controller needs (state age is a safety input), and wake anyone waiting on a predicate.

Nothing raises through a DDS listener: CycloneDDS's receive thread would print the
traceback and drop the sample, once per sample, and on a 500 Hz topic that is a log storm
in which the one thing that matters (the robot's state is not being understood) is lost.
A sample that does not decode is counted on its reader, logged once per topic and then at
most every ``ERROR_LOG_INTERVAL`` seconds with the count, and reported to the reader's
``on_undecodable`` callbacks (the safety fast path treats it as a fault, DESIGN.md 4).

A reader is either listening or polled. A listening reader runs Python for every sample
(its DDS listener), which the e-stop's fast path needs. A polled reader (``polled=True``,
``RobotIO(polled=...)``) has no listener: its newest sample waits in the DDS reader (history
one) until someone asks (``latest``, ``poll``), and is decoded then, once. State that the
executive only needs at tick rate is read that way: 500 Hz joint state costs the tick's
rate, not the topic's (issue 22). Silence is still judged from each sample's arrival,
estimated from its source timestamp (``ArrivalClock``), never from when it was taken; an
undecodable newest sample is still counted, named and reported to ``on_undecodable``, on
the thread that calls ``poll`` (the tick's), never from ``latest``. ``ATOM_EXECUTIVE_POLL=off``
makes every reader listen, as before (``bench/idle.py``'s A/B).

The participant may be the in-process wire of simulated time (``executive.wire.loop``'s
``LoopBus``): the same readers and writers then carry the same encoded samples without
DDS, timed by the loop's simulated clock.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import structlog
from cyclonedds.core import Listener, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.internal import InvalidSample
from cyclonedds.sub import DataReader

from executive.seam.ports import ReaderHealth, Stamped
from executive.wire import dds, loop
from executive.wire.codec import Codec, raw_take, raw_take_stamped, raw_write

T = TypeVar("T")
log = structlog.get_logger(__name__)
ERROR_LOG_INTERVAL = 10.0  # s between repeated log lines about one reader's errors
SKEW_WINDOW_S = 10.0  # ArrivalClock: the least delay is the least of this window and the last
POLL_WAIT_S = 0.005  # a polled reader's ``wait_for`` looks this often
POLL_ENV = "ATOM_EXECUTIVE_POLL"  # "off": every reader listens, as before issue 22 (an A/B)


class Side(enum.Enum):
    CONTROLLER = "controller"  # the executive: reads state, writes commands
    ROBOT = "robot"  # the firmware or the simulated Atom: reads commands, writes state


class Kind(enum.Enum):
    STATE = "state"  # robot -> controller, periodic
    STREAM = "stream"  # controller -> robot, periodic (joint commands)
    EVENT = "event"  # controller -> robot, one-shot


@dataclass(frozen=True)
class TopicSpec:
    name: str
    type_name: str
    kind: Kind


class ArrivalClock:
    """When a polled sample arrived, from its source timestamp (the writer's wall clock).

    A polled reader takes a sample after it arrived, by up to the time between two takes,
    and a stall of the taker must not make an old sample look fresh (the watchdog judges
    silence from arrival times). The writer's clock may be skewed from ours, so it is not
    read as ours: ``d`` = our wall clock at the take less the source timestamp is the
    sample's delay (arrival to take included) plus the skew, and its least value over the
    last one or two ``SKEW_WINDOW_S`` windows is the skew plus the least delay. A sample's
    arrival is then the take's time less ``d`` - that least: exact on one host, where
    CycloneDDS delivers within microseconds. It is clamped to the previous take (a sample
    the reader holds arrived after it) and to the take itself, so a writer's clock that
    jumps costs at most the time between two takes, and only ever makes a sample older.
    """

    def __init__(self) -> None:
        self._least: float | None = None  # this window's least d (s)
        self._previous: float | None = None  # the last window's
        self._window_end = -math.inf

    def arrival(self, source_ns: int, wall_ns: int, now: float, since: float | None) -> float:
        """The arrival (``now``'s clock) of a sample stamped ``source_ns`` and taken at
        ``now`` (``wall_ns`` on the wall clock); ``since``: the previous take, if any."""
        if source_ns <= 0:  # the writer set no time: all that is known is the interval
            return now if since is None else since
        d = (wall_ns - source_ns) / 1e9
        if now >= self._window_end:
            self._previous, self._least = self._least, None
            self._window_end = now + SKEW_WINDOW_S
        self._least = d if self._least is None else min(self._least, d)
        least = self._least if self._previous is None else min(self._least, self._previous)
        arrived = now - (d - least)
        return arrived if since is None else min(now, max(since, arrived))


def _weak_callback(latest: weakref.ReferenceType[LatestReader[Any]]) -> Callable[[Any], None]:
    """The data callback of a ``LatestReader``'s reader. It holds the ``LatestReader``
    weakly, so the reader (held by its finalizer, or by the in-process wire) never keeps
    it alive."""

    def on_data_available(reader: Any) -> None:
        with dds.in_listener():  # if the last reference goes here, its deletion waits
            target = latest()
            if target is not None:
                target._on_data(reader)
            del target

    return on_data_available


def _listen(reader: Any, latest: LatestReader[Any]) -> None:
    """Call ``latest`` back with every sample ``reader`` gets: a DDS listener, or the
    in-process wire's ``on_data``."""
    callback = _weak_callback(weakref.ref(latest))
    if isinstance(reader, loop.LoopReader):
        reader.on_data = callback
    else:
        reader.set_listener(Listener(on_data_available=callback))  # type: ignore[no-untyped-call]


class LatestReader(Generic[T]):
    """A reader that keeps the newest sample; thread-safe; callbacks run on a DDS thread.

    ``add_callback`` callbacks are for fast paths that must not wait for a tick; they run
    on CycloneDDS's listener thread (or, with the e-stop reflex built, on the reflex's
    ``dds-to-python`` thread, so no Python listener delays the reflex) and must be short. One that
    raises is counted and logged, and the others still run. ``on_undecodable`` callbacks
    get the reason a sample could not be decoded, on the same thread.

    With a ``codec`` the reader takes raw bytes and keeps numpy records instead of IDL
    objects: a 500 Hz ``UpperState_`` then costs microseconds per sample, not hundreds.

    ``polled``: no listener and no per-sample Python (the module's docstring); the sample is
    taken and decoded when asked for. Use a history of one (``dds.STATE_READER_QOS``): the
    newest sample is the one that matters, and the e-stop reflex reads it where it waits.
    """

    def __init__(
        self,
        participant: DomainParticipant | loop.LoopBus,
        topic: Any,
        qos: Qos,
        clock: Callable[[], float] | None = None,
        codec: Codec | None = None,
        *,
        polled: bool = False,
    ) -> None:
        # time.monotonic, or the in-process wire's simulated clock (and its wall clock)
        self._clock = clock or loop.clock_of(participant) or time.monotonic
        self._wall_ns = (
            participant.clock.wall_ns if isinstance(participant, loop.LoopBus) else time.time_ns
        )
        self._codec = codec
        self.polled = polled and os.environ.get(POLL_ENV, "").strip().lower() != "off"
        self._arrivals = ArrivalClock()
        self._taken_at: float | None = None  # polled: the last take (``clock``)
        self._unreported: list[str] = []  # polled: undecodable samples ``poll`` reports
        self._cond = threading.Condition()
        self._latest: Stamped[T] | None = None
        self._count = 0
        self._callbacks: list[Callable[[T], None]] = []
        self._error_callbacks: list[Callable[[str], None]] = []
        self._health = ReaderHealth(topic.get_name())
        self._logged_at: dict[str, float] = {}  # kind of error -> when it was last logged
        self._unlogged: dict[str, int] = {}  # kind of error -> occurrences since then
        self._take_lock = threading.Lock()  # the listener's thread and the first take below
        self.reader: DataReader[T] = loop.reader(participant, topic, qos)
        self._created_at = self._clock()
        # The listener goes on after the constructor: cyclonedds-python 0.10.2 sets the
        # reader's topic after creating it, and a listener given to the constructor can run
        # before that ("take failed: ... no attribute '_topic'", seen with a writer already
        # publishing, as a robot is when the service starts). Then take what came before it.
        if not self.polled:
            _listen(self.reader, self)
        # Deleted with this object however it goes (close, refcount or the collector), by
        # a finalizer that holds the DDS reader and not this object (see dds.delete_entities)
        self._finalizer = weakref.finalize(self, dds.delete_entities, [self.reader])
        self._finalizer.atexit = False  # at exit, the participant's deletion covers it
        if not self.polled:
            self._on_data(self.reader)

    def close(self) -> None:
        """Stop the callbacks and delete the DDS reader, now; idempotent. ``latest`` and
        ``health`` keep their last values."""
        self._finalizer()

    def _on_data(self, reader: Any) -> None:
        if reader is None:  # the reader was deleted while its last callback was in flight
            return
        try:
            with self._take_lock:
                self._take(reader)
        except Exception as e:  # noqa: BLE001 - nothing may raise through the listener
            self._failed("take", f"{type(e).__name__}: {e}")

    def _take(self, reader: Any) -> None:
        samples: list[Any] = []
        if self._codec is None:  # a writer leaving shows up as an InvalidSample: not state
            samples = [s for s in reader.take(N=64) if not isinstance(s, InvalidSample)]
        else:
            for data in raw_take(reader, 64):
                try:
                    samples.append(self._codec.decode(data))
                except ValueError as e:  # DecodeError, or numpy refusing the buffer
                    self._undecodable(str(e))
        if not samples:
            return
        now = self._clock()
        for cb in self._callbacks:
            for s in samples:
                try:
                    cb(s)
                except Exception as e:  # noqa: BLE001 - the next callback must still run
                    self._failed("callback", f"{getattr(cb, '__name__', cb)!s}: {e!r}")
        with self._cond:
            self._latest = Stamped(samples[-1], now)
            self._count += len(samples)
            if self._health.undecodable:
                self._health = dataclasses.replace(self._health, undecodable=False)
            self._cond.notify_all()

    def listen(self) -> None:
        """A polled reader from now on listens (a per-sample callback is needed after all:
        the e-stop's Python fast path where the reflex did not arm); idempotent."""
        if not self.polled or not self._finalizer.alive:
            return
        self.polled = False
        _listen(self.reader, self)
        self._on_data(self.reader)

    # -- polled ---------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Polled: take what waits (with a history of one, the newest sample), decode it,
        stamp its arrival. Never raises; an undecodable sample is counted here and reported
        by the next ``poll``."""
        if not self._finalizer.alive:  # closed: keep the last values
            return
        with self._take_lock:
            now, wall = self._clock(), self._wall_ns()
            try:
                taken = self._take_stamped()
            except Exception as e:  # noqa: BLE001 - a reader deleted under us, a DDS error
                self._failed("take", f"{type(e).__name__}: {e}")
                return
            since = self._taken_at if self._taken_at is not None else self._created_at
            self._taken_at = now
            if not taken:
                return
            for data, source_ns in taken:
                if self._codec is None:
                    sample = data
                else:
                    try:
                        sample = self._codec.decode(data)
                    except ValueError as e:  # DecodeError, or numpy refusing the buffer
                        self._undecodable(str(e), report=False)
                        continue
                received = self._arrivals.arrival(source_ns, wall, now, since)
                with self._cond:
                    self._latest = Stamped(sample, received)
                    self._count += 1
                    if self._health.undecodable:
                        self._health = dataclasses.replace(self._health, undecodable=False)
                    self._cond.notify_all()

    def _take_stamped(self) -> list[tuple[Any, int]]:
        if self._codec is not None:
            return raw_take_stamped(self.reader, 64)
        out = []
        for s in self.reader.take(N=64):
            if not isinstance(s, InvalidSample):
                info = getattr(s, "sample_info", None)
                out.append((s, 0 if info is None else int(info.source_timestamp)))
        return out

    def poll(self) -> None:
        """Polled: take and decode what arrived, then report undecodable samples found since
        the last ``poll`` to the ``on_undecodable`` callbacks, on this thread (the tick's:
        never the motion streamer's, which reads ``latest`` holding its lock). Listening:
        nothing (the listener did it all)."""
        if not self.polled:
            return
        self._refresh()
        with self._cond:
            reasons, self._unreported = self._unreported, []
        for why in reasons:
            self._report(why)

    # -- errors ----------------------------------------------------------------------------

    def _undecodable(self, why: str, report: bool = True) -> None:
        now = self._clock()
        with self._cond:
            h = self._health
            self._health = dataclasses.replace(
                h, errors=h.errors + 1, last_error=why, last_error_at=now, undecodable=True
            )
            if not report:
                self._unreported.append(why)
        if report:  # the fast path's hold first, then the log line
            self._report(why)
        self._log("undecodable sample", why)

    def _report(self, why: str) -> None:
        for cb in self._error_callbacks:
            try:
                cb(why)
            except Exception as e:  # noqa: BLE001 - the listener thread must survive
                self._failed("callback", f"{getattr(cb, '__name__', cb)!s}: {e!r}")

    def _failed(self, kind: str, why: str) -> None:
        if kind == "callback":
            with self._cond:
                self._health = dataclasses.replace(
                    self._health, callback_errors=self._health.callback_errors + 1
                )
        self._log(f"{kind} failed", why)

    def _log(self, event: str, why: str) -> None:
        """Log the first occurrence, then at most one line per interval with the count."""
        now = self._clock()
        last = self._logged_at.get(event)
        if last is not None and now - last < ERROR_LOG_INTERVAL:
            self._unlogged[event] = self._unlogged.get(event, 0) + 1
            return
        self._logged_at[event] = now
        since = self._unlogged.pop(event, 0)
        log.error(event, topic=self._health.topic, error=why, since_last_line=since)

    def add_callback(self, cb: Callable[[T], None]) -> None:
        """Call ``cb`` with every sample, on the receiving thread (listening readers only:
        a polled reader runs no Python per sample)."""
        if self.polled:
            raise ValueError(
                f"{self._health.topic}: a polled reader has no per-sample callbacks; "
                "read it with latest/poll, or make it a listening reader"
            )
        self._callbacks.append(cb)

    def on_undecodable(self, cb: Callable[[str], None]) -> None:
        self._error_callbacks.append(cb)

    @property
    def health(self) -> ReaderHealth:
        if self.polled:
            self._refresh()
        with self._cond:
            return self._health

    @property
    def latest(self) -> Stamped[T] | None:
        """The newest sample and its arrival (polled: taken now, if a newer one waits)."""
        if self.polled:
            self._refresh()
        with self._cond:
            return self._latest

    def peek(self) -> tuple[Stamped[T] | None, ReaderHealth]:
        """The newest sample and the health as of the last take, taking nothing (right
        after ``poll``: one take a tick, not one per question)."""
        with self._cond:
            return self._latest, self._health

    @property
    def count(self) -> int:
        """Samples decoded so far (polled: at most one per take)."""
        if self.polled:
            self._refresh()
        with self._cond:
            return self._count

    def wait_for(self, predicate: Callable[[T], bool], timeout: float) -> T | None:
        """Block until the newest sample satisfies ``predicate``; None on timeout."""
        deadline = time.monotonic() + timeout
        if self.polled:  # nothing wakes us: look every POLL_WAIT_S
            while True:
                stamped = self.latest
                if stamped is not None and predicate(stamped.sample):
                    return stamped.sample
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                time.sleep(min(POLL_WAIT_S, remaining))
        with self._cond:
            while True:
                if self._latest is not None and predicate(self._latest.sample):
                    return self._latest.sample
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)


class RobotIO:
    """A robot's topics (``topics``: key -> name, type and kind) for one side of the wire,
    on one injected participant, with the types of ``interface`` (a module-like object
    with an attribute per type name: the robot's interface variant).

    Topics named in ``records`` are read as numpy records through the precompiled codec
    (``self.codecs[key]``), and can be written from records with ``write_record``. Readers
    of the topics named in ``polled`` are polled (``LatestReader``): no Python per sample.
    """

    def __init__(
        self,
        participant: DomainParticipant | loop.LoopBus,
        interface: Any,
        topics: Mapping[str, TopicSpec],
        *,
        side: Side = Side.CONTROLLER,
        records: Iterable[str] = (),
        polled: Iterable[str] = (),
    ) -> None:
        # a DomainParticipant, or the in-process wire's LoopBus (executive.wire.loop)
        self.participant: Any = participant
        # what its samples are timed by: time.monotonic, or the in-process wire's clock
        self.clock: Callable[[], float] = loop.clock_of(participant) or time.monotonic
        self.interface = interface
        self.side = side
        self.topics = dict(topics)
        self.readers: dict[str, LatestReader[Any]] = {}
        self.writers: dict[str, Any] = {}  # DataWriters, or the in-process wire's LoopWriters
        self.codecs: dict[str, Codec] = {
            key: Codec(getattr(self.interface, self.topics[key].type_name)) for key in records
        }
        polled = frozenset(polled)
        for key, spec in self.topics.items():
            topic = loop.topic(participant, spec.name, getattr(self.interface, spec.type_name))
            robot_writes = spec.kind is Kind.STATE
            if robot_writes == (side is Side.ROBOT):
                qos = dds.STATE_WRITER_QOS if robot_writes else _writer_qos(spec.kind)
                self.writers[key] = loop.writer(participant, topic, qos)
            else:
                qos = dds.STATE_READER_QOS if robot_writes else dds.EVENT_READER_QOS
                self.readers[key] = LatestReader(
                    participant, topic, qos, codec=self.codecs.get(key), polled=key in polled
                )

    def write(self, key: str, sample: Any) -> None:
        self.writers[key].write(sample)

    def write_record(self, key: str, record: Any) -> None:
        """Write a numpy record of ``key``'s type through the precompiled codec."""
        raw_write(self.writers[key], self.codec(key).encode(record))

    def codec(self, key: str) -> Codec:
        """The codec for ``key``'s type (created on first use)."""
        if key not in self.codecs:
            self.codecs[key] = Codec(getattr(self.interface, self.topics[key].type_name))
        return self.codecs[key]

    def latest(self, key: str) -> Any | None:
        stamped = self.readers[key].latest
        return None if stamped is None else stamped.sample

    def health(self) -> dict[str, ReaderHealth]:
        """Every reader's decode health, by key."""
        return {key: reader.health for key, reader in self.readers.items()}

    def poll(self, keys: Iterable[str] | None = None) -> None:
        """``LatestReader.poll`` of these readers (every one when None)."""
        for key in self.readers if keys is None else keys:
            reader = self.readers.get(key)
            if reader is not None:
                reader.poll()


def _writer_qos(kind: Kind) -> Qos:
    return dds.STREAM_WRITER_QOS if kind is Kind.STREAM else dds.EVENT_WRITER_QOS
