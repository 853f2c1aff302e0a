"""The Fourier GRX, declared: what it is (its spec) and where its parts are.

Fourier GRX (seed 004; ../shared/reference/robots.md section 3): zenoh 1.x, one msgpack map
per category (comm, robot, task, grx) every 20 ms. The seed's User API has no joint or hand
command; it reports the joints (robot/server ``joint_measured_position``): one joint stream,
``robot``, measured and never commanded (the kind has no "joints" capability, so no move
reaches it and its profile has no motor mode or command rate). FSM = firmware task ids (TIDs, msgpack ints; the profile names
them); walking = a streamed virtual joystick; no control authority (developer mode is the
robot's configuration). E-stop and battery exist only in the newer (M4) schema (the
adapter's interface variant): the kind has "battery", a seed-schema profile lists its
capabilities without it (executive/robots/profiles/grx.yaml).
"""

from __future__ import annotations

from executive.seam.spec import RobotSpec

ROBOT = RobotSpec(
    name="grx",
    description="Fourier GRX (zenoh 1.x + msgpack User API; seed 004)",
    streams={"robot": None},  # reported only: joint_measured_position, the profile's order
    sources=("comm", "robot", "task", "grx"),
    capabilities=frozenset({"fsm", "base_velocity", "tasks", "clear_faults", "battery"}),
    fsm_id_max=2**31 - 1,  # a TID is a msgpack int; the vendor's are below 1000
    check_interface=".interface:check_interface",
    check_options=".settings:check_options",
    sim=".sim:main",
    lockstep=".lockstep:PART",
    wire_words=".interface:wire_words",
)
