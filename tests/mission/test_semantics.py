"""One test per semantic check against the robot profile and the libraries."""

from __future__ import annotations

import pytest

from executive.language.model import Leaf
from executive.mission.registry import KINDS
from executive.seam.body import EMPTY_SCENE
from executive.seam.profile import RobotProfile
from tests.mission.conftest import (
    LEAF_LINE,
    Workspace,
    errors,
    leaf_col,
    leaf_mission,
    one_error,
)

CHILD = "tree.sequence.children[1]"


def _leaf(ws: Workspace, text: str) -> Leaf:
    r = ws.check(leaf_mission(text))
    assert r.ok, "\n".join(map(str, r.diagnostics))
    assert r.mission is not None
    leaf = list(r.mission.leaves())[1]
    return leaf


# -- joints and limits ---------------------------------------------------------------------


def test_unknown_joint(ws: Workspace) -> None:
    leaf = "- move_joints: {joints: {left_elbow_pich: 0.5}, timeout: 5}"
    r = ws.check(leaf_mission(leaf))
    assert one_error(r) == (
        LEAF_LINE,
        leaf_col(leaf, "left_elbow_pich"),
        f"{CHILD}.move_joints.joints.left_elbow_pich",
        "unknown joint (did you mean 'left_elbow_pitch'?)",
    )


def test_joint_target_outside_limits(ws: Workspace) -> None:
    leaf = "- move_joints: {joints: {head_pitch: 0.9}, timeout: 5}"
    r = ws.check(leaf_mission(leaf))
    assert one_error(r) == (
        LEAF_LINE,
        leaf_col(leaf, "0.9"),
        f"{CHILD}.move_joints.joints.head_pitch",
        "0.9 rad is outside head_pitch's limits [-1.57, 0.6981]",
    )


def test_joint_target_at_the_limit_is_fine(ws: Workspace, profile: RobotProfile) -> None:
    upper = profile.joints["left_elbow_pitch"].upper
    leaf = _leaf(ws, f"- move_joints: {{joints: {{left_elbow_pitch: {upper}}}, timeout: 5}}")
    assert leaf.args["targets"] == {"left_elbow_pitch": upper}


