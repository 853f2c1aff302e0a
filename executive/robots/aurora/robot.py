"""The Fourier Aurora, declared: what it is (its spec) and where its parts are.

Fourier Aurora (seed 003; ../shared/reference/robots.md 2, 2.1a): the GR-3's control stack
over Fast DDS 3 (@appendable, XCDR1), which only cyclonedds 11 matches: the adapter's wire
side is a child process (``bridge.py``). One joint stream per vendor control group, named as
the vendor names it; the GR-3's sizes (2.1a), the hands' as the profile lists them (no
vendor figure). FSM ids: whole-body 0..255, upper-body 256 + n (``settings.py``). No
navigation (velocity only), no battery, no e-stop topic: FSM 9 (security protection) is the
only safety state the robot reports. Its simulator runs in .venv-aurora (cyclonedds 11;
``atom-executive sim --profile aurora`` starts it there).
"""

from __future__ import annotations

from executive.seam.spec import RobotSpec

ROBOT = RobotSpec(
    name="aurora",
    description="Fourier Aurora / GR-3 (Fast DDS 3 peer; cyclonedds 11 child process; seed 003)",
    streams={
        "left_leg": 6,
        "right_leg": 6,
        "waist": 3,
        "head": 2,
        "left_manipulator": 7,
        "right_manipulator": 7,
        "left_hand": None,
        "right_hand": None,
    },
    sources=("aurora_state", "group_state", "base_data", "contact_data"),
    capabilities=frozenset({"control", "fsm", "joints", "hands", "base_velocity"}),
    fsm_id_max=511,  # 256 + the upper-body FSM's uint8
    check_interface=".settings:check_interface",
    check_options=".settings:check_options",
    sim=".sim.launch:main",
    lockstep=".lockstep:PART",
    wire_words=".words:wire_words",
)
