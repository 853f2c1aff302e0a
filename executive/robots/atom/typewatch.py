"""Interface mismatch: the types other participants announce on the robot's topics, against ours.

A wrong interface variant fails silently on DDS: a reader whose type differs from the
writer's never matches it and receives nothing, and the C side logs nothing either
(seen in tests/wire). The executive would then see "no robot state" and never say why.
So the service watches discovery (CycloneDDS's builtin publication and subscription
topics) for endpoints of other participants on the ``rt/*`` topics, compares the XTypes
type identifier each announces with the one of the variant we speak, and on a difference
names the topic and the presets whose type would match. The service logs it and refuses
to start missions until the config names the robot's variant.

Only other processes are judged: a second participant in this same process is discovered
locally and was seen announcing no difference even where its type differed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from cyclonedds.builtin import (
    BuiltinDataReader,
    BuiltinTopicDcpsPublication,
    BuiltinTopicDcpsSubscription,
)
from cyclonedds.domain import DomainParticipant

from executive.robots.atom.interface import PRESETS, Interface, Variant
from executive.robots.atom.topics import TOPICS
from executive.wire.robot_io import TopicSpec

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Mismatch:
    """A topic on which someone announces a type that differs from ours."""

    topic: str
    type_name: str
    ours: str  # our variant's name
    matches: tuple[str, ...]  # presets whose type for this topic is the announced one

    def __str__(self) -> str:
        known = (
            f"it matches interface {' or '.join(self.matches)}"
            if self.matches
            else "no known interface variant matches it"
        )
        return (
            f"{self.topic}: the robot announces a different {self.type_name} than interface "
            f"{self.ours!r} speaks; {known} (set `interface:` in the config)"
        )


def _type_id(interface: Interface, type_name: str) -> Any:
    return getattr(interface, type_name).__idl__.get_type_id()


class TypeWatch:
    """Discovery readers and the mismatches seen so far. ``poll()`` from one thread."""

    def __init__(
        self,
        participant: DomainParticipant,
        interface: Interface,
        topics: Mapping[str, TopicSpec] | None = None,
    ) -> None:
        self.interface = interface
        self.topics = {spec.name: spec for spec in (topics or TOPICS).values()}
        self._ours = {n: _type_id(interface, s.type_name) for n, s in self.topics.items()}
        self._presets = {p: Interface(Variant(p)) for p in PRESETS}
        self._participant = participant.guid
        self._lock = threading.Lock()
        self._mismatches: dict[str, Mismatch] = {}
        self.seen: set[str] = set()  # topics on which another participant was seen
        self._readers = [
            BuiltinDataReader(participant, BuiltinTopicDcpsPublication),
            BuiltinDataReader(participant, BuiltinTopicDcpsSubscription),
        ]

    @property
    def mismatches(self) -> list[Mismatch]:
        with self._lock:
            return list(self._mismatches.values())

    def poll(self) -> list[Mismatch]:
        """Take what discovery brought since the last call; return the new mismatches."""
        new = []
        for reader in self._readers:
            for endpoint in reader.take(N=256):
                found = self._check(endpoint)
                if found is not None:
                    new.append(found)
        for m in new:
            log.error("interface mismatch", topic=m.topic, detail=str(m))
        return new

    def _check(self, endpoint: Any) -> Mismatch | None:
        topic = getattr(endpoint, "topic_name", None)
        if topic not in self.topics or endpoint.participant_key == self._participant:
            return None
        self.seen.add(topic)
        theirs = endpoint.type_id
        if theirs is None or theirs == self._ours[topic]:
            return None
        type_name = self.topics[topic].type_name
        with self._lock:
            if topic in self._mismatches:
                return None
            matches = tuple(p for p, i in self._presets.items() if _type_id(i, type_name) == theirs)
            found = Mismatch(topic, type_name, self.interface.variant.name, matches)
            self._mismatches[topic] = found
        return found
