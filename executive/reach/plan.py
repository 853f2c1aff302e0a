"""Paths around the body: a joint path that keeps clear where the straight one collides.

A move runs a straight line in joint space (minimum-jerk, every joint on the same time
law), and validation refuses one whose line brings two links closer than the profile's
margin (``clearance.first_hit``): the right forearm swept through the torso on its way
across. ``path: plan`` asks for a way around instead. The path comes from OMPL (the
field's sampling-based planners): RRT-Connect in the space of the joints the move moves,
bounded by the profile's joint limits (tighter than the URDF's), every other joint where
the move starts, then OMPL's path simplifier. A state is valid when the body's own check
passes there, the one validation and the simulator use (``Body.collisions`` and
``Body.scene_hits`` on the links those joints move), with ``BUFFER`` more than the
margin (the margin alone near a start or goal that is closer: a way out of it); OMPL checks each edge every ``STEP`` rad (its resolution, Euclidean, so no joint
moves farther between two checks).
The simplified path is then checked again segment by segment with ``first_hit``, exactly
as validation checks a move, so a planned path is one validation would accept move by
move, and each segment runs as a move does (the leaf paces them by the speed caps).

Deterministic: OMPL's random numbers are seeded (``SEED``) before every plan, under a
lock (OMPL seeds each generator from one process-wide sequence when it is made), so the
same start and goal give the same waypoints, in validation and at run time alike. A plan
has a time budget: one not found within it is no path (``Path.problem`` says so); the lock
is part of the budget. The planner calls the check from its own C++ loop, and Python
switches threads between checks as between any lines: a caller that must not stall (the
tick) plans on another thread, and is not held up by it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from executive.reach import clearance
from executive.seam.body import EMPTY_SCENE, Body, Scene, load
from executive.seam.profile import RobotProfile

PLAN_TIMEOUT = 2.0  # s: a plan's default budget (RRT-Connect finds an arm's way in ~0.1 s)
STEP = 0.05  # rad: the most any joint moves between two checks (validation's sampling)
# m beyond the margin the planner keeps (its start and goal excepted): OMPL checks an edge
# at other points than validation samples it, and a path that grazed the margin at OMPL's
# points could dip under it at validation's
BUFFER = 0.005
NEAR = 0.25  # rad: around a start or goal closer than that, the margin alone (a way out)
SEED = 30  # OMPL's seed: any fixed number; the same one everywhere
DECIMALS = 4  # rad: waypoints rounded to 0.1 mrad, as solved poses are

_OMPL = threading.Lock()  # OMPL's seeding is process-wide: one plan at a time


@dataclass(frozen=True)
class Path:
    """How a move gets from its start to ``goal``: ``waypoints`` (each every joint of the
    move, the last the goal itself; the start not included). ``planned``: False when the
    straight path was clear (one waypoint, nothing planned). ``straight``: the straight
    path's first hit, when it had one. ``problem``: "" for a path, else why none."""

    goal: Mapping[str, float]
    waypoints: tuple[Mapping[str, float], ...] = ()
    planned: bool = False
    straight: clearance.Hit | None = None
    seconds: float = 0.0  # spent planning
    problem: str = ""
    states: int = field(default=0, compare=False)  # the raw plan's waypoints, before simplifying

    @property
    def ok(self) -> bool:
        return not self.problem


_local = threading.local()


def body_for(profile: RobotProfile, scene: Scene = EMPTY_SCENE) -> Body:
    """This thread's body of ``profile`` with ``scene`` (a Body is not thread-safe; built
    once, a few ms), for a thread that plans."""
    cache: dict[tuple[int, Scene], Body] = getattr(_local, "bodies", None) or {}
    _local.bodies = cache
    key = (id(profile.body), scene)
    found = cache.get(key)
    if found is None or found.spec is not profile.body:
        if len(cache) > 8:
            cache.clear()
        found = cache[key] = load(profile, scene)
    return found


