"""Robots as adapters: what each robot kind is (``RobotSpec``) and how to open one.

A profile names its robot (``robot: atom``); the spec says what the profile must describe
for it (its joint streams and their wire sizes, its state sources, what it can do) and
is plain data, so profiles and missions validate with no middleware loaded. The adapter
itself (``executive.robots.<name>``) is imported only when a robot is opened.

Adding a robot: a spec here, a package ``executive/robots/<name>/`` with an ``open``
function returning a ``ports.RobotAdapter``, a profile, and a simulator. Nothing above
the seam changes (``tests/test_seam.py``).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from executive.seam.ports import RobotAdapter
    from executive.seam.profile import RobotProfile


@dataclass(frozen=True)
class RobotSpec:
    """What a robot kind is, for profile and mission validation."""

    name: str
    description: str
    # joint stream -> motors its command carries (None: as many as the profile lists)
    streams: Mapping[str, int | None]
    # state sources (the adapter's keys), each checked for silence by the watchdog
    sources: tuple[str, ...]
    capabilities: frozenset[str]
    # one command carries every motor: moving any joint streams them all, the rest held
    whole_body: bool = False
    fsm_id_max: int = 0  # largest FSM id on the wire (0: no FSM)
    tag_max: int = 0  # largest navigation tag id on the wire (0: no navigation)


SPECS: dict[str, RobotSpec] = {
    "atom": RobotSpec(
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
            {
                "control",
                "fsm",
                "joints",
                "hands",
                "navigation",
                "clear_faults",
                "battery",
                "buttons",
            }
        ),
        fsm_id_max=2**16 - 1,  # SetFsmId_.id is uint16
        tag_max=2**32 - 1,  # AMRCommand_.target_id is uint32
    ),
    # PND Adam (seed 002; ../shared/reference/robots.md section 1). Pro 31 motors, Standard
    # (the vendor's "SP") 29, Lite 23: one LowCmd_ sequence whose length is the model's, so
    # the profile's topics.body list sets it. The DDS interface offers joints and hands only:
    # no control authority (publishing rt/lowcmd takes every motor, nothing confirms it), no
    # FSM (mode switching is gRPC SetMode, a later transport), no e-stop signal, no base
    # (gRPC SetVelocity is "reserved"). Battery: sdk-1.2's battery_data has volts, no
    # percent, and the vendor documents no range: the kind has "battery", read as a percent
    # of the profile's adam.battery_voltage [empty, full]; a profile without that range is
    # refused if it offers battery (executive.robots.adam.check_options), so the shipped
    # ones (no datasheet figures) list their capabilities without it.
    "adam": RobotSpec(
        name="adam",
        description="PND Adam Pro/Standard/Lite (DDS, CycloneDDS 0.10; seed 002)",
        streams={"body": None, "hands": 12},
        sources=("low_state", "hand_state"),
        capabilities=frozenset({"joints", "hands", "battery"}),
        whole_body=True,
        fsm_id_max=0,
        tag_max=0,
    ),
}


# Fourier GRX (seed 004; ../shared/reference/robots.md section 3): zenoh 1.x, one msgpack map
# per category (comm, robot, task, grx) every 20 ms. The seed's User API has no joint or hand
# command: no joint streams. FSM = firmware task ids (TIDs, msgpack ints; the profile names
# them); walking = a streamed virtual joystick; no control authority (developer mode is the
# robot's configuration). E-stop and battery exist only in the newer (M4) schema (the
# adapter's interface variant): the kind has "battery", a seed-schema profile lists its
# capabilities without it (executive/robots/profiles/grx.yaml).
SPECS["grx"] = RobotSpec(
    name="grx",
    description="Fourier GRX (zenoh 1.x + msgpack User API; seed 004)",
    streams={},
    sources=("comm", "robot", "task", "grx"),
    capabilities=frozenset({"fsm", "base_velocity", "tasks", "clear_faults", "battery"}),
    fsm_id_max=2**31 - 1,  # a TID is a msgpack int; the vendor's are below 1000
    tag_max=0,
)


# Fourier Aurora (seed 003; ../shared/reference/robots.md 2, 2.1a): the GR-3's control stack
# over Fast DDS 3 (@appendable, XCDR1), which only cyclonedds 11 matches: the adapter's wire
# side is a child process (executive/robots/aurora). One joint stream per vendor control
# group, named as the vendor names it; the GR-3's sizes (2.1a), the hands' as the profile
# lists them (no vendor figure). FSM ids: whole-body 0..255, upper-body 256 + n
# (executive/robots/aurora/settings.py). No navigation (velocity only), no battery, no e-stop
# topic: FSM 9 (security protection) is the only safety state the robot reports.
SPECS["aurora"] = RobotSpec(
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
    tag_max=0,
)


def spec(name: str) -> RobotSpec:
    """The spec of robot kind ``name``; KeyError naming the known ones."""
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"unknown robot {name!r}; known: {', '.join(sorted(SPECS))}") from None


def open_adapter(profile: RobotProfile, **options: Any) -> RobotAdapter:
    """Open the robot of ``profile`` (its package's ``open(profile, **options)``)."""
    module = importlib.import_module(f"executive.robots.{profile.robot}")
    adapter: RobotAdapter = module.open(profile, **options)
    return adapter


def check_interface(robot: str, text: str, profile: RobotProfile | None = None) -> str | None:
    """Why ``text`` is not an interface variant of robot kind ``robot`` (None if it is), or,
    given the ``profile``, why that variant cannot give what the profile offers (an adapter
    whose ``check_interface`` takes a ``profile``: the Adam's seed variant has no battery)."""
    module = importlib.import_module(f"executive.robots.{robot}")
    check = module.check_interface
    takes_profile = "profile" in inspect.signature(check).parameters
    why: str | None = check(text, profile=profile) if takes_profile else check(text)
    return why


def check_options(robot: str, options: Mapping[str, Any], profile: Mapping[str, Any]) -> list[str]:
    """Problems with a profile's options for ``robot`` (its adapter's ``check_options``,
    each ``key: message`` relative to the robot's mapping), given the whole profile."""
    module = importlib.import_module(f"executive.robots.{robot}")
    check = getattr(module, "check_options", None)
    if check is None:
        return [f"{key}: {robot} takes no options" for key in options]
    problems: list[str] = check(options, profile)
    return problems