def test_finger_outside_its_range(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- hand_gesture: {fingers: {right_thumb_rotate: 1.2}, timeout: 5}"))
    assert one_error(r)[3] == "1.2 rad is outside right_thumb_rotate's limits [1.5708, 2.8798]"


def test_gesture_fingers_must_be_hand_joints(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- hand_gesture: {fingers: {right_elbow_pitch: 1.0}, timeout: 5}"))
    assert "is not a finger joint" in one_error(r)[3]


def test_non_finite_targets_are_refused(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- move_joints: {joints: {head_yaw: .nan}, timeout: 5}"))
    assert one_error(r)[3] == "must be a finite number, got nan"


# -- poses, gestures, selection ------------------------------------------------------------


def test_pose_becomes_its_joint_targets(ws: Workspace) -> None:
    leaf = _leaf(ws, "- move_joints: {pose: look_left, duration: 3.5, timeout: 5}")
    assert leaf.args == {
        "targets": {"head_yaw": 0.9, "head_pitch": 0.1},
        "pose": "look_left",
        "duration": 3.5,
        "speed": None,
        "tolerance": 0.05,
        "timeout": 5.0,
        "path": "straight",
        "plan_timeout": 2.0,
        "scene": EMPTY_SCENE,
    }
    assert leaf.name == "Move to pose look_left"


def test_unknown_pose(ws: Workspace) -> None:
    leaf = "- move_joints: {pose: hom, timeout: 5}"
    r = ws.check(leaf_mission(leaf))
    assert one_error(r) == (
        LEAF_LINE,
        leaf_col(leaf, "hom,"),
        f"{CHILD}.move_joints.pose",
        "unknown pose 'hom' (did you mean 'home'?)",
    )


def test_unknown_gesture(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- hand_gesture: {gesture: right_wav, timeout: 5}"))
    line, col, path, message = one_error(r)
    assert path == f"{CHILD}.hand_gesture.gesture"
    assert message.startswith("unknown gesture 'right_wav' (")


def test_select_narrows_a_pose(ws: Workspace) -> None:
    leaf = _leaf(ws, "- move_joints: {pose: home, select: [head, torso], timeout: 5}")
    assert leaf.args["targets"] == {"torso": 0.0, "head_yaw": 0.0, "head_pitch": 0.0}


def test_select_of_unknown_name(ws: Workspace) -> None:
    leaf = "- move_joints: {pose: home, select: [left_armm], timeout: 5}"
    r = ws.check(leaf_mission(leaf))
    line, col, path, message = one_error(r)
    assert (line, col, path) == (
        LEAF_LINE,
        leaf_col(leaf, "left_armm"),
        f"{CHILD}.move_joints.select[0]",
    )
    assert message.startswith(
        "unknown joint, joint set or group 'left_armm' (did you mean 'left_arm'?)"
    )


def test_select_that_keeps_nothing(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- move_joints: {pose: look_left, select: left_arm, timeout: 5}"))
    assert (
        one_error(r)[3] == "selects none of the joints of pose 'look_left' (head_yaw, head_pitch)"
    )


def test_pose_and_joints_exclude_each_other(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- move_joints: {pose: home, joints: {head_yaw: 0}, timeout: 5}"))
    assert one_error(r)[3] == "give either pose or joints, not both"
    r = ws.check(leaf_mission("- move_joints: {timeout: 5}"))
    assert one_error(r)[3] == "needs pose or joints"


# -- speeds, durations, timeouts -----------------------------------------------------------


def test_speed_above_the_cap(ws: Workspace, profile: RobotProfile) -> None:
    cap = profile.joints["head_yaw"].max_velocity
    r = ws.check(
        leaf_mission(f"- move_joints: {{pose: look_left, speed: {cap + 0.5}, timeout: 5}}")
    )
    assert one_error(r)[2:] == (
        f"{CHILD}.move_joints.speed",
        f"{cap + 0.5:g} rad/s is above the speed cap of head_yaw ({cap:g} rad/s in the robot profile)",
    )


def test_speed_cap_is_the_slowest_joint_moved(ws: Workspace, profile: RobotProfile) -> None:
    torso, arms = (
        profile.joints["torso"].max_velocity,
        profile.joints["right_elbow_pitch"].max_velocity,
    )
    assert torso < arms
    assert ws.check(
        leaf_mission(f"- move_joints: {{pose: right_offer, speed: {arms}, timeout: 5}}")
    ).ok
    r = ws.check(leaf_mission(f"- move_joints: {{pose: home, speed: {arms}, timeout: 5}}"))
    assert "speed cap of torso" in one_error(r)[3]


def test_duration_and_speed_exclude_each_other(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- move_joints: {pose: home, speed: 0.2, duration: 2, timeout: 5}"))
    assert one_error(r)[3] == "give duration or speed, not both"


def test_timeout_shorter_than_duration(ws: Workspace) -> None:
    leaf = "- move_joints: {pose: home, duration: 6, timeout: 5}"
    r = ws.check(leaf_mission(leaf))
    assert one_error(r) == (
        LEAF_LINE,
        leaf_col(leaf, "5}"),
        f"{CHILD}.move_joints.timeout",
        "5 s is shorter than the move's duration (6 s): it would always time out",
    )


GRX_ONLY = {"run_task"}  # the Atom's profile lacks "tasks": tests/behaviours/test_tasks.py
WAITING = sorted(k.name for k in KINDS.values() if k.waits and k.name not in GRX_ONLY)
VALID_WAITING = {
    "acquire_control": "{}",
    "release_control": "{}",
    "set_fsm": "{state: stand}",
    "move_joints": "{pose: home}",
    "hand_gesture": "{gesture: right_open}",
    "navigate_to_tag": "{tag: 4}",
    "wait_for_button": "{button: A}",
    "reach": "{point: right_hand, at: [0.45, -0.2, 0.1], solve: right_arm}",
}


def test_the_waiting_kinds_are_the_expected_ones() -> None:
    assert sorted(VALID_WAITING) == WAITING


@pytest.mark.parametrize("kind", WAITING)
def test_every_wait_needs_a_timeout(ws: Workspace, kind: str) -> None:
    r = ws.check(leaf_mission(f"- {kind}: {VALID_WAITING[kind]}"))
    line, col, path, message = one_error(r)
    assert (line, col, path) == (LEAF_LINE, 9, f"{CHILD}.{kind}")
    assert message.startswith(
        f"missing timeout: {kind} waits on the robot, so it needs a timeout > 0"
    )


@pytest.mark.parametrize("kind", WAITING)
@pytest.mark.parametrize("timeout", ["0", "-1", "1e9", "null", "forever"])
def test_timeouts_must_be_positive_and_bounded(ws: Workspace, kind: str, timeout: str) -> None:
    fields = VALID_WAITING[kind].rstrip("}")
    sep = ", " if fields != "{" else ""
    r = ws.check(leaf_mission(f"- {kind}: {fields}{sep}timeout: {timeout}}}"))
    path = one_error(r)[2]
    assert path == f"{CHILD}.{kind}.timeout"


@pytest.mark.parametrize("kind", WAITING)
def test_waiting_kinds_load_with_a_timeout(ws: Workspace, kind: str) -> None:
    fields = VALID_WAITING[kind].rstrip("}")
    sep = ", " if fields != "{" else ""
    leaf = _leaf(ws, f"- {kind}: {fields}{sep}timeout: 2.5}}")
    assert leaf.args["timeout"] == 2.5


# -- FSM, base, buttons, battery, log ------------------------------------------------------


def test_fsm_name_gets_its_id(ws: Workspace, profile: RobotProfile) -> None:
    leaf = _leaf(ws, "- set_fsm: {state: walk, timeout: 3}")
    assert leaf.args == {"state": "walk", "fsm_id": profile.fsm["walk"].id, "timeout": 3.0}


def test_unknown_fsm_name(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- set_fsm: {state: joint_ctrl, timeout: 3}"))
    assert one_error(r)[3] == "unknown FSM state 'joint_ctrl' (did you mean 'joint_control'?)"


def test_fsm_by_number_is_range_checked(ws: Workspace) -> None:
    assert _leaf(ws, "- set_fsm: {state: 301, timeout: 3}").args["fsm_id"] == 301
    r = ws.check(leaf_mission("- set_fsm: {state: 70000, timeout: 3}"))
    assert one_error(r)[3] == "must be <= 65535, got 70000"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ("{tag: -1, timeout: 5}", "must be a tag id 0..4294967295, got -1"),
        ("{tag: 4294967296, timeout: 5}", "must be a tag id 0..4294967295, got 4294967296"),
        ("{tag: 1.5, timeout: 5}", "expected a tag id (0..4294967295), got number 1.5"),
        ("{tag: 3, theta: 3.5, timeout: 5}", "must be <= 3.14159, got 3.5"),
    ],
)
def test_navigation_ranges(ws: Workspace, fields: str, message: str) -> None:
    assert one_error(ws.check(leaf_mission(f"- navigate_to_tag: {fields}")))[3] == message


def test_buttons_are_a_closed_set(ws: Workspace) -> None:
    assert _leaf(ws, "- wait_for_button: {button: START, timeout: 9}").args["button"] == "START"
    r = ws.check(leaf_mission("- wait_for_button: {button: a, timeout: 9}"))
    assert "unknown button 'a'" in one_error(r)[3]


def test_battery_level_is_a_percentage(ws: Workspace) -> None:
    assert one_error(ws.check(leaf_mission("- check_battery: {min_level: 101}")))[3] == (
        "must be <= 100, got 101"
    )


def test_log_message_must_not_be_empty(ws: Workspace) -> None:
    assert one_error(ws.check(leaf_mission("- log: {message: ''}")))[3] == "must not be empty"


# -- how nodes combine ---------------------------------------------------------------------


def test_reactive_sequence_allows_conditions_before_the_last_child(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          sequence:
            memory: false
            children:
              - check_battery: {min_level: 20}
              - inverter: {child: {check_battery: {min_level: 90}}}
              - wait: {seconds: 5}
        """
    )
    assert r.ok


def test_reactive_sequence_refuses_an_action_before_the_last_child(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          sequence:
            memory: false
            children:
              - wait: {seconds: 5}
              - log: {message: done}
        """
    )
    line, col, path, message = one_error(r)
    assert (line, col, path) == (6, 9, "tree.sequence.children[0].wait")
    assert "memory: false re-ticks finished children" in message


def test_reactive_fallback_refuses_an_action_before_the_last_child(ws: Workspace) -> None:
    r = ws.check(
        "mission: a\ntree:\n  fallback: {memory: false, children: [clear_errors, clear_errors]}\n"
    )
    assert "only conditions may come before the last child" in one_error(r)[3]


def test_parallel_without_memory_allows_one_action(ws: Workspace) -> None:
    ok = "mission: a\ntree:\n  parallel: {memory: false, children: [{check_battery: {min_level: 5}}, {wait: {seconds: 1}}]}\n"
    assert ws.check(ok).ok
    bad = "mission: a\ntree:\n  parallel: {memory: false, children: [{wait: {seconds: 2}}, {wait: {seconds: 1}}]}\n"
    assert "at most one child may be an action" in one_error(ws.check(bad))[3]


def test_guard_condition_must_be_a_condition(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          guard:
            condition: {wait: {seconds: 1}}
            child: clear_errors
        """
    )
    assert one_error(r)[:3] == (4, 17, "tree.guard.condition.wait")


def test_guard_condition_may_combine_conditions(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          guard:
            condition:
              fallback: [{check_battery: {min_level: 50}}, {inverter: {child: {check_battery: {min_level: 10}}}}]
            child: {wait: {seconds: 3}}
        """
    )
    assert r.ok


def test_parallel_children_must_not_drive_the_same_joint(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          parallel:
            children:
              - move_joints: {pose: look_left, timeout: 5}
              - move_joints: {pose: home, select: head, timeout: 5}
        """
    )
    line, col, path, message = one_error(r)
    assert (line, path) == (6, "tree.parallel.children[1].move_joints")
    assert (
        message
        == "drives joint head_yaw, joint head_pitch like child 0 of this parallel: they would fight over it"
    )


def test_parallel_arm_and_hand_is_fine(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          parallel:
            - move_joints: {pose: wave_raise, timeout: 5}
            - hand_gesture: {gesture: right_open, timeout: 5}
            - move_joints: {pose: look_left, timeout: 5}
        """
    )
    assert r.ok


def test_parallel_children_must_not_both_drive_the_base(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          parallel:
            - navigate_to_tag: {tag: 1, timeout: 50}
            - sequence: [{wait: {seconds: 1}}, {navigate_to_tag: {tag: 2, timeout: 50}}]
        """
    )
    assert "drives the base like child 0" in one_error(r)[3]


def test_motion_before_control_is_a_warning(ws: Workspace) -> None:
    r = ws.check("mission: a\ntree:\n  move_joints: {pose: home, timeout: 12}\n")
    assert r.ok
    (warning,) = r.diagnostics
    assert not warning.is_error
    assert "before any acquire_control" in warning.message
    assert "warning: moves joints" in str(warning)


def test_many_errors_are_reported_at_once(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          sequence:
            - move_joints: {pose: nope, timeout: 5}
            - wait: {seconds: -1}
            - set_fsm: {state: flying, timeout: 1}
            - navigate_to_tag: {tag: 1}
        """
    )
    assert [e.split(":")[0] for e in errors(r)] == ["4", "5", "6", "7"]