def plan(
    body: Body,
    profile: RobotProfile,
    start: Mapping[str, float],
    goal: Mapping[str, float],
    *,
    budget: float = PLAN_TIMEOUT,
    seed: int = SEED,
) -> Path:
    """The path from ``start`` (every joint known; the rest at the body's rest) to
    ``goal``: straight when that is clear, else planned around the body within
    ``budget`` seconds. ``body`` is the caller's (one per thread)."""
    began = time.monotonic()
    goal = {j: float(q) for j, q in goal.items()}
    hit = clearance.first_hit(body, start, goal)
    if hit is None:
        return Path(goal, (goal,))
    joints = tuple(goal)
    here = {j: float(start.get(j, body.rest[body.qpos_of[j]])) for j in joints}
    moving = body.moved_by(joints)
    base = body.qpos(start)
    adr = np.array([body.qpos_of[j] for j in joints], dtype=np.intp)

    def contact(values: Any, margin: float | None = None) -> bool:
        q = base.copy()
        q[adr] = values
        body.set_qpos(q)
        return bool(body.collisions(margin, only=moving) or body.scene_hits(margin, only=moving))

    def refused(problem: str) -> Path:
        return Path(goal, straight=hit, seconds=time.monotonic() - began, problem=problem)

    for name, q in (("the start", here), ("the goal", goal)):
        if contact([q[j] for j in joints]):
            body.pose({**start, **q})
            worst = min(
                body.collisions(only=moving) + body.scene_hits(only=moving),
                key=lambda c: c.distance,
            )
            return refused(f"{name} itself is not clear: {worst.describe()}")
    if not _OMPL.acquire(timeout=budget):
        return refused(f"no path around the body within {budget:g} s (the planner was busy)")
    try:
        wide = body.spec.margin + BUFFER
        found = _search(profile, joints, here, goal, contact, wide, began + budget, seed)
    finally:
        _OMPL.release()
    if found is None:
        return refused(f"no path around the body found within {budget:g} s")
    states, waypoints = found
    entry = dict(start)
    for wp in waypoints:  # validation's own check, segment by segment
        bad = clearance.first_hit(body, entry, wp)
        if bad is not None:
            return refused(f"the planned path does not keep clear: {bad.contact.describe()}")
        entry.update(wp)
    spent = time.monotonic() - began
    return Path(goal, tuple(waypoints), True, hit, spent, "", states)


def _search(
    profile: RobotProfile,
    joints: tuple[str, ...],
    start: Mapping[str, float],
    goal: Mapping[str, float],
    contact: Any,
    wide: float,
    deadline: float,
    seed: int,
) -> tuple[int, list[dict[str, float]]] | None:
    """RRT-Connect, then the simplifier: (the raw plan's states, the waypoints after the
    start); None when nothing was found by ``deadline``. A state is valid ``wide`` of
    the body (within ``NEAR`` of the start or the goal, which may be tighter: the
    margin). Caller holds ``_OMPL``."""
    ob, og, ou = _ompl()
    ou.RNG.setSeed(seed)  # every generator made from here on starts from the seed
    space = ob.RealVectorStateSpace(len(joints))
    bounds = ob.RealVectorBounds(len(joints))
    for i, j in enumerate(joints):
        bounds.setLow(i, profile.joints[j].lower)
        bounds.setHigh(i, profile.joints[j].upper)
    space.setBounds(bounds)
    setup = og.SimpleSetup(space)
    ends = np.array([[start[j] for j in joints], [goal[j] for j in joints]])

    def valid(state: Any) -> bool:
        q = state[0 : len(joints)]
        if not contact(q, wide):
            return True
        near = float(np.min(np.max(np.abs(ends - np.asarray(q)), axis=1))) <= NEAR
        return near and not contact(q)

    setup.setStateValidityChecker(valid)
    info = setup.getSpaceInformation()
    info.setStateValidityCheckingResolution(STEP / space.getMaximumExtent())
    a, b = space.allocState(), space.allocState()
    a[0 : len(joints)] = [start[j] for j in joints]
    b[0 : len(joints)] = [goal[j] for j in joints]
    setup.setStartAndGoalStates(a, b)
    setup.setPlanner(og.RRTConnect(info))
    setup.setup()
    budget = deadline - time.monotonic()
    if budget <= 0:
        return None
    setup.solve(ob.timedPlannerTerminationCondition(budget))
    if not setup.haveExactSolutionPath():
        return None
    raw = setup.getSolutionPath().getStateCount()
    left = deadline - time.monotonic()
    if left > 0:  # what is left of the budget; a path cut short is still a valid one
        setup.simplifySolution(ob.timedPlannerTerminationCondition(left))
    states = setup.getSolutionPath().getStates()
    out = [{j: round(float(s[i]), DECIMALS) for i, j in enumerate(joints)} for s in states[1:-1]]
    out.append(dict(goal))
    return raw, out


def warm() -> None:
    """Import OMPL now (its library loads in ~40 ms, holding the interpreter): where a
    tree with a planning leaf is built, not on the planner thread while the tree ticks."""
    _ompl()


def _ompl() -> tuple[Any, Any, Any]:
    """OMPL's modules, imported where something is planned; its log silenced (its
    progress lines, and the seeding's complaint that generators exist already)."""
    import ompl.base as ob
    import ompl.geometric as og
    import ompl.util as ou

    ou.setLogLevel(ou.LogLevel.LOG_NONE)
    return ob, og, ou
