"""A move's tolerance is in its joints' units: the profile's per-stream default and
maximum (``tolerance:``). The Adam's hands are counts 0..1000, its body and every Atom
joint rad (0.05, at most 0.5, as before). Before, one field range in rad served every
robot: an Adam hand_gesture took at most 0.5 counts, so it needed the exact count and a
hand closing on an object could only time out."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from behaviours.actions.motion import DEFAULT_TOLERANCE, MoveJoints
from executive.language.model import Leaf
from executive.mission.builders import BUILDERS
from executive.mission.loader import LoadResult, MissionLoader
from executive.seam.profile import RAD_TOLERANCE, ProfileError, Tolerance, load_profile

from .conftest import MISSIONS, ROOT, errors

ADAM = load_profile("adam-pro")
ATOM = load_profile()


def check(directory: Path, profile: Any, leaf: str) -> LoadResult:
    path = directory / "m.yaml"
    path.write_text(f"mission: m\ntree:\n  sequence:\n    children:\n      - {leaf}\n")
    return MissionLoader(profile, directory).check(path)


@pytest.fixture
def adam_dir(tmp_path: Path) -> Path:
    for folder in ("poses", "gestures"):
        shutil.copytree(MISSIONS / "adam" / folder, tmp_path / folder)
    return tmp_path


def only_leaf(result: LoadResult) -> Leaf:
    assert result.ok and result.mission is not None, errors(result)
    (leaf,) = result.mission.leaves()
    return leaf


def test_the_profiles_say_each_streams_tolerance_in_its_units() -> None:
    assert ADAM.tolerance("right_index") == Tolerance(30.0, 300.0, "counts")
    assert ADAM.tolerance("left_elbow") == RAD_TOLERANCE
    for name in ("adam-standard", "adam-lite", "adam-pro-sdkindex"):  # inherited
        assert load_profile(name).tolerance("left_thumb_rotate").unit == "counts", name
    assert ATOM.tolerances == {}
    assert {ATOM.tolerance(j) for j in ATOM.joints} == {RAD_TOLERANCE}
    assert Tolerance(0.05, 0.5, "rad") == RAD_TOLERANCE and DEFAULT_TOLERANCE == 0.05


def test_an_adam_gesture_arrives_within_the_hands_default_in_counts(adam_dir: Path) -> None:
    leaf = only_leaf(check(adam_dir, ADAM, "hand_gesture: {gesture: right_closed, timeout: 4}"))
    assert leaf.args["tolerance"] == 30.0
    built = build_leaf(leaf)
    assert built.tolerance == 30.0


def test_an_adam_gesture_closing_on_an_object_may_give_counts(adam_dir: Path) -> None:
    text = "hand_gesture: {gesture: right_closed, tolerance: 250, timeout: 4}"
    assert only_leaf(check(adam_dir, ADAM, text)).args["tolerance"] == 250
    result = check(adam_dir, ADAM, text.replace("250", "400"))
    assert not result.ok
    (problem,) = errors(result)
    assert problem.endswith("tolerance: must be <= 300 counts (the robot profile's), got 400")


def test_an_adam_body_move_keeps_rad(adam_dir: Path) -> None:
    leaf = only_leaf(check(adam_dir, ADAM, "move_joints: {pose: wave_out, timeout: 5}"))
    assert leaf.args["tolerance"] == 0.05
    (problem,) = errors(
        check(adam_dir, ADAM, "move_joints: {pose: wave_out, tolerance: 0.9, timeout: 5}")
    )
    assert problem.endswith("tolerance: must be <= 0.5, got 0.9")


def test_one_tolerance_for_joints_in_different_units_is_refused(adam_dir: Path) -> None:
    mixed = "move_joints: {joints: {left_elbow: -0.3, left_index: 500}, timeout: 5}"
    leaf = only_leaf(check(adam_dir, ADAM, mixed))
    assert leaf.args["tolerance"] is None  # each joint its stream's default, at run time
    (problem,) = errors(check(adam_dir, ADAM, mixed.replace("timeout", "tolerance: 0.1, timeout")))
    assert "one tolerance for joints in different units (counts, rad)" in problem


@pytest.mark.parametrize(
    ("leaf", "tolerance"),
    [
        ("hand_gesture: {gesture: right_open, timeout: 4}", 0.05),
        ("move_joints: {pose: home, timeout: 12}", 0.05),
        ("move_joints: {pose: home, tolerance: 0.3, timeout: 12}", 0.3),
        ("hand_gesture: {gesture: right_open, tolerance: 0.5, timeout: 4}", 0.5),
    ],
)
def test_the_atom_keeps_its_default_and_range_in_rad(
    mission_dir: Path, leaf: str, tolerance: float
) -> None:
    assert only_leaf(check(mission_dir, ATOM, leaf)).args["tolerance"] == tolerance


def test_the_atom_refuses_above_half_a_radian_as_before(mission_dir: Path) -> None:
    result = check(
        mission_dir, ATOM, "hand_gesture: {gesture: right_open, tolerance: 0.6, timeout: 4}"
    )
    (problem,) = errors(result)
    assert problem.endswith("tolerance: must be <= 0.5, got 0.6")


def test_every_shipped_mission_has_the_tolerance_it_had(tmp_path: Path) -> None:
    """Atom missions: every move's tolerance is the one written, else 0.05, as before."""
    loader = MissionLoader(ATOM, MISSIONS)
    seen: set[float] = set()
    for path in sorted(MISSIONS.glob("*.yaml")):
        result = loader.check(path)
        assert result.mission is not None, path
        for leaf in result.mission.leaves():
            if leaf.kind in ("move_joints", "hand_gesture"):
                seen.add(leaf.args["tolerance"])
    assert seen == {0.05, 0.03}


@pytest.mark.parametrize(
    ("tolerance", "says"),
    [
        ({"hands": {"default": 30, "max": 20, "unit": "counts"}}, "default: 30 is above max"),
        ({"hands": {"default": 30, "max": 300}}, "tolerance.hands: must be {default"),
        ({"hands": {"default": 0, "max": 300, "unit": "counts"}}, "default: must be > 0"),
        ({"wheels": {"default": 1, "max": 2, "unit": "m"}}, "tolerance.wheels: unknown joint"),
        ({"hands": {"default": 30, "max": 300, "unit": ""}}, "tolerance.hands.unit: must be"),
    ],
)
def test_a_bad_tolerance_in_a_profile_is_refused_naming_the_key(
    tmp_path: Path, tolerance: dict[str, Any], says: str
) -> None:
    path = tmp_path / "adam-site.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "extends": str(ROOT / "executive/robots/profiles/adam-pro.yaml"),
                "name": "adam-site",
                "tolerance": tolerance,
            }
        )
    )
    with pytest.raises(ProfileError) as e:
        load_profile(path)
    assert any(says in p for p in e.value.problems), e.value.problems


def build_leaf(leaf: Leaf) -> MoveJoints:
    built = BUILDERS[leaf.kind](leaf)
    assert isinstance(built, MoveJoints)
    return built
