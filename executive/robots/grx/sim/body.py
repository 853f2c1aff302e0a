"""The simulated GRX's joints: the GR-1 T2's model stepped in MuJoCo, as the Atom's is.

The User API takes no joint command, so nothing of the executive moves these joints; the
robot's firmware holds them. What the simulator reports on robot/server
(``joint_measured_position``) is that hold under gravity, stepped by ``simkit.physics``
(the Atom's physics, reused: the vendor's model, one actuator per profile joint, contacts
between exactly the pairs validation checks): every joint held where it is at the profile's gains, the firmware's standing controller
(``JointGroup`` with no target), under gravity; the pelvis fixed as in the model. The
sim holds them with the servos off too: a GR-1 whose motors go limp hangs in its gantry
or falls, and neither is a robot an executive talks to (a limp fixed-pelvis model folds
at the waist within a second, which only says the model has no floor).

``physics="kinematic"`` keeps the joints at their start (no model needed). Contacts come
out of ``step`` as ``simkit.physics.ContactEvent``: the sim says and records each one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from executive.robots.simkit.joints import JointGroup
from executive.robots.simkit.physics import ContactEvent, Physics
from executive.seam.body import EMPTY_SCENE, BodySpec, Scene
from executive.seam.profile import RobotProfile

STREAM = "robot"  # the profile's one joint stream: robot/server's joint_measured_position
MODES = ("mujoco", "kinematic")


class SimBody:
    """The profile's ``robot`` joints, held by the simulated firmware (see the module)."""

    def __init__(
        self, profile: RobotProfile, physics: str = "mujoco", scene: Scene = EMPTY_SCENE
    ) -> None:
        if physics not in MODES:
            raise ValueError(f"physics must be one of {', '.join(MODES)}, not {physics!r}")
        self.group = JointGroup(profile, STREAM, np.random.default_rng(0))
        self.physics: Physics | None = None
        if physics == "mujoco":
            if not isinstance(profile.body, BodySpec):
                raise ValueError(f"profile {profile.name!r} has no body model for --physics mujoco")
            self.physics = Physics.for_profile(profile, {STREAM: self.group}, scene)
        elif scene.names:
            raise ValueError("a scene needs the body: --scene with --physics mujoco")
        self.mode = physics

    @property
    def names(self) -> Sequence[str]:
        return self.group.names

    def step(self, dt: float) -> list[ContactEvent]:
        """Advance ``dt`` s; the contacts that began or ended."""
        return self.physics.advance(dt) if self.physics is not None else []

    def positions(self) -> list[float]:
        """The joints now (rad), the profile's order."""
        return [float(q) for q in self.group.q]

    def culprit(self, event: ContactEvent) -> str | None:
        return self.physics.culprit(event) if self.physics is not None else None
