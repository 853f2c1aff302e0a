"""Moving joints and fingers to targets through the motion streamer.

One leaf serves poses and hand gestures alike: both are joint-name -> position targets
(poses name arm/head/torso joints, gestures name finger joints such as ``right_index``).
The two mission kinds (``move_joints``, ``hand_gesture``) are declared on ``MoveJoints``;
their checks against the robot profile (``_check_motion``) are below it.

``path: plan`` (``move_joints``): where the straight joint path from the measured joints
would collide, the leaf asks ``executive.reach.plan`` for a way around the body, on a
thread of its own so the tick loop (and the safety watchdog among its nodes) never waits
for it, and sends nothing until it has one. No path within ``plan_timeout`` is FAILURE
with that reason. With one, it runs the path's segments one after the other, each a
minimum-jerk move from the last waypoint paced by the speed caps (or ``speed``), as a
move is, so the joints stop briefly at each waypoint and never leave the checked lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, ClassVar

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.diagnostics import Location
from executive.language.kinds import NAME, Field, FieldType, show, timeout
from executive.language.leaf import LeafKind
from executive.language.library import limits_message
from executive.language.model import Unresolved
from executive.language.values import Val, suggest
from executive.motion.streamer import HeldError
from executive.motion.trajectory import PlanError, plan
from executive.reach import plan as paths
from executive.seam import body as bodies
from executive.seam.body import BodySpec, NoBody
from executive.seam.profile import GROUPS, RAD_TOLERANCE, RobotProfile

if TYPE_CHECKING:
    from executive.language.leaf import LeafChecker, LeafInput
    from executive.language.model import Leaf

# One default for joints and fingers alike, in the joint's units: a joint stream's
# tolerance is the profile's (``tolerance:``, ``RobotProfile.tolerance(joint)``), radians
# unless the profile says otherwise (the Atom: 0.05 rad, at most 0.5; the Adam's hands are
# counts 0..1000 with their own default and maximum). The hand_gesture kind said 0.1 until
# the kinds moved here, while the builder fell back to 0.05: the streamer drives fingers on
# the same minimum-jerk trajectories and the same servo loop as arm joints, so they settle
# as closely; and one leaf with one number is one thing for a mission author to learn. A
# gesture that cannot get there (fingers closing on an object) says so with ``tolerance``.
DEFAULT_TOLERANCE = RAD_TOLERANCE.default

_DURATION = Field(
    "duration",
    FieldType.NUMBER,
    "Seconds the move takes (all joints arrive together); refused if a joint could exceed its "
    "speed cap from where it may start (pace a joint's first move with speed instead).",
    gt=0.0,
    le=600.0,
)
_SPEED = Field(
    "speed",
    FieldType.NUMBER,
    "Peak joint speed in rad/s; at most the speed cap of every joint moved. Without duration "
    "or speed, the joints' caps set the pace.",
    gt=0.0,
)
_SELECT = Field(
    "select",
    FieldType.SELECTION,
    "Move only these of the target's joints: joint names, joint sets (left_arm, right_hand...) "
    "or groups (arms, head, hands...).",
)
PATH = Field(
    "path",
    FieldType.CHOICE,
    "straight (default): the straight joint path, which validation refuses where it collides; "
    "plan: where the straight path collides, a path planned around the body on the robot's "
    "model (OMPL RRT-Connect), run segment by segment at the speed caps or speed.",
    default="straight",
    choices=("straight", "plan"),
    refs=False,
)
PLAN_TIMEOUT = Field(
    "plan_timeout",
    FieldType.NUMBER,
    f"With path: plan, seconds the planner may search before the leaf fails without moving "
    f"(default {paths.PLAN_TIMEOUT:g}).",
    default=paths.PLAN_TIMEOUT,
    gt=0.0,
    le=60.0,
)
GRACE = 1.0  # s past plan_timeout at which a planner that has not answered is given up on
# One planner thread for every move_joints: a plan takes tens of ms, which the tick loop
# (20 ms a tick) must not wait for; each thread keeps its own body (not thread-safe).
_PLANNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="path-planner")


def _plan_on_thread(
    profile: RobotProfile,
    scene: bodies.Scene,
    start: Mapping[str, float],
    goal: Mapping[str, float],
    budget: float,
) -> paths.Path:
    """On the planner thread: the path from the measured ``start`` to ``goal``."""
    return paths.plan(paths.body_for(profile, scene), profile, start, goal, budget=budget)


# The range is the moved joints' stream's (checked in _check_motion, not here: a field has
# one range, a robot's streams have units of their own).
_TOLERANCE = Field(
    "tolerance",
    FieldType.NUMBER,
    "Largest error at which a joint counts as arrived, in the joint's units (rad: default "
    f"{DEFAULT_TOLERANCE:g}, at most {RAD_TOLERANCE.max:g}; a stream in other units, the "
    "Adam's hands in counts, has its default and maximum in the robot profile's tolerance:). "
    "For fingers too: they track their trajectories as closely as arm joints; give more for "
    "fingers that close on an object.",
    default=DEFAULT_TOLERANCE,
    gt=0.0,
)


def _build(leaf: Leaf) -> MoveJoints:
    a = leaf.args
    if a.get("path") == "plan":
        paths.warm()
    return MoveJoints(
        dict(a["targets"]),
        name=leaf.name,
        duration=a.get("duration"),
        speed=a.get("speed"),
        tolerance=None if a.get("tolerance") is None else float(a["tolerance"]),
        timeout=float(a["timeout"]),
        path=str(a.get("path", "straight")),
        plan_timeout=float(a.get("plan_timeout", paths.PLAN_TIMEOUT)),
        scene=a.get("scene", bodies.EMPTY_SCENE),
    )


class MoveJoints(RobotLeaf):
    """Move joints to ``targets`` on a minimum-jerk trajectory from the measured position.

    Succeeds when the trajectory has finished and every joint is measured within
    ``tolerance`` (None: each joint's stream's default, in its units); fails on timeout naming the worst joint. Preempted (or timed out),
    it holds its joints at their measured positions.

    Reads the snapshot's joint positions.
    """

    kinds: ClassVar[tuple[LeafKind, ...]] = (
        LeafKind(
            name="move_joints",
            doc="Moves joints to a named pose or to inline targets on a smooth trajectory, "
            "and waits until they arrive.",
            fields=(
                NAME,
                Field("pose", FieldType.POSE, "A pose from missions/poses/."),
                Field("joints", FieldType.JOINT_TARGETS, "Inline targets: joint name -> rad."),
                _SELECT,
                _DURATION,
                _SPEED,
                _TOLERANCE,
                PATH,
                PLAN_TIMEOUT,
                timeout("the joints to arrive"),
            ),
            one_of=("pose", "joints"),
            exclusive=("duration", "speed"),
            waits=True,
            args=(
                "targets",
                "pose",
                "duration",
                "speed",
                "tolerance",
                "timeout",
                "path",
                "plan_timeout",
                "scene",
            ),
            requires="joints",
            moves_joints=True,
            check=lambda checker, inp: _check_motion(checker, inp, fingers=False),
            build=_build,
            label=lambda a: (
                f"Move to pose {show(a['pose'])}" if a.get("pose") is not None else "Move joints"
            ),
        ),
        LeafKind(
            name="hand_gesture",
            doc="Moves the fingers to a named gesture or to inline finger targets, and waits "
            "until they arrive.",
            fields=(
                NAME,
                Field("gesture", FieldType.GESTURE, "A gesture from missions/gestures/."),
                Field(
                    "fingers",
                    FieldType.JOINT_TARGETS,
                    "Inline targets: finger joint (right_index, left_thumb_rotate...) -> rad.",
                ),
                _SELECT,
                _DURATION,
                _SPEED,
                _TOLERANCE,
                timeout("the fingers to arrive"),
            ),
            one_of=("gesture", "fingers"),
            exclusive=("duration", "speed"),
            waits=True,
            args=("targets", "gesture", "duration", "speed", "tolerance", "timeout"),
            requires="hands",
            moves_joints=True,
            check=lambda checker, inp: _check_motion(checker, inp, fingers=True),
            build=_build,
            label=lambda a: (
                f"Gesture {show(a['gesture'])}" if a.get("gesture") is not None else "Move fingers"
            ),
        ),
    )

    def __init__(
        self,
        targets: Mapping[str, float],
        *,
        name: str = "Move Joints",
        duration: float | None = None,
        speed: float | None = None,
        tolerance: float | None = DEFAULT_TOLERANCE,
        timeout: float = 10.0,
        path: str = "straight",
        plan_timeout: float = paths.PLAN_TIMEOUT,
        scene: bodies.Scene = bodies.EMPTY_SCENE,
    ) -> None:
        super().__init__(name, timeout)
        self.targets = dict(targets)
        self.duration = duration
        self.speed = speed
        self.tolerance = tolerance
        self.path = path
        self.plan_timeout = plan_timeout
        self.scene = scene
        self.planned: tuple[float, float] | None = None  # (start, duration) of this run's move
        self.waypoints: list[dict[str, float]] = []  # a planned path's segments still to run
        self._planning: Future[paths.Path] | None = None
        self._planning_since = 0.0
        self._sent: dict[str, float] | None = None  # the targets of the move sent last

    def measured(self) -> dict[str, float]:
        """Measured positions of this leaf's joints from the blackboard snapshot."""
        return self.robot.positions(self.targets)

    def start(self) -> None:
        self.planned = None
        self.waypoints = []
        self._planning = None
        self._sent = None
        if self.path == "plan":
            self.plan_path(self.targets)
            return
        self.move_to(self.targets, self.measured(), self.duration)

    def plan_path(self, goal: Mapping[str, float]) -> None:
        """Ask the planner thread for the path to ``goal`` from the measured joints (all
        of them: the others hold the body where it is); nothing is sent until it answers."""
        measured = self.robot.positions(self.ctx.profile.joints)
        missing = [j for j in goal if j not in measured]
        if missing:
            self.fail("no_state", f"no measured position for {', '.join(missing)}")
            return
        self.feedback_message = "planning a path around the body"
        self._planning_since = self.ctx.clock()
        self._planning = _PLANNER.submit(
            _plan_on_thread, self.ctx.profile, self.scene, measured, dict(goal), self.plan_timeout
        )

    def follow(self, path: paths.Path) -> Status:
        """Run ``path`` (its first segment now, the rest as each ends), or fail with why
        there is none; nothing has been sent before this."""
        if not path.ok:
            return self.fail("no_path", f"no path to the targets: {path.problem}")
        self.waypoints = [dict(wp) for wp in path.waypoints]
        if path.planned:
            self.feedback_message = (
                f"around the body: {len(self.waypoints)} segments "
                f"(planned in {path.seconds * 1000:.0f} ms)"
            )
        first = self.waypoints.pop(0)
        self.move_to(first, self.robot.positions(first), None)
        return Status.FAILURE if self.failure is not None else Status.RUNNING

    def _planned(self) -> Status | None:
        """While planning: RUNNING, or FAILURE once the planner is past its time; after
        it answers, what following the path gives; None: not planning."""
        planning = self._planning
        if planning is None:
            return None
        if not planning.done():
            if self.ctx.clock() - self._planning_since > self.plan_timeout + GRACE:
                planning.cancel()
                self._planning = None
                return self.fail(
                    "no_path", f"no path around the body within {self.plan_timeout:g} s"
                )
            return Status.RUNNING
        self._planning = None
        try:
            path = planning.result()
        except Exception as e:  # noqa: BLE001 - the planner's own failure: said, not raised into the tick
            return self.fail("planner_error", f"the planner failed: {type(e).__name__}: {e}")
        return self.follow(path)

    def move_to(
        self, targets: Mapping[str, float], start: Mapping[str, float], duration: float | None
    ) -> None:
        """Plan the minimum-jerk move to ``targets`` from ``start`` and hand it to the
        streamer; a move that must not run is this leaf's failure."""
        try:
            trajectories = plan(
                self.ctx.profile,
                targets,
                start,
                self.ctx.clock(),
                duration=duration,
                speed=self.speed,
            )
            self.ctx.motion.submit(trajectories)
            self._sent = dict(targets)
            if trajectories:
                self.planned = (
                    min(t.t0 for t in trajectories),
                    max(t.duration for t in trajectories),
                )
        except PlanError as e:
            self.fail("plan_error", str(e))
        except HeldError as e:
            self.fail("held", str(e))
        except ValueError as e:
            self.fail("no_state", str(e))

    def errors(self) -> dict[str, float]:
        measured = self.measured()
        return {
            n: abs(measured[n] - q) if n in measured else float("inf")
            for n, q in self.targets.items()
        }

    def tolerance_of(self, joint: str) -> float:
        """How close ``joint`` must come, in its units: the leaf's, else its stream's."""
        if self.tolerance is not None:
            return self.tolerance
        return self.ctx.profile.tolerance(joint).default

    def poll(self) -> Status:
        planning = self._planned()
        if planning is not None:
            return planning
        if self.ctx.motion.active(self.targets):
            return Status.RUNNING
        if self.next_segment():
            return Status.FAILURE if self.failure is not None else Status.RUNNING
        if all(e <= self.tolerance_of(n) for n, e in self.errors().items()):
            return Status.SUCCESS
        return Status.RUNNING

    def next_segment(self) -> bool:
        """Start a planned path's next segment, from where the last one was sent (the
        streamer holds that waypoint: no jump, and the line checked); False: none left."""
        if not self.waypoints:
            return False
        wp = self.waypoints.pop(0)
        self.move_to(wp, self._sent if self._sent is not None else self.robot.positions(wp), None)
        return True

    def progress(self) -> tuple[float | None, float | None]:
        """The planned trajectory's share gone by and the time until it ends (after it:
        1.0 and 0 s while the joints settle within tolerance; the timeout still applies)."""
        if self._planning is not None:
            return 0.0, None
        if self.planned is None or self.waypoints:
            return super().progress()
        t0, duration = self.planned
        gone = self.ctx.clock() - t0
        if duration <= 0.0 or gone >= duration:
            return 1.0, 0.0
        return max(0.0, gone / duration), duration - gone

    def timeout_message(self) -> str:
        if self._planning is not None:
            return f"the planner gave no answer within {self.timeout} s"
        worst, err = max(self.errors().items(), key=lambda kv: kv[1])
        unit = self.ctx.profile.tolerance(worst).unit if worst in self.ctx.profile.joints else "rad"
        return (
            f"{worst} is {err:.3f} {unit} from its target after {self.timeout} s "
            f"(tolerance {self.tolerance_of(worst)})"
        )

    def abort(self) -> None:
        if self._planning is not None:  # nothing was sent: the answer is dropped
            self._planning.cancel()
            self._planning = None
            return
        self.waypoints = []  # a planned path's other segments are not run
        self.ctx.motion.hold_joints(self.measured())


