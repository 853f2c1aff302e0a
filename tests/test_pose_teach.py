"""``pose teach`` without the robot: the pose from measured joints, the library written.

What reads the joints (a running executive's status, the robot's state topics) is proved
on the simulated Atom (tests/integration/test_pose_teach_on_sim.py); here the rest, on
measured joints given as numbers: the intent by the vendor URDF's forward kinematics in
plain numpy (tests/reach/urdf_fk.py, no code of the project's), the body check, the
refusals, and the library files, whose comments, key order and numbers survive.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from executive.mission.loader import MissionLoader
from executive.operator import poseteach
from executive.operator.poseteach import Taught, TeachError
from executive.seam.profile import load_profile
from tests.reach.test_urdf_fk import witness

ROOT = Path(__file__).resolve().parents[1]
PROFILE = load_profile("atom-sdk")
BODY = poseteach.body_of(PROFILE)
# right_reach_forward of missions/poses/arms.yaml, as a measured arm would be: off the
# library's round numbers
REACH = {
    "right_shoulder_pitch": -0.82013,
    "right_shoulder_roll": -0.10004,
    "right_shoulder_yaw": 0.29031,
    "right_elbow_pitch": 0.44987,
    "right_elbow_roll": 0.00002,
    "right_wrist_pitch": 0.33008,
    "right_wrist_roll": -0.00004,
}
# the right forearm swung into the torso (tests/sim/test_sim_body.py makes it a contact)
INTO_TORSO = {**REACH, "right_shoulder_pitch": 0.0, "right_shoulder_yaw": 1.5}
INTO_TORSO["right_elbow_pitch"] = -0.5


def library(tmp_path: Path) -> Path:
    """A copy of the shipped mission directory's library."""
    root = tmp_path / "missions"
    for folder in ("poses", "gestures"):
        shutil.copytree(ROOT / "missions" / folder, root / folder)
    return root


def loaded(root: Path) -> object:
    return MissionLoader(PROFILE, root.resolve()).library(root.resolve())


def test_the_pose_is_the_measured_joints_and_the_hand_where_the_urdf_puts_it() -> None:
    taught = poseteach.teach(PROFILE, BODY, "right_arm", REACH)
    assert list(taught.joints) == list(PROFILE.joint_sets["right_arm"])
    for joint, q in taught.joints.items():
        assert abs(q - REACH[joint]) <= 0.5e-4  # to 0.1 mrad
    assert list(taught.points) == ["right_hand"]  # the right arm moves no other point
    hand = np.array(taught.points["right_hand"])
    assert np.linalg.norm(hand - witness("right_hand", dict(REACH))) < 1e-3
    left = {j: 0.0 for j in PROFILE.joint_sets["left_arm"]} | {"left_elbow_pitch": 1.3}
    both = poseteach.teach(PROFILE, BODY, "arms", {**REACH, **left})
    assert list(both.points) == ["left_hand", "right_hand"]
    head = poseteach.teach(PROFILE, BODY, "head", {"head_yaw": 0.3, "head_pitch": 0.0})
    assert list(head.points) == ["gaze"]
    assert np.linalg.norm(np.array(head.points["gaze"]) - witness("gaze", {"head_yaw": 0.3})) < 1e-3


def test_refusals_say_why_in_one_line() -> None:
    def refused(group: str, measured: dict[str, float]) -> str:
        with pytest.raises(TeachError) as e:
            poseteach.teach(PROFILE, BODY, group, measured)
        assert "\n" not in str(e.value)
        return str(e.value)

    said = refused("right_leg", REACH)
    assert "no joint group, set or joint 'right_leg'" in said
    assert "fingers are gestures" in refused("right_hand", REACH)  # a set of finger joints
    assert "no measured position for right_wrist_roll" in refused(
        "right_arm", {k: v for k, v in REACH.items() if k != "right_wrist_roll"}
    )
    said = refused("right_arm", {**REACH, "right_elbow_pitch": 2.1})
    assert "measured 2.1 rad is outside right_elbow_pitch's limits [-0.87, 2]" in said
    said = refused("right_arm", INTO_TORSO)
    assert said.startswith("the body as measured collides: ")
    assert "torso_link" in said and "move right_arm clear and teach again" in said
    # a joint at its limit but for the last digit is at the limit, not refused
    at = poseteach.teach(PROFILE, BODY, "right_arm", {**REACH, "right_elbow_pitch": 2.00004})
    assert at.joints["right_elbow_pitch"] == 2.0


