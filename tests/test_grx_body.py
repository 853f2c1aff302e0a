"""The Fourier GRX's body (the GR-1 T2, profile grx) from its vendor's model:
``gr1t2.urdf`` of fourier-robot-descriptions 0.2.7 (PyPI, Apache-2.0), the same wheel as
the GR-3's (tests/test_gr3_body.py). The GRX takes no joint command; it reports its
joints, so the body is drawn (``pose preview``), recorded (the run's MCAP) and checked
(poses, validation) where the robot says it is.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import numpy as np
import pytest

from executive import cli
from executive.mission.loader import MissionLoader
from executive.operator.posepreview import Preview, Robot, draw
from executive.records import bodychannels
from executive.records.runchannels import catalogue
from executive.seam import body, bodyframes
from executive.seam.profile import RobotProfile, load_profile

GRX_MISSIONS = Path(__file__).resolve().parents[1] / "missions" / "grx"


@pytest.fixture(scope="module")
def profile() -> RobotProfile:
    return load_profile("grx")


@pytest.fixture(scope="module")
def gr1(profile: RobotProfile) -> body.Body:
    return body.load(profile)


def test_every_joint_of_the_profile_is_one_of_the_model_within_its_limits(
    profile: RobotProfile, gr1: body.Body
) -> None:
    assert isinstance(profile.body, body.BodySpec)
    assert profile.body.model == "package:fourier_robot_descriptions/assets/urdf/gr1t2.urdf"
    assert len(profile.topics["robot"]) == len(gr1.qpos_of) == 32
    m, hinge = gr1.model, gr1.mujoco.mjtJoint.mjJNT_HINGE
    joint_at = {int(m.jnt_qposadr[j]): j for j in range(m.njnt)}
    for name, adr in gr1.qpos_of.items():
        lower, upper = m.jnt_range[joint_at[adr]]
        limits = profile.joints[name]
        assert (lower, upper) == pytest.approx((limits.lower, limits.upper), abs=1e-6), name
    assert sorted(joint_at[a] for a in gr1.qpos_of.values()) == [
        j for j in range(m.njnt) if m.jnt_type[j] == hinge
    ]  # one to one: no joint of the model is left at its zero
    assert bodyframes.root(gr1) == "base_link"
    # the vendor's order (FFTAI/teleoperation gr1t2 joint_names): head before the arms
    order = profile.topics["robot"]
    assert order.index("head_yaw") < order.index("left_shoulder_pitch")
    assert {profile.joints[n].group for n in order} == {"legs", "torso", "head", "arms"}


def test_no_collision_geometry_is_lost_with_the_meshes(gr1: body.Body) -> None:
    """gr1t2.urdf's live collision elements are primitives (others are commented out):
    the loaded model has each one, and standing at rest no two links touch."""
    urdf = ET.parse(body.model_path(gr1.spec.model)).getroot()
    in_urdf = Counter(c.find("geometry/*").tag for c in urdf.iter("collision"))  # type: ignore[union-attr]
    assert "mesh" not in in_urdf
    loaded = Counter(s.kind for s in bodyframes.shapes(gr1))
    assert loaded == in_urdf == Counter({"cylinder": 14, "sphere": 1})
    gr1.pose({})
    assert gr1.collisions() == []


def test_the_gr1_conventions_from_its_model(gr1: body.Body) -> None:
    """Zero is the arms hanging straight; a negative elbow pitch brings the forearm
    forward; the two sides mirror each other; the gaze is ahead of the head."""
    gr1.pose({})
    left, right = gr1.point("left_hand"), gr1.point("right_hand")
    np.testing.assert_allclose(left * [1, -1, 1], right, atol=1e-3)
    shoulder = gr1.link_pose("right_upper_arm_pitch_link")[0]
    assert right[2] < shoulder[2] - 0.35 and abs(right[0] - shoulder[0]) < 0.05
    gr1.pose({"right_elbow_pitch": -1.5})
    elbow = gr1.link_pose("right_lower_arm_pitch_link")[0]
    hand = gr1.point("right_hand")
    assert hand[0] > elbow[0] + 0.15 and abs(hand[2] - elbow[2]) < 0.05
    gr1.pose({})
    gaze, head = gr1.point("gaze"), gr1.link_pose("head_yaw_link")[0]
    assert gaze[0] == pytest.approx(head[0] + 0.5, abs=0.01)


def test_a_forearm_through_the_torso_collides(gr1: body.Body) -> None:
    """What validation checks: the right arm swung across the chest puts its forearm
    into the torso's cylinder."""
    gr1.pose({"right_shoulder_pitch": -1.2, "right_shoulder_yaw": 1.5, "right_elbow_pitch": -1.6})
    hits = gr1.collisions()
    assert any("torso_link" in (c.a, c.b) for c in hits), hits
    gr1.pose({})


