"""PND Adam profiles: the three models load with their motor counts; the order is one key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from executive.seam import registry
from executive.seam.body import NoBody
from executive.seam.profile import PROFILES_DIR, ProfileError, builtin_profiles, load_profile

MODELS = {"adam-pro": 31, "adam-standard": 29, "adam-lite": 23}  # seed 002; SP = Standard


def _data(name: str) -> dict[str, object]:
    data: dict[str, object] = yaml.safe_load((PROFILES_DIR / f"{name}.yaml").read_text())
    return data


def _write(tmp_path: Path, data: dict[str, object]) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(("name", "motors"), MODELS.items())
def test_models_load_with_their_motor_count(name: str, motors: int) -> None:
    p = load_profile(name)
    assert p.robot == "adam" and p.whole_body
    assert len(p.topics["body"]) == motors and len(p.topics["hands"]) == 12
    assert p.capabilities == {"joints", "hands"} and not p.fsm
    assert p.motor_mode == 1  # enable
    assert 400 <= p.command_hz <= 500
    assert set(p.safety_sources) == set(p.state_hz) == {"low_state", "hand_state"}
    for joint in p.joints.values():
        assert joint.kp > 0 and joint.kd >= 0 and joint.lower < joint.upper
    # indices are the list positions, hands in counts
    assert [p.joints[n].index for n in p.topics["body"]] == list(range(motors))
    fingers = p.topic_joints("hands")
    assert {(j.lower, j.upper) for j in fingers} == {(0.0, 1000.0)}


def test_models_differ_where_the_hardware_does() -> None:
    pro, std, lite = (load_profile(n) for n in MODELS)
    assert {"head_yaw", "head_pitch"} <= set(pro.joints)
    assert not {"head_yaw", "head_pitch"} & (set(std.joints) | set(lite.joints))
    assert "left_wrist_yaw" in std.joints and "left_wrist_yaw" not in lite.joints
    assert len(lite.expand(["left_arm"])) == 4 and len(std.expand(["left_arm"])) == 7
    # the shared prefix (legs, waist, shoulders, elbow) has the same indices in all three
    assert pro.topics["body"][:19] == std.topics["body"][:19] == lite.topics["body"][:19]
    # extends: rates, caps and hands come from adam-pro
    assert std.topics["hands"] == lite.topics["hands"] == pro.topics["hands"]
    assert std.command_hz == lite.command_hz == pro.command_hz
    # each model's own vendor limits (adam_sp.xml / adam_lite.urdf)
    assert std.joints["waist_roll"].upper == 0.279 and lite.joints["waist_roll"].upper == 0.226


def test_default_order_is_the_vendor_mujoco_order() -> None:
    p = load_profile("adam-pro")
    body = p.topics["body"]
    assert body[12:15] == ("waist_roll", "waist_pitch", "waist_yaw")
    assert body[19:22] == ("left_wrist_yaw", "left_wrist_pitch", "left_wrist_roll")
    assert body[29:] == ("head_yaw", "head_pitch")


def test_sdk_index_order_is_one_key() -> None:
    assert "adam-pro-sdkindex" in builtin_profiles()
    raw = _data("adam-pro-sdkindex")
    assert set(raw) == {"extends", "name", "description", "topics"}
    alt, pro = load_profile("adam-pro-sdkindex"), load_profile("adam-pro")
    assert alt.joints["waist_yaw"].index == 12 and pro.joints["waist_yaw"].index == 14
    assert alt.joints["left_wrist_roll"].index == 19 and pro.joints["left_wrist_roll"].index == 21
    assert set(alt.topics["body"]) == set(pro.topics["body"])
    # everything but the index is shared
    for name, joint in pro.joints.items():
        other = alt.joints[name]
        assert (other.lower, other.upper, other.kp, other.kd) == (
            joint.lower,
            joint.upper,
            joint.kp,
            joint.kd,
        )


def test_body_list_mismatch_names_the_key(tmp_path: Path) -> None:
    """The body stream's size is the profile's (spec: None), so a model's count is checked
    against its joints: a joint off the list, or a name that is no joint, names the key."""
    data = _data("adam-standard")
    data["extends"] = str(PROFILES_DIR / "adam-pro.yaml")
    topics = data["topics"]
    assert isinstance(topics, dict)
    topics["body"] = [*topics["body"][:-1], "right_wrist_twist"]
    with pytest.raises(ProfileError) as err:
        load_profile(_write(tmp_path, data))
    assert "topics.body[28]: 'right_wrist_twist' is not in joints" in err.value.problems
    assert (
        "joints.right_wrist_roll: is on no joint stream (add it to topics.body or topics.hands)"
        in err.value.problems
    )


def test_wrong_hand_count_names_the_key(tmp_path: Path) -> None:
    data = _data("adam-pro")
    topics = data["topics"]
    assert isinstance(topics, dict)
    topics["hands"] = topics["hands"][:11]
    with pytest.raises(ProfileError) as err:
        load_profile(_write(tmp_path, data))
    assert "topics.hands: has 11 joints, the wire carries 12" in err.value.problems


def test_capabilities_beyond_the_spec_are_refused(tmp_path: Path) -> None:
    data = _data("adam-pro")
    data["capabilities"] = ["joints", "navigation"]
    with pytest.raises(ProfileError) as err:
        load_profile(_write(tmp_path, data))
    assert any(
        p.startswith("capabilities[1]: adam has no 'navigation'") for p in err.value.problems
    )
    data["capabilities"] = ["joints"]  # a site without hands: a subset is fine
    assert load_profile(_write(tmp_path, data)).capabilities == {"joints"}


def test_spec_is_joints_hands_and_battery_only() -> None:
    """Battery where the profile gives the pack's voltage range (tests/test_adam_battery.py)."""
    spec = registry.spec("adam")
    assert spec.capabilities == {"joints", "hands", "battery"}
    assert spec.streams == {"body": None, "hands": 12}
    assert spec.sources == ("low_state", "hand_state")
    assert spec.whole_body and spec.fsm_id_max == 0 and spec.tag_max == 0


@pytest.mark.parametrize("name", [*MODELS, "adam-pro-sdkindex"])
def test_every_adam_keeps_body_none_and_says_why(name: str) -> None:
    """No body model for the Adam (issue 30, 5): PND's models carry no licence we may ship
    under; each profile says so, and validation, previews and the MCAP repeat it."""
    spec = load_profile(name).body
    assert isinstance(spec, NoBody)
    assert spec.why == (
        "the PND Adam has no licensed model we may ship (pndbotics/pnd_mujoco carries no licence)"
    )
