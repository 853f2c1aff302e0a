"""The Dobot Atom, declared: what it is (its spec) and where its parts are.

Plain data, imported by the registry to validate profiles and missions with no middleware
loaded; the adapter and the simulator are imported only when asked for.
"""

from __future__ import annotations

from executive.seam.spec import RobotSpec

ROBOT = RobotSpec(
    name="atom",
    description="Dobot Atom (DDS, CycloneDDS 0.10; seeds 000/001)",
    streams={"upper": 17, "lower": 12, "hands": 12},
    sources=(
        "upper_state",
        "lower_state",
        "hands_state",
        "amr_state",
        "emergency_state",
        "main_nodes_state",
    ),
    capabilities=frozenset(
        {"control", "fsm", "joints", "hands", "navigation", "clear_faults", "battery", "buttons"}
    ),
    fsm_id_max=2**16 - 1,  # SetFsmId_.id is uint16
    tag_max=2**32 - 1,  # AMRCommand_.target_id is uint32
    sim=".sim.cli:main",
    lockstep=".lockstep:PART",
    wire_words=".topics:wire_words",
    # the seeds' types (idl/dobot_atom) and each interface variant's (idl/variants/<name>)
    idl={
        "default": ("dobot_atom",),
        "amr_cmd_move_to_charge": ("variants/amr_cmd_move_to_charge",),
        "emergency_state_di": ("variants/emergency_state_di",),
        "set_fsm_id_only": ("variants/set_fsm_id_only",),
        "upper_state_no_imu": ("variants/upper_state_no_imu",),
    },
)
