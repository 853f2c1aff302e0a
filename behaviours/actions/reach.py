"""``reach``: a point of the body sent to a place, solved on the robot's own model.

::

    - reach: {point: right_hand, at: ${cup}, solve: right_arm, within: 0.02, speed: 0.5, timeout: 10}
    - reach: {point: right_hand, at: cup, solve: right_arm, timeout: 10}   # a place set at run time

``at`` is a point ``[x, y, z]`` (m, the robot's base frame: x forward, y left, z up), a
``point`` parameter (``--param cup=[0.45,-0.20,0.10]``), or the name of a place on the
blackboard (``behaviours.places``: set by another leaf, or by the operator's signed
``atom-executive set cup [0.45,-0.20,0.10]``).

It solves before it moves. When it starts, it takes the measured joints as the seed and
asks the solver (``executive.reach.ik``, in a thread of its own so the tick loop never
waits on it) for the group's joints, then checks the straight joint-space path there
against the body and the scene as validation checks a move (``clearance.first_hit``).
No solution, or a path that would collide, is FAILURE with the reason and nothing is
sent: no motion from this leaf. With ``path: plan`` a straight path that would collide
is planned around the body instead, on the same thread and within ``plan_timeout``
(``executive.reach.plan``), and run as ``move_joints`` runs a planned path; no path in
time is FAILURE, nothing sent. With a solution it moves as ``move_joints`` does (the
speed caps, ``speed`` or ``duration``, the motion streamer), and succeeds when the
measured point, by the model's forward kinematics of the measured joints, is within
``within`` of the place. Preempted while solving, nothing was sent; while moving, it
holds its joints where they are.

Reads the snapshot's joint positions and, with ``at`` a name, ``/places/<name>``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from py_trees.common import Access, Status

from behaviours import places
from behaviours.actions.motion import (
    _DURATION,
    _SPEED,
    PATH,
    PLAN_TIMEOUT,
    MoveJoints,
    _path,
    _timeout_covers_duration,
)
from behaviours.actions.motion import _speed as _joint_speed
from executive.language.kinds import NAME, Field, FieldType, show, timeout
from executive.language.leaf import LeafKind
from executive.language.model import Unresolved
from executive.language.values import suggest
from executive.reach import clearance, ik
from executive.reach import plan as paths
from executive.seam import body as bodies
from executive.seam.body import Body, BodySpec, NoBody
from executive.seam.profile import RobotProfile

if TYPE_CHECKING:
    from executive.language.leaf import LeafChecker, LeafInput
    from executive.language.model import Leaf

WITHIN = 0.02  # m: the default
# One solver thread for every reach: a solve takes tens of ms, which the tick loop (20 ms
# a tick, the watchdog among its nodes) must not wait for. One thread: solves queue, and
# each thread keeps its own solver (ik.solver_for), the model's data not being shared.
_SOLVER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reach-solver")


@dataclass(frozen=True)
class _Solved:
    """What the solver thread hands back: the solution, the straight path's first hit (or,
    with ``path: plan``, the path), and a body for the tick thread's forward kinematics
    (built there, used only here after)."""

    solution: ik.Solution
    hit: clearance.Hit | None
    body: Body
    path: paths.Path | None = None


def _solve(
    profile: RobotProfile,
    scene: bodies.Scene,
    goal: ik.Goal,
    joints: tuple[str, ...],
    seed: Mapping[str, float],
    body: Body | None,
    plan_within: float | None = None,
) -> _Solved:
    """On the solver thread: the solution from ``seed`` and the path's first collision;
    with ``plan_within`` (s), the path there, planned around the body where it must be."""
    solver = ik.solver_for(profile, scene)
    solution = solver.solve([goal], joints, seed)
    hit, path = None, None
    if solution.ok and plan_within is not None:
        path = paths.plan(solver.body, profile, seed, solution.joints, budget=plan_within)
    elif solution.ok:
        hit = clearance.first_hit(solver.body, seed, solution.joints)
    fk = body if body is not None else bodies.load(profile, scene)
    return _Solved(solution, hit, fk, path)


def _build(leaf: Leaf) -> Reach:
    a = leaf.args
    if a.get("path") == "plan":
        paths.warm()
    return Reach(
        point=str(a["point"]),
        at=a["at"],
        joints=tuple(a["joints"]),
        within=float(a["within"]),
        scene=a["scene"],
        name=leaf.name,
        duration=a.get("duration"),
        speed=a.get("speed"),
        timeout=float(a["timeout"]),
        path=str(a.get("path", "straight")),
        plan_timeout=float(a.get("plan_timeout", paths.PLAN_TIMEOUT)),
    )


class Reach(MoveJoints):
    """Send ``point`` of the body to ``at`` by solving ``joints``; see the module."""

    kinds: ClassVar[tuple[LeafKind, ...]] = (
        LeafKind(
            name="reach",
            doc="Sends a point of the body (right_hand, gaze...) to a place, solving the "
            "group's joints on the robot's model first; fails without moving when no "
            "solution or a colliding path is all there is.",
            fields=(
                NAME,
                Field(
                    "point",
                    FieldType.STRING,
                    "The point of the body to send (the profile's body points: right_hand...).",
                    required=True,
                    min_length=1,
                    max_length=64,
                ),
                Field(
                    "at",
                    FieldType.PLACE,
                    "Where: [x, y, z] in m in the robot's base frame (x forward, y left, z up), "
                    "a point parameter ${cup}, or the name of a place set at run time "
                    "(another leaf, or atom-executive set NAME [x,y,z]).",
                    required=True,
                ),
                Field(
                    "solve",
                    FieldType.STRING,
                    "The joints that may move: a joint group or set (right_arm, arms, head...).",
                    required=True,
                    min_length=1,
                    max_length=64,
                    refs=False,
                ),
                Field(
                    "within",
                    FieldType.NUMBER,
                    "Succeeds when the measured point is this close to the place (m).",
                    default=WITHIN,
                    gt=0.0,
                    le=0.5,
                ),
                _DURATION,
                _SPEED,
                PATH,
                PLAN_TIMEOUT,
                timeout("the solve, the plan and the move"),
            ),
            exclusive=("duration", "speed"),
            waits=True,
            args=(
                "point",
                "at",
                "solve",
                "joints",
                "within",
                "scene",
                "duration",
                "speed",
                "timeout",
                "path",
                "plan_timeout",
            ),
            requires="joints",
            moves_joints=True,
            check=lambda checker, inp: _check_reach(checker, inp),
            build=_build,
            label=lambda a: f"Reach {show(a['point'])} to {_place(a['at'])}",
        ),
    )

    def __init__(
        self,
        *,
        point: str,
        at: tuple[float, float, float] | str,
        joints: tuple[str, ...],
        within: float = WITHIN,
        scene: bodies.Scene = bodies.EMPTY_SCENE,
        name: str = "Reach",
        duration: float | None = None,
        speed: float | None = None,
        timeout: float = 10.0,
        path: str = "straight",
        plan_timeout: float = paths.PLAN_TIMEOUT,
    ) -> None:
        super().__init__(
            {},
            name=name,
            duration=duration,
            speed=speed,
            tolerance=None,
            timeout=timeout,
            path=path,
            plan_timeout=plan_timeout,
            scene=scene,
        )
        self.point = point
        self.at = at
        self.joints = joints
        self.within = within
        self.goal: ik.Goal | None = None
        self._solving: Future[_Solved] | None = None
        self._fk: Body | None = None  # built by the solver thread, then the tick thread's
        if isinstance(at, str):
            self.bb.register_key(places.key(at), access=Access.READ)

    # -- the lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        self.targets = {}  # nothing to move until solved
        self.planned = None
        self.waypoints = []
        self._sent = None
        self._solving = None
        at = self._place()
        if at is None:
            return
        self.goal = ik.Goal(self.point, at, self.within)
        seed = self.robot.positions(self.ctx.profile.joints)
        missing = [j for j in self.joints if j not in seed]
        if missing:
            self.fail("no_state", f"no measured position for {', '.join(missing)}")
            return
        self.feedback_message = f"solving {self.point} to {ik.xyz(at)}"
        plan_within = self.plan_timeout if self.path == "plan" else None
        self._solving = _SOLVER.submit(
            _solve,
            self.ctx.profile,
            self.scene,
            self.goal,
            self.joints,
            seed,
            self._fk,
            plan_within,
        )

    def _place(self) -> tuple[float, float, float] | None:
        """The place this run goes to, or None after failing saying why."""
        if isinstance(self.at, str):
            place = places.read(self.bb, self.at)
            if place is None:
                self.fail(
                    "no_place",
                    f"no place {self.at!r} is set (a leaf sets it, or "
                    f"`atom-executive set {self.at} [x,y,z]` while the mission runs)",
                )
                return None
            at = place.at
        else:
            at = tuple(self.at)  # type: ignore[assignment]
        if len(at) != 3 or not all(math.isfinite(v) for v in at):
            self.fail("bad_place", f"{list(at)} is not a place: three finite numbers are")
            return None
        return (float(at[0]), float(at[1]), float(at[2]))

    def poll(self) -> Status:
        if self._solving is not None:
            if not self._solving.done():
                return Status.RUNNING
            return self._solved(self._solving)
        if self.goal is None or not self.targets:
            return Status.RUNNING
        if self.ctx.motion.active(self.targets):
            return Status.RUNNING
        if self.next_segment():  # a planned path's next segment
            return Status.FAILURE if self.failure is not None else Status.RUNNING
        miss = self.miss()
        if miss is not None and miss <= self.within:
            self.feedback_message = f"{self.point} {miss * 1000:.0f} mm from {ik.xyz(self.goal.at)}"
            return Status.SUCCESS
        return Status.RUNNING

    def _solved(self, solving: Future[_Solved]) -> Status:
        self._solving = None
        try:
            solved = solving.result()
        except ik.ReachError as e:
            return self.fail("no_solution", str(e))
        except Exception as e:  # noqa: BLE001 - the solver's own failure: said, not raised into the tick
            return self.fail("solver_error", f"the solver failed: {type(e).__name__}: {e}")
        self._fk = solved.body
        solution, goal = solved.solution, self.goal
        assert goal is not None
        if not solution.ok:
            return self.fail(
                "no_solution", f"no solution for {self.joints_label()}: {solution.problem}"
            )
        if solved.hit is not None:
            contact = solved.hit.contact
            kind = (
                "the scene"
                if contact.b in self.scene.names or contact.b in self._scene_names()
                else "itself"
            )
            return self.fail(
                "path_collides",
                f"the path to {goal.point} at {ik.xyz(goal.at)} hits {kind}: "
                f"{contact.describe()} {solved.hit.along()} (path: plan plans around it)",
            )
        self.targets = dict(solution.joints)
        self.feedback_message = f"moving {self.point} to {ik.xyz(goal.at)}"
        if solved.path is not None:  # path: plan: its segments, from the measured joints
            return self.follow(solved.path)
        self.move_to(self.targets, self.measured(), self.duration)
        return Status.FAILURE if self.failure is not None else Status.RUNNING

    def _scene_names(self) -> tuple[str, ...]:
        spec = self.ctx.profile.body
        return spec.scene.names if isinstance(spec, BodySpec) else ()

    def joints_label(self) -> str:
        return ", ".join(self.joints) if len(self.joints) <= 2 else f"{len(self.joints)} joints"

    def miss(self) -> float | None:
        """How far the measured point is from the place now (m), by the model's forward
        kinematics of the measured joints; None before the first solve."""
        if self._fk is None or self.goal is None:
            return None
        measured = self.robot.positions(self._fk.qpos_of)
        self._fk.pose(measured)
        return self.goal.miss(self._fk.point(self.point))

    def progress(self) -> tuple[float | None, float | None]:
        if self._solving is not None:
            return 0.0, None
        return super().progress()

    def timeout_message(self) -> str:
        if self._solving is not None:
            return f"the solver gave no answer within {self.timeout} s"
        miss = self.miss()
        if miss is None or self.goal is None:
            return super().timeout_message()
        return (
            f"{self.point} is {miss * 1000:.0f} mm from {ik.xyz(self.goal.at)} after "
            f"{self.timeout} s (within {self.within * 1000:.0f} mm)"
        )

    def abort(self) -> None:
        if self._solving is not None:  # nothing was sent: the answer is dropped
            self._solving.cancel()
            self._solving = None
            return
        if self.targets:
            super().abort()


def _place(at: Any) -> str:
    if isinstance(at, str | Unresolved):
        return str(at)
    return ik.xyz(at)


# --- the check against the profile ----------------------------------------------------


def _check_reach(checker: LeafChecker, inp: LeafInput) -> dict[str, Any] | None:
    profile = checker.profile
    spec = profile.body
    if not isinstance(spec, BodySpec):
        why = f": {spec.why}" if isinstance(spec, NoBody) else " (no body: key)"
        checker.error(
            inp.where,
            inp.path,
            f"reach needs the robot's body model; profile {profile.name!r} has none{why}",
        )
        return None
    if not {"point", "solve", "at", "timeout"} <= set(inp.vals):
        return None  # reported by the field checks
    point, group = inp.vals["point"], inp.vals["solve"]
    ok = True
    if isinstance(point.value, str) and point.value not in spec.points:
        checker.error(
            point.where,
            f"{inp.path}.point",
            f"not a point of the body{suggest(point.value, spec.points, 'points')}{point.note}",
        )
        ok = False
    solver = ik.solver_for(profile)
    joints: list[str] = []
    try:
        joints = solver.joints_of(group.value)
    except ik.ReachError as e:
        known = [*profile.joint_sets, "arms", "head", "torso", "legs"]
        checker.error(
            group.where, f"{inp.path}.solve", f"{e}{suggest(group.value, known, 'groups')}"
        )
        ok = False
    if ok and isinstance(point.value, str):
        try:
            solver.check_goal(ik.Goal(point.value, (0.0, 0.0, 0.0)), joints)
        except ik.ReachError as e:
            checker.error(group.where, f"{inp.path}.solve", str(e))
            ok = False
    if joints:
        ok = _joint_speed(checker, inp, dict.fromkeys(joints, 0.0)) and ok
    ok = _timeout_covers_duration(checker, inp) and ok
    ok = _path(checker, inp) and ok
    if not ok:
        return None
    return {
        "point": point.value,
        "at": inp.value("at"),
        "solve": group.value,
        "joints": tuple(joints),
        "within": inp.value("within"),
        "scene": bodies.EMPTY_SCENE,  # the mission's (executive.mission.compile sets it)
        "duration": inp.value("duration"),
        "speed": inp.value("speed"),
        "timeout": inp.value("timeout"),
        "path": inp.value("path"),
        "plan_timeout": inp.value("plan_timeout"),
    }
