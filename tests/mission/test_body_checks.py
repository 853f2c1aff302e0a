"""Validation that knows the body: forward kinematics of the vendor's model
(``executive/seam/body.py``) refuses a pose or a move that drives a link through
another or through the scene, and a pose that leaves its declared intent.

Before this, joints were numbers with limits: every Atom arm pose was mirrored at the
elbow and no check could see it (issue 20)."""

from __future__ import annotations

import dataclasses
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

from executive.mission.loader import MissionLoader
from executive.seam import body as bodies
from executive.seam.profile import ProfileError, load_profile

from .conftest import MISSIONS, PROFILE, Workspace, errors

ADAM = load_profile("adam-pro")

# the right forearm swung across the belly and bent back into it: it overlaps the torso box
THROUGH_TORSO = "{right_shoulder_pitch: 0.0, right_shoulder_yaw: 1.5, right_elbow_pitch: -0.5}"


def mission(*moves: str, scene: str = "") -> str:
    children = "\n".join(f"      - {m}" for m in moves)
    head = f"scene:\n{textwrap.indent(textwrap.dedent(scene), '  ')}" if scene else ""
    return f"mission: m\n{head}\ntree:\n  sequence:\n    children:\n{children}\n"


def test_the_atom_body_loads_from_the_shipped_urdf_with_its_collision_boxes() -> None:
    body = bodies.load(PROFILE)
    links = set(body.link_of_geom.values())
    assert {"torso_link", "right_elbow_pitch_link", "left_shoulder_roll_link"} <= links
    # neighbours across a link without geometry are not checked: the shoulder joins them
    checked = {frozenset((body.link_of_geom[a], body.link_of_geom[b])) for a, b in body.pairs}
    assert frozenset({"torso_link", "right_elbow_pitch_link"}) in checked
    assert frozenset({"torso_link", "right_shoulder_roll_link"}) not in checked
    body.pose({})
    assert body.collisions() == []  # the rest pose is whole


def test_elbow_pitch_zero_is_the_forearm_forward_and_positive_straightens_it() -> None:
    """The URDF's convention (shared/reference/atom-arms.md), the one the library was
    mirrored against: the hand of a 90 degree bend is in front at elbow height, of a
    straight arm below the shoulder."""
    body = bodies.load(PROFILE)
    body.pose({"left_elbow_pitch": 0.0, "left_shoulder_roll": 0.0})
    bent = body.point("left_hand")
    body.pose({"left_elbow_pitch": 1.57, "left_shoulder_roll": 0.0})
    straight = body.point("left_hand")
    assert bent[0] > 0.25 and abs(bent[2] - 0.07) < 0.05  # forward, at elbow height
    assert abs(straight[0]) < 0.1 and straight[2] < -0.25  # hanging down


def test_a_move_through_the_torso_is_refused_naming_the_move_and_the_two_links(
    ws: Workspace,
) -> None:
    result = ws.check(mission(f"move_joints: {{joints: {THROUGH_TORSO}, timeout: 10}}"))
    (msg,) = [e for e in errors(result) if "collides" in e]
    assert msg.startswith("6:")  # the move's line
    assert "torso_link" in msg and "right_elbow_pitch_link" in msg
    assert "overlap" in msg or "mm apart" in msg


def test_a_pose_through_the_torso_is_refused_naming_the_pose_file_and_line(
    ws: Workspace,
) -> None:
    ws.write(
        "poses/bad.yaml",
        f"""
        poses:
          hug_self:
            description: Right forearm through the belly.
            joints: {THROUGH_TORSO}
        """,
    )
    result = ws.check(mission("move_joints: {pose: hug_self, timeout: 10}"))
    (msg,) = [e for e in errors(result) if "collides" in e]
    assert "poses/bad.yaml:2)" in msg and "pose 'hug_self'" in msg
    assert "torso_link" in msg and "right_elbow_pitch_link" in msg


