"""Poses given by where they go (``solve: GROUP`` with an ``intent``): the library solves
the group's joints on the body model when it loads (executive/language/library.py,
executive/reach/ik.py), and refuses an intent it cannot reach at the intent's file:line."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from executive.mission.loader import MissionLoader
from executive.seam import body as bodies
from executive.seam.profile import load_profile

from .conftest import PROFILE, Workspace, errors

CUP = """
poses:
  cup_grasp:
    description: Right hand at the cup on the counter.
    solve: right_arm
    intent:
      right_hand: {at: [0.45, -0.20, 0.10], within: 0.02}
"""


def library(ws: Workspace, text: str) -> tuple[dict, list[str]]:
    ws.write("poses/solved.yaml", text)
    lib = MissionLoader(PROFILE, ws.root).library(ws.root.resolve())
    return dict(lib.poses), [str(d) for d in lib.diagnostics if d.is_error]


def test_an_intent_only_pose_gets_the_group_solved(ws: Workspace) -> None:
    poses, problems = library(ws, CUP)
    assert problems == []
    pose = poses["cup_grasp"]
    assert set(pose.joints) == set(PROFILE.joint_sets["right_arm"])
    body = bodies.load(PROFILE)
    body.pose(pose.joints)
    assert np.linalg.norm(body.point("right_hand") - [0.45, -0.20, 0.10]) < 0.002
    assert pose.solve == "right_arm" and pose.solution is not None
    assert pose.solution.residual < 0.002


def test_the_same_file_gives_the_same_joints(ws: Workspace, tmp_path: Path) -> None:
    first, _ = library(ws, CUP)
    again = MissionLoader(load_profile("atom-sdk"), ws.root).library(ws.root.resolve())
    assert dict(first["cup_grasp"].joints) == dict(again.poses["cup_grasp"].joints)


def test_joints_are_the_seed_and_joints_outside_the_group_stay(ws: Workspace) -> None:
    poses, problems = library(
        ws,
        """
        poses:
          out_wide:
            solve: right_arm
            joints: {torso: 0.0, right_shoulder_roll: -0.9, right_shoulder_yaw: 0.8}
            intent:
              right_hand: {at: [0.35, -0.30, 0.15], within: 0.02}
          plain:
            solve: right_arm
            intent:
              right_hand: {at: [0.35, -0.30, 0.15], within: 0.02}
        """,
    )
    assert problems == []
    wide, plain = poses["out_wide"].joints, poses["plain"].joints
    assert wide["torso"] == 0.0
    assert wide["right_shoulder_roll"] < plain["right_shoulder_roll"] - 0.2


def test_an_unreachable_intent_is_refused_at_its_line(ws: Workspace) -> None:
    _, problems = library(
        ws,
        """
        poses:
          too_far:
            solve: right_arm
            intent:
              right_hand: {at: [1.0, -0.20, 0.10], within: 0.02}
          in_torso:
            solve: right_arm
            intent:
              right_hand: {at: [0.0, 0.0, 0.1], within: 0.02}
        """,
    )
    assert len(problems) == 2
    far, torso = problems
    assert ":5:7: poses.too_far.intent.right_hand: no solution for right_arm" in far
    assert "stays 388 mm from (+1.000, -0.200, +0.100)" in far and "out of reach" in far
    assert ":9:7: poses.in_torso.intent.right_hand:" in torso
    assert "inside torso_link (100 mm deep)" in torso


def test_a_mission_names_a_solved_pose_and_the_body_check_holds_its_intent(ws: Workspace) -> None:
    ws.write("poses/solved.yaml", CUP)
    result = ws.check(
        """
        mission: m
        tree:
          sequence:
            - acquire_control: {timeout: 2}
            - move_joints: {pose: home, speed: 0.5, timeout: 10}
            - move_joints: {pose: cup_grasp, speed: 0.5, timeout: 10}
        """
    )
    assert errors(result) == []


def test_what_solve_refuses(ws: Workspace) -> None:
    _, problems = library(
        ws,
        """
        poses:
          fingers:
            solve: hands
            intent:
              right_hand: {at: [0.4, -0.2, 0.1], within: 0.02}
          no_intent:
            solve: right_arm
          wrong_point:
            solve: right_arm
            intent:
              gaze: {at: [0.4, -0.2, 0.3], within: 0.02}
        """,
    )
    text = "\n".join(problems)
    assert "poses.fingers.solve: hands has joints the body model does not carry" in text
    assert "poses.no_intent.solve: solve needs an intent" in text
    assert "poses.wrong_point.intent.gaze: none of right_shoulder_pitch" in text


def test_a_robot_without_a_model_cannot_solve(tmp_path: Path) -> None:
    (tmp_path / "poses").mkdir()
    (tmp_path / "poses" / "p.yaml").write_text(CUP)
    adam = load_profile("adam-pro")
    lib = MissionLoader(adam, tmp_path).library(tmp_path.resolve())
    text = "\n".join(str(d) for d in lib.diagnostics if d.is_error)
    assert "has no body model to solve on" in text