# --- checks of move_joints and hand_gesture against the robot profile ---------------------
# Joints exist and targets sit inside their limits, gestures move fingers only, a selection
# keeps something, an explicit speed is within every moved joint's cap, a timeout is not
# shorter than the move it waits for. Pacing across moves is executive.mission.pacing's.


def _check_motion(checker: LeafChecker, inp: LeafInput, *, fingers: bool) -> dict[str, Any] | None:
    named, inline = ("gesture", "fingers") if fingers else ("pose", "joints")
    if (named in inp.vals) == (inline in inp.vals):  # reported by the field checks
        return None
    ok = True
    targets: dict[str, Any] | Unresolved | None
    if named in inp.vals:
        targets = _named(checker, inp.vals[named], fingers)
    else:
        targets = _inline(checker, inp, inline, fingers)
    if targets is None:
        return None
    if "select" in inp.vals and not isinstance(targets, Unresolved):
        targets = _select(checker, inp, targets, named)
        if targets is None:
            return None
    if not isinstance(targets, Unresolved):
        ok = _speed(checker, inp, targets) and ok
    ok = _timeout_covers_duration(checker, inp) and ok
    tol_ok, tolerance = _tolerance(checker, inp, targets)
    if not fingers:
        ok = _path(checker, inp) and ok
    if not (ok and tol_ok):
        return None
    args = {
        "targets": targets if isinstance(targets, Unresolved) else dict(targets),
        named: inp.vals[named].value if named in inp.vals else None,
        "duration": inp.value("duration"),
        "speed": inp.value("speed"),
        "tolerance": tolerance,
        "timeout": inp.value("timeout"),
    }
    if not fingers:
        args["path"] = inp.value("path")
        args["plan_timeout"] = inp.value("plan_timeout")
        args["scene"] = bodies.EMPTY_SCENE  # the mission's (executive.mission.compile sets it)
    return args


