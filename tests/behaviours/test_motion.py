"""Tick tests: moving joints and fingers, completion, timeout, preemption."""

from __future__ import annotations

import pytest
from py_trees.common import Status

from behaviours.actions.motion import MoveJoints
from executive.motion.streamer import HeldError

from .conftest import PROFILE, Kit


def test_move_plans_from_measured_and_succeeds_in_tolerance(kit: Kit) -> None:
    kit.robot.joints(left_elbow_pitch=0.2, head_yaw=0.0)
    leaf = kit.setup(
        MoveJoints({"left_elbow_pitch": 1.0, "head_yaw": 0.3}, speed=1.0, tolerance=0.02)
    )
    assert kit.tick(leaf) is Status.RUNNING
    (traj,) = kit.motion.submitted
    assert traj.topic == "upper" and traj.start.tolist() == pytest.approx([0.2, 0.0])
    assert traj.goal.tolist() == [1.0, 0.3]
    kit.motion.moving = False
    kit.robot.joints(left_elbow_pitch=0.99, head_yaw=0.25)  # head not there yet
    assert kit.tick(leaf, 1.0) is Status.RUNNING
    kit.robot.joints(head_yaw=0.29)
    assert kit.tick(leaf, 0.1) is Status.SUCCESS


def test_gesture_moves_fingers_on_the_hands_topic(kit: Kit) -> None:
    kit.robot.joints(right_index=0.5, right_middle=0.5)
    leaf = kit.setup(MoveJoints({"right_index": 2.5, "right_middle": 2.5}, duration=2.0))
    kit.tick(leaf)
    assert kit.motion.submitted[0].topic == "hands"


def test_timeout_names_the_worst_joint_and_holds(kit: Kit) -> None:
    kit.robot.joints(left_elbow_pitch=0.0, left_wrist_pitch=0.0)
    leaf = kit.setup(
        MoveJoints({"left_elbow_pitch": 1.0, "left_wrist_pitch": 0.1}, speed=1.0, timeout=5.0)
    )
    kit.tick(leaf)
    kit.motion.moving = False
    kit.robot.joints(left_elbow_pitch=0.6, left_wrist_pitch=0.1)  # blocked by an obstacle
    assert kit.tick(leaf, 5.1) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "timeout"
    assert leaf.failure.message.startswith("left_elbow_pitch is 0.400 rad from its target")
    assert kit.motion.holds == [
        {"left_elbow_pitch": pytest.approx(0.6), "left_wrist_pitch": pytest.approx(0.1)}
    ]


def test_preemption_holds_measured_exactly_once(kit: Kit) -> None:
    kit.robot.joints(right_shoulder_pitch=0.0)
    leaf = kit.setup(MoveJoints({"right_shoulder_pitch": -1.0}, speed=1.0))
    kit.tick(leaf)
    kit.robot.joints(right_shoulder_pitch=-0.4)
    leaf.stop(Status.INVALID)
    leaf.stop(Status.INVALID)  # py_trees may terminate twice: abort must not repeat
    assert kit.motion.holds == [{"right_shoulder_pitch": pytest.approx(-0.4)}]
    assert leaf.status is Status.INVALID


def test_success_then_terminate_does_not_hold(kit: Kit) -> None:
    kit.robot.joints(head_pitch=0.0)
    leaf = kit.setup(MoveJoints({"head_pitch": 0.0}, speed=1.0))
    kit.tick(leaf)
    kit.motion.moving = False
    assert kit.tick(leaf) is Status.SUCCESS
    leaf.stop(Status.INVALID)
    assert kit.motion.holds == []


@pytest.mark.parametrize(
    ("targets", "code"),
    [({"head_pitch": 1.2}, "plan_error"), ({"nose": 0.0}, "plan_error")],
)
def test_unplannable_moves_fail_without_motion(
    kit: Kit, targets: dict[str, float], code: str
) -> None:
    kit.robot.joints(head_pitch=0.0)
    leaf = kit.setup(MoveJoints(targets, speed=1.0))
    assert kit.tick(leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == code
    assert kit.motion.submitted == []


def test_no_state_and_held_are_reported(kit: Kit) -> None:
    leaf = kit.setup(MoveJoints({"head_yaw": 0.1}, speed=1.0))
    assert kit.tick(leaf) is Status.FAILURE and leaf.failure is not None
    assert "no measured position" in leaf.failure.message
    kit.robot.joints(head_yaw=0.0)
    kit.motion.refuse = HeldError("motion is held: e-stop")
    leaf = kit.setup(MoveJoints({"head_yaw": 0.1}, speed=1.0))
    assert (
        kit.tick(leaf) is Status.FAILURE
        and leaf.failure is not None
        and leaf.failure.code == "held"
    )


def test_profile_is_the_source_of_indices() -> None:
    assert PROFILE.joints["left_elbow_pitch"].topic == "upper"
