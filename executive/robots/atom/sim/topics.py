"""The simulated Atom's own DDS topics (not the robot's): fault injection and status.

Both use the executive's own IDL module ``atom_executive::sim`` (``idl/atom_executive/sim_*.idl``):
requests are the kit's ``Fault_`` with its QoS (``executive.robots.simkit.topics``), the
status is the Atom's ``Status_``, so ``cyclonedds subscribe atom_sim/status`` reads it too.
"""

from __future__ import annotations

from executive.robots.simkit.topics import FAULT_QOS, STATUS_QOS, types

FAULT_TOPIC = "atom_sim/fault"
STATUS_TOPIC = "atom_sim/status"

__all__ = ["FAULT_QOS", "FAULT_TOPIC", "STATUS_QOS", "STATUS_TOPIC", "types"]
