"""Tick tests of ``path: plan`` (behaviours/actions/motion.py, reach.py): the leaf plans
on the planner thread from the measured joints and sends nothing until it has a path,
then runs its segments one after another, each from where the last one was sent; a plan
not found in time, or a planner that does not answer, is FAILURE with the reason and
nothing sent; preempted while planning, nothing is sent.

Each fault test first shows motion commanded (a straight move, or the same leaf with a
path), then nothing from the failing leaf. The leaf's clock is the kit's."""

from __future__ import annotations

from typing import TypeVar

import pytest
from py_trees.common import Status

from behaviours.actions.motion import GRACE, MoveJoints
from behaviours.actions.reach import Reach
from behaviours.state import snapshot
from executive.motion.trajectory import required_duration
from executive.reach import clearance
from executive.reach import plan as paths
from executive.seam import body as bodies
from tests.reach.across import ACROSS, ARM, TUCK

from .conftest import PROFILE, Kit

REST = {"right_elbow_pitch": 1.3, "right_shoulder_roll": -0.12}


L = TypeVar("L", bound=MoveJoints)


def ready(kit: Kit, leaf: L) -> L:
    kit.setup(leaf)
    return leaf


def across(kit: Kit, **kw: object) -> MoveJoints:
    return ready(kit, MoveJoints(ACROSS, path="plan", speed=1.0, timeout=30.0, **kw))  # type: ignore[arg-type]


def measured(kit: Kit) -> dict[str, float]:
    """Every measured joint, as the leaf reads them when it plans."""
    return snapshot(kit.robot.bb).positions(PROFILE.joints)


def answered(kit: Kit, leaf: MoveJoints) -> Status:
    """Tick until the planner (a reach: the solver, which plans too) has answered."""
    if leaf._planning is not None:
        leaf._planning.result(timeout=30)
    if isinstance(leaf, Reach) and leaf._solving is not None:
        leaf._solving.result(timeout=30)
    return kit.tick(leaf, 0.02)


def test_it_plans_then_runs_the_segments_one_after_another(kit: Kit) -> None:
    kit.robot.joints(**TUCK)
    leaf = across(kit)
    assert kit.tick(leaf) is Status.RUNNING
    # the plan went to the planner's thread, the tick did not wait for it (judged by what
    # the leaf holds, not by wall time: CI's neighbours once made a tick 48 ms)
    assert leaf._planning is not None
    assert kit.motion.submitted == []  # planning: nothing sent
    assert answered(kit, leaf) is Status.RUNNING
    body = bodies.load(PROFILE)
    expected = paths.plan(body, PROFILE, measured(kit), ACROSS)
    assert expected.planned and len(expected.waypoints) >= 2
    here = dict(TUCK)
    for k, wp in enumerate(expected.waypoints):
        (traj,) = kit.motion.submitted[k:]
        assert dict(zip(traj.names, traj.goal.tolist(), strict=True)) == wp
        # from where the last segment was sent: the line the plan checked
        assert dict(zip(traj.names, traj.start.tolist(), strict=True)) == pytest.approx(here)
        need, _ = required_duration(PROFILE, wp, here, speed=1.0)
        assert traj.duration == pytest.approx(need)  # paced as a move is
        assert clearance.first_hit(body, here, wp) is None
        here = dict(wp)
        kit.motion.moving = False
        kit.robot.joints(**wp)
        status = kit.tick(leaf, 1.0)
        last = k == len(expected.waypoints) - 1
        assert status is (Status.SUCCESS if last else Status.RUNNING)


