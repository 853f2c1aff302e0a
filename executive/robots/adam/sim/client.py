"""``AdamSimClient``: set and clear faults in a running simulated Adam, read its status.

    with dds.open_participant() as p:
        sim = AdamSimClient(p)
        sim.wait_ready()
        sim.inject("servo-error", "left_elbow", value=0x21)   # returns once applied
        sim.inject("state-dropout", "low_state", duration=2.0)
        sim.clear("servo-error")
        sim.counters("body")                                   # {"received": ..., ...}

As the simulated Atom's ``SimClient``: each request carries an id and is resent until the
sim's status lists it as applied (or refused: ``FaultRejectedError`` with the sim's reason).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic

from executive.robots.adam.sim.topics import (
    FAULT_QOS,
    FAULT_TOPIC,
    STATUS_QOS,
    STATUS_TOPIC,
    AdamStatus_,
    Fault_,
)
from executive.robots.atom.sim.client import RESEND_EVERY, FaultRejectedError
from executive.robots.atom.sim.faults import KINDS, FaultSpec, canonical_kind
from executive.robots.atom.sim.topics import types as atom_sim
from executive.wire.robot_io import LatestReader

_ACTIONS = {"set": "FAULT_SET", "clear": "FAULT_CLEAR", "clear_all": "FAULT_CLEAR_ALL"}


def _valid(sample: Any) -> bool:
    return isinstance(sample, AdamStatus_)


class AdamSimClient:
    """Talks to the simulated Adam on ``participant``'s domain over its own topics."""

    def __init__(self, participant: DomainParticipant, *, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._writer: DataWriter[Any] = DataWriter(
            participant, Topic(participant, FAULT_TOPIC, Fault_), qos=FAULT_QOS
        )
        self._status: LatestReader[Any] = LatestReader(
            participant, Topic(participant, STATUS_TOPIC, AdamStatus_), STATUS_QOS
        )
        self._ids = itertools.count(random.SystemRandom().randrange(1, 2**31))

    def wait_status(
        self, predicate: Callable[[Any], bool], timeout: float | None = None
    ) -> Any | None:
        """Block until a status satisfies ``predicate``; None on timeout."""
        return self._status.wait_for(
            lambda s: _valid(s) and predicate(s), self.timeout if timeout is None else timeout
        )

    def wait_ready(self, timeout: float | None = None) -> Any:
        """The sim's first status (TimeoutError if none within ``timeout``)."""
        status = self.wait_status(lambda s: True, timeout)
        if status is None:
            raise TimeoutError(f"no simulated Adam status on {STATUS_TOPIC}")
        return status

    def status(self) -> Any | None:
        stamped = self._status.latest
        return stamped.sample if stamped is not None and _valid(stamped.sample) else None

    def counters(self, stream: str) -> dict[str, int]:
        """Counters of ``body`` (rt/lowcmd) or ``hands`` (rt/handcmd), newest status."""
        status = self.status() or self.wait_ready()
        c = getattr(status, stream)
        return {name: int(getattr(c, name)) for name in c.__dataclass_fields__}

    def inject(
        self,
        kind: str,
        target: str = "",
        *,
        value: float = 0.0,
        duration: float = 0.0,
        timeout: float | None = None,
    ) -> None:
        self.request("set", FaultSpec(canonical_kind(kind), target, value, duration), timeout)

    def clear(self, kind: str, target: str = "", timeout: float | None = None) -> None:
        self.request("clear", FaultSpec(canonical_kind(kind), target), timeout)

    def clear_all(self, timeout: float | None = None) -> None:
        self.request("clear_all", FaultSpec("servo-error"), timeout)

    def request(self, action: str, spec: FaultSpec, timeout: float | None = None) -> None:
        """Send one request and wait until the sim applied it (or refused it)."""
        rid = next(self._ids)
        sample = Fault_(
            request_id=rid,
            action=atom_sim.FaultAction[_ACTIONS[action]],
            kind=atom_sim.FaultKind[KINDS[spec.kind]],
            target=spec.target,
            value=float(spec.value),
            duration=float(spec.duration),
        )

        def handled(status: Any) -> bool:
            return rid in status.applied_requests or rid in status.rejected_requests

        budget = self.timeout if timeout is None else timeout
        waited = 0.0
        status = None
        while status is None and waited < budget:
            self._writer.write(sample)
            step = min(RESEND_EVERY, budget - waited)
            status = self.wait_status(handled, step)
            waited += step
        if status is None:
            raise TimeoutError(f"the simulated Adam did not acknowledge {action} {spec.describe()}")
        if rid in status.rejected_requests:
            reason = status.last_rejection.removeprefix(f"{rid}: ")
            raise FaultRejectedError(f"{action} {spec.describe()}: {reason}")


__all__ = ["AdamSimClient", "FaultRejectedError"]


_CLIENTS: dict[int, AdamSimClient] = {}


def client_for(participant: DomainParticipant, *, timeout: float = 10.0) -> AdamSimClient:
    """One client per participant, kept for its life. A client's reader has a Python
    listener; one dropped while samples arrive can leave CycloneDDS's receive thread calling
    a freed callback (a segfault, seen in a test that made a client for one wait)."""
    key = id(participant)
    if key not in _CLIENTS:
        _CLIENTS[key] = AdamSimClient(participant, timeout=timeout)
    return _CLIENTS[key]
