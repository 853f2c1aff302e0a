"""Interface mismatch: the types other participants announce on a robot's topics, against ours.

A wrong interface variant fails silently on DDS: a reader whose type differs from the
writer's never matches it and receives nothing, and the C side logs nothing either
(seen in tests/wire). The executive would then see "no robot state" and never say why.
So an adapter watches discovery (CycloneDDS's builtin publication and subscription
topics) for endpoints of other participants on its robot's topics, compares the XTypes
type identifier each announces with the one of the variant we speak, and on a difference
names the topic and the variants whose type would match. The service logs it and refuses
to start missions until the config names the robot's variant.

Robot-neutral: the adapter gives the topics (topic name -> type name), our type id per
type name and its robot's known variants (variant name -> type id per type name); the
Atom's are its topic table and presets (``executive.robots.atom.adapter.AtomTypeWatch``), the
Adam's its four topics and two variants (``executive.robots.adam``).

Only other processes are judged: a second participant in this same process is discovered
locally and was seen announcing no difference even where its type differed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from cyclonedds.builtin import (
    BuiltinDataReader,
    BuiltinTopicDcpsPublication,
    BuiltinTopicDcpsSubscription,
)
from cyclonedds.domain import DomainParticipant

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Mismatch:
    """A topic on which someone announces a type that differs from ours."""

    topic: str
    type_name: str
    ours: str  # our variant's name
    matches: tuple[str, ...]  # variants whose type for this topic is the announced one

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


def type_ids(types: Any, type_names: Iterable[str]) -> dict[str, Any]:
    """The XTypes type identifier of each of ``type_names``, from ``types``: an object with
    the generated classes as attributes named like the IDL types (a robot's interface)."""
    return {name: getattr(types, name).__idl__.get_type_id() for name in type_names}


class TypeWatch:
    """Discovery readers and the mismatches seen so far. ``poll()`` from one thread.

    ``topics``: topic name -> type name, the topics watched; ``ours``: type name -> our
    type id; ``variants``: variant name -> (type name -> type id), the candidates a
    mismatch names, in this order; ``name``: the name of the variant we speak.
    """

    def __init__(
        self,
        participant: DomainParticipant,
        *,
        topics: Mapping[str, str],
        ours: Mapping[str, Any],
        variants: Mapping[str, Mapping[str, Any]],
        name: str,
    ) -> None:
        self.name = name
        self.topics = dict(topics)
        self._ours = {topic: ours[type_name] for topic, type_name in self.topics.items()}
        self._variants = {v: dict(ids) for v, ids in variants.items()}
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
        type_name = self.topics[topic]
        with self._lock:
            if topic in self._mismatches:
                return None
            matches = tuple(v for v, ids in self._variants.items() if ids.get(type_name) == theirs)
            found = Mismatch(topic, type_name, self.name, matches)
            self._mismatches[topic] = found
        return found