def test_no_path_in_time_fails_and_nothing_moves(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0) | REST)
    straight = ready(kit, MoveJoints(TUCK, speed=1.0, timeout=10.0))
    assert kit.tick(straight) is Status.RUNNING and kit.motion.submitted  # it does move
    kit.motion.submitted.clear()
    kit.motion.moving = False
    kit.robot.joints(**TUCK)
    leaf = across(kit, plan_timeout=1e-6)
    assert kit.tick(leaf) is Status.RUNNING
    assert answered(kit, leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "no_path"
    assert leaf.failure.message == (
        "no path to the targets: no path around the body found within 1e-06 s"
    )
    assert kit.motion.submitted == [] and kit.motion.holds == []


def test_a_planner_that_does_not_answer_is_given_up_on(kit: Kit) -> None:
    """The planner thread waits on OMPL's lock (held here, as another plan would)."""
    kit.robot.joints(**TUCK)
    assert paths._OMPL.acquire(timeout=10)
    try:
        leaf = across(kit, plan_timeout=3.0)
        assert kit.tick(leaf) is Status.RUNNING
        assert kit.tick(leaf, 3.0) is Status.RUNNING  # within its budget
        assert kit.tick(leaf, GRACE + 0.1) is Status.FAILURE
    finally:
        paths._OMPL.release()
    assert leaf.failure is not None and leaf.failure.code == "no_path"
    assert leaf.failure.message == "no path around the body within 3 s"
    assert kit.motion.submitted == [] and kit.motion.holds == []


def test_preempted_while_planning_sends_nothing(kit: Kit) -> None:
    kit.robot.joints(**TUCK)
    moving = across(kit)
    assert kit.tick(moving) is Status.RUNNING
    assert answered(kit, moving) is Status.RUNNING and kit.motion.submitted  # it does move
    moving.stop(Status.INVALID)
    kit.motion.submitted.clear()
    kit.motion.holds.clear()
    leaf = across(kit)
    assert kit.tick(leaf) is Status.RUNNING
    future = leaf._planning
    leaf.stop(Status.INVALID)
    if future is not None and not future.cancelled():
        future.result(timeout=30)
    assert kit.motion.submitted == [] and kit.motion.holds == []


def test_preempted_between_segments_holds_once_and_sends_no_more(kit: Kit) -> None:
    kit.robot.joints(**TUCK)
    leaf = across(kit)
    assert kit.tick(leaf) is Status.RUNNING
    assert answered(kit, leaf) is Status.RUNNING
    assert len(kit.motion.submitted) == 1 and leaf.waypoints  # on the first segment
    leaf.stop(Status.INVALID)
    leaf.stop(Status.INVALID)
    assert len(kit.motion.holds) == 1 and set(kit.motion.holds[0]) == set(ARM)
    assert len(kit.motion.submitted) == 1 and leaf.waypoints == []  # the rest dropped


def test_a_clear_move_with_path_plan_runs_straight(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0) | REST)
    leaf = ready(kit, MoveJoints(TUCK, path="plan", speed=1.0, timeout=10.0))
    assert kit.tick(leaf) is Status.RUNNING
    assert answered(kit, leaf) is Status.RUNNING
    (traj,) = kit.motion.submitted
    assert dict(zip(traj.names, traj.goal.tolist(), strict=True)) == TUCK


BOARD = bodies.Scene((bodies.Box("board", (0.345, -0.297, -0.137), (0.06, 0.06, 0.06)),))
CUP = (0.45, -0.20, 0.10)


def test_a_reach_with_path_plan_goes_around_the_scene(kit: Kit) -> None:
    """tests/behaviours/test_reach.py's board: without path: plan the reach fails (its
    straight path hits the board); with it, the reach moves, segment by segment."""
    kit.robot.joints(**dict.fromkeys(ARM, 0.0) | REST)
    leaf = ready(
        kit, Reach(point="right_hand", at=CUP, joints=ARM, scene=BOARD, speed=0.5, timeout=30.0)
    )
    assert kit.tick(leaf) is Status.RUNNING
    assert answered(kit, leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "path_collides"
    assert leaf.failure.message.endswith("(path: plan plans around it)")
    assert kit.motion.submitted == []
    leaf = ready(
        kit,
        Reach(
            point="right_hand",
            at=CUP,
            joints=ARM,
            scene=BOARD,
            speed=0.5,
            timeout=30.0,
            path="plan",
        ),
    )
    assert kit.tick(leaf) is Status.RUNNING and kit.motion.submitted == []
    assert answered(kit, leaf) is Status.RUNNING
    assert len(kit.motion.submitted) == 1 and leaf.waypoints  # the first of several
    body = bodies.load(PROFILE, BOARD)
    here = measured(kit)
    while True:
        (traj,) = kit.motion.submitted[-1:]
        wp = dict(zip(traj.names, traj.goal.tolist(), strict=True))
        assert clearance.first_hit(body, here, wp) is None
        here = {**here, **wp}
        kit.motion.moving = False
        kit.robot.joints(**wp)
        if kit.tick(leaf, 1.0) is Status.SUCCESS:
            break
    assert wp == dict(leaf.targets)
