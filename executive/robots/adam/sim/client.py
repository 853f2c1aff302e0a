"""``AdamSimClient``: set and clear faults in a running simulated Adam, read its status.

    with dds.open_participant() as p:
        sim = AdamSimClient(p)
        sim.wait_ready()
        sim.inject("servo-error", "left_elbow", value=0x21)   # returns once applied
        sim.inject("state-dropout", "low_state", duration=2.0)
        sim.clear("servo-error")
        sim.counters("body")                                   # {"received": ..., ...}

The kit's client (``executive.robots.simkit.client``): each request carries an id and is
resent until the sim's status lists it as applied (or refused: ``FaultRejectedError`` with
the sim's reason).
"""

from __future__ import annotations

from cyclonedds.domain import DomainParticipant

from executive.robots.adam.sim.topics import FAULT_TOPIC, STATUS_TOPIC, AdamStatus_
from executive.robots.simkit.client import Client, FaultRejectedError


class AdamSimClient(Client):
    """Talks to the simulated Adam on ``participant``'s domain over its own topics.

    ``counters`` takes ``body`` (rt/lowcmd) or ``hands`` (rt/handcmd).
    """

    robot = "Adam"
    fault_topic = FAULT_TOPIC
    status_topic = STATUS_TOPIC
    status_type = AdamStatus_
    clear_all_kind = "servo-error"


__all__ = ["AdamSimClient", "FaultRejectedError", "client_for"]


_CLIENTS: dict[int, AdamSimClient] = {}


def client_for(participant: DomainParticipant, *, timeout: float = 10.0) -> AdamSimClient:
    """One client per participant, kept for its life. A client's reader has a Python
    listener; one dropped while samples arrive can leave CycloneDDS's receive thread calling
    a freed callback (a segfault, seen in a test that made a client for one wait)."""
    key = id(participant)
    if key not in _CLIENTS:
        _CLIENTS[key] = AdamSimClient(participant, timeout=timeout)
    return _CLIENTS[key]
