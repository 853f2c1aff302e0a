"""Everything the simulated Atom can be told at start-up, with defaults for all of it.

The defaults make a robot that behaves like the real one at the real rates (the profile's
``rates.state_hz``) and is quick enough for tests: a tag-to-tag trip of the default map
takes 1-3 s, a battery drains half a percent a minute. Joints move in MuJoCo with the
vendor's model (``executive.robots.simkit.physics``); ``physics="kinematic"`` is the
first-order lag of ``simkit.joints``, for tests that need speed more than a body.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from executive.robots.atom.interface import DEFAULT_PRESET
from executive.robots.simkit.faults import FaultSpec
from executive.seam.profile import DEFAULT_PROFILE


@dataclass(frozen=True)
class SimConfig:
    profile: str = DEFAULT_PROFILE  # built-in profile name or path
    interface: str = DEFAULT_PRESET  # interface variant, ``preset[+axis=choice...]``
    seed: int = 0
    rates: Mapping[str, float] = field(default_factory=dict)  # state topic -> Hz overrides
    status_hz: float = 5.0
    fsm: str = "zero_torque"  # FSM state (name or id) at start
    speed_scale: float = 2.0  # joint speed limit = this x the profile's velocity cap
    initial_jitter: float = 0.005  # rad, seeded offset of the start pose from zero
    noise: float = 0.0  # rad, standard deviation of seeded measurement noise
    amr_speed: float = 1.0  # m/s
    amr_turn_rate: float = 2.0  # rad/s
    tags: Path | None = None  # tag map YAML; None: TagMap.default()
    battery: float = 85.0  # percent at start
    battery_drain: float = 0.5  # percent per minute
    faults: tuple[FaultSpec, ...] = ()  # active from start
    record: Path | None = None  # JSON-lines record of every command received
    physics: str = "mujoco"  # how joints move: the body in MuJoCo, or "kinematic" (the lag)
    scene: Path | None = None  # scene YAML (simkit.physics.load_scene) beside the profile's
    contact_fault: bool = False  # a contact raises a servo error on the joint that made it
