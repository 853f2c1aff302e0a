"""Whether a mission's poses and moves keep the body whole and go where they say.

Joint values with limits say nothing about where the body goes: a pose mirrored at the
elbow passes every numeric check and holds the forearm below level on the robot. With
the vendor's model (the profile's ``body:``, ``executive.seam.body``) this check runs
the mission's moves through forward kinematics, in the order the tree runs them:

- every move is sampled along its path, from where the steps before it leave the
  joints to its targets, as the planner runs it (minimum-jerk moves are straight lines in
  joint space), no joint more than 0.05 rad between samples;
- at every sample, two links that are not neighbours may not come closer than the
  profile's margin (the model's collision boxes), and no link may enter a box of the
  scene nor a named point (a hand) a box or below a plane of it. The scene is the
  profile's (the floor) plus the mission's ``scene:`` (a table, a shelf);
- where a move arrives at a pose that declares an ``intent`` (a point of the body and
  where it should be), taking every joint of the pose, the point must be within the
  intent's distance (a move that selects some of its joints claims nothing of the kind).

A problem is reported at the move (file:line of the leaf) naming the pose, where it is
defined, the two links and their distance, and how far along the move it happens; a
missed intent at the pose's intent (its file:line) naming both positions.

A move that says ``path: plan`` and whose straight path collides is planned here, once
(``executive.reach.plan``: OMPL's RRT-Connect over this same check, seeded, so the same
file gives the same path), from the nominal start: a path found is said beside the
diagnostics (``check`` returns one line per planned move: how many segments, how long
at its pace; a warning when that is longer than its timeout); none within the leaf's
``plan_timeout`` is an error. At run time the leaf plans again from the measured
joints. A colliding move without ``path: plan`` is refused as before, with that hint.

Where joints are before anything sets them: the body's ``rest`` (the profile's); after
``set_fsm`` or ``release_control`` likewise, since the firmware or another controller
may have moved them. The walk is nominal: a sequence runs its children in turn from
where the one before arrived; each child of a parallel or a fallback starts from the
same entry (a parallel's children move different joints, and its children's targets
are combined); the body of a ``repeat``/``retry`` runs twice, so the move from its last
pose back to its first is checked too. Pacing (``pacing.py``) keeps the worst-case
bounds for durations; this keeps the nominal path for the body, which is what the robot
runs when nothing goes wrong, and what an author reviews.

A robot without a model we may ship (the PND Adam) is said once, as a warning, and not
checked.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from executive.language.diagnostics import Diagnostics, Location
from executive.language.library import Library, Target
from executive.language.model import Composite, Decorator, Guard, Leaf, Node, Subtree
from executive.mission.pacing import FORGETS
from executive.mission.tree_checks import MOTION
from executive.motion.trajectory import required_duration
from executive.reach import plan as planning
from executive.seam import body as bodies
from executive.seam.profile import RobotProfile

STEP = 0.05  # rad: the largest joint change between two samples of a path

State = dict[str, float]  # joint -> nominal position; a joint not in it is at rest


def check(
    root: Node,
    where: Location,
    profile: RobotProfile,
    library: Library,
    scene: bodies.Scene,
    diags: Diagnostics,
) -> list[str]:
    """Report every move of the mission that collides or leaves its pose's intent; the
    moves planned around the body (``path: plan``), one line each."""
    moves = [n for n in _leaves(root) if n.kind in MOTION]
    if not moves:
        return []
    spec = profile.body
    if isinstance(spec, bodies.NoBody):
        diags.warning(where, "", f"poses and moves not checked against the body: {spec.why}")
        return []
    if spec is None:
        return []
    try:
        compiled = _body(profile, scene)
    except bodies.BodyError as e:
        diags.error(where, "", f"the profile's body cannot be loaded: {e}")
        return []
    walk = _Walk(compiled, profile, library, diags)
    walk.node(root, {})
    return list(dict.fromkeys(walk.planned))


_cache = threading.local()  # a Body is not thread-safe: one per thread, per profile and scene


Hit = tuple[int, int, bodies.Contact]  # a path's first colliding sample, of how many, where


@dataclass
class _Compiled:
    """A body compiled for one profile and scene, and what each path of it gave (the
    same move recurs across a directory's missions: a hundred files sample each distinct
    path once)."""

    body: bodies.Body
    paths: dict[Any, Hit | None] = field(default_factory=dict)
    plans: dict[Any, planning.Path] = field(default_factory=dict)  # path: plan's, and budget


def _body(profile: RobotProfile, scene: bodies.Scene) -> _Compiled:
    """The profile's body with ``scene``, compiled once per thread (a few ms each)."""
    cache: dict[tuple[int, bodies.Scene], _Compiled] = getattr(_cache, "bodies", None) or {}
    _cache.bodies = cache
    key = (id(profile.body), scene)
    found = cache.get(key)
    if found is None or found.body.spec is not profile.body or len(found.paths) > 4096:
        if len(cache) > 16:
            cache.clear()
        found = cache[key] = _Compiled(bodies.load(profile, scene))
    return found