def _path(checker: LeafChecker, inp: LeafInput) -> bool:
    """``path: plan`` needs the robot's body model, and a pace the plan can keep: the
    speed caps or ``speed`` (a planned path's length is known only once it is planned)."""
    if inp.value("path") != "plan":
        return True
    where = inp.vals["path"].where
    spec = checker.profile.body
    if not isinstance(spec, BodySpec):
        why = f": {spec.why}" if isinstance(spec, NoBody) else " (no body: key)"
        checker.error(
            where,
            f"{inp.path}.path",
            f"path: plan needs the robot's body model; profile {checker.profile.name!r} "
            f"has none{why}",
        )
        return False
    if "duration" in inp.vals:
        checker.error(
            inp.vals["duration"].where,
            f"{inp.path}.duration",
            "a planned path is paced by speed or the speed caps, not a duration: its length "
            "is known only once it is planned",
        )
        return False
    return True


def _named(checker: LeafChecker, val: Val, fingers: bool) -> dict[str, Any] | Unresolved | None:
    if isinstance(val.value, Unresolved):
        return val.value
    library = checker.library
    table = library.gestures if fingers else library.poses
    if val.value in library.broken or val.value not in table:
        return None  # reported with the library (or by the field check)
    return dict(table[val.value].joints)


def _inline(
    checker: LeafChecker, inp: LeafInput, field: str, fingers: bool
) -> dict[str, Any] | None:
    joints = checker.profile.joints
    targets: dict[str, Any] = {}
    ok = True
    items: Mapping[str, tuple[Location, Val]] = inp.vals[field].value
    for name, (key_where, val) in items.items():
        path = f"{inp.path}.{field}.{name}"
        joint = joints.get(name)
        if joint is None:
            checker.error(key_where, path, f"unknown joint{suggest(name, joints, 'joints')}")
            ok = False
            continue
        if fingers and joint.group != "hands":
            checker.error(
                key_where,
                path,
                f"{name} is not a finger joint: hand_gesture moves hand joints "
                "(right_index, left_thumb_rotate...); use move_joints",
            )
            ok = False
            continue
        q = val.value
        if not isinstance(q, Unresolved) and not joint.within(q):
            checker.error(
                val.where, path, limits_message(name, q, joint.lower, joint.upper) + val.note
            )
            ok = False
            continue
        targets[name] = q
    return targets if ok else None


