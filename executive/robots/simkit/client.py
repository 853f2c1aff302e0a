"""The client of a simulated robot's own topics: set and clear faults, read its status.

Each robot's client (``SimClient`` of the Atom, ``AdamSimClient``) is this class with the
robot's two topic names and status type::

    with dds.open_participant() as p:
        sim = SimClient(p)
        sim.wait_ready()
        sim.inject("servo-error", "left_elbow_pitch", value=0x2310)  # returns once applied
        sim.inject_spec("dropout:upper_state@3")                     # the --fault syntax
        sim.clear("servo-error")
        sim.clear_all()
        sim.counters("upper")                                        # {"received": ..., ...}

Each request carries an id; the client writes it until the sim's status lists the id as
applied (or refused, then ``FaultRejectedError`` with the sim's reason), so a request
written before DDS discovery has matched the sim's reader is not lost, and when
``inject`` returns the fault is in effect.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any, ClassVar

from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic

from executive.robots.simkit.faults import KINDS, FaultSpec, canonical_kind, parse_fault
from executive.robots.simkit.topics import (
    ACTIONS,
    FAULT_QOS,
    STATUS_QOS,
    Fault_,
    types,
)
from executive.wire.robot_io import LatestReader

RESEND_EVERY = 0.25  # s


class FaultRejectedError(RuntimeError):
    """The sim refused a fault request (an unknown axis, a kind the robot cannot have, ...)."""


class Client:
    """Talks to one robot's sim on ``participant``'s domain over the sim's own topics."""

    robot: ClassVar[str]  # in messages: "no simulated <robot> status"
    fault_topic: ClassVar[str]
    status_topic: ClassVar[str]
    status_type: ClassVar[type[Any]]
    # The kind a clear_all request carries: the sim ignores it, but it must be one the
    # robot has (and it is on the wire, so it stays what each client always sent).
    clear_all_kind: ClassVar[str]

    def __init__(self, participant: DomainParticipant, *, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._writer: DataWriter[Any] = DataWriter(
            participant, Topic(participant, self.fault_topic, Fault_), qos=FAULT_QOS
        )
        self._status: LatestReader[Any] = LatestReader(
            participant, Topic(participant, self.status_topic, self.status_type), STATUS_QOS
        )
        # Ids from a random start, so two clients on one domain do not collide.
        self._ids = itertools.count(random.SystemRandom().randrange(1, 2**31))

    def _valid(self, sample: Any) -> bool:
        """False for the InvalidSample a stock reader yields when the sim's writer goes away."""
        return isinstance(sample, self.status_type)

    def wait_ready(self, timeout: float | None = None) -> Any:
        """The sim's first status (TimeoutError if no sim answers within ``timeout``)."""
        status = self.wait_status(lambda s: True, timeout)
        if status is None:
            raise TimeoutError(f"no simulated {self.robot} status on {self.status_topic}")
        return status

    def status(self) -> Any | None:
        """The newest status sample, or None."""
        stamped = self._status.latest
        return stamped.sample if stamped is not None and self._valid(stamped.sample) else None

    def wait_status(
        self, predicate: Callable[[Any], bool], timeout: float | None = None
    ) -> Any | None:
        """Block until a status satisfies ``predicate``; None on timeout."""
        return self._status.wait_for(
            lambda s: self._valid(s) and predicate(s),
            self.timeout if timeout is None else timeout,
        )

    def counters(self, stream: str) -> dict[str, int]:
        """Command counters of one stream (a counters field of the status), newest status."""
        status = self.status() or self.wait_ready()
        c = getattr(status, stream)
        return {name: int(getattr(c, name)) for name in c.__dataclass_fields__}

    def active_faults(self) -> list[tuple[str, str, float]]:
        """(kind, target, value) of every active fault, kinds as CLI names."""
        status = self.status() or self.wait_ready()
        return [(canonical_kind(f.kind.name), f.target, f.value) for f in status.faults]

    def inject(
        self,
        kind: str,
        target: str = "",
        *,
        value: float = 0.0,
        duration: float = 0.0,
        timeout: float | None = None,
    ) -> None:
        """Set a fault (``kind``: a CLI name such as ``servo-error``; see the robot's HELP)."""
        self.request("set", FaultSpec(canonical_kind(kind), target, value, duration), timeout)

    def inject_spec(self, spec: str, timeout: float | None = None) -> None:
        """Set a fault given in the ``--fault`` syntax, e.g. ``dropout:upper_state@3``."""
        self.request("set", parse_fault(spec), timeout)

    def clear(self, kind: str, target: str = "", timeout: float | None = None) -> None:
        """Clear a fault; an empty target clears every fault of that kind."""
        self.request("clear", FaultSpec(canonical_kind(kind), target), timeout)

    def clear_all(self, timeout: float | None = None) -> None:
        self.request("clear_all", FaultSpec(self.clear_all_kind), timeout)

    def request(self, action: str, spec: FaultSpec, timeout: float | None = None) -> None:
        """Send one request and wait until the sim applied it (or refused it)."""
        rid = next(self._ids)
        sample = Fault_(
            request_id=rid,
            action=types.FaultAction[ACTIONS[action]],
            kind=types.FaultKind[KINDS[spec.kind]],
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
            raise TimeoutError(
                f"the simulated {self.robot} did not acknowledge {action} {spec.describe()}"
            )
        if rid in status.rejected_requests:
            reason = status.last_rejection.removeprefix(f"{rid}: ")
            raise FaultRejectedError(f"{action} {spec.describe()}: {reason}")


__all__ = ["RESEND_EVERY", "Client", "FaultRejectedError"]
