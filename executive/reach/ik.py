"""Inverse kinematics on the robot's own model: a group's joints for where points go.

An author says where a point of the body goes (``right_hand`` 40 cm ahead, 20 cm to the
right, at counter height) and which joints may move to get it there (a joint group or
set of the profile: ``right_arm``, ``arms``, ``head``...); this finds the joints. It is
mink's recipe (``examples/arm_iiwa.py``; mink is the field's differential IK on MuJoCo),
on the same compiled model that validation, the simulator and the pictures use
(``executive.seam.body``):

- a ``FrameTask`` per point, on a site the body puts at each named point, position only:
  each iteration its target is the frame's own orientation at the goal's position (and
  the frame's own coordinate on an axis the goal leaves free), so the error is the
  point's displacement alone;
- a ``PostureTask`` toward the seed (the pose's own ``joints``, else the body's rest; at
  run time the measured joints), so the solution is the nearest one in joint space and
  an elbow never flips between runs: the same inputs give the same joints, rounded to
  0.1 mrad;
- hard limits: the profile's joint limits (``ConfigurationLimit`` on the model's ranges,
  set to the profile's, which are tighter than the URDF's), the profile's speed caps
  (``VelocityLimit``: no joint moves more than its cap x ``DT`` an iteration, so the
  collision limit's linearisation holds), and ``CollisionAvoidanceLimit`` on every pair
  of links the body checks that the group moves, and those links against the scene's
  boxes, kept ``margin + 5 mm`` apart;
- every joint outside the group frozen (``DofFreezingTask`` as an equality constraint);
- the QP solved by DAQP, mink's own dependency (``qpsolvers[daqp]``).

A solution is judged as validation judges a pose: no two links closer than the margin,
nothing in the scene, and no point inside a link other than those it hangs from. When
a point stays farther from its goal than ``within``, the solution says by how much and
what stops it: out of reach (farther from the first joint of its chain than the chain
is long), a collision (a pair of links at the limit's distance), a joint limit (a joint
of the chain at its limit), or a local minimum of the solver from that seed.

A ``Solver`` is one profile's body with one scene; not thread-safe (``solver_for`` keeps
one per thread). It remembers what it solved, so a library read again costs nothing.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from executive.reach import clearance
from executive.seam import body as bodies
from executive.seam.body import Body, BodySpec, Contact, FloatArray, Scene
from executive.seam.profile import RobotProfile

DT = 0.02  # s: an iteration's step; a joint moves at most its speed cap x DT (0.03 rad at 1.5)
MAX_ITERATIONS = 400  # 400 x 0.03 rad: any arm's whole range, and time to settle
CONVERGED = 5e-4  # m: every point this close to its goal ...
STILL = 2e-5  # rad: ... and no joint moving more than this an iteration: done
STALL = 60  # iterations without getting closer: done (the best seen is the answer)
DECIMALS = 4  # rad: solutions rounded to 0.1 mrad, so a file gives the same numbers anywhere
POSTURE_COST = 1e-2  # against 1.0 a metre of a point's error (mink's arm recipe)
AVOID_MARGIN = 0.005  # m beyond the profile's margin the collision limit keeps
AVOID_DETECT = 0.1  # m beyond that at which a pair enters the QP: more than an iteration moves
AVOID_GAIN = 0.5  # of the gap to that distance an iteration may close
LIMIT_SLACK = 0.01  # rad: a joint this close to a limit is at it (for the reason why)


class ReachError(ValueError):
    """A goal the body cannot even be asked for: a point it does not have, joints its
    model does not carry, a goal that is not three finite numbers."""


@dataclass(frozen=True)
class Goal:
    """Where a named point of the body should be: ``at`` (m, base frame; None on an axis
    left free) within ``within`` m."""

    point: str
    at: tuple[float | None, float | None, float | None]
    within: float = 0.02

    def miss(self, p: FloatArray) -> float:
        """How far ``p`` is from the goal, on the axes it sets (m)."""
        return math.sqrt(sum((p[i] - v) ** 2 for i, v in enumerate(self.at) if v is not None))


@dataclass(frozen=True)
class Solution:
    """What a solve gives: the group's ``joints`` (profile names, rad), where each point
    ends (``points``) and how far from its goal (``residuals``, m), the closest pair the
    body checks at the solution (``closest``), and ``problem``: "" when every point is
    within its goal and the body is clear, else why not (``stops``: out of reach, a joint
    limit, a collision, the solver)."""

    joints: Mapping[str, float]
    points: Mapping[str, tuple[float, float, float]]
    residuals: Mapping[str, float]
    closest: Contact | None
    iterations: int
    problem: str = ""
    stops: str = ""
    about: str = ""  # the point the problem is about

    @property
    def ok(self) -> bool:
        return not self.problem

    @property
    def residual(self) -> float:
        return max(self.residuals.values(), default=0.0)


def xyz(p: Sequence[float | None]) -> str:
    """A point for messages: ``(+0.450, -0.200, +0.100)``, ``any`` on a free axis."""
    return "(" + ", ".join("any" if v is None else f"{v:+.3f}" for v in p) + ")"


@dataclass
class _Group:
    """What a solve for one set of joints needs, built once per solver."""

    joints: tuple[str, ...]
    moved: frozenset[int]  # the robot geoms the joints move
    limits: list[Any]
    freeze: Any  # mink.DofFreezingTask, or None when every dof is free


@dataclass
class Solver:
    """IK for one profile's body with one scene (the profile's plus ``scene``)."""

    profile: RobotProfile
    scene: Scene = bodies.EMPTY_SCENE
    body: Body = field(init=False)

    def __post_init__(self) -> None:
        import mink  # the solver's libraries load only where something is solved

        self.mink = mink
        self.body = bodies.load(self.profile, self.scene)
        m, mujoco = self.body.model, self.body.mujoco
        self.joint_id: dict[str, int] = {}
        for name, adr in self.body.qpos_of.items():
            jid = int(np.flatnonzero(m.jnt_qposadr == adr)[0])
            self.joint_id[name] = jid
            joint = self.profile.joints[name]
            m.jnt_range[jid] = (joint.lower, joint.upper)  # the profile's: tighter than the URDF's
            m.jnt_limited[jid] = 1
        self.model_joint = {
            n: str(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j))
            for n, j in self.joint_id.items()
        }
        self.configuration = mink.Configuration(m)
        self.position_limit = mink.ConfigurationLimit(m)
        self._groups: dict[tuple[str, ...], _Group] = {}
        self._solved: dict[Any, Solution] = {}

    # -- what may be asked ------------------------------------------------------------------

    def joints_of(self, group: str) -> list[str]:
        """The joints of a profile group, joint set or joint that a solve may move; raises
        ReachError when the name is none of those or names joints the model lacks."""
        try:
            joints = self.profile.expand([group])
        except KeyError:
            raise ReachError(f"{group!r} is not a joint group, joint set or joint") from None
        missing = [j for j in joints if j not in self.body.qpos_of]
        if missing:
            raise ReachError(
                f"{group} has joints the body model does not carry ({', '.join(missing)})"
            )
        return joints

    def check_goal(self, goal: Goal, joints: Sequence[str]) -> None:
        """Raises ReachError unless the body has the point, some of ``joints`` move it,
        and its goal is finite."""
        points = self.body.point_bodies
        if goal.point not in points:
            raise ReachError(
                f"the body has no point {goal.point!r} (its points: {', '.join(sorted(points))})"
            )
        if not any(v is not None for v in goal.at) or not all(
            v is None or math.isfinite(v) for v in goal.at
        ):
            raise ReachError(f"{goal.point}: {xyz(goal.at)} is not a place (three finite numbers)")
        if not self._chain(goal.point, joints):
            raise ReachError(f"none of {', '.join(joints)} moves {goal.point}")

    def _chain(self, point: str, joints: Sequence[str]) -> list[str]:
        """The joints of ``joints`` between the point's link and the root, root first."""
        m = self.body.model
        bid = self.body.point_bodies[point][0]
        ancestors = set()
        while bid != 0:
            ancestors.add(bid)
            bid = int(m.body_parentid[bid])
        inside = [j for j in joints if int(m.jnt_bodyid[self.joint_id[j]]) in ancestors]
        return sorted(inside, key=lambda j: self.joint_id[j])

    # -- solving ----------------------------------------------------------------------------

    def solve(
        self,
        goals: Sequence[Goal],
        joints: Sequence[str],
        seed: Mapping[str, float],
        posture: Mapping[str, float] | None = None,
    ) -> Solution:
        """``joints`` solved so that each goal's point is where it says. ``seed`` holds the
        other joints where they are (the rest: the body's rest) and starts ``joints``
        there; the posture task pulls toward ``posture`` (default: the seed). Raises
        ReachError for a goal that cannot be asked (``check_goal``)."""
        for goal in goals:
            self.check_goal(goal, joints)
        seed_q = self._clamped(self.body.qpos(seed))
        posture_q = seed_q if posture is None else self._clamped(self.body.qpos(posture, seed_q))
        key = (tuple(goals), tuple(joints), seed_q.tobytes(), posture_q.tobytes())
        found = self._solved.get(key)
        if found is None:
            if len(self._solved) > 1024:
                self._solved.clear()
            found = self._solved[key] = self._solve(list(goals), tuple(joints), seed_q, posture_q)
        return found

    def _clamped(self, q: FloatArray) -> FloatArray:
        """``q`` inside the profile's limits: a measured joint a hair past its limit would
        make the first step's QP infeasible."""
        out = np.array(q)
        for name, jid in self.joint_id.items():
            adr = self.body.qpos_of[name]
            lo, hi = self.body.model.jnt_range[jid]
            out[adr] = min(max(out[adr], lo), hi)
        return out

    def _solve(
        self, goals: list[Goal], joints: tuple[str, ...], seed: FloatArray, posture: FloatArray
    ) -> Solution:
        group = self._group(joints)
        body = self.body
        body.set_qpos(seed)
        for goal in goals:
            want = np.array([v if v is not None else np.nan for v in goal.at])
            axes = ~np.isnan(want)
            if not axes.all():
                continue  # a free axis: the place is a line, which may pass a link
            # against the links the group does not move (the torso, the head): a place
            # inside one of them is no place for the point, however the joints turn
            hit = clearance.inside(body, want, body.spec.margin, group.moved)
            if hit is not None:
                why = f"{xyz(goal.at)} is inside {_depth(hit)}"
                problem = f"{goal.point}: {why}"
                return self._judge(goals, joints, seed, 0, (problem, "inside the body", goal.point))
        q, iterations, failed = self._iterate(goals, group, seed, posture)
        if failed:
            return self._judge(goals, joints, q, iterations, (failed, "the solver", ""))
        return self._judge(goals, joints, q, iterations)

    def _group(self, joints: tuple[str, ...]) -> _Group:
        found = self._groups.get(joints)
        if found is not None:
            return found
        mink, body, m = self.mink, self.body, self.body.model
        moved = body.moved_by(joints)
        pairs = [([a], [b]) for a, b in body.pairs if a in moved or b in moved]
        pairs += [([g], [s]) for s in body.scene_geoms for g in sorted(moved)]
        limits: list[Any] = [
            self.position_limit,
            mink.VelocityLimit(
                m, {self.model_joint[j]: self.profile.joints[j].max_velocity for j in joints}
            ),
        ]
        if pairs:
            margin = body.spec.margin + AVOID_MARGIN
            limits.append(
                mink.CollisionAvoidanceLimit(
                    m,
                    pairs,
                    # mink bounds the step (rad) by gain x gap / dt: with dt in the
                    # gain, an iteration closes at most AVOID_GAIN of the gap
                    gain=AVOID_GAIN * DT,
                    minimum_distance_from_collisions=margin,
                    collision_detection_distance=margin + AVOID_DETECT,
                )
            )
        free = {int(m.jnt_dofadr[self.joint_id[j]]) for j in joints}
        frozen = [d for d in range(m.nv) if d not in free]
        freeze = mink.DofFreezingTask(m, frozen) if frozen else None
        found = self._groups[joints] = _Group(joints, moved, limits, freeze)
        return found

    def _iterate(
        self, goals: list[Goal], group: _Group, seed: FloatArray, posture: FloatArray
    ) -> tuple[FloatArray, int, str]:
        """mink's loop from ``seed``: the best configuration seen, the iterations, and
        "" or why the QP failed."""
        mink = self.mink
        cfg = self.configuration
        cfg.update(seed)
        sites = [f"{bodies.SITE}{g.point}" for g in goals]
        tasks = [
            mink.FrameTask(s, "site", position_cost=1.0, orientation_cost=0.0, lm_damping=1.0)
            for s in sites
        ]
        posture_task = mink.PostureTask(self.body.model, cost=POSTURE_COST)
        posture_task.set_target(posture)
        constraints = [group.freeze] if group.freeze is not None else []
        best, best_q, since = math.inf, np.array(seed), 0
        for i in range(1, MAX_ITERATIONS + 1):
            for task, site, goal in zip(tasks, sites, goals, strict=True):
                frame = cfg.get_transform_frame_to_world(site, "site")
                now = frame.translation()
                at = np.array([now[k] if v is None else v for k, v in enumerate(goal.at)])
                task.set_target(mink.SE3.from_rotation_and_translation(frame.rotation(), at))
            try:
                v = mink.solve_ik(
                    cfg,
                    [*tasks, posture_task],
                    DT,
                    "daqp",
                    damping=1e-3,
                    limits=group.limits,
                    constraints=constraints,
                )
            except mink.exceptions.NoSolutionFound:
                return best_q, i, "the QP solver found no step from here"
            cfg.integrate_inplace(v, DT)
            misses = [
                g.miss(cfg.get_transform_frame_to_world(s, "site").translation())
                for g, s in zip(goals, sites, strict=True)
            ]
            total = sum(misses)
            if total < best - 1e-7:
                best, best_q, since = total, cfg.q.copy(), i
            if (max(misses) < CONVERGED and float(np.max(np.abs(v))) * DT < STILL) or (
                i - since > STALL
            ):
                return best_q, i, ""
        return best_q, MAX_ITERATIONS, ""

    # -- judging a configuration ------------------------------------------------------------

    def _judge(
        self,
        goals: list[Goal],
        joints: tuple[str, ...],
        q: FloatArray,
        iterations: int,
        problem: tuple[str, str, str] | None = None,
    ) -> Solution:
        body, m = self.body, self.body.model
        solved = {}
        for j in joints:  # rounded, and inside the limits however the last digit fell
            lo, hi = m.jnt_range[self.joint_id[j]]
            solved[j] = min(max(round(float(q[body.qpos_of[j]]), DECIMALS), lo), hi)
        final = np.array(q)
        for j, value in solved.items():
            final[body.qpos_of[j]] = value
        body.set_qpos(final)
        moved = body.moved_by(joints)
        points = {g.point: body.point(g.point) for g in goals}
        residuals = {g.point: g.miss(points[g.point]) for g in goals}
        closest = clearance.closest(body, moved)
        if problem is None:
            problem = self._problem(goals, joints, points, residuals, moved)
        return Solution(
            joints=solved,
            points={n: (float(p[0]), float(p[1]), float(p[2])) for n, p in points.items()},
            residuals=residuals,
            closest=closest,
            iterations=iterations,
            problem=problem[0],
            stops=problem[1],
            about=problem[2],
        )

    def _problem(
        self,
        goals: list[Goal],
        joints: tuple[str, ...],
        points: Mapping[str, FloatArray],
        residuals: Mapping[str, float],
        moved: frozenset[int],
    ) -> tuple[str, str, str]:
        """Why the body as it is now is no answer: (the problem, what stops it, the
        point it is about); all "" when it is one."""
        body = self.body
        for goal in goals:
            miss = residuals[goal.point]
            if miss <= goal.within:
                continue
            stops = self._stops(goal, joints, points[goal.point], moved)
            return (
                f"{goal.point}: the best solution stays {miss * 1000:.0f} mm from "
                f"{xyz(goal.at)} (within {goal.within * 1000:.0f} mm): {stops}",
                stops.split(" (")[0],
                goal.point,
            )
        hits = body.collisions(only=moved) + body.scene_hits(only=moved)
        if hits:
            worst = min(hits, key=lambda c: c.distance)
            return f"the solution collides: {worst.describe()}", "a collision", goals[0].point
        for goal in goals:
            own = clearance.attached(body, body.point_bodies[goal.point][0])
            hit = clearance.inside(body, points[goal.point], body.spec.margin, own)
            if hit is not None:
                why = f"{goal.point} would be inside {_depth(hit)}"
                return why, "a collision", goal.point
        return "", "", ""

    def _stops(
        self, goal: Goal, joints: Sequence[str], p: FloatArray, moved: frozenset[int]
    ) -> str:
        """What keeps ``goal``'s point from its goal, the body at the best solution."""
        body, m, d = self.body, self.body.model, self.body.data
        chain = self._chain(goal.point, joints)
        anchors = [np.array(d.xanchor[self.joint_id[j]]) for j in chain]
        length = sum(float(np.linalg.norm(b - a)) for a, b in itertools.pairwise(anchors))
        length += float(np.linalg.norm(p - anchors[-1]))
        axes = [i for i, v in enumerate(goal.at) if v is not None]
        want = np.array([v if v is not None else 0.0 for v in goal.at])
        far = float(np.linalg.norm((want - anchors[0])[axes]))
        if far > length + 1e-3:
            return (
                f"out of reach ({far:.2f} m from {chain[0]}'s axis; "
                f"{', '.join([chain[0], chain[-1]] if len(chain) > 1 else chain)} "
                f"and the rest of the chain reach {length:.2f} m)"
            )
        near = clearance.closest(body, moved)
        if near is not None and near.distance < body.spec.margin + AVOID_MARGIN + 0.003:
            return (
                f"a collision ({near.describe()}, the margin is {body.spec.margin * 1000:.0f} mm)"
            )
        pinned = []
        for j in chain:
            lo, hi = m.jnt_range[self.joint_id[j]]
            q = float(d.qpos[body.qpos_of[j]])
            if q - lo < LIMIT_SLACK:
                pinned.append(f"{j} at its lower limit {lo:g}")
            elif hi - q < LIMIT_SLACK:
                pinned.append(f"{j} at its upper limit {hi:g}")
        if pinned:
            return f"a joint limit ({', '.join(pinned)})"
        return "the solver (no way closer from this seed: give a seed in joints)"


def _depth(contact: Contact) -> str:
    if contact.distance < 0:
        return f"{contact.b} ({-contact.distance * 1000:.0f} mm deep)"
    return f"{contact.b}'s margin ({contact.distance * 1000:.0f} mm from it)"


_local = threading.local()


def solver_for(profile: RobotProfile, scene: Scene = bodies.EMPTY_SCENE) -> Solver:
    """This thread's solver for ``profile``'s body with ``scene`` (built once, tens of ms)."""
    cache: dict[tuple[int, Scene], Solver] = getattr(_local, "solvers", None) or {}
    _local.solvers = cache
    key = (id(profile.body), scene)
    found = cache.get(key)
    if found is None or found.profile.body is not profile.body:
        if len(cache) > 8:
            cache.clear()
        found = cache[key] = Solver(profile, scene)
    return found


def has_body(profile: RobotProfile) -> bool:
    """Whether the profile has a model to solve on."""
    return isinstance(profile.body, BodySpec)
