"""Pose and gesture libraries: names, joints by name, limits, duplicates."""

from __future__ import annotations

from pathlib import Path

from executive.language.library import Library
from executive.mission.loader import MissionLoader
from tests.mission.conftest import MISSIONS, PROFILE, Workspace


def _library(root: Path) -> Library:
    return MissionLoader(PROFILE, root).library(root.resolve())


def test_shipped_libraries_are_valid() -> None:
    lib = _library(MISSIONS)
    assert lib.diagnostics == ()
    assert {"home", "right_offer", "look_left", "shelf_a_grasp"} <= set(lib.poses)
    assert {"right_open", "right_grasp_cup", "left_open"} <= set(lib.gestures)
    for gesture in lib.gestures.values():
        assert all(PROFILE.joints[j].group == "hands" for j in gesture.joints)


def test_shipped_poses_are_inside_the_limits() -> None:
    for pose in _library(MISSIONS).poses.values():
        for joint, q in pose.joints.items():
            assert PROFILE.joints[joint].within(q), (pose.name, joint, q)


def test_library_errors_name_file_line_and_column(ws: Workspace) -> None:
    ws.write(
        "poses/extra.yaml",
        """
        poses:
          bad_pose:
            joints:
              left_elbow_pitch: 2.5
              left_elbw_roll: 0.0
          home:
            joints: {head_yaw: 0}
          Bad-Name:
            joints: {head_yaw: 0}
        """,
    )
    ws.write("gestures/extra.yaml", "gestures:\n  g:\n    fingers: {right_elbow_pitch: 1.0}\n")
    lib = _library(ws.root)
    found = [(Path(d.where.file).name, d.where.line, d.where.col, d.path) for d in lib.diagnostics]
    assert found == [
        ("extra.yaml", 4, 25, "poses.bad_pose.joints.left_elbow_pitch"),
        ("extra.yaml", 5, 7, "poses.bad_pose.joints.left_elbw_roll"),
        ("extra.yaml", 6, 3, "poses.home"),
        ("extra.yaml", 8, 3, "poses.Bad-Name"),
        ("extra.yaml", 3, 15, "gestures.g.fingers.right_elbow_pitch"),
    ]
    messages = [d.message for d in lib.diagnostics]
    assert messages[0] == "2.5 rad is outside left_elbow_pitch's limits [-0.87, 2]"
    assert messages[1] == "unknown joint (did you mean 'left_elbow_roll'?)"
    assert messages[2].startswith("pose 'home' is also defined at ")
    assert "not a finger joint" in messages[4]
    assert "bad_pose" in lib.broken


def test_a_mission_using_a_broken_library_fails(ws: Workspace) -> None:
    ws.write("poses/extra.yaml", "poses:\n  bad_pose:\n    joints: {head_yaw: 9}\n")
    r = ws.check("mission: m\ntree:\n  move_joints: {pose: bad_pose, timeout: 5}\n")
    assert [d.path for d in r.errors] == ["poses.bad_pose.joints.head_yaw"]


def test_library_file_shape(ws: Workspace) -> None:
    ws.write("poses/x.yaml", "gestures:\n  a: {fingers: {right_index: 1}}\n")
    ws.write("gestures/y.yaml", "gestures:\n  a: {fingers: {right_index: 1}, colour: red}\n")
    ws.write("gestures/z.yaml", "gestures:\n  b: {fingers: {}}\n")
    messages = [(d.path, d.message) for d in _library(ws.root).diagnostics]
    assert (
        "gestures",
        "unknown key (a file in poses/ holds 'description' and 'poses')",
    ) in messages
    assert ("", "missing 'poses:'") in messages
    assert ("gestures.a.colour", "unknown key (known: description, fingers)") in messages
    assert any(p == "gestures.b.fingers" for p, _ in messages)


def test_library_files_validate_on_their_own(ws: Workspace) -> None:
    path = ws.write("poses/extra.yaml", "poses:\n  p:\n    joints: {head_yaw: 9}\n")
    loader = MissionLoader(PROFILE, ws.root)
    r = loader.check(path)
    assert r.mission is None and [d.path for d in r.errors] == ["poses.p.joints.head_yaw"]
    assert loader.check(ws.root / "poses" / "arms.yaml").ok


def test_libraries_take_no_parameters(ws: Workspace) -> None:
    ws.write("poses/extra.yaml", "poses:\n  p:\n    joints: {head_yaw: '${yaw}'}\n")
    (d,) = _library(ws.root).diagnostics
    assert d.message == "parameters cannot be used in a library"
