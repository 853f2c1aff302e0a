"""Simulated joints with a body: the robot's vendor model stepped in MuJoCo.

``joints.JointGroup`` keeps what a robot's firmware was told (targets, gains, which servos
are in error); this module moves the joints a model exists for as the firmware's joint
loop and gravity would, instead of the group's first-order lag:

- every 2 ms (``TIMESTEP``), each actuated joint gets the MIT-mode law the commands ask
  for, ``tau = kp (q* - q) + kd (dq* - dq) + tau_ff``, at the gains of the latest command
  (the profile's before any), under gravity, within the model's joint limits (see
  ``executive.seam.body.physics_model`` for how, and why the law is a MuJoCo actuator
  rather than a torque computed here);
- a joint nobody commands (never, or no longer: control taken away, an FSM that does not
  obey) is held where it was by the same law at the latest gains, as the firmware's own
  standing controller holds it: so the legs stand at their start pose (the zero pose,
  straight) with the profile's leg gains and the pelvis is fixed, as in the vendor's
  model. An e-stop brakes (velocity zeroed, held there); a servo in error stops its joint
  where it is until cleared;
- a group the model has no joints for (the Atom's fingers) keeps the kinematic model.

Contacts are events: the physics collides exactly the pairs validation checks (links that
are not neighbours, and every link against the scene's boxes), and a named point (a hand)
below a plane of the scene (the floor) counts as a contact too. ``step`` returns each
contact when it begins and when it ends; one that flickers (the arm bouncing on the torso)
stays one contact until it has been gone ``RELEASE`` seconds of simulated time.

Robot-neutral: the profile's ``body:`` says which model and how its joints are named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from executive.robots.simkit.joints import JointGroup
from executive.seam.body import (
    EMPTY_SCENE,
    Body,
    BodyError,
    Scene,
    load,
    parse_scene,
    physics_model,
)
from executive.seam.profile import RobotProfile

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

TIMESTEP = 0.002  # s: the firmware's 500 Hz joint loop
RELEASE = 0.1  # s of simulated time a contact must be gone before it ends
MODES = ("mujoco", "kinematic")


def load_scene(path: Path | None) -> Scene:
    """A scene file: ``{name: {box: {center, size}} | {plane: {z}}}`` (``body.parse_scene``'s
    format), or a document with that under ``scene:`` (a mission's). ValueError naming the
    file and the key of what is wrong."""
    if path is None:
        return EMPTY_SCENE
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"scene {path}: {e}") from None
    key = "scene"
    if isinstance(raw, dict) and set(raw) == {"scene"}:
        raw = raw["scene"]
    else:
        key = "(top level)"
    problems: list[str] = []
    scene = parse_scene(raw, key, lambda where, msg: problems.append(f"{where}: {msg}"))
    if problems:
        raise ValueError(f"scene {path}: " + "; ".join(problems))
    if raw is None or not scene.names:
        raise ValueError(f"scene {path}: no obstacle in it")
    return scene


@dataclass(frozen=True)
class ContactEvent:
    """A contact beginning or ending. ``a`` is a link (or a named point of the body), ``b``
    a link (``kind`` "self") or an obstacle of the scene (``kind`` "scene"); ``distance``
    in m, negative when they overlap (the deepest seen, for an end)."""

    action: str  # "begin" | "end"
    a: str
    b: str
    kind: str
    distance: float
    since: float  # simulated time (s) the contact began

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "distance": round(self.distance, 4),
        }


@dataclass
class _Active:
    kind: str
    since: float
    last_seen: float
    distance: float


class _Driven:
    """One joint group whose joints the physics moves, and what it last applied of it."""

    def __init__(self, group: JointGroup, acts: IntArray, qadr: IntArray, dofs: IntArray) -> None:
        self.group = group
        self.acts, self.qadr, self.dofs = acts, qadr, dofs
        self.seen: tuple[object, ...] = ()
        self.hold: FloatArray | None = None  # where an uncommanded group is held
        self.frozen_at: FloatArray = np.zeros(len(acts))
        self.halts = group.halts
        # where the group's q, dq, ddq and tau are read from after a step (``Physics``)
        self.sources: tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None = None

    def unchanged(self) -> bool:
        """Whether the group was told nothing since ``seen``: the same objects (a command
        replaces its arrays, a freeze its mask, an e-stop bumps ``halts``)."""
        g, seen = self.group, self.seen
        return bool(seen) and (
            g.target is seen[0]
            and g.kp is seen[1]
            and g.kd is seen[2]
            and g.ff is seen[3]
            and g.frozen is seen[4]
            and g.halts is seen[5]
        )


def _gather_view(array: FloatArray, index: IntArray) -> FloatArray | None:
    """``array[index]`` as a view of ``array`` when ``index`` is one ascending run (the
    model's joints of a group are, in the robots' models), else None. A view of MjData's
    arrays stays valid and current: MuJoCo steps them in place."""
    if len(index) and np.array_equal(index, np.arange(index[0], index[0] + len(index))):
        start = int(index[0])
        return array[start : start + len(index)]
    return None


class Physics:
    """The modelled joints of ``groups`` stepped in MuJoCo; see the module docstring."""

    def __init__(
        self,
        body: Body,
        groups: Mapping[str, JointGroup],
        *,
        timestep: float = TIMESTEP,
        gravcomp: bool = False,
    ) -> None:
        import mujoco

        self.mujoco = mujoco
        self.body = body
        self.model = physics_model(body, timestep=timestep, gravcomp=gravcomp)
        self.data = mujoco.MjData(self.model)
        self.timestep = timestep
        self.time = 0.0
        self._carry = 0.0  # time ``advance`` was given and has not stepped (< one step)
        m = self.model
        act_of = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a): a for a in range(m.nu)}
        self.driven: dict[str, _Driven] = {}
        self.kinematic: list[str] = []
        for name, group in groups.items():
            modelled = [n in act_of for n in group.names]
            if not any(modelled):
                self.kinematic.append(name)
                continue
            if not all(modelled):
                missing = [n for n, ok in zip(group.names, modelled, strict=True) if not ok]
                raise BodyError(
                    f"group {name!r}: the model has joints for some of its joints only "
                    f"(not {', '.join(missing)}); a group is simulated whole, with or "
                    f"without the model"
                )
            acts = np.array([act_of[n] for n in group.names], dtype=np.intp)
            joints = m.actuator_trnid[acts, 0]
            self.driven[name] = _Driven(
                group,
                acts,
                m.jnt_qposadr[joints].astype(np.intp),
                m.jnt_dofadr[joints].astype(np.intp),
            )
        for d in self.driven.values():
            self.data.qpos[d.qadr] = d.group.q
            q = _gather_view(self.data.qpos, d.qadr)
            dq = _gather_view(self.data.qvel, d.dofs)
            ddq = _gather_view(self.data.qacc, d.dofs)
            tau = _gather_view(self.data.actuator_force, d.acts)
            if q is not None and dq is not None and ddq is not None and tau is not None:
                d.sources = (q, dq, ddq, tau)
        mujoco.mj_forward(m, self.data)
        # each named point, its body, its offset on it and how far from the body's origin
        # (plus a margin for rounding) it can be: at most that far below it, so a body that
        # far above the highest plane has its point above every plane (no exact test)
        self._points = [
            (p, bid, off, float(np.linalg.norm(off)) + 1e-6)
            for p, (bid, off) in body.point_bodies.items()
        ]
        self._top = max((pl.height for pl in body.scene.planes), default=-np.inf)
        self._depth = {b: self._tree_depth(b) for b in range(m.nbody)}
        self.active: dict[tuple[str, str], _Active] = {}
        self.events = 0  # contacts begun since start

    @classmethod
    def for_profile(
        cls,
        profile: RobotProfile,
        groups: Mapping[str, JointGroup],
        scene: Scene = EMPTY_SCENE,
        *,
        gravcomp: bool = False,
    ) -> Physics:
        """The physics of a profile with a ``body:`` model, its scene plus ``scene``."""
        return cls(load(profile, scene), groups, gravcomp=gravcomp)

    def _tree_depth(self, b: int) -> int:
        depth = 0
        while b != 0:
            b = int(self.model.body_parentid[b])
            depth += 1
        return depth

    # -- the firmware's side: commands into the actuators ---------------------------------

    def _apply(self, d: _Driven) -> None:
        """Make the actuators follow what the group was last told (only when it changed)."""
        if d.unchanged():
            return
        g = d.group
        seen = (g.target, g.kp, g.kd, g.ff, g.frozen, g.halts)
        m, data = self.model, self.data
        q = data.qpos[d.qadr]
        if g.halts != d.halts:  # an e-stop brakes: stop dead, hold there
            d.halts = g.halts
            data.qvel[d.dofs] = 0.0
            d.hold = q.copy()
        prev_frozen = d.seen[4] if d.seen else np.zeros(len(d.acts), dtype=bool)
        newly = g.frozen & ~np.asarray(prev_frozen)
        if newly.any():  # a servo in error stops its joint where it is
            d.frozen_at[newly] = q[newly]
            data.qvel[d.dofs[newly]] = 0.0
        d.seen = seen
        if g.target is not None:
            d.hold = None
            ctrl = g.target.copy()
            ff = g.kd * g.ff[:, 0] + g.ff[:, 1]
        else:
            if d.hold is None:
                d.hold = q.copy()
            ctrl = d.hold.copy()
            ff = np.zeros(len(d.acts))
        if g.frozen.any():
            ctrl[g.frozen] = d.frozen_at[g.frozen]
            ff[g.frozen] = 0.0
        data.ctrl[d.acts] = ctrl
        m.actuator_gainprm[d.acts, 0] = g.kp
        m.actuator_biasprm[d.acts, 0] = ff
        m.actuator_biasprm[d.acts, 1] = -g.kp
        m.actuator_biasprm[d.acts, 2] = -g.kd

    def step(self, periods: int = 1) -> list[ContactEvent]:
        """Advance ``periods`` physics steps; the contacts that began or ended."""
        mujoco, m, data = self.mujoco, self.model, self.data
        for d in self.driven.values():
            self._apply(d)
        events: list[ContactEvent] = []
        for _ in range(periods):
            mujoco.mj_step(m, data)
            self.time += self.timestep
            found = self._contacts()
            if found:
                events += found
        for d in self.driven.values():
            g = d.group
            if d.sources is not None:  # views of the group's joints: a copy, no gather
                q, dq, ddq, tau = d.sources
                g.q[:] = q
                g.dq[:] = dq
                g.ddq[:] = ddq
                g.tau[:] = tau
            else:
                g.q[:] = data.qpos[d.qadr]
                g.dq[:] = data.qvel[d.dofs]
                g.ddq[:] = data.qacc[d.dofs]
                g.tau[:] = data.actuator_force[d.acts]
            g.settled = False  # the state views copy it every time
        return events

    def advance(self, dt: float) -> list[ContactEvent]:
        """Advance ``dt`` seconds in whole steps, the remainder carried to the next call:
        for a sim whose loop runs at its own rate (the GRX's 50 Hz, the Aurora's 100 Hz)."""
        self._carry += dt
        periods = int(self._carry / self.timestep + 1e-9)
        if periods <= 0:
            return []
        self._carry -= periods * self.timestep
        return self.step(periods)

    # -- contacts -------------------------------------------------------------------------

    def _touching(self) -> dict[tuple[str, str], tuple[str, float]]:
        """Every pair in contact now: (link, link or obstacle) -> (kind, distance)."""
        data, body = self.data, self.body
        seen: dict[tuple[str, str], tuple[str, float]] = {}
        if data.ncon:
            for geoms, dist in zip(data.contact.geom, data.contact.dist, strict=True):
                a, b = int(geoms[0]), int(geoms[1])
                if a in body.scene_geoms or b in body.scene_geoms:
                    link, obstacle = (b, a) if a in body.scene_geoms else (a, b)
                    key, kind = (body.link_of_geom[link], body.scene_geoms[obstacle]), "scene"
                else:
                    la, lb = body.link_of_geom[a], body.link_of_geom[b]
                    key, kind = (min(la, lb), max(la, lb)), "self"
                prev = seen.get(key)
                seen[key] = (kind, min(float(dist), prev[1]) if prev else float(dist))
        if body.scene.planes:
            xpos, top = data.xpos, self._top
            for pname, bid, offset, reach in self._points:
                if xpos.item(bid, 2) - reach >= top:
                    continue  # too high for any plane: the exact test cannot find it below
                p = xpos[bid] + data.xmat[bid].reshape(3, 3) @ offset
                for plane in body.scene.planes:
                    if p[2] < plane.height:
                        seen[(pname, plane.name)] = ("scene", float(p[2] - plane.height))
        return seen

    def _contacts(self) -> list[ContactEvent]:
        """The contacts that began or ended at this step."""
        now = self.time
        seen = self._touching()
        if not seen and not self.active:  # the usual step: nothing touches, nothing did
            return []
        events: list[ContactEvent] = []
        for key, (kind, dist) in seen.items():
            active = self.active.get(key)
            if active is None:
                self.active[key] = _Active(kind, now, now, dist)
                self.events += 1
                events.append(ContactEvent("begin", key[0], key[1], kind, dist, now))
            else:
                active.last_seen = now
                active.distance = min(active.distance, dist)
        if self.active and len(seen) != len(self.active):
            for key in [k for k, a in self.active.items() if now - a.last_seen > RELEASE]:
                gone = self.active.pop(key)
                events.append(
                    ContactEvent("end", key[0], key[1], gone.kind, gone.distance, gone.since)
                )
        return events

    def moving_joint(self, link: str) -> str | None:
        """The profile joint that moves ``link`` (a contact's link or named point; None:
        the root, or a link no profile joint moves)."""
        mujoco, m = self.mujoco, self.model
        point = self.body.spec.points.get(link)
        if point is not None:  # a hand below the floor: the link it is on
            link = point.link
        bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link)
        if bid <= 0 or m.body_jntnum[bid] == 0:
            return None
        adr = int(m.jnt_qposadr[m.body_jntadr[bid]])
        return next((n for n, a in self.body.qpos_of.items() if a == adr), None)

    def culprit(self, event: ContactEvent) -> str | None:
        """The joint a firmware would blame for a contact: the moving link's (of two links,
        the one farther down the tree: the forearm, not the torso it hits)."""
        if event.kind == "scene":
            return self.moving_joint(event.a)
        mujoco, m = self.mujoco, self.model
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, x) for x in (event.a, event.b)]
        deeper = event.a if self._depth[ids[0]] >= self._depth[ids[1]] else event.b
        return self.moving_joint(deeper)
