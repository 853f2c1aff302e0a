"""The simulated Aurora's body (``executive.robots.aurora.sim.body``): the GR-3's model in
MuJoCo under the firmware's logic (``sim.model``), stepped in this process as the sim's
loop steps it (no DDS: ``test_sim.py`` drives the same through the wire and the vendor's
client). The joints follow the setpoints through the physics, the torso stops a forearm
and that contact is the model's, a freeze brakes, the motor config's gains apply."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import yaml

from executive.robots.aurora.sim.body import SimBody
from executive.robots.aurora.sim.model import AuroraModel
from executive.robots.aurora.wire.config import (
    FSM_UPPER_BODY_USER_CMD,
    GR3_GROUP_SIZES,
    GROUP_IDLE,
    GROUP_STOPPED,
)
from executive.seam.profile import RobotProfile, load_profile
from tests.aurora.harness import AURORA_PY, ROOT, env, require

PROFILES = ROOT / "executive" / "robots" / "profiles"
DT = 0.01  # s: the sim's 100 Hz loop
LEFT = "left_manipulator"
# the right forearm swung across the chest: the GR-3's torso is in the way of the wrist
ACROSS = {"right_shoulder_pitch": -1.0, "right_shoulder_yaw": 1.5, "right_elbow_pitch": -2.2}


@pytest.fixture(scope="module")
def profile() -> RobotProfile:
    return load_profile("aurora")


def robot(profile: RobotProfile) -> AuroraModel:
    """The GR-3 in FSM 11 (upper body taking commands), its body in MuJoCo, 2 rad/s."""
    body = SimBody(profile, GR3_GROUP_SIZES)
    return AuroraModel(GR3_GROUP_SIZES, speed=2.0, fsm=FSM_UPPER_BODY_USER_CMD, body=body)


def move(m: AuroraModel, group: str, position: Sequence[float], motion: int = 0) -> str:
    cmd = {"group_name": group, "group_motion_state": motion, "position": list(position)}
    return m.command("robot_control_group_cmd", {"group_cmd": [cmd]}, 0.0)


def run(m: AuroraModel, seconds: float) -> list[dict[str, object]]:
    events = []
    for _ in range(round(seconds / DT)):
        events += [e.as_dict() for e in m.step(DT, 0.0)]
    return events


def test_the_arm_follows_its_setpoint_through_the_physics(profile: RobotProfile) -> None:
    m = robot(profile)
    assert m.body is not None and {"left_leg", LEFT, "waist", "head"} <= m.body.modelled
    assert "left_hand" not in m.body.modelled  # gr3.urdf ends at the wrists
    target = [-1.5, 0.5, 0.0, -1.0, 0.0, 0.0, 0.0]
    assert move(m, LEFT, target) == f"{LEFT}:moving"
    assert move(m, "left_hand", [0.5] * 6) == "left_hand:moving"
    run(m, 0.3)
    arm = m.groups[LEFT]
    lag = np.abs(np.subtract(arm.q, arm.sp))
    assert lag.max() > 0.05 and np.abs(arm.dq).max() > 1.0  # a body with inertia, not the ramp
    assert m.groups["left_hand"].q == m.groups["left_hand"].sp  # no model: the setpoint
    run(m, 3.5)
    assert arm.motion == GROUP_IDLE
    np.testing.assert_allclose(arm.q, target, atol=2e-3)  # arrived, held (gravity compensated)
    assert m.contact_events == 0


def test_the_torso_stops_a_forearm_and_the_contact_is_the_models(profile: RobotProfile) -> None:
    m = robot(profile)
    names = list(profile.topics["right_manipulator"])
    target = [ACROSS.get(n, 0.0) for n in names]
    move(m, "right_manipulator", target)
    events = run(m, 3.0)
    assert [(e["action"], e["a"], e["b"], e["kind"]) for e in events] == [
        ("begin", "right_hand_yaw_link", "torso_link", "self")
    ]
    q = m.groups["right_manipulator"].q
    assert q[names.index("right_elbow_pitch")] > ACROSS["right_elbow_pitch"] + 0.1  # stopped
    status = m.status()
    assert status["contact_events"] == 1
    assert [(c["a"], c["b"]) for c in status["contacts"]] == [("right_hand_yaw_link", "torso_link")]


def test_security_protection_stops_a_moving_arm_dead(profile: RobotProfile) -> None:
    m = robot(profile)
    move(m, LEFT, [-1.5, 0.5, 0.0, -1.0, 0.0, 0.0, 0.0])
    run(m, 0.3)
    arm = m.groups[LEFT]
    assert np.abs(arm.dq).max() > 1.0  # first: the arm was moving, fast
    m.raise_fsm9()
    at = np.array(arm.q)
    run(m, 1.0)
    assert arm.motion == GROUP_STOPPED
    assert np.abs(np.subtract(arm.q, at)).max() < 1e-6  # braked where FSM 9 found it
    assert np.abs(arm.dq).max() < 1e-6
    assert move(m, LEFT, [0.0] * 7) == "ignored_fsm"
    run(m, 0.5)
    assert np.abs(np.subtract(arm.q, at)).max() < 1e-6


def test_the_motor_configs_gains_drive_the_joints(profile: RobotProfile) -> None:
    """``robot_motor_cfg_group_cmd``'s ``pd_kp``/``pd_kd`` are the joints' PD gains: a soft
    arm lags where the profile's gains (kp 40) have it arrive; unusable gains are ignored."""
    target = [-1.5, 0.5, 0.0, -1.0, 0.0, 0.0, 0.0]
    errors = []
    for gains in ({}, {"pd_kp": [5.0] * 7, "pd_kd": [0.5] * 7}, {"pd_kp": [float("nan")] * 7}):
        m = robot(profile)
        cfg = {"group_name": LEFT, **gains}
        m.command("robot_motor_cfg_group_cmd", {"group_cmd": [cfg]}, 0.0)
        move(m, LEFT, target)
        run(m, 1.0)
        errors.append(float(np.abs(np.subtract(m.groups[LEFT].q, target)).max()))
    default, soft, nan = errors
    assert default < 0.05 and soft > 0.2
    assert nan == pytest.approx(default, abs=1e-9)