def test_pose_preview_draws_the_gr1(profile: RobotProfile, tmp_path: Path) -> None:
    robot = Robot(profile)
    rest = draw(Preview("rest", "pose", "standing", {}, {}), profile, tmp_path / "a.png", robot)
    forearm = Preview("fore", "pose", "forearm forward", {"right_elbow_pitch": -1.5}, {})
    reach = draw(forearm, profile, tmp_path / "b.png", robot)
    assert rest.read_bytes()[:4] == b"\x89PNG" and reach.stat().st_size > 20_000
    assert rest.read_bytes() != reach.read_bytes()


def test_a_grx_run_file_carries_its_model_and_transforms(profile: RobotProfile) -> None:
    channels = catalogue(profile)
    model = channels[bodychannels.MODEL]
    scene = json.loads(model.static)
    jsonschema.validate(scene, model.schema)
    frames = bodychannels.Frames(profile)
    frames.measured(list(profile.topics["robot"]), np.zeros(32))
    message = frames.message(0)
    jsonschema.validate(message, channels[bodychannels.TRANSFORMS].schema)
    assert len(message["transforms"]) == len(bodyframes.links(body.load(profile)))


def test_the_grx_library_is_solved_and_checked_on_the_gr1(
    profile: RobotProfile, gr1: body.Body, tmp_path: Path
) -> None:
    """Validation on the GR-1's body: the GRX commands no joint, but its library
    (missions/grx/poses) is loaded, a pose given by where it goes is solved on gr1t2.urdf,
    and an intent the body cannot have is refused at its file:line."""
    library = MissionLoader(profile, GRX_MISSIONS).library(GRX_MISSIONS)
    assert [str(d) for d in library.diagnostics if d.is_error] == []
    ahead = library.poses["right_hand_ahead"]
    assert set(ahead.joints) == set(profile.joint_sets["right_arm"])
    gr1.pose(ahead.joints)
    assert np.linalg.norm(gr1.point("right_hand") - [0.30, -0.20, 0.20]) < 0.02
    assert gr1.collisions() == []
    gr1.pose({})
    (tmp_path / "poses").mkdir()
    (tmp_path / "poses" / "bad.yaml").write_text(
        "poses:\n"
        "  look:\n"
        "    joints: {head_yaw: 0.2}\n"
        "    intent:\n"
        "      nose: {at: [0.5, 0.0, 0.5], within: 0.05}\n"
        "  too_far:\n"
        "    solve: right_arm\n"
        "    intent:\n"
        "      right_hand: {at: [1.5, -0.2, 0.2], within: 0.02}\n",
        encoding="utf-8",
    )
    bad = MissionLoader(profile, tmp_path).library(tmp_path)
    errors = sorted((d.where.line, d.message) for d in bad.diagnostics if d.is_error)
    assert [line for line, _ in errors] == [5, 9], errors
    assert "not a point of the body" in errors[0][1]
    assert "no solution for right_arm" in errors[1][1]


def test_pose_solve_and_preview_commands_on_the_grx(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missions = ["--profile", "grx", "--missions", str(GRX_MISSIONS)]
    assert cli.main(["pose", "solve", "right_hand_ahead", *missions]) == 0
    out = capsys.readouterr().out
    assert "right_hand at (+0.30" in out and "residual" in out
    png = tmp_path / "ahead.png"
    assert cli.main(["pose", "preview", "right_hand_ahead", *missions, "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert cli.main(["validate", "--profile", "grx", *map(str, GRX_MISSIONS.glob("*.yaml"))]) == 0
