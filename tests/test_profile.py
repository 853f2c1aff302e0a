"""Robot profile: the shipped profiles agree with the reference facts; bad ones name the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from executive.seam.profile import ProfileError, builtin_profiles, load_profile

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "atom_joints.yaml"


def _write(tmp_path: Path, data: dict[str, object], name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def _default_data() -> dict[str, object]:
    from executive.seam.profile import PROFILES_DIR

    data: dict[str, object] = yaml.safe_load((PROFILES_DIR / "atom-sdk.yaml").read_text())
    return data


def test_both_upper_orders_ship() -> None:
    assert {"atom-sdk", "atom-seed001"} <= set(builtin_profiles())
    sdk, seed = load_profile("atom-sdk"), load_profile("atom-seed001")
    assert sdk.joints["torso"].index == 0 and seed.joints["torso"].index == 16
    assert (
        sdk.joints["left_shoulder_pitch"].index == 1
        and seed.joints["left_shoulder_pitch"].index == 0
    )
    assert seed.joints["head_pitch"].index == 15
    # everything but the upper order is shared
    assert sdk.topics["hands"] == seed.topics["hands"] and sdk.fsm == seed.fsm


@pytest.mark.skipif(not REFERENCE.exists(), reason="../shared/reference not beside the repo")
def test_indices_and_limits_follow_the_reference() -> None:
    ref = yaml.safe_load(REFERENCE.read_text())
    sdk, seed = load_profile("atom-sdk"), load_profile("atom-seed001")
    for j in ref["upper"]:
        assert sdk.joints[j["name"]].index == j["sdk_local"], j["name"]
        assert seed.joints[j["name"]].index == j["seed001_local"], j["name"]
    for j in ref["lower"]:
        assert sdk.joints[j["name"]].index == j["index"], j["name"]
    for j in ref["lower"] + ref["upper"]:
        joint = sdk.joints[j["name"]]
        lo = max(j["limits_doc"][0], j["urdf"][0])
        hi = min(j["limits_doc"][1], j["urdf"][1])
        if j["name"] == "right_shoulder_roll":  # documented exception: the URDF's mirror
            lo, hi = j["urdf"]
        assert (joint.lower, joint.upper) == (lo, hi), j["name"]
        assert joint.max_velocity <= j["urdf_vel"]
    order = ref["hands"]["order_seed_000"]
    for side, base in (("right", 0), ("left", 6)):
        for i, finger in enumerate(order):
            joint = sdk.joints[f"{side}_{finger}"]
            assert joint.index == base + i
            assert [joint.lower, joint.upper] == ref["hands"]["ranges_rad"][finger]


def test_expand_names_sets_groups() -> None:
    p = load_profile()
    assert p.expand(["head_yaw", "head"]) == ["head_yaw", "head_pitch"]
    assert len(p.expand(["left_arm", "right_hand"])) == 13
    assert len(p.expand(["all"])) == 41
    with pytest.raises(KeyError, match="nose"):
        p.expand(["nose"])


def test_fsm_overrides_confirm_placeholders() -> None:
    p = load_profile(fsm_overrides={"joint_control": 7, "custom": 900})
    assert p.fsm_id("joint_control") == 7 and not p.fsm["joint_control"].placeholder
    assert p.fsm_id("custom") == 900 and p.fsm_id(42) == 42
    assert p.allows_joint_control(7) and not p.allows_joint_control(0)


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (lambda d: d["joints"]["left_knee"].update(limits=[1.0, 0.5]), "joints.left_knee.limits"),
        (
            lambda d: d["joints"]["left_knee"].update(limits=[0.0, float("nan")]),
            "joints.left_knee.limits",
        ),
        (lambda d: d["joints"]["torso"].update(group="spine"), "joints.torso.group"),
        (lambda d: d["joints"]["torso"].update(kp=0.0), "joints.torso.kp"),
        (lambda d: d["gains"]["arms"].update(kd=-1.0), "gains.arms.kd"),
        (lambda d: d["topics"]["upper"].pop(), "topics.upper"),
        (lambda d: d["topics"]["upper"].__setitem__(3, "torso"), "topics.upper[3]"),
        (lambda d: d["topics"]["lower"].__setitem__(0, "tail"), "topics.lower[0]"),
        (lambda d: d["fsm"]["walk"].update(id=70000), "fsm.walk.id"),
        (lambda d: d["fsm_joint_control"].append("fly"), "fsm_joint_control[4]"),
        (lambda d: d["rates"].update(command_hz=-5), "rates.command_hz"),
        (lambda d: d["rates"]["state_hz"].pop("amr_state"), "rates.state_hz.amr_state"),
        (lambda d: d.update(motor_mode=300), "motor_mode"),
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d["joint_sets"]["left_arm"].append("nose"), "joint_sets.left_arm[7]"),
        (lambda d: d["velocity_caps"].pop("head"), "velocity_caps.head"),
        (lambda d: d.update(restart_safe_s=0), "restart_safe_s"),
        (lambda d: d.update(restart_safe_s=float("inf")), "restart_safe_s"),
        (lambda d: d.update(restart_safe_s=3600), "restart_safe_s"),
        (lambda d: d.update(restart_safe_s="soon"), "restart_safe_s"),
    ],
)
def test_bad_profile_names_the_key(tmp_path: Path, mutate: object, key: str) -> None:
    data = _default_data()
    mutate(data)  # type: ignore[operator]
    with pytest.raises(ProfileError) as err:
        load_profile(_write(tmp_path, data))
    assert any(p.startswith(f"{key}:") for p in err.value.problems), err.value.problems
    assert str(tmp_path / "p.yaml") in str(err.value)


def test_duplicate_fsm_ids_are_refused(tmp_path: Path) -> None:
    data = _default_data()
    data["fsm"]["walk"]["id"] = 0  # type: ignore[index]
    with pytest.raises(ProfileError, match=r"fsm\.(walk|zero_torque)\.id: 0 is also the id of"):
        load_profile(_write(tmp_path, data))


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    data = _default_data()
    data["motor_mode"] = "x"
    data["joints"]["head_yaw"]["limits"] = [2, 1]  # type: ignore[index]
    with pytest.raises(ProfileError) as err:
        load_profile(_write(tmp_path, data))
    assert len(err.value.problems) == 2


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "a: [\n", "\x00\xff"])
def test_unreadable_profiles_fail_cleanly(tmp_path: Path, text: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="latin-1")
    with pytest.raises(ProfileError):
        load_profile(path)


def test_extends_cycle_is_reported(tmp_path: Path) -> None:
    _write(tmp_path, {"extends": str(tmp_path / "b.yaml")}, "a.yaml")
    _write(tmp_path, {"extends": str(tmp_path / "a.yaml")}, "b.yaml")
    with pytest.raises(ProfileError, match="cycle"):
        load_profile(tmp_path / "a.yaml")
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(tmp_path / "missing.yaml")


def test_every_profile_key_is_in_the_docs_table() -> None:
    """docs/robots.md lists every key a profile may hold: ``max_pause_s`` (how long a pause
    may hold a mission) was documented nowhere (issue 35, 7). The robots' own options, a key
    per robot under its name, are one row: a robot added is not a key to document."""
    from executive.seam.profile import _TOP_KEYS
    from executive.seam.registry import SPECS

    docs = (Path(__file__).resolve().parents[1] / "docs" / "robots.md").read_text()
    table = [line for line in docs.splitlines() if line.startswith("| `")]
    named = {key for line in table for key in re.findall(r"`([a-z_]+):`", line.split("|")[1])}
    keys = set(_TOP_KEYS) - set(SPECS)
    assert named - set(SPECS) == keys, (keys - named, named - keys - set(SPECS))
    assert any("the robot's own options, under its name" in line for line in table)
    row = next(line for line in table if "`max_pause_s:`" in line)
    assert "default 300" in row and "ABORTED" in row