def test_a_group_size_the_model_contradicts_is_refused(profile: RobotProfile) -> None:
    with pytest.raises(ValueError, match=r"--groups: left_manipulator=6, but .* lists 7"):
        SimBody(profile, {**GR3_GROUP_SIZES, LEFT: 6})
    SimBody(profile, {**GR3_GROUP_SIZES, "left_hand": 12})  # the hands: not in the model


def test_a_profile_without_a_body_is_refused(profile: RobotProfile) -> None:
    with pytest.raises(ValueError, match="no body model"):
        SimBody(load_profile("adam-pro"), GR3_GROUP_SIZES)


@pytest.mark.dds  # starts the sim's process (in .venv-aurora); it stops before DDS
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--physics", "kinematic", "--scene", "x.yaml"], "a scene needs the body"),
        (["--profile", "adam-pro"], "no body model"),
        (["--scene", "/nonexistent.yaml"], "scene /nonexistent.yaml"),
    ],
)
def test_the_sim_refuses_a_body_it_cannot_have(args: list[str], says: str) -> None:
    done = subprocess.run(
        [str(require(AURORA_PY)), "-m", "executive.robots.aurora.sim", *args],
        capture_output=True,
        text=True,
        env=env(),
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert says in done.stderr


@pytest.mark.dds  # starts processes; the sim stops before DDS
def test_atom_executive_sim_gives_the_sim_its_profile(tmp_path: Path) -> None:
    """``atom-executive sim --profile P``: the launcher hands ``--profile`` on (the body
    comes from it), so an Aurora profile without a body is refused by the sim, naming it."""
    raw = yaml.safe_load((PROFILES / "aurora.yaml").read_text(encoding="utf-8"))
    raw.update(name="gr3-site", body={"none": "this site's GR-3 has no model"})
    profile = tmp_path / "gr3-site.yaml"
    profile.write_text(yaml.safe_dump(raw), encoding="utf-8")
    cli = Path(sys.executable).with_name("atom-executive")
    done = subprocess.run(
        [str(cli), "sim", "--profile", str(profile)],
        capture_output=True,
        text=True,
        env={**env(), "ATOM_AURORA_PYTHON": str(require(AURORA_PY))},
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "'gr3-site' has no body model" in done.stderr