def test_the_path_is_checked_not_only_the_ends(ws: Workspace) -> None:
    """Two poses that are each whole, with the forearm swept through the torso between
    them: a straight line in joint space from one to the other crosses it."""
    ws.write(
        "poses/sweep.yaml",
        """
        poses:
          across_left:
            description: Right forearm reaching across, in front of the body.
            joints: {right_shoulder_pitch: -1.2, right_shoulder_yaw: 1.2, right_elbow_pitch: 0.0}
          tucked:
            description: Right forearm swung back and bent, tucked behind.
            joints: {right_shoulder_pitch: 0.3, right_shoulder_yaw: 1.2, right_elbow_pitch: -0.3}
        """,
    )
    body = bodies.load(PROFILE)
    for pose in (
        {"right_shoulder_pitch": -1.2, "right_shoulder_yaw": 1.2, "right_elbow_pitch": 0.0},
    ):
        body.pose(pose)
        assert body.collisions() == []
    result = ws.check(
        mission(
            "move_joints: {pose: across_left, timeout: 10}",
            "move_joints: {pose: tucked, timeout: 10}",
        )
    )
    msgs = [e for e in errors(result) if "collides" in e]
    assert msgs and any("of the way there" in m or "at the pose" in m for m in msgs)


def test_a_hand_in_a_declared_table_is_refused(ws: Workspace) -> None:
    table = """
        table: {box: {center: [0.45, 0.0, -0.15], size: [0.5, 1.2, 0.3]}}
    """
    reach_down = "{right_shoulder_pitch: -0.6, right_shoulder_roll: -0.1, right_elbow_pitch: 1.0}"
    without = ws.check(mission(f"move_joints: {{joints: {reach_down}, timeout: 10}}"))
    assert not [e for e in errors(without) if "scene" in e]
    result = ws.check(mission(f"move_joints: {{joints: {reach_down}, timeout: 10}}", scene=table))
    (msg,) = [e for e in errors(result) if "hits the scene" in e]
    assert "table" in msg


def test_a_bad_scene_names_the_key(ws: Workspace) -> None:
    result = ws.check(
        mission("wait: {seconds: 1}", scene="table: {box: {center: [0, 0], size: [1, 1, 1]}}\n")
    )
    assert any("scene.table.box.center" in e for e in errors(result))


def test_a_pose_that_leaves_its_intent_is_refused_naming_both_positions(ws: Workspace) -> None:
    ws.write(
        "poses/intent.yaml",
        """
        poses:
          forearm_forward:
            description: Right forearm level and forward (a 90 degree bend).
            joints: {right_shoulder_pitch: 0.0, right_shoulder_roll: 0.0, right_elbow_pitch: 0.0}
            intent:
              right_hand: {at: [0.37, -0.25, 0.07], within: 0.05}
          forearm_forward_mirrored:
            description: The same, written in the Adam's convention (elbow bent is +).
            joints: {right_shoulder_pitch: 0.0, right_shoulder_roll: 0.0, right_elbow_pitch: 1.57}
            intent:
              right_hand: {at: [0.37, -0.25, 0.07], within: 0.05}
        """,
    )
    good = ws.check(mission("move_joints: {pose: forearm_forward, timeout: 10}"))
    assert not [e for e in errors(good) if "intent" in e], errors(good)
    bad = ws.check(mission("move_joints: {pose: forearm_forward_mirrored, timeout: 10}"))
    (msg,) = [e for e in errors(bad) if "intent" in e]
    (diag,) = [d for d in bad.diagnostics if "intent" in str(d)]
    assert diag.where.file.endswith("poses/intent.yaml") and diag.where.line == 11
    assert "right_hand is at (" in msg and "from its intent (+0.370, -0.250, +0.070)" in msg


def test_a_move_that_selects_part_of_a_pose_is_not_held_to_its_intent(ws: Workspace) -> None:
    """The intent says where the whole pose puts the hand; ``select`` of one of its joints
    leaves the others where they were, so the hand is elsewhere by design (the mission
    fuzzer found ``pose: lift, select: right_elbow_pitch`` refused for the shelf's intent)."""
    ws.write(
        "poses/intent.yaml",
        """
        poses:
          forearm_forward:
            description: Right forearm level and forward (a 90 degree bend).
            joints: {right_shoulder_pitch: -0.5, right_shoulder_roll: 0.0, right_elbow_pitch: 0.0}
            intent:
              right_hand: {at: [0.37, -0.25, 0.35], within: 0.05}
        """,
    )
    whole = ws.check(mission("move_joints: {pose: forearm_forward, timeout: 10}"))
    assert [e for e in errors(whole) if "intent" in e], errors(whole)  # held to it
    part = ws.check(
        mission("move_joints: {pose: forearm_forward, select: right_elbow_pitch, timeout: 10}")
    )
    assert not [e for e in errors(part) if "intent" in e], errors(part)


