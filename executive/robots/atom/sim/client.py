"""``SimClient``: inject and clear faults in a running simulated Atom, read its status.

Used by tests, the demo and ``atom-executive sim fault``::

    with dds.open_participant() as p:
        sim = SimClient(p)
        sim.wait_ready()
        sim.inject("estop-soft")                     # returns once the sim applied it
        sim.inject("servo-error", "left_elbow_pitch", value=0x2310)
        sim.inject("state-dropout", "upper_state", duration=3.0)
        sim.inject_spec("bms-alarm:lower=4")         # the --fault syntax
        sim.clear("estop-soft")
        sim.clear_all()
        sim.counters("upper")                        # {"received": ..., "out_of_range": ...}

The requests, their resending and ``FaultRejectedError`` are the kit's
(``executive.robots.simkit.client``); this names the Atom's topics and status.
"""

from __future__ import annotations

from executive.robots.atom.sim.topics import FAULT_TOPIC, STATUS_TOPIC, types
from executive.robots.simkit.client import Client, FaultRejectedError


class SimClient(Client):
    """Talks to the simulated Atom on ``participant``'s domain over its own topics.

    ``status()`` is a ``Status_`` (idl/atom_executive/sim_status.idl); ``counters`` takes
    ``upper``, ``lower`` or ``hands``.
    """

    robot = "Atom"
    fault_topic = FAULT_TOPIC
    status_topic = STATUS_TOPIC
    status_type = types.Status_
    clear_all_kind = "estop-soft"


__all__ = ["FaultRejectedError", "SimClient"]
