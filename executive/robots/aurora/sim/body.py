"""The simulated Aurora's joints: the GR-3's model stepped in MuJoCo, as the Atom's is.

``model.AuroraModel`` is the firmware's logic: which commands it takes, and a setpoint per
group ramped toward the command at ``--speed``. This moves the joints after those
setpoints with ``simkit.physics`` (the Atom's physics, reused: the vendor's model from the
profile's ``body:``, one actuator per joint, contacts between exactly the pairs validation
checks, 2 ms steps): a group frozen (a hold, FSM 9, an error) brakes as the Atom's
e-stop does (stopped dead, held there); otherwise PD at the group's gains (``robot_motor_cfg_group_cmd``'s
``pd_kp``/``pd_kd`` once sent, the profile's before), gravity compensated (``gravcomp``:
the Aurora's commands carry positions only, and its whole-body controller holds a pose
under load; ``executive.seam.body.physics_model``). Groups the model has no joints for
(the hands) stay kinematic: their joints are their setpoints.

Runs in .venv-aurora (numpy, mujoco-core, PyYAML and the description package's URDF,
installed --no-deps: ``make aurora-env``). Nothing here imports cyclonedds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from executive.robots.aurora.sim.model import Group
from executive.robots.simkit.joints import JointGroup
from executive.robots.simkit.physics import ContactEvent, Physics
from executive.seam.body import EMPTY_SCENE, BodySpec, Scene
from executive.seam.profile import RobotProfile


class SimBody:
    """The modelled groups of ``sizes`` in MuJoCo (see the module)."""

    def __init__(
        self, profile: RobotProfile, sizes: Mapping[str, int], scene: Scene = EMPTY_SCENE
    ) -> None:
        if not isinstance(profile.body, BodySpec):
            raise ValueError(f"profile {profile.name!r} has no body model (--physics kinematic)")
        rng = np.random.default_rng(0)
        joints: dict[str, JointGroup] = {}
        for name, n in sizes.items():
            listed = profile.topics.get(name, ())
            if len(listed) == n:
                joints[name] = JointGroup(profile, name, rng)
        self.physics = Physics.for_profile(profile, joints, scene, gravcomp=True)
        self.joints = {n: g for n, g in joints.items() if n not in self.physics.kinematic}
        self.modelled = frozenset(self.joints)
        self._stops: dict[str, int] = {}  # each group's freezes the physics has braked for
        for name, n in sizes.items():
            count = len(profile.topics.get(name, ()))
            if count != n and self._models_any(profile, name):
                raise ValueError(
                    f"--groups: {name}={n}, but profile {profile.name!r} lists {count} joints "
                    f"for it and the model moves them"
                )

    def _models_any(self, profile: RobotProfile, group: str) -> bool:
        return any(j in self.physics.body.qpos_of for j in profile.topics.get(group, ()))

    def step(self, dt: float, groups: Mapping[str, Group]) -> list[ContactEvent]:
        """Each modelled group after its setpoint for ``dt`` s; its ``q``, ``dq`` measured."""
        for name, joint in self.joints.items():
            group = groups[name]
            if group.stops != self._stops.get(name, 0):  # a freeze: brake, then hold there
                self._stops[name] = group.stops
                joint.halt()
            # within the joints' limits, as the firmware's joint loop keeps them (a setpoint
            # past a limit would push the joint into it, and the vendor's GR-3 elbow bends
            # one way: 0.07 rad past straight)
            sp = np.clip(np.asarray(group.sp, dtype=np.float64), joint.lower, joint.upper)
            if joint.target is None or not np.array_equal(sp, joint.target):
                joint.target = sp  # a new array: the physics applies it
            kp, kd = _gains(group.gains, len(sp))
            if kp is not None and not np.array_equal(kp, joint.kp):
                joint.kp = kp
            if kd is not None and not np.array_equal(kd, joint.kd):
                joint.kd = kd
        events = self.physics.advance(dt)
        for name, joint in self.joints.items():
            groups[name].q = joint.q.tolist()
            groups[name].dq = joint.dq.tolist()
        return events

    def culprit(self, event: ContactEvent) -> str | None:
        """The joint that made a contact (the moving link's)."""
        return self.physics.culprit(event)


def _gains(gains: Mapping[str, Any], n: int) -> tuple[Any, Any]:
    """The PD gains the motor config sent for a group (None: none sent, or not usable)."""
    out = []
    for key, low in (("pd_kp", 0.0), ("pd_kd", -1e-12)):
        values = gains.get(key)
        ok = isinstance(values, list | tuple) and len(values) == n
        array = np.asarray(values, dtype=np.float64) if ok else None
        if array is not None and not (np.all(np.isfinite(array)) and np.all(array > low)):
            array = None
        out.append(array)
    return out[0], out[1]