def _select(
    checker: LeafChecker, inp: LeafInput, targets: Mapping[str, Any], named: str
) -> dict[str, Any] | None:
    profile = checker.profile
    chosen: set[str] = set()
    ok = True
    known = [*profile.joint_sets, *GROUPS, "all"]
    for i, item in enumerate(inp.vals["select"].value):
        try:
            chosen.update(profile.expand([item.value]))
        except KeyError:
            checker.error(
                item.where,
                f"{inp.path}.select[{i}]",
                f"unknown joint, joint set or group {item.value!r}"
                + suggest(item.value, [*known, *profile.joints], "names"),
            )
            ok = False
    if not ok:
        return None
    kept = {n: q for n, q in targets.items() if n in chosen}
    if not kept:
        what = f"{named} {inp.vals[named].value!r}" if named in inp.vals else "the targets"
        checker.error(
            inp.vals["select"].where,
            f"{inp.path}.select",
            f"selects none of the joints of {what} ({', '.join(targets)})",
        )
        return None
    return kept


def _speed(checker: LeafChecker, inp: LeafInput, targets: Mapping[str, Any]) -> bool:
    speed = inp.value("speed")
    if speed is None or isinstance(speed, Unresolved):
        return True
    joints = [checker.profile.joints[n] for n in targets]
    slowest = min(joints, key=lambda j: j.max_velocity)
    if speed > slowest.max_velocity:
        val = inp.vals["speed"]
        checker.error(
            val.where,
            f"{inp.path}.speed",
            f"{speed:g} rad/s is above the speed cap of {slowest.name} "
            f"({slowest.max_velocity:g} rad/s in the robot profile){val.note}",
        )
        return False
    return True


