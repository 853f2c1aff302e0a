"""An in-process wire: a robot's topics without a middleware, for simulated time.

A scenario in simulated time (``executive.scenario``) runs the executive's side of a robot
(its adapter) and the robot's simulator in one process, stepped in lockstep with the tick.
They still talk over a wire, this one: ``LoopBus`` stands where a DDS participant would
(``RobotIO(bus, ...)``, ``SimAtom(bus, ...)``), and what travels is what DDS would carry,
the encoded sample, written through the same codecs at both ends (``raw_write``,
``raw_take`` and a stock ``serialize``/``deserialize`` understand the loop's entities). So
the adapter's code and the simulator's code both run as they do on the robot's real wire,
and a wrong field or a codec bug shows here too.

What DDS does that matters here, the loop does the same way:

- a write reaches every reader of the topic at once, on the writing thread (CycloneDDS
  delivers a local write so), a listener's callback included;
- a reader keeps the newest ``depth`` samples (its QoS's history: one for state, 64 for
  commands) and a reader made after a write does not see it (volatile);
- each sample carries its source timestamp, the bus's clock on the wall (``SimClock``), so
  a polled reader estimates arrivals exactly as it does on DDS.

What it does not do: discovery, QoS matching, loss, lateness. A scenario's robot is never
late; what the real wire adds is proved by ``--realtime`` and the parity test.

``topic``, ``reader`` and ``writer`` make an entity on either kind of participant: a
``LoopBus`` gets the loop's, a DDS participant CycloneDDS's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cyclonedds.core import Policy, Qos
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.clock import SimClock


class LoopBus:
    """The topics of one simulated robot and its executive, by name; the participant of
    every entity on them. ``clock`` stamps and times every sample."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self._readers: dict[str, list[LoopReader]] = {}
        self.delivered: dict[str, int] = {}  # samples written, by topic

    def deliver(self, topic: str, data: bytes) -> None:
        """Hand ``data`` to every reader of ``topic``, now, on this thread."""
        self.delivered[topic] = self.delivered.get(topic, 0) + 1
        readers = self._readers.get(topic)
        if not readers:
            return
        stamp = self.clock.wall_ns()
        for reader in tuple(readers):
            reader.receive(data, stamp)

    def attach(self, reader: LoopReader) -> None:
        self._readers.setdefault(reader.topic.name, []).append(reader)

    def detach(self, reader: LoopReader) -> None:
        readers = self._readers.get(reader.topic.name, [])
        if reader in readers:
            readers.remove(reader)


@dataclass(frozen=True)
class LoopTopic:
    """A topic on the loop: its name and its IDL type (what a stock sample is)."""

    name: str
    type: Any

    def get_name(self) -> str:  # as CycloneDDS's Topic: readers name their topic so
        return self.name


class LoopWriter:
    """Writes one topic on the loop: stock samples (serialized as cyclonedds-python does)
    or encoded bytes (``raw_write``)."""

    def __init__(self, bus: LoopBus, topic: LoopTopic) -> None:
        self.bus = bus
        self.topic = topic

    def write(self, sample: Any) -> None:
        self.bus.deliver(self.topic.name, sample.serialize())

    def write_raw(self, data: bytes) -> None:
        self.bus.deliver(self.topic.name, data)


@dataclass
class LoopReader:
    """Reads one topic on the loop, keeping the newest ``depth`` samples. ``on_data`` is
    called on the writing thread after each sample arrives (a DDS listener's
    ``on_data_available``)."""

    bus: LoopBus
    topic: LoopTopic
    depth: int = 1
    on_data: Callable[[LoopReader], None] | None = None
    _samples: deque[tuple[bytes, int]] = field(init=False)
    _open: bool = True

    def __post_init__(self) -> None:
        self._samples = deque(maxlen=self.depth)
        self.bus.attach(self)

    def receive(self, data: bytes, stamp: int) -> None:
        self._samples.append((data, stamp))
        if self.on_data is not None:
            self.on_data(self)

    def take_raw(self, n: int = 64) -> list[tuple[bytes, int]]:
        """Up to ``n`` samples (encoded, with their source timestamps, ns), oldest first."""
        samples = self._samples
        if not samples:
            return []
        if len(samples) <= n:
            taken = list(samples)
            samples.clear()
            return taken
        return [samples.popleft() for _ in range(n)]

    def take(self, N: int = 64) -> list[Any]:  # noqa: N803 - CycloneDDS's keyword
        """Up to ``N`` samples as stock IDL objects (``DataReader.take``)."""
        return [self.topic.type.deserialize(data) for data, _ in self.take_raw(N)]

    def set_listener(self, listener: object) -> None:
        """Only ``None``: the listener detached (``dds.delete_entities``)."""
        if listener is not None:
            raise TypeError("a loop reader's callback is its on_data")
        self.on_data = None

    def close(self) -> None:
        """Leave the bus: nothing more arrives; idempotent."""
        if self._open:
            self._open = False
            self.on_data = None
            self.bus.detach(self)


LoopEntity = LoopReader | LoopWriter


def topic(participant: Any, name: str, idl_type: Any) -> Any:
    """A topic of ``participant``: the loop's on a ``LoopBus``, else CycloneDDS's."""
    if isinstance(participant, LoopBus):
        return LoopTopic(name, idl_type)
    return Topic(participant, name, idl_type)


def reader(participant: Any, topic: Any, qos: Qos) -> Any:
    """A reader of ``topic`` (its history depth from ``qos``)."""
    if isinstance(participant, LoopBus):
        return LoopReader(participant, topic, depth=_depth(qos))
    return DataReader(participant, topic, qos=qos)


def writer(participant: Any, topic: Any, qos: Qos) -> Any:
    if isinstance(participant, LoopBus):
        return LoopWriter(participant, topic)
    return DataWriter(participant, topic, qos=qos)


def _depth(qos: Qos) -> int:
    history = qos[Policy.History]  # None where the QoS sets no history: KEEP_LAST 1
    return max(1, int(getattr(history, "depth", 1) or 1))


def clock_of(participant: Any) -> Callable[[], float] | None:
    """The clock a participant's samples are timed by: a loop's ``SimClock``; None for a
    DDS participant (real time: ``time.monotonic``)."""
    return participant.clock if isinstance(participant, LoopBus) else None
