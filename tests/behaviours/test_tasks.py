"""Tick tests: run_task asks for a task by the profile's name and waits for the robot's task
state to confirm it; a component is sent once. Joint and hand leaves are refused for the GRX."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from py_trees.common import Status

from behaviours.actions.tasks import RunTask
from behaviours.state import SNAPSHOT_KEY
from executive.mission.loader import MissionLoader
from executive.seam.ports import RobotSnapshot, Stamped
from executive.seam.profile import load_profile

from .conftest import Kit

GRX = load_profile("grx")


@pytest.fixture
def grx(kit: Kit) -> Kit:
    kit.context.profile = GRX
    return kit


def task_state(kit: Kit, tid: int, in_process: bool) -> None:
    now = kit.clock()
    snap = RobotSnapshot(taken=now, fsm=Stamped(tid, now), task=Stamped((tid, in_process), now))
    kit.robot.bb.set(SNAPSHOT_KEY, snap)


def test_run_task_confirmed_by_fresh_task_state(grx: Kit) -> None:
    task_state(grx, 960, False)  # already showing, but older than the request: not ours
    grx.clock.advance(0.01)
    leaf = grx.setup(RunTask("ready", timeout=3.0))
    assert grx.tick(leaf) is Status.RUNNING
    assert grx.commands.calls == [("run_task", 960)]
    assert grx.tick(leaf, 0.25) is Status.RUNNING and len(grx.commands.calls) == 2  # re-sent
    task_state(grx, 960, True)
    assert grx.tick(leaf, 0.01) is Status.SUCCESS


def test_until_done_waits_out_the_task_and_refusal_is_structured(grx: Kit) -> None:
    leaf = grx.setup(RunTask("servo_on", until="done", timeout=3.0))
    grx.tick(leaf)
    task_state(grx, 35, True)
    assert grx.tick(leaf, 0.1) is Status.RUNNING
    task_state(grx, 35, False)
    assert grx.tick(leaf, 0.1) is Status.SUCCESS

    leaf = grx.setup(RunTask("walk", timeout=3.0))
    grx.tick(leaf)
    statuses = []
    for _ in range(5):  # the robot stays in servo_on: refused 1 s after the request
        grx.clock.advance(0.2)
        task_state(grx, 35, False)
        statuses.append(grx.tick(leaf))
    assert statuses == [Status.RUNNING] * 4 + [Status.FAILURE]
    assert leaf.failure is not None and leaf.failure.code == "task_refused"
    assert "stayed in task 35" in leaf.failure.message


def test_run_task_times_out_without_state(grx: Kit) -> None:
    leaf = grx.setup(RunTask("ready", timeout=0.5))
    grx.tick(leaf)
    statuses = [grx.tick(leaf, 0.2) for _ in range(3)]
    assert statuses[-1] is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "timeout"
    assert "ready (960) never reported" in leaf.failure.message


def test_a_component_is_sent_once(grx: Kit) -> None:
    leaf = grx.setup(RunTask(component="natural_arm_swing", timeout=1.0))
    assert grx.tick(leaf) is Status.SUCCESS
    assert grx.commands.calls == [("run_component", 3407)]
    grx.context.profile = dataclasses.replace(GRX, options={})
    leaf = grx.setup(RunTask(component="natural_arm_swing", timeout=1.0))
    assert grx.tick(leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "no_component"


def test_joint_and_hand_leaves_are_refused_for_the_grx(tmp_path: Path) -> None:
    text = """\
mission: arm
tree:
  sequence:
    - move_joints: {joints: {head_yaw: 0.2}, timeout: 5}
    - hand_gesture: {fingers: {right_index: 0.5}, timeout: 5}
    - run_task: {component: wave, timeout: 5}
    - run_task: {task: ready}
"""
    (tmp_path / "arm.yaml").write_text(text)
    errors = [str(e) for e in MissionLoader(GRX, tmp_path).check(tmp_path / "arm.yaml").errors]
    assert any("move_joints needs the robot's 'joints' capability" in e for e in errors), errors
    assert any("hand_gesture needs the robot's 'hands' capability" in e for e in errors), errors
    assert any("component 'wave' is not in profile grx's components" in e for e in errors), errors
    assert any("missing timeout: run_task waits on the robot" in e for e in errors), errors


def test_until_done_is_refused_for_a_task_that_never_ends(tmp_path: Path) -> None:
    """walk stays in process until another task replaces it (the profile's
    continuous_tasks): ``until: done`` validated and then timed out on the robot."""
    text = """\
mission: walk_done
tree:
  sequence:
    - run_task: {task: walk, until: done, timeout: 10}
    - run_task: {task: 965, until: done, timeout: 10}
    - run_task: {task: walk, timeout: 10}
    - run_task: {task: ready, until: done, timeout: 10}
"""
    (tmp_path / "walk_done.yaml").write_text(text)
    errors = [
        str(e) for e in MissionLoader(GRX, tmp_path).check(tmp_path / "walk_done.yaml").errors
    ]
    assert len(errors) == 2, errors
    assert all(".until: task " in e and "never done: use until: accepted" in e for e in errors)
    assert "'walk'" in errors[0] and "965" in errors[1] and ":4:" in errors[0] + errors[1]
