"""The simulated Adam's own DDS topics (not the robot's): fault injection and status.

Faults arrive as the kit's ``Fault_`` (``executive.robots.simkit.topics``,
idl/atom_executive/sim_fault.idl) on ``adam_sim/fault``: its kinds already name what an
Adam can have (SERVO_ERROR, STATE_DROPOUT, BATTERY_LEVEL), and one client syntax serves
every sim. The status differs (the Adam's commands are rejected for reasons the Atom's
are not: a wrong motor count, a disabled motor), so it is its own type, ``AdamStatus_``, declared here in Python: it exists
only between the sim and its clients, and ``cyclonedds subscribe adam_sim/status`` still
reads it through type discovery.
"""

# No ``from __future__ import annotations``: the binding resolves the field types itself.
from dataclasses import dataclass

import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as t
from cyclonedds import idl

from executive.robots.simkit.topics import FAULT_QOS, STATUS_QOS, ActiveFault_, Fault_

FAULT_TOPIC = "adam_sim/fault"
STATUS_TOPIC = "adam_sim/status"


@dataclass
@annotate.final
class AdamCounters_(idl.IdlStruct, typename="adam_executive.sim.AdamCounters_"):
    """Commands received on one topic (rt/lowcmd, rt/handcmd), by what became of them."""

    received: t.uint32
    applied: t.uint32  # became the targets
    wrong_length: t.uint32  # rejected: not exactly N motors (rt/lowcmd)
    bad_mode: t.uint32  # rejected: a motor's mode is not 1 = enable (rt/lowcmd)
    non_finite: t.uint32  # rejected: NaN or Inf in q, dq, tau, kp or kd
    out_of_range: t.uint32  # rejected: a q (or finger position) outside the profile's limits
    bad_gains: t.uint32  # rejected: kp <= 0 or kd < 0
    undecodable: t.uint32  # not a LowCmd_/HandCmd_ at all


@dataclass
@annotate.final
class AdamStatus_(idl.IdlStruct, typename="adam_executive.sim.AdamStatus_"):
    pid: t.int32
    seed: t.uint64
    variant: str
    profile: str
    motors: t.uint32  # N: the body motors of the profile
    monotonic: t.float64  # the sim's time.monotonic() when this was written
    applied_requests: t.sequence[t.uint32]  # type: ignore[type-arg]  # the most recent Fault_.request_id values applied
    rejected_requests: t.sequence[t.uint32]  # type: ignore[type-arg]  # ... and refused
    last_rejection: str  # "<request_id>: why" for the latest refused request
    faults: t.sequence[ActiveFault_]  # type: ignore[type-arg]
    body: AdamCounters_
    hands: AdamCounters_


__all__ = [
    "FAULT_QOS",
    "FAULT_TOPIC",
    "STATUS_QOS",
    "STATUS_TOPIC",
    "ActiveFault_",
    "AdamCounters_",
    "AdamStatus_",
    "Fault_",
]
