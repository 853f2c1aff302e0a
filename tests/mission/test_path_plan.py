"""``path: plan`` in validation (executive/mission/body_checks.py): a move whose straight
path collides is planned around the body once when the mission loads and said, the same
every time; without ``path: plan`` it stays refused, with the hint; a plan that cannot
be found in its budget, a ``duration``, or a robot without a model is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

from executive.mission.loader import MissionLoader
from executive.seam.profile import load_profile

from .conftest import MISSIONS, Workspace, errors

# the right hand from the right of the chest (upper arm back, elbow tucked) across to
# the front of the left side: the straight path drives the forearm into the torso
TUCK = (
    "{right_shoulder_pitch: 0.5, right_shoulder_roll: 0.0, right_shoulder_yaw: 0.0, "
    "right_elbow_pitch: -0.5, right_elbow_roll: 0.0, right_wrist_pitch: 0.0, right_wrist_roll: 0.0}"
)
ACROSS = (
    "{right_shoulder_pitch: -0.78, right_shoulder_roll: 0.05, right_shoulder_yaw: 1.69, "
    "right_elbow_pitch: 0.13, right_elbow_roll: -0.03, right_wrist_pitch: -0.09, "
    "right_wrist_roll: 0.17}"
)


def mission(across: str) -> str:
    return (
        "mission: m\ntree:\n  sequence:\n    children:\n"
        "      - acquire_control: {timeout: 5}\n"
        "      - set_fsm: {state: joint_control, timeout: 5}\n"
        "      - move_joints: {pose: home, timeout: 15}\n"
        f"      - move_joints: {{joints: {TUCK}, speed: 1.0, timeout: 15}}\n"
        f"      - move_joints: {{joints: {ACROSS}, {across}}}\n"
    )


def test_a_move_across_the_torso_is_refused_with_the_hint(ws: Workspace) -> None:
    result = ws.check(mission("speed: 1.0, timeout: 15"))
    (msg,) = errors(result)
    assert msg.startswith("9:") and "collides with itself" in msg and "torso_link" in msg
    assert msg.endswith("add `path: plan` to plan a way around the body")
    assert result.planned == ()


def test_with_path_plan_it_is_planned_once_and_said(ws: Workspace) -> None:
    text = mission("speed: 1.0, timeout: 15, path: plan")
    result = ws.check(text)
    assert result.ok and result.diagnostics == (), [str(d) for d in result.diagnostics]
    (said,) = result.planned
    assert said.startswith(f"{ws.root / 'm.yaml'}:9:")
    assert "tree.sequence.children[4].move_joints.path: needs a plan: its straight path " in said
    assert "torso_link and right_elbow_pitch_link" in said
    assert "planned around the body in " in said and " s at its pace" in said
    again = ws.check(text)  # another loader, a fresh walk: the same path, said the same
    assert again.planned == result.planned


def test_a_clear_move_with_path_plan_needs_no_plan(ws: Workspace) -> None:
    result = ws.check(
        "mission: m\ntree:\n  sequence:\n    children:\n"
        f"      - move_joints: {{joints: {TUCK}, timeout: 15, path: plan}}\n"
    )
    assert result.ok and result.planned == (), [str(d) for d in result.diagnostics]


def test_a_plan_longer_than_the_timeout_is_a_warning(ws: Workspace) -> None:
    result = ws.check(mission("speed: 1.0, timeout: 2, path: plan"))
    assert result.ok
    (warning,) = [str(d) for d in result.diagnostics if "planned around" in str(d)]
    assert "move_joints.timeout: warning: the path planned around the body takes " in warning
    assert "longer than the timeout (2 s)" in warning


def test_no_path_within_the_plan_timeout_is_refused(ws: Workspace) -> None:
    result = ws.check(mission("timeout: 15, path: plan, plan_timeout: 0.000001"))
    (msg,) = errors(result)
    assert msg.startswith("9:") and "move_joints.path: its straight path collides (" in msg
    assert msg.endswith("and no path around the body found within 1e-06 s")


def test_a_planned_path_takes_no_duration(ws: Workspace) -> None:
    (msg,) = errors(ws.check(mission("duration: 4, timeout: 15, path: plan")))
    assert "move_joints.duration: a planned path is paced by speed or the speed caps" in msg


def test_a_robot_without_a_model_cannot_plan(tmp_path: Path) -> None:
    for folder in ("poses", "gestures"):
        shutil.copytree(MISSIONS / "adam" / folder, tmp_path / folder)
    path = tmp_path / "m.yaml"
    path.write_text(
        "mission: m\ntree:\n  sequence:\n    children:\n"
        "      - move_joints: {joints: {right_elbow: -0.5}, timeout: 10, path: plan}\n"
    )
    result = MissionLoader(load_profile("adam-pro"), tmp_path).check(path)
    (msg,) = errors(result)
    assert "move_joints.path: path: plan needs the robot's body model" in msg
    assert "no licensed model" in msg
