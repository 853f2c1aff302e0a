"""One CycloneDDS 11 participant on the Aurora's wire, and its topics' readers and writers.

``AuroraNode(config)`` creates the domain with the configuration's XML (so the 0.10.2
configuration in CYCLONEDDS_URI does not apply), one participant, and on request each
topic's writer (``qos.writer_qos``: RELIABLE, VOLATILE, XCDR1) or reader
(``qos.reader_qos``: BEST_EFFORT). Topics are named by their base name (``aurora_state``);
the namespace, ROS naming and interface variant come from the config. ``header()`` stamps a
command with the wall clock, as the vendor's robot does.
"""

from __future__ import annotations

import time
from typing import Any

from cyclonedds.core import Listener
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.internal import InvalidSample
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.robots.aurora.wire.config import WireConfig
from executive.robots.aurora.wire.qos import reader_qos, writer_qos
from executive.robots.aurora.wire.topics import type_for
from executive.robots.aurora.wire.types import Header, Time


def header(frame_id: str = "", now: float | None = None) -> Header:
    """A header stamped with ``now`` (the wall clock by default)."""
    t = time.time() if now is None else now
    sec = int(t)
    return Header(stamp=Time(sec=sec, nanosec=int((t - sec) * 1e9)), frame_id=frame_id)


def is_valid(sample: object) -> bool:
    """False for the fieldless samples cyclone hands a reader when a Fast DDS peer leaves."""
    return not isinstance(sample, InvalidSample)


class AuroraNode:
    """A participant on ``config``'s domain with the Aurora's topics at hand."""

    def __init__(self, config: WireConfig) -> None:
        self.config = config
        # the domain must exist with our XML before the participant: DomainParticipant(id)
        # would otherwise create it from CYCLONEDDS_URI
        self.domain = Domain(config.domain, config.dds_config_xml())
        self.participant = DomainParticipant(config.domain)
        self._topics: dict[str, Topic[Any]] = {}

    def topic(self, base: str, data_type: type[IdlStruct] | None = None) -> Topic[Any]:
        """The topic ``base`` (``aurora_state``...), created once, with the config's type
        for it or ``data_type`` (a test's deliberately different type)."""
        if base not in self._topics:
            cls = type_for(self.config, base) if data_type is None else data_type
            self._topics[base] = Topic(self.participant, self.config.topic(base), cls)
        return self._topics[base]

    def writer(self, base: str, depth: int = 1) -> DataWriter[Any]:
        return DataWriter(self.participant, self.topic(base), writer_qos(depth))

    def reader(
        self, base: str, depth: int = 1, listener: Listener | None = None
    ) -> DataReader[Any]:
        return DataReader(self.participant, self.topic(base), reader_qos(depth), listener)

    def close(self) -> None:
        """Delete the participant and the domain (every endpoint with them)."""
        self.participant.__del__()
        self._topics.clear()
        self.domain.__del__()
