"""The robot capability each leaf kind needs, checked at validation (``LeafKind.requires``).

A robot lacks some ports (an Adam has no control authority, a GRX no joint streams); a
mission that uses a leaf needing one is refused before it runs, naming the leaf kind, the
capability and what the robot has.
"""

from __future__ import annotations

import dataclasses
import textwrap

import pytest

from executive.mission.loader import LoadResult, MissionLoader
from executive.mission.registry import LEAVES
from executive.seam.ports import CAPABILITIES
from executive.seam.profile import RobotProfile
from tests.mission.conftest import PROFILE, Workspace, errors, one_error

# One valid use of each leaf kind, on one line.
SAMPLES = {
    "acquire_control": "acquire_control: {timeout: 5}",
    "release_control": "release_control: {timeout: 5}",
    "set_fsm": "set_fsm: {state: 0, timeout: 5}",
    "move_joints": "move_joints: {joints: {head_yaw: 0.2}, timeout: 5}",
    "hand_gesture": "hand_gesture: {fingers: {right_index: 0.5}, timeout: 5}",
    "navigate_to_tag": "navigate_to_tag: {tag: 1, timeout: 60}",
    "wait": "wait: {seconds: 1}",
    "wait_for_button": "wait_for_button: {button: A, timeout: 30}",
    "clear_errors": "clear_errors",
    "check_battery": "check_battery: {min_level: 20}",
    "log": "log: {message: hello}",
    "walk": "walk: {forward: 0.5, duration: 2}",
    "run_task": "run_task: {task: 0, timeout: 5}",
    "checkpoint": "checkpoint: {name: here}",
    "reach": "reach: {point: right_hand, at: [0.45, -0.2, 0.1], solve: right_arm, timeout: 5}",
}
REQUIRES = {
    "acquire_control": "control",
    "release_control": "control",
    "set_fsm": "fsm",
    "move_joints": "joints",
    "hand_gesture": "hands",
    "navigate_to_tag": "navigation",
    "wait": None,
    "wait_for_button": "buttons",
    "clear_errors": "clear_faults",
    "check_battery": "battery",
    "log": None,
    "walk": "base_velocity",
    "run_task": "tasks",
    "checkpoint": None,
    "reach": "joints",
}
GRX_ONLY = {"walk", "run_task"}  # the Atom's profile lacks their capabilities (the GRX's has them)


def reduced(*capabilities: str) -> RobotProfile:
    return dataclasses.replace(PROFILE, capabilities=frozenset(capabilities))


def check(ws: Workspace, profile: RobotProfile, text: str, name: str = "m.yaml") -> LoadResult:
    path = ws.write(name, text)
    return MissionLoader(profile, ws.root).check(path)


def one_leaf(sample: str) -> str:
    return f"mission: t\ntree:\n  sequence:\n    - wait: {{seconds: 1}}\n    - {sample}\n"


def test_each_leaf_kind_names_the_capability_it_needs() -> None:
    assert {k.name: k.requires for k in LEAVES} == REQUIRES
    assert {k.requires for k in LEAVES} - {None} <= set(CAPABILITIES)
    assert set(SAMPLES) == {k.name for k in LEAVES}


def test_the_shipped_profile_offers_every_capability_its_leaves_need(ws: Workspace) -> None:
    for kind, sample in SAMPLES.items():
        if kind in GRX_ONLY:
            continue  # tests/behaviours/test_walking.py validates them for the GRX
        r = check(ws, PROFILE, one_leaf(sample))
        assert r.ok, (kind, "\n".join(map(str, r.diagnostics)))


def test_a_leaf_is_refused_on_a_robot_without_its_capability(ws: Workspace) -> None:
    profile = dataclasses.replace(reduced("hands", "joints"), name="adam-pro")
    r = check(ws, profile, one_leaf("navigate_to_tag: {tag: 1, timeout: 60}"))
    assert one_error(r) == (
        5,
        7,
        "tree.sequence[1].navigate_to_tag",
        f"navigate_to_tag needs the robot's 'navigation' capability; {profile.robot} "
        "(profile adam-pro) has: hands, joints",
    )
    (d,) = r.errors
    assert d.where.file.endswith("m.yaml")
    assert r.mission is None


@pytest.mark.parametrize("kind", [k for k, c in REQUIRES.items() if c is not None])
def test_every_kind_that_needs_a_capability_is_refused_without_it(ws: Workspace, kind: str) -> None:
    need = REQUIRES[kind]
    assert need is not None
    others = [c for c in CAPABILITIES if c != need]
    r = check(ws, reduced(*others), one_leaf(SAMPLES[kind]))
    (message,) = errors(r)
    assert f"{kind} needs the robot's {need!r} capability;" in message
    assert ", ".join(sorted(others)) in message
    # and accepted once the robot has it
    assert check(ws, reduced(need), one_leaf(SAMPLES[kind])).ok


@pytest.mark.parametrize("kind", [k for k, c in REQUIRES.items() if c is None])
def test_kinds_that_need_nothing_run_on_any_robot(ws: Workspace, kind: str) -> None:
    r = check(ws, reduced(), one_leaf(SAMPLES[kind]))
    assert r.ok, "\n".join(map(str, r.diagnostics))


def test_a_robot_with_no_capabilities_says_none(ws: Workspace) -> None:
    (message,) = errors(check(ws, reduced(), one_leaf("clear_errors")))
    assert message.endswith("has: none")


def test_every_use_is_reported_with_the_other_problems(ws: Workspace) -> None:
    text = """
        mission: t
        tree:
          sequence:
            - acquire_control: {timeout: 5}
            - move_joints: {joints: {head_yaw: 0.2}, timeout: 5}
            - hand_gesture: {fingers: {right_index: 0.5}, timeout: 5}
            - move_joints: {joints: {head_yw: 0.2}, timeout: 5}
        """
    r = check(ws, reduced("control", "hands"), textwrap.dedent(text).lstrip("\n"))
    got = [(d.where.line, d.path) for d in r.errors]
    assert got == [
        (5, "tree.sequence[1].move_joints"),
        (7, "tree.sequence[3].move_joints"),
        (7, "tree.sequence[3].move_joints.joints.head_yw"),
    ]


def test_a_leaf_in_a_subtree_is_reported_in_its_file(ws: Workspace) -> None:
    ws.write(
        "subtrees/drive.yaml",
        "subtree: drive\ntree:\n  navigate_to_tag: {tag: 1, timeout: 60}\n",
    )
    text = "mission: t\ntree:\n  sequence:\n    - include: subtrees/drive.yaml\n"
    r = check(ws, reduced("control", "joints"), text)
    (d,) = r.errors
    assert d.where.file.endswith("drive.yaml")
    assert (d.where.line, d.path) == (3, "tree.navigate_to_tag")
    assert "navigate_to_tag needs the robot's 'navigation' capability" in d.message


def test_a_shipped_mission_names_what_the_robot_lacks(ws: Workspace) -> None:
    """deliver_drink drives the base: a robot without navigation cannot run it."""
    import shutil

    from tests.mission.conftest import MISSIONS

    shutil.copy(MISSIONS / "deliver_drink.yaml", ws.root / "deliver_drink.yaml")
    caps = [c for c in PROFILE.capabilities if c != "navigation"]
    r = MissionLoader(reduced(*caps), ws.root).check(ws.root / "deliver_drink.yaml")
    assert r.errors
    assert all("'navigation' capability" in d.message for d in r.errors)
