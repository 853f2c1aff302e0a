"""The simulated Atom's own DDS topics (not the robot's): fault injection and status.

Both use the executive's own IDL module ``atom_executive::sim``
(``idl/atom_executive/sim_*.idl``), so any DDS tool can read them too, e.g.
``cyclonedds subscribe atom_sim/status``.
"""

from __future__ import annotations

from cyclonedds.core import Policy, Qos
from cyclonedds.util import duration

from executive.wire.gen.own.atom_executive import sim as types

FAULT_TOPIC = "atom_sim/fault"
STATUS_TOPIC = "atom_sim/status"

# Requests: reliable; the client also resends until the sim acknowledges (discovery of a
# reader can lag the first write), and the sim applies each request_id once.
FAULT_QOS = Qos(
    Policy.Reliability.Reliable(duration(milliseconds=100)),
    Policy.History.KeepLast(64),
    Policy.Durability.Volatile,
)
# Status: the newest only, and a late joiner gets it at once.
STATUS_QOS = Qos(
    Policy.Reliability.Reliable(duration(milliseconds=100)),
    Policy.History.KeepLast(1),
    Policy.Durability.TransientLocal,
)

__all__ = ["FAULT_QOS", "FAULT_TOPIC", "STATUS_QOS", "STATUS_TOPIC", "types"]