def test_an_arm_still_moving_is_refused() -> None:
    poseteach._still({"a": 0.1}, {"a": 0.1009})
    with pytest.raises(TeachError, match=r"the robot moves \(a by 1.5 mrad"):
        poseteach._still({"a": 0.1, "b": 0.0}, {"a": 0.1015, "b": 0.0})


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "missions" / "poses").glob("*.yaml"))
)
def test_a_pose_taught_into_a_shipped_file_keeps_every_byte_of_it(
    tmp_path: Path, name: str
) -> None:
    root = library(tmp_path)
    path = root / "poses" / name
    before = path.read_text()
    taught = poseteach.teach(PROFILE, BODY, "right_arm", REACH)
    poseteach.write(path, "taught_reach", poseteach.entry(taught, "Taught."), force=False)
    after = path.read_text()
    assert after.startswith(before)  # comments, key order, numbers: all as written
    added = yaml.safe_load(after)["poses"]["taught_reach"]
    assert added == {
        "description": "Taught.",
        "joints": dict(taught.joints),
        "intent": {"right_hand": {"at": list(taught.points["right_hand"]), "within": 0.02}},
    }
    assert after[len(before) :].splitlines()[-1].startswith("      right_hand: {at: [")
    lib = loaded(root)
    assert not [d for d in lib.diagnostics if d.is_error]  # type: ignore[attr-defined]
    pose = lib.poses["taught_reach"]  # type: ignore[attr-defined]
    assert dict(pose.joints) == dict(taught.joints)
    assert pose.intent["right_hand"].at == taught.points["right_hand"]


def test_a_name_there_is_refused_and_force_replaces_it_in_its_place(tmp_path: Path) -> None:
    root = library(tmp_path)
    path = root / "poses" / "arms.yaml"
    before = path.read_text()
    taught = poseteach.teach(PROFILE, BODY, "right_arm", REACH)
    with pytest.raises(TeachError, match=r"pose 'right_carry' exists \(.*arms.yaml:\d+\)"):
        poseteach.write(path, "right_carry", poseteach.entry(taught, "x"), force=False)
    assert path.read_text() == before
    poseteach.write(
        path, "right_carry", poseteach.entry(taught, "x"), force=True, keep_description=True
    )
    after = path.read_text()
    head, _, _ = before.partition("  right_carry:")
    _, _, tail = before.partition("  right_offer:")
    assert after.startswith(head + "  right_carry:\n    description: Right forearm level")
    assert after.endswith("  right_offer:" + tail)  # the poses after it, comments and all
    names = list(yaml.safe_load(after)["poses"])
    assert names == list(yaml.safe_load(before)["poses"])  # the key order
    assert loaded(root).poses["right_carry"].joints == taught.joints  # type: ignore[attr-defined]


def test_a_new_file_starts_with_what_it_holds(tmp_path: Path) -> None:
    root = library(tmp_path)
    path = root / "poses" / poseteach.DEFAULT_FILE
    taught = Taught(
        "right_arm", dict(poseteach.teach(PROFILE, BODY, "right_arm", REACH).joints), {}
    )
    poseteach.write(path, "first", poseteach.entry(taught, "First."), force=False)
    text = path.read_text()
    assert text.startswith("# Poses taught from the robot")
    assert (
        "poses:\n  first:\n    description: First.\n    joints:\n      right_shoulder_pitch:"
        in text
    )
    poseteach.write(path, "second", poseteach.entry(taught, "Second."), force=False)
    assert list(yaml.safe_load(path.read_text())["poses"]) == ["first", "second"]
    poseteach.check_written(PROFILE, root, path, "second")
    (root / "poses" / "broken.yaml").write_text("poses: [\n")
    with pytest.raises(TeachError, match=r"broken.yaml:\d+: not YAML the library can read"):
        poseteach.write(
            root / "poses" / "broken.yaml", "x", poseteach.entry(taught, "x"), force=False
        )
    (root / "poses" / "list.yaml").write_text("- a\n")
    with pytest.raises(TeachError, match="not a pose library"):
        poseteach.write(
            root / "poses" / "list.yaml", "x", poseteach.entry(taught, "x"), force=False
        )
