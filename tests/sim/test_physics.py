"""The simulated body in process (``simkit.physics``): gravity against the profile's gains,
contacts as events, the firmware's brakes. No DDS: the sim process tests are in
test_sim_body.py."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from executive.robots.simkit.joints import JointGroup
from executive.robots.simkit.physics import TIMESTEP, ContactEvent, Physics, load_scene
from executive.seam import body
from executive.seam.body import Box, Scene
from executive.seam.profile import load_profile

PROFILE = load_profile()


def make(scene: Scene = body.EMPTY_SCENE) -> tuple[Physics, JointGroup]:
    rng = np.random.default_rng(0)
    groups = {t: JointGroup(PROFILE, t, rng) for t in ("upper", "lower", "hands")}
    return Physics.for_profile(PROFILE, groups, scene), groups["upper"]


def command(group: JointGroup, kp_scale: float = 1.0, **targets: float) -> None:
    """Targets by joint name (others 0) at the profile's gains times ``kp_scale``."""
    cmd = np.zeros((len(group.names), 5), dtype=np.float32)
    cmd[:, 3] = group.default_kp * kp_scale
    cmd[:, 4] = group.default_kd
    for name, q in targets.items():
        cmd[group.names.index(name), 0] = q
    group.command(cmd)


def run(physics: Physics, seconds: float) -> list[ContactEvent]:
    events: list[ContactEvent] = []
    for _ in range(round(seconds / TIMESTEP)):
        events += physics.step()
    return events


def move(
    physics: Physics, group: JointGroup, seconds: float, kp_scale: float = 1.0, **targets: float
) -> list[ContactEvent]:
    """Ramp from 0 to ``targets`` over ``seconds`` in 10 ms steps, as a planned move streams."""
    events: list[ContactEvent] = []
    n = round(seconds / 0.01)
    for k in range(1, n + 1):
        command(group, kp_scale, **{j: v * k / n for j, v in targets.items()})
        events += run(physics, 0.01)
    return events


def q(group: JointGroup, name: str) -> float:
    return float(group.q[group.names.index(name)])


def test_an_arm_held_out_sags_under_gravity_and_less_at_a_higher_kp() -> None:
    """The left arm straight out to the side (shoulder roll 1.5, elbow 1.5): gravity pulls
    it down against kp 200 (the SDK's controlParams), with no feed-forward (the executive
    sends tau 0): a steady error, bounded, about 1/4 of it at four times the kp."""
    errors = []
    for scale in (1.0, 4.0):
        physics, upper = make()
        move(physics, upper, 1.5, scale, left_shoulder_roll=1.5, left_elbow_pitch=1.5)
        run(physics, 3.0)
        roll = upper.names.index("left_shoulder_roll")
        assert abs(upper.dq[roll]) < 0.01  # at rest: a steady state, not a swing
        errors.append(1.5 - upper.q[roll])
    at_profile, stiffer = errors
    assert 0.03 < at_profile < 0.15, at_profile  # ~ m g l / kp = 5.4 kg 9.81 0.25 m / 200
    assert 0.15 < stiffer / at_profile < 0.35, errors
    # the torque the state reports is what holds the arm up: kp times the error
    physics, upper = make()
    move(physics, upper, 1.5, left_shoulder_roll=1.5, left_elbow_pitch=1.5)
    run(physics, 2.0)
    roll = upper.names.index("left_shoulder_roll")
    assert upper.tau[roll] == pytest.approx(200.0 * (1.5 - upper.q[roll]), rel=0.02)


def test_a_forearm_driven_into_the_torso_is_one_self_contact_naming_both_links() -> None:
    physics, upper = make()
    command(upper, right_shoulder_yaw=1.5, right_elbow_pitch=-0.5)
    events = run(physics, 2.0)
    assert [(e.action, e.a, e.b, e.kind) for e in events] == [
        ("begin", "right_elbow_pitch_link", "torso_link", "self")
    ]
    assert events[0].distance < 0  # overlapping
    assert physics.events == 1
    assert physics.culprit(events[0]) == "right_elbow_pitch"  # the forearm, not the torso
    assert q(upper, "right_shoulder_yaw") < 1.2  # the torso stops the arm short of 1.5
    command(upper, right_elbow_pitch=1.3)  # away again: the contact ends, once
    events = run(physics, 1.5)
    assert [(e.action, e.a, e.b) for e in events] == [
        ("end", "right_elbow_pitch_link", "torso_link")
    ]
    assert not physics.active