def _tolerance(
    checker: LeafChecker, inp: LeafInput, targets: Mapping[str, Any] | Unresolved
) -> tuple[bool, Any]:
    """The move's tolerance, in the units of the joints it moves: the one given, checked
    against their stream's maximum, else their stream's default (None: joints of streams
    in different units, each arriving within its own default)."""
    profile = checker.profile
    specs = None if isinstance(targets, Unresolved) else {profile.tolerance(n) for n in targets}
    if "tolerance" not in inp.vals:
        if specs is None:  # known at start, when the targets are
            return True, None if profile.tolerances else DEFAULT_TOLERANCE
        return True, specs.pop().default if len(specs) == 1 else None
    val = inp.vals["tolerance"]
    if isinstance(val.value, Unresolved) or specs is None:
        return True, val.value
    if len(specs) > 1:
        units = ", ".join(sorted({s.unit for s in specs}))
        checker.error(
            val.where,
            f"{inp.path}.tolerance",
            f"one tolerance for joints in different units ({units}): leave it out (each "
            f"joint arrives within its stream's default) or move them in separate leaves"
            f"{val.note}",
        )
        return False, None
    spec = specs.pop()
    if val.value > spec.max:
        unit = "" if spec.unit == RAD_TOLERANCE.unit else f" {spec.unit} (the robot profile's)"
        checker.error(
            val.where,
            f"{inp.path}.tolerance",
            f"must be <= {spec.max:g}{unit}, got {val.value:g}{val.note}",
        )
        return False, None
    return True, val.value


def _timeout_covers_duration(checker: LeafChecker, inp: LeafInput) -> bool:
    duration, limit = inp.value("duration"), inp.value("timeout")
    if not isinstance(duration, float) or not isinstance(limit, float):
        return True
    if limit < duration:
        val = inp.vals["timeout"]
        checker.error(
            val.where,
            f"{inp.path}.timeout",
            f"{limit:g} s is shorter than the move's duration ({duration:g} s): it would "
            f"always time out{val.note}",
        )
        return False
    return True