def _leaves(node: Node) -> list[Leaf]:
    if isinstance(node, Leaf):
        return [node]
    return [leaf for child in node.children() for leaf in _leaves(child)]


class _Walk:
    def __init__(
        self, compiled: _Compiled, profile: RobotProfile, library: Library, diags: Diagnostics
    ) -> None:
        self.body = compiled.body
        self.paths = compiled.paths
        self.plans = compiled.plans
        self.planned: list[str] = []
        self.profile = profile
        self.library = library
        self.diags = diags

    def node(self, node: Node, entry: State) -> State:
        if isinstance(node, Leaf):
            return self.leaf(node, entry)
        if isinstance(node, Subtree):
            return self.node(node.root, entry)
        if isinstance(node, Guard):
            return self.node(node.child, entry)
        if isinstance(node, Decorator):
            out = self.node(node.child, entry)
            if node.kind in ("repeat", "retry"):
                out = self.node(node.child, out)  # the way back to the first pose
            return out
        if isinstance(node, Composite):
            if node.kind == "sequence":
                here = entry
                for child in node.nodes:
                    here = self.node(child, here)
                return here
            outs = [self.node(child, entry) for child in node.nodes]
            if node.kind == "fallback":
                return outs[0] if outs else entry
            merged = dict(entry)
            for out in outs:
                merged.update({j: q for j, q in out.items() if entry.get(j) != q})
            return merged
        return entry

    def leaf(self, leaf: Leaf, entry: State) -> State:
        if leaf.kind in FORGETS:
            return {}
        if leaf.kind not in MOTION:
            return entry
        targets = leaf.args.get("targets")
        solved = leaf.args.get("joints")
        if not isinstance(targets, Mapping) and isinstance(solved, tuple):
            # a reach checks its own path when it runs (behaviours/actions/reach.py); after
            # it, its joints are where the solver put them: nominally at rest here
            return {j: q for j, q in entry.items() if j not in solved}
        if not isinstance(targets, Mapping):
            return entry
        moved = {j: float(q) for j, q in targets.items() if j in self.body.qpos_of}
        if not moved:
            return entry
        pose_name = leaf.args.get("pose")
        pose = self.library.poses.get(pose_name) if isinstance(pose_name, str) else None
        self.move(leaf, entry, moved, pose)
        out = {**entry, **moved}
        # a pose's intent says where the whole pose puts a point: a move that takes only
        # some of its joints (``select``) does not claim to arrive there
        if pose is not None and pose.intent and set(pose.joints) <= set(targets):
            self.intents(leaf, pose, out)
        return out

    def move(self, leaf: Leaf, entry: State, moved: State, pose: Target | None) -> None:
        body = self.body
        key = (tuple(sorted(entry.items())), tuple(sorted(moved.items())))
        if key not in self.paths:
            self.paths[key] = self._first_hit(entry, moved)
        found = self.paths[key]
        if found is None:
            return
        if leaf.args.get("path") == "plan":
            self.plan(leaf, key, entry, moved, found)
            return
        k, n, worst = found
        along = "at the pose" if k == n else f"{100 * k / n:.0f}% of the way there"
        target = (
            f"pose {pose.name!r} ({pose.where.file}:{pose.where.line})"
            if pose is not None
            else "its joints"
        )
        kind = "hits the scene" if worst.b in body.scene.names else "collides with itself"
        self.diags.error(
            leaf.spots.get("pose", leaf.where),
            f"{leaf.path}",
            f"the move to {target} {kind}: {worst.describe()} {along} "
            f"(margin {body.spec.margin * 1000:.0f} mm; from {self._origin(entry, moved)})"
            + (
                "; add `path: plan` to plan a way around the body"
                if leaf.kind == "move_joints"
                else ""
            ),
        )

    def plan(self, leaf: Leaf, key: Any, entry: State, moved: State, hit: Hit) -> None:
        """A colliding move with ``path: plan``: planned once per start and goal; said."""
        given = leaf.args.get("plan_timeout")  # a parameter not given yet: the default
        budget = given if isinstance(given, float) else planning.PLAN_TIMEOUT
        if (key, budget) not in self.plans:
            self.plans[key, budget] = planning.plan(
                self.body, self.profile, entry, moved, budget=budget
            )
        path = self.plans[key, budget]
        k, n, worst = hit
        along = "at the target" if k == n else f"{100 * k / n:.0f}% of the way there"
        straight = f"its straight path collides ({worst.describe()} {along})"
        where = leaf.spots.get("path", leaf.where)
        if not path.ok:
            self.diags.error(where, f"{leaf.path}.path", f"{straight}, and {path.problem}")
            return
        start = {j: entry.get(j, self._rest(j)) for j in moved}
        speed = leaf.args.get("speed")
        seconds = duration(self.profile, path, start, speed if isinstance(speed, float) else None)
        said = (
            f"{where}: {leaf.path}.path: needs a plan: {straight}; planned around the body in "
            f"{len(path.waypoints)} segments, {seconds:.1f} s at its pace "
            f"(from {self._origin(entry, moved)})"
        )
        self.planned.append(said)
        limit = leaf.args.get("timeout")
        if isinstance(limit, float) and seconds > limit:
            self.diags.warning(
                where,
                f"{leaf.path}.timeout",
                f"the path planned around the body takes {seconds:.1f} s at its pace, longer "
                f"than the timeout ({limit:g} s)",
            )

    def _first_hit(self, entry: State, moved: State) -> Hit | None:
        """The first sample of the path that collides: (its number, of how many, the
        closest pair there); None for a clear path. Only pairs with a link the move moves
        are measured: the others keep their distance."""
        body = self.body
        start = {j: entry.get(j, self._rest(j)) for j in moved}
        changing = body.moved_by(j for j in moved if moved[j] != start[j])
        if not changing:
            return None
        samples = bodies.path_samples(start, moved, STEP)
        for k, sample in enumerate(samples, 1):
            body.pose({**entry, **sample})
            hits = body.collisions(only=changing) + body.scene_hits(only=changing)
            if hits:
                return k, len(samples), min(hits, key=lambda c: c.distance)
        return None

    def intents(self, leaf: Leaf, pose: Target, state: State) -> None:
        self.body.pose(state)
        for intent in pose.intent.values():
            got = self.body.point(intent.point)
            axes = [i for i, v in enumerate(intent.at) if v is not None]
            want = np.array([v if v is not None else np.nan for v in intent.at])
            miss = float(np.linalg.norm(got[axes] - want[axes]))
            if miss <= intent.within:
                continue
            self.diags.error(
                intent.where,
                f"poses.{pose.name}.intent.{intent.point}",
                f"{intent.point} is at {_xyz(got)} m, {miss * 1000:.0f} mm from its intent "
                f"{_xyz(want)} m (within {intent.within * 1000:.0f} mm), "
                f"reached by {leaf.name!r} ({leaf.where.file}:{leaf.where.line})",
            )

    def _rest(self, joint: str) -> float:
        return float(self.body.rest[self.body.qpos_of[joint]])

    def _origin(self, entry: State, moved: State) -> str:
        known = [j for j in moved if j in entry]
        if not known:
            return "the body's rest pose (nothing before this move sets its joints)"
        return "where the steps before it leave the joints"


def duration(
    profile: RobotProfile,
    path: planning.Path,
    start: State,
    speed: float | None = None,
) -> float:
    """Seconds a planned path takes, segment by segment at the speed caps (and ``speed``),
    each segment a move from the last waypoint as the leaf runs it."""
    total, here = 0.0, {j: start[j] for j in path.goal}
    for wp in path.waypoints:
        need, _ = required_duration(profile, wp, here, speed=speed)
        total, here = total + need, dict(wp)
    return total


def _xyz(p: np.typing.NDArray[np.float64]) -> str:
    return "(" + ", ".join("any" if np.isnan(v) else f"{v:+.3f}" for v in p) + ")"