def test_a_box_of_the_scene_stops_the_arm_and_is_a_scene_contact() -> None:
    reach = {"right_shoulder_pitch": -1.2, "right_elbow_pitch": 1.3}
    probe = body.load(PROFILE)
    probe.pose(reach)
    hand = probe.point("right_hand")
    shelf = Box("shelf", (float(hand[0]), float(hand[1]), float(hand[2])), (0.3, 0.3, 0.3))
    physics, upper = make(Scene((shelf,), ()))
    command(upper, **reach)
    events = run(physics, 2.0)
    begun = [(e.a, e.b, e.kind) for e in events if e.action == "begin"]
    assert begun == [("right_elbow_pitch_link", "shelf", "scene")]
    assert physics.culprit(events[0]) == "right_elbow_pitch"
    assert q(upper, "right_shoulder_pitch") > -1.1  # the shelf is in the way


def test_a_hand_below_the_floor_is_a_scene_contact() -> None:
    """The floor is a plane: the named points (hands) are checked against it."""
    physics, upper = make(Scene((), (body.Plane("floor", -0.1),)))
    command(upper, left_elbow_pitch=1.5)  # the left hand hangs to z -0.3
    events = run(physics, 1.5)
    assert [(e.a, e.b, e.kind) for e in events if e.action == "begin"] == [
        ("left_hand", "floor", "scene")
    ]
    assert physics.culprit(events[0]) == "left_wrist_roll"


def test_a_hand_below_the_floor_with_its_body_above_it_is_a_contact() -> None:
    """A point is tested exactly only when its body's origin is within the point's offset
    of the highest plane (the idle steps skip the test): the hand's point 9 cm out along
    the hand, below the plane while the hand's origin stays above it, is still found."""
    plane = -0.25
    physics, upper = make(Scene((), (body.Plane("floor", plane),)))
    command(upper, left_elbow_pitch=1.5)  # the hand's origin settles at z -0.21, its point -0.30
    events = run(physics, 1.5)
    assert [(e.a, e.b) for e in events if e.action == "begin"] == [("left_hand", "floor")]
    bid = next(b for name, b, *_ in physics._points if name == "left_hand")
    assert physics.data.xpos[bid][2] > plane  # the body itself never went below
    assert physics.active[("left_hand", "floor")].distance < -0.03


def test_a_servo_in_error_stops_its_joint_and_an_estop_brakes() -> None:
    physics, upper = make()
    command(upper, left_elbow_pitch=0.0)
    run(physics, 1.0)
    elbow = upper.names.index("left_elbow_pitch")
    held = upper.q[elbow]
    mask = np.zeros(len(upper.names), dtype=bool)
    mask[elbow] = True
    upper.freeze(mask)
    command(upper, left_elbow_pitch=1.2, left_shoulder_pitch=-0.5)
    run(physics, 1.5)
    assert abs(upper.q[elbow] - held) < 0.05  # held where it stopped (the load changes)
    assert q(upper, "left_shoulder_pitch") < -0.4  # the others move (and sag: 0.05 rad)
    upper.freeze(np.zeros(len(upper.names), dtype=bool))
    command(upper, left_shoulder_pitch=0.5)
    run(physics, 0.1)  # moving fast now
    upper.halt()
    physics.step()
    stopped = q(upper, "left_shoulder_pitch")
    run(physics, 1.0)
    assert abs(q(upper, "left_shoulder_pitch") - stopped) < 0.03  # braked where it was


