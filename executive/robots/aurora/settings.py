"""The Aurora's own profile options: the ``aurora:`` mapping of an Aurora profile.

``check_options(options, profile)`` is what the registry's ``check_options`` returns when a
profile loads (each problem ``key: message``, relative to ``aurora:``); ``AuroraSettings``
is built from a mapping that passed it. Every key is required and explained in
``executive/robots/profiles/aurora.yaml``. Standard library only: the bridge (the child
process, ``.venv-aurora``) receives these values over the link, never this module's caller.

Two state machines, one FSM table. The Aurora reports a whole-body FSM and an upper-body
FSM (``aurora_state``), each a uint8. The profile's ``fsm:`` names both in one table: a
whole-body state by its number (0..255), an upper-body state by ``UPPER_FSM_BASE`` plus its
number (256 + 2 = the upper body's remote control), so a mission's ``set_fsm`` names either
and its id says which machine it is for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

UPPER_FSM_BASE = 256  # profile fsm id = 256 + the upper-body FSM's number
FSM_MAX = UPPER_FSM_BASE + 255
# the wire variants the bridge speaks (the wire module's): the seed's types, and the vendor
# client 0.1.8's (VelocityCmd.duration; MotorCfgGroupCmd with mode and the position gains)
INTERFACES = ("seed", "client-0.1.8")
DEFAULT_INTERFACE = "client-0.1.8"
KEYS = (
    "interface",
    "domain",
    "namespace",
    "ros_compatible",
    "control_fsm",
    "release_fsm",
    "safety_fsm",
    "velocity_source",
    "velocity_hz",
    "max_velocity",
    "motor_cfg_mode",
    "parent_timeout_s",
)
VELOCITY_AXES = ("forward", "lateral", "yaw")
MAX_DOMAIN = 232


@dataclass(frozen=True)
class AuroraSettings:
    interface: str  # wire variant: seed, client-0.1.8
    domain: int | None  # the robot's DDS domain; None: the executive's own
    namespace: str  # topic prefix without slashes at the ends ("" : bare topics)
    ros_compatible: bool  # rt/<ns>/<topic> and the dds_ type names
    control_fsm: str  # whole-body FSM name meaning "control held" (upper-body user command)
    release_fsm: str  # where release goes when the FSM found at take-over is unknown
    safety_fsm: str  # whole-body FSM name that is a fault (security protection)
    velocity_source: int  # velocity_source_cmd's value for commands over DDS (navigation)
    velocity_hz: float  # the velocity stream's rate
    max_velocity: tuple[float, float, float]  # m/s, m/s, rad/s at a rate of 1.0
    motor_cfg_mode: int  # MotorCfgGroupCmd.mode (client variant; PD)
    parent_timeout_s: float  # the bridge holds after this long without a frame

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> AuroraSettings:
        problems = check_options(options, None)
        if problems:
            raise ValueError("aurora options: " + "; ".join(problems))
        mv = options["max_velocity"]
        domain = options["domain"]
        return cls(
            interface=str(options["interface"]),
            domain=None if domain is None else int(domain),
            namespace=(options["namespace"] or "").strip("/"),
            ros_compatible=bool(options["ros_compatible"]),
            control_fsm=str(options["control_fsm"]),
            release_fsm=str(options["release_fsm"]),
            safety_fsm=str(options["safety_fsm"]),
            velocity_source=int(options["velocity_source"]),
            velocity_hz=float(options["velocity_hz"]),
            max_velocity=(float(mv["forward"]), float(mv["lateral"]), float(mv["yaw"])),
            motor_cfg_mode=int(options["motor_cfg_mode"]),
            parent_timeout_s=float(options["parent_timeout_s"]),
        )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _uint8(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 255


def check_interface(text: str) -> str | None:
    """Why ``text`` is not an Aurora interface variant (None if it is)."""
    if text in INTERFACES:
        return None
    return f"unknown Aurora interface {text!r}; known: {', '.join(INTERFACES)}"


def check_options(options: Mapping[str, Any], profile: Mapping[str, Any] | None) -> list[str]:
    """Problems with an ``aurora:`` mapping (``key: message``); with the whole profile's
    data, also that the FSM names it gives are whole-body states of its ``fsm:``."""
    p = [
        f"{key}: unknown key (known: {', '.join(KEYS)})"
        for key in sorted(set(options) - set(KEYS), key=str)
    ]
    p += [f"{key}: missing" for key in KEYS if key not in options]
    if p:
        return p
    p += _check_values(options)
    fsm = (profile or {}).get("fsm")
    for key in ("control_fsm", "release_fsm", "safety_fsm"):
        name = options[key]
        if not isinstance(name, str):
            p.append(f"{key}: must be an FSM state name, got {name!r}")
        elif isinstance(fsm, Mapping):
            spec = fsm.get(name)
            state = spec.get("id") if isinstance(spec, Mapping) else None
            if not _uint8(state):
                p.append(f"{key}: {name!r} is not a whole-body state of fsm: (ids 0..255)")
    return p


def _check_values(options: Mapping[str, Any]) -> list[str]:
    """The keys that need no other part of the profile."""
    p: list[str] = []
    if (why := check_interface(options["interface"])) is not None:
        p.append(f"interface: {why}")
    domain = options["domain"]
    if domain is not None and not (
        isinstance(domain, int) and not isinstance(domain, bool) and 0 <= domain <= MAX_DOMAIN
    ):
        p.append(f"domain: must be null (the executive's) or 0..{MAX_DOMAIN}, got {domain!r}")
    ns = options["namespace"]
    if ns is not None and not (
        isinstance(ns, str) and all(part for part in ns.strip("/").split("/"))
    ):
        p.append(f"namespace: must be null or a prefix like RobotName/SerialNumber, got {ns!r}")
    if not isinstance(options["ros_compatible"], bool):
        p.append(f"ros_compatible: must be true or false, got {options['ros_compatible']!r}")
    for key in ("velocity_source", "motor_cfg_mode"):
        if not _uint8(options[key]):
            p.append(f"{key}: must be an integer 0..255, got {options[key]!r}")
    for key, top in (("velocity_hz", 1000.0), ("parent_timeout_s", 10.0)):
        v = options[key]
        if not _number(v) or not 0 < v <= top:
            p.append(f"{key}: must be a number > 0 and <= {top:g}, got {v!r}")
    mv = options["max_velocity"]
    if not isinstance(mv, Mapping) or set(mv) != set(VELOCITY_AXES):
        p.append(f"max_velocity: must be {{forward: m/s, lateral: m/s, yaw: rad/s}}, got {mv!r}")
    else:
        for axis in VELOCITY_AXES:
            if not _number(mv[axis]) or not 0 < mv[axis] <= 5.0:
                p.append(f"max_velocity.{axis}: must be a number > 0 and <= 5, got {mv[axis]!r}")
    return p
