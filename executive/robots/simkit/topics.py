"""A simulated robot's own DDS topics (not the robot's): their QoS and the fault request type.

Every sim built on the kit takes fault requests as ``Fault_`` (the executive's own IDL
module ``atom_executive::sim``, ``idl/atom_executive/sim_fault.idl``; the module name is on
the wire, so it stays) on ``<robot>_sim/fault``, and answers with a status of its own type
on ``<robot>_sim/status`` that lists every request id it applied or refused and the active
faults as ``ActiveFault_``. Each robot names its two topics and declares its status type;
one client syntax and one QoS serve them all, and any DDS tool can read them, e.g.
``cyclonedds subscribe atom_sim/status``.
"""

from __future__ import annotations

from cyclonedds.core import Policy, Qos
from cyclonedds.util import duration

from executive.wire.gen.own.atom_executive import sim as types

Fault_ = types.Fault_
ActiveFault_ = types.ActiveFault_  # its kind: ``types.FaultKind[KINDS[kind]]``
# the client's and the sim's word for a request -> FaultAction member name
ACTIONS = {"set": "FAULT_SET", "clear": "FAULT_CLEAR", "clear_all": "FAULT_CLEAR_ALL"}

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

__all__ = [
    "ACTIONS",
    "FAULT_QOS",
    "STATUS_QOS",
    "ActiveFault_",
    "Fault_",
    "types",
]