def test_the_fingers_keep_the_kinematic_model_and_the_legs_stand() -> None:
    physics, _ = make()
    assert physics.kinematic == ["hands"]
    assert sorted(physics.driven) == ["lower", "upper"]
    lower = physics.driven["lower"].group
    run(physics, 3.0)  # nobody commands the legs: held at their start by the leg gains
    assert np.abs(lower.q).max() < 0.02
    assert np.abs(lower.dq).max() < 0.01


def test_a_scene_file_is_checked_naming_the_file_and_key(tmp_path: Path) -> None:
    good = tmp_path / "lab.yaml"
    good.write_text("scene:\n  table: {box: {center: [0.5, 0, -0.2], size: [0.6, 1.2, 0.05]}}\n")
    assert load_scene(good).names == ("table",)
    bad = tmp_path / "bad.yaml"
    bad.write_text("table: {box: {center: [0.5, 0], size: [0.6, 1.2, 0.05]}}\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: \(top level\)\.table\.box\.center"):
        load_scene(bad)
    with pytest.raises(ValueError, match="no obstacle"):
        (tmp_path / "empty.yaml").write_text("{}\n")
        load_scene(tmp_path / "empty.yaml")


def test_the_commands_tau_is_the_feed_forward_that_cancels_the_sag() -> None:
    """MotorCmd_.tau is added to the law (the SDK's ``tau_forward``): the model's gravity
    torque at the target, sent with it, leaves no steady error where kp alone leaves 0.06."""
    physics, upper = make()
    goal = {"right_shoulder_pitch": -0.9, "right_elbow_pitch": 0.3}
    m = physics.model
    probe = mujoco.MjData(m)
    for name, value in goal.items():
        probe.qpos[physics.body.qpos_of[name]] = value
    mujoco.mj_forward(m, probe)
    driven = physics.driven["upper"]
    gravity = probe.qfrc_bias[driven.dofs]  # at rest: gravity only
    errors = []
    for tau in (np.zeros(len(gravity)), gravity):
        physics, upper = make()
        for k in range(1, 101):
            cmd = np.zeros((len(upper.names), 5), dtype=np.float32)
            cmd[:, 3], cmd[:, 4] = upper.default_kp, upper.default_kd
            for name, value in goal.items():
                cmd[upper.names.index(name), 0] = value * k / 100
            cmd[:, 2] = tau * k / 100
            upper.command(cmd)
            run(physics, 0.01)
        run(physics, 3.0)
        errors.append(abs(goal["right_shoulder_pitch"] - q(upper, "right_shoulder_pitch")))
    kp_only, with_ff = errors
    assert kp_only > 0.03
    assert with_ff < 0.005, errors


def test_advance_steps_whole_periods_and_carries_the_rest() -> None:
    """A sim loop at its own rate (the GRX's 50 Hz, the Aurora's 100 Hz, each period a
    little late or early) gets the physics time it lived, in 2 ms steps, none lost."""
    physics, _ = make()
    assert physics.advance(0.001) == [] and physics.time == 0.0  # less than one step: later
    physics.advance(0.0115)  # 12.5 ms in all: six steps, 0.5 ms carried
    assert physics.time == pytest.approx(6 * TIMESTEP)
    for dt in (0.0102, 0.0097, 0.0101, 0.0105):
        physics.advance(dt)
    assert physics.time == pytest.approx(0.0525, abs=TIMESTEP)


def test_gravcomp_holds_an_arm_out_where_it_is_commanded() -> None:
    """``gravcomp``: a firmware that holds a commanded position under load (the Aurora's
    whole-body controller), where the MIT-mode law alone sags by kp's steady error."""
    rng = np.random.default_rng(0)
    sags = []
    for gravcomp in (False, True):
        groups = {t: JointGroup(PROFILE, t, rng) for t in ("upper", "lower", "hands")}
        physics = Physics.for_profile(PROFILE, groups, gravcomp=gravcomp)
        upper = groups["upper"]
        move(physics, upper, 1.5, left_shoulder_roll=1.5, left_elbow_pitch=1.5)
        run(physics, 3.0)
        sags.append(1.5 - q(upper, "left_shoulder_roll"))
    plain, compensated = sags
    assert plain > 0.03 and abs(compensated) < 1e-3, sags
