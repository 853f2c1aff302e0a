"""Tick tests of ``reach`` (behaviours/actions/reach.py): it solves before it moves; no
solution, a bad place or a colliding path fail with the reason and send nothing.

Each fault test first shows the same leaf moving with a good place, then nothing sent
with the fault (the solver runs on its own thread: the test waits for its answer, the
leaf's clock is the kit's)."""

from __future__ import annotations

import numpy as np
import pytest
from py_trees.common import Status

from behaviours import places
from behaviours.actions.reach import Reach
from executive.seam import body as bodies

from .conftest import PROFILE, Kit

ARM = tuple(PROFILE.joint_sets["right_arm"])
CUP = (0.45, -0.20, 0.10)


def reach(kit: Kit, at: object, **kw: object) -> Reach:
    leaf = Reach(point="right_hand", at=at, joints=ARM, speed=0.5, timeout=20.0, **kw)  # type: ignore[arg-type]
    return kit.setup(leaf)  # type: ignore[return-value]


def solved(kit: Kit, leaf: Reach) -> Status:
    """Tick until the solver has answered (its own thread; at most a few seconds)."""
    assert kit.tick(leaf) is Status.RUNNING and not kit.motion.submitted  # solving: nothing sent
    if leaf._solving is not None:
        leaf._solving.result(timeout=30)
    return kit.tick(leaf, 0.02)


def test_reach_solves_moves_and_succeeds_by_the_measured_hand(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0))
    leaf = reach(kit, CUP)
    assert solved(kit, leaf) is Status.RUNNING
    assert {t.topic for t in kit.motion.submitted} == {"upper"}
    targets = dict(leaf.targets)
    assert set(targets) == set(ARM)
    body = bodies.load(PROFILE)
    body.pose(targets)
    assert np.linalg.norm(body.point("right_hand") - CUP) < 0.002
    kit.motion.moving = False
    kit.robot.joints(**{j: 0.0 for j in ARM})  # not there yet: the hand is far
    assert kit.tick(leaf, 1.0) is Status.RUNNING
    kit.robot.joints(**{j: q + 0.01 for j, q in targets.items()})  # near: within 2 cm
    assert kit.tick(leaf, 1.0) is Status.SUCCESS
    assert "mm from (+0.450, -0.200, +0.100)" in leaf.feedback_message


@pytest.mark.parametrize(
    ("at", "code", "why"),
    [
        ((1.0, -0.2, 0.1), "no_solution", "out of reach"),
        ((0.0, 0.0, 0.1), "no_solution", "inside torso_link"),
        ((1e9, 0.0, 0.0), "no_solution", "out of reach"),
        ((float("nan"), 0.0, 0.1), "bad_place", "not a place"),
    ],
)
def test_no_solution_fails_with_the_reason_and_nothing_moves(
    kit: Kit, at: tuple[float, float, float], code: str, why: str
) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0))
    good = reach(kit, CUP)
    assert solved(kit, good) is Status.RUNNING and kit.motion.submitted  # it does move
    kit.motion.submitted.clear()
    kit.motion.moving = False
    leaf = reach(kit, at)
    status = kit.tick(leaf)
    if status is Status.RUNNING:
        status = solved_after(kit, leaf)
    assert status is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == code
    assert why in leaf.failure.message
    assert kit.motion.submitted == [] and kit.motion.holds == []


def solved_after(kit: Kit, leaf: Reach) -> Status:
    if leaf._solving is not None:
        leaf._solving.result(timeout=30)
    return kit.tick(leaf, 0.02)


def test_a_path_through_the_scene_fails_and_nothing_moves(kit: Kit) -> None:
    """The arm hangs at rest; a 6 cm box where the hand passes halfway up: the solution is
    clear of it, the straight path there is not."""
    rest = {"right_elbow_pitch": 1.3, "right_shoulder_roll": -0.12}
    kit.robot.joints(**{**dict.fromkeys(ARM, 0.0), **rest})
    board = bodies.Scene((bodies.Box("board", (0.345, -0.297, -0.137), (0.06, 0.06, 0.06)),))
    clear = reach(kit, (0.45, -0.20, 0.10))
    assert solved(kit, clear) is Status.RUNNING and kit.motion.submitted
    kit.motion.submitted.clear()
    kit.motion.moving = False
    leaf = reach(kit, (0.45, -0.20, 0.10), scene=board)
    assert solved(kit, leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "path_collides", leaf.failure
    assert "hits the scene: right_hand and board" in leaf.failure.message
    assert "of the way there" in leaf.failure.message
    assert kit.motion.submitted == []


def test_a_place_by_name_is_read_when_the_leaf_starts(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0))
    leaf = reach(kit, "cup")
    assert kit.tick(leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "no_place"
    assert "atom-executive set cup [x,y,z]" in leaf.failure.message
    assert kit.motion.submitted == []
    places.write("cup", CUP, "test")
    leaf = reach(kit, "cup")
    assert solved(kit, leaf) is Status.RUNNING and kit.motion.submitted
    places.clear()
    assert places.names() == []


def test_preempted_while_solving_sends_nothing(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0))
    leaf = reach(kit, CUP)
    assert kit.tick(leaf) is Status.RUNNING
    future = leaf._solving
    leaf.stop(Status.INVALID)
    leaf.stop(Status.INVALID)  # twice: still nothing
    if future is not None and not future.cancelled():
        future.result(timeout=30)
    assert kit.motion.submitted == [] and kit.motion.holds == []


def test_preempted_while_moving_holds_once(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0))
    leaf = reach(kit, CUP)
    assert solved(kit, leaf) is Status.RUNNING and kit.motion.submitted
    leaf.stop(Status.INVALID)
    leaf.stop(Status.INVALID)
    assert len(kit.motion.holds) == 1 and set(kit.motion.holds[0]) == set(ARM)


def test_timeout_says_how_far_the_hand_is(kit: Kit) -> None:
    kit.robot.joints(**dict.fromkeys(ARM, 0.0))
    leaf = reach(kit, CUP)
    assert solved(kit, leaf) is Status.RUNNING
    kit.motion.moving = False
    assert kit.tick(leaf, 25.0) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "timeout"
    assert "right_hand is" in leaf.failure.message and "mm from (+0.450" in leaf.failure.message
