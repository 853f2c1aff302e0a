"""The Atom's shipped poses go where their descriptions say, by the vendor URDF (issue 20).

Every arm pose of ``missions/poses/arms.yaml`` and ``shelf.yaml`` was written in the PND
Adam's elbow convention (0 straight, + bends) and so was mirrored at the elbow on the
Atom, whose ``elbow_pitch = 0`` is a 90 degree bend with the forearm forward and whose +
straightens the arm: ``home`` held the forearms pointing forward, ``wave_raise`` was a
straight arm out sideways. Nothing could object, since nothing knew where a hand goes.
Here forward kinematics of ``executive/resources/atom.urdf`` (pose preview's ``Robot``)
holds each pose to its description, coarsely: where the hand point (pose preview's
``HAND_STUB`` beyond the wrist) is in the base frame (pelvis, x forward, y left, z up),
which way the forearm points and whether the hand is level. A pose is taken over
``home`` for the joints it does not name, as pose preview draws it, except where a
mission always reaches it from another pose (``lift`` from a grasp).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import yaml

from executive.operator.posepreview import HAND_STUB, Robot
from executive.seam.profile import load_profile
from tests.mission.conftest import MISSIONS

PROFILE = load_profile("atom-sdk")
LIBRARY: dict[str, dict[str, float]] = {}
for _file in ("arms.yaml", "shelf.yaml"):
    for _name, _pose in yaml.safe_load((MISSIONS / "poses" / _file).read_text())["poses"].items():
        LIBRARY[_name] = dict(_pose["joints"])
HOME = LIBRARY["home"]
SHOULDER_Z = 0.333  # m: the shoulder pitch joints' height over the pelvis (URDF)


class Arm:
    """One arm of one configuration: hand point, elbow, forearm and hand directions."""

    def __init__(self, frames: Mapping[str, Any], side: str) -> None:
        wrist = frames[f"{side}_wrist_yaw_link"]
        self.hand = wrist[:3, 3] + wrist[:3, 0] * HAND_STUB
        self.hand_x = wrist[:3, 0]  # the hand's pointing direction
        self.elbow = frames[f"{side}_elbow_pitch_link"][:3, 3]
        forearm = frames[f"{side}_wrist_pitch_link"][:3, 3] - self.elbow
        self.forearm = forearm / np.linalg.norm(forearm)

    @property
    def forearm_elevation(self) -> float:
        """Degrees above level (negative: below)."""
        return math.degrees(math.asin(self.forearm[2]))

    @property
    def hand_tilt(self) -> float:
        """Degrees the hand points above level (negative: below)."""
        return math.degrees(math.asin(self.hand_x[2]))


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot(PROFILE)


def arm(robot: Robot, side: str, *poses: str) -> Arm:
    """``side``'s arm after ``home`` and then ``poses`` in turn (each keeps the others)."""
    joints = dict(HOME)
    for name in poses:
        joints.update(LIBRARY[name])
    return Arm(robot.frames(joints), side)


def test_every_pose_is_within_both_atom_profiles_limits() -> None:
    for profile in (PROFILE, load_profile("atom-seed001")):
        for name, joints in LIBRARY.items():
            for joint, q in joints.items():
                spec = profile.joints[joint]
                assert spec.lower <= q <= spec.upper, f"{profile.name} {name}.{joint} = {q}"


def test_home_hangs_the_arms_at_the_sides(robot: Robot) -> None:
    for side, sign in (("left", 1), ("right", -1)):
        a = arm(robot, side, "home")
        assert a.hand[2] < -0.2, f"{side} hand at {a.hand}: not hanging"  # below the pelvis
        assert 0.3 < sign * a.hand[1] < 0.45 and abs(a.hand[0]) < 0.15, a.hand
        # the elbow only slightly bent; the Adam's convention held the forearm forward,
        # 14 degrees below level
        assert a.forearm_elevation < -60


def test_ready_holds_both_forearms_forward_at_waist_height(robot: Robot) -> None:
    for side in ("left", "right"):
        a = arm(robot, side, "ready")
        assert a.hand[0] > 0.35 and abs(a.hand[2]) < 0.12, a.hand
        assert abs(a.forearm_elevation) < 10


