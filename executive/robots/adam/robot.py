"""The PND Adam, declared: what it is (its spec) and where its parts are.

PND Adam (seed 002; ../shared/reference/robots.md section 1). Pro 31 motors, Standard (the
vendor's "SP") 29, Lite 23: one LowCmd_ sequence whose length is the model's, so the
profile's topics.body list sets it. The DDS interface offers joints and hands only: no
control authority (publishing rt/lowcmd takes every motor, nothing confirms it), no FSM
(mode switching is gRPC SetMode, a later transport), no e-stop signal, no base (gRPC
SetVelocity is "reserved"). Battery: sdk-1.2's battery_data has volts, no percent, and the
vendor documents no range: the kind has "battery", read as a percent of the profile's
adam.battery_voltage [empty, full]; a profile without that range is refused if it offers
battery (``settings.check_options``), so the shipped ones (no datasheet figures) list their
capabilities without it.
"""

from __future__ import annotations

from executive.seam.spec import RobotSpec

ROBOT = RobotSpec(
    name="adam",
    description="PND Adam Pro/Standard/Lite (DDS, CycloneDDS 0.10; seed 002)",
    streams={"body": None, "hands": 12},
    sources=("low_state", "hand_state"),
    capabilities=frozenset({"joints", "hands", "battery"}),
    whole_body=True,
    check_options=".settings:check_options",
    sim=".sim.cli:main",
    lockstep=".lockstep:PART",
    wire_words=".interface:wire_words",
    # each interface variant: its own folder of idl/pnd_adam and the shared common/
    idl={
        "adam_seed": ("pnd_adam/seed", "pnd_adam/common"),
        "adam_sdk12": ("pnd_adam/sdk12", "pnd_adam/common"),
    },
)