def test_an_intent_must_name_a_point_of_the_body(ws: Workspace) -> None:
    ws.write(
        "poses/p.yaml",
        """
        poses:
          p:
            description: x
            joints: {head_yaw: 0.0}
            intent: {nose: {at: [0, 0, 0], within: 0.1}}
        """,
    )
    result = ws.check(mission("move_joints: {pose: p, timeout: 10}"))
    assert any("not a point of the body" in e for e in errors(result))


def test_every_shipped_atom_pose_declares_an_intent_and_every_mission_keeps_them() -> None:
    """So a sign error can never pass again: every pose says where it goes, and every
    shipped mission reaches each pose it uses where the pose says."""
    loader = MissionLoader(PROFILE, MISSIONS)
    lib = loader.library(MISSIONS)
    assert lib.poses
    assert [name for name, pose in lib.poses.items() if not pose.intent] == []
    for path in sorted(MISSIONS.glob("*.yaml")):
        result = loader.check(path)
        assert result.ok, [str(d) for d in result.diagnostics]


def test_a_robot_without_a_model_is_said_once_and_not_checked(tmp_path: Path) -> None:
    for folder in ("poses", "gestures"):
        shutil.copytree(MISSIONS / "adam" / folder, tmp_path / folder)
    assert isinstance(ADAM.body, bodies.NoBody)
    path = tmp_path / "m.yaml"
    path.write_text(
        "mission: m\ntree:\n  sequence:\n    children:\n"
        "      - move_joints: {joints: {right_elbow: -0.5}, timeout: 10}\n"
        "      - move_joints: {joints: {right_elbow: -0.2}, timeout: 10}\n"
    )
    result = MissionLoader(ADAM, tmp_path).check(path)
    assert result.ok, [str(d) for d in result.diagnostics]
    warnings = [str(d) for d in result.diagnostics if "not checked against the body" in str(d)]
    assert len(warnings) == 1 and "no licensed model" in warnings[0]


@pytest.mark.parametrize(
    ("bad", "key"),
    [
        ("margin: -1", "body.margin"),
        ("rest: {torso: 9}", "body.rest.torso"),
        ("joints: {nose: x}", "body.joints.nose"),
        ("scene: {t: {box: {center: [0, 0, 0]}}}", "body.scene.t.box.size"),
        ("colour: red", "body.colour"),
    ],
)
def test_a_bad_body_in_a_profile_names_the_key(tmp_path: Path, bad: str, key: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"extends: atom-sdk\nname: p\nbody:\n  model: atom.urdf\n  {bad}\n")
    with pytest.raises(ProfileError, match=key.replace(".", r"\.")):
        load_profile(path)


def test_a_point_on_a_link_the_model_lacks_is_refused_naming_it() -> None:
    spec = PROFILE.body
    assert isinstance(spec, bodies.BodySpec)
    wrong = dataclasses.replace(spec, points={"x": bodies.Point("nowhere")})
    with pytest.raises(bodies.BodyError, match="body.points.x"):
        bodies.load(dataclasses.replace(PROFILE, body=wrong))


def test_path_samples_move_no_joint_more_than_a_step() -> None:
    samples = bodies.path_samples({"a": 0.0, "b": 1.0}, {"a": 1.0, "b": 1.0})
    assert samples[-1] == {"a": 1.0, "b": 1.0}
    steps = np.diff([0.0] + [s["a"] for s in samples])
    assert max(steps) <= 0.05 + 1e-12


def test_an_intent_may_leave_axes_free(ws: Workspace) -> None:
    """A lift raises the hand from wherever it grasped: only its height is the intent."""
    ws.write(
        "poses/free.yaml",
        """
        poses:
          up:
            description: Right forearm level, hand at elbow height wherever it points.
            joints: {right_shoulder_pitch: 0.0, right_shoulder_roll: 0.0, right_elbow_pitch: 0.0}
            intent:
              right_hand: {at: [null, null, 0.07], within: 0.02}
          down:
            description: The same pose, its intent 30 cm lower.
            joints: {right_shoulder_pitch: 0.0, right_shoulder_roll: 0.0, right_elbow_pitch: 0.0}
            intent:
              right_hand: {at: [null, null, -0.23], within: 0.02}
        """,
    )
    assert not [
        e
        for e in errors(ws.check(mission("move_joints: {pose: up, timeout: 10}")))
        if "intent" in e
    ]
    (msg,) = [
        e
        for e in errors(ws.check(mission("move_joints: {pose: down, timeout: 10}")))
        if "intent" in e
    ]
    assert "from its intent (any, any, -0.230)" in msg