def test_the_counter_and_shelf_poses_are_at_chest_height_in_front(robot: Robot) -> None:
    for name in ("right_reach_forward", "shelf_a_approach", "shelf_a_grasp"):
        a = arm(robot, "right", name)
        assert a.hand[0] > 0.42 and 0.15 < a.hand[2] < SHOULDER_Z, (name, a.hand)
        assert abs(a.hand_tilt) < 10, name  # the hand level, to close around an object
    reach = arm(robot, "right", "right_reach_forward")
    assert abs(reach.hand_x[1]) < 0.1  # pointing forward, not out to the side


def test_each_approach_is_8_cm_short_of_its_grasp_along_the_hand(robot: Robot) -> None:
    for spot in ("a", "b"):
        approach = arm(robot, "right", f"shelf_{spot}_approach")
        grasp = arm(robot, "right", f"shelf_{spot}_approach", f"shelf_{spot}_grasp")
        step = grasp.hand - approach.hand
        assert abs(np.linalg.norm(step) - 0.08) < 0.01, (spot, step)
        assert float(step @ grasp.hand_x) > 0.075  # along the hand, into the shelf
        assert abs(step[2]) < 0.01  # the same shelf height
    a = arm(robot, "right", "shelf_a_approach", "shelf_a_grasp")
    b = arm(robot, "right", "shelf_b_approach", "shelf_b_grasp")
    assert b.hand[1] < a.hand[1] - 0.15  # B is further right
    assert abs(b.hand[2] - a.hand[2]) < 0.01


def test_lift_raises_either_grasp_5_cm_straight_up(robot: Robot) -> None:
    for spot in ("a", "b"):
        poses = (f"shelf_{spot}_approach", f"shelf_{spot}_grasp")
        grasp = arm(robot, "right", *poses)
        lifted = arm(robot, "right", *poses, "lift")
        up = lifted.hand - grasp.hand
        assert 0.045 < up[2] < 0.06, (spot, up)
        assert np.linalg.norm(up[:2]) < 0.01, (spot, up)  # not dragged along the shelf


def test_carry_offer_retract(robot: Robot) -> None:
    carry = arm(robot, "right", "right_carry")
    assert abs(carry.forearm_elevation) < 5 and abs(carry.hand_tilt) < 5  # cup upright
    assert carry.elbow[0] < 0.1  # the elbow by the side: close to the body
    offer = arm(robot, "right", "right_offer")
    assert offer.hand[0] > carry.hand[0] + 0.12  # extended towards the guest
    assert abs(offer.hand_tilt) < 5
    retract = arm(robot, "right", "right_retract")
    assert 0.25 < retract.hand[0] < offer.hand[0] - 0.1  # pulled back, still in front


def test_wave_raise_holds_the_upper_arm_out_and_the_forearm_up(robot: Robot) -> None:
    a = arm(robot, "right", "wave_raise")
    assert abs(a.elbow[2] - SHOULDER_Z) < 0.03 and a.elbow[1] < -0.4  # upper arm out, level
    assert a.forearm_elevation > 80  # the Adam's convention: a straight arm, level
    assert a.hand[2] > SHOULDER_Z + 0.3


def test_a_wave_tilts_the_raised_forearm_sideways(robot: Robot) -> None:
    """Seen by a guest in front: outwards is away from the body (-y for the right arm)."""
    raised = arm(robot, "right", "wave_raise")
    out = arm(robot, "right", "wave_out")  # the waves name the whole arm: no wave_raise
    in_ = arm(robot, "right", "wave_in")
    assert out.hand[1] < raised.hand[1] - 0.08 and in_.hand[1] > raised.hand[1] + 0.08
    for end in (out, in_):
        assert end.forearm_elevation > 60  # still up
        assert abs(end.hand[0] - raised.hand[0]) < 0.02  # not towards or away from the guest


def test_tray_place_is_low_beside_the_robot(robot: Robot) -> None:
    a = arm(robot, "right", "tray_place")
    assert a.hand[1] < -0.45 and a.hand[2] < 0.05, a.hand
