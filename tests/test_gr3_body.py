"""The Fourier GR-3's body (for the coming Aurora profile) from its vendor's model:
``gr3.urdf`` of fourier-robot-descriptions 0.2.7 (PyPI, Apache-2.0), named by a profile
as ``package:...`` and mapped joint by joint in the profile's ``body:`` (the fixture
tests/fixtures/gr3-body.yaml; no Aurora profile exists yet).

MuJoCo loads it with its meshes stripped (executive/seam/body.py). That strips no
collision geometry: every ``<collision>`` of gr3.urdf is a primitive (cylinders, spheres,
boxes), and each is a geom of the loaded model, checked here. The model then draws in
``pose preview`` and goes into a run's MCAP file like the Atom's.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import numpy as np
import pytest

from executive.operator.posepreview import Preview, Robot, draw
from executive.records import bodychannels
from executive.records.runchannels import catalogue
from executive.seam import body, bodyframes
from executive.seam.profile import RobotProfile, load_profile

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "gr3-body.yaml"
GROUPS = {  # robots.md 2.1a: the vendor's control groups and their sizes
    "left_leg": 6,
    "right_leg": 6,
    "waist": 3,
    "left_manipulator": 7,
    "right_manipulator": 7,
}


@pytest.fixture(scope="module")
def profile() -> RobotProfile:
    return load_profile(FIXTURE)


@pytest.fixture(scope="module")
def gr3(profile: RobotProfile) -> body.Body:
    return body.load(profile)


def test_the_gr3_loads_from_its_package_with_every_joint_mapped(
    profile: RobotProfile, gr3: body.Body
) -> None:
    assert isinstance(profile.body, body.BodySpec)
    assert profile.body.model == "package:fourier_robot_descriptions/assets/urdf/gr3.urdf"
    assert {name: len(profile.joint_sets[name]) for name in GROUPS} == GROUPS
    assert [n for n, j in profile.joints.items() if j.group == "head"] == ["head_yaw", "head_pitch"]
    m, hinge = gr3.model, gr3.mujoco.mjtJoint.mjJNT_HINGE
    assert len(gr3.qpos_of) == 31  # every joint of the groups, none of the fingers
    joint_at = {int(m.jnt_qposadr[j]): j for j in range(m.njnt)}
    for name, adr in gr3.qpos_of.items():
        j = joint_at[adr]
        lower, upper = m.jnt_range[j]
        limits = profile.joints[name]
        assert lower - 1e-6 <= limits.lower and limits.upper <= upper + 1e-6, name
    assert sorted(joint_at[a] for a in gr3.qpos_of.values()) == [
        j for j in range(m.njnt) if m.jnt_type[j] == hinge
    ]  # one to one: no joint of the model is left at its zero
    assert bodyframes.root(gr3) == "base_link"


def test_no_collision_geometry_is_lost_with_the_meshes(gr3: body.Body) -> None:
    """gr3.urdf's collision elements are all primitives: the loaded model has each one."""
    urdf = ET.parse(body.model_path(gr3.spec.model)).getroot()
    in_urdf: Counter[str] = Counter()
    for collision in urdf.iter("collision"):
        shape = collision.find("geometry/*")
        assert shape is not None and shape.tag != "mesh", ET.tostring(collision)[:200]
        in_urdf[shape.tag] += 1
    loaded = Counter(s.kind for s in bodyframes.shapes(gr3))
    assert loaded == {"cylinder": 14, "box": 3, "sphere": 3}
    assert sum(loaded.values()) == sum(in_urdf.values()) == gr3.model.ngeom
    assert loaded["cylinder"] == in_urdf["cylinder"] and loaded["sphere"] == in_urdf["sphere"]
    gr3.pose({})
    assert gr3.collisions() == []  # standing at rest, no two links touch


def test_the_gr3_elbow_convention_from_its_model(gr3: body.Body) -> None:
    """The GR-3's elbow_pitch 0 is the arm straight down; negative bends the forearm
    forward (the Atom's 0 is a right angle: conventions are the model's, per robot)."""
    gr3.pose({"right_elbow_pitch": 0.0})
    elbow = gr3.link_pose("right_lower_arm_pitch_link")[0]
    hand = gr3.point("right_hand")
    assert hand[2] < elbow[2] - 0.2 and abs(hand[0] - elbow[0]) < 0.05  # hangs below it
    gr3.pose({"right_elbow_pitch": -1.5})
    hand = gr3.point("right_hand")
    assert hand[0] > elbow[0] + 0.2 and abs(hand[2] - elbow[2]) < 0.05  # forward, level
    gr3.pose({})
    left, right = gr3.point("left_hand"), gr3.point("right_hand")
    np.testing.assert_allclose(left * [1, -1, 1], right, atol=1e-3)  # mirror images


def test_pose_preview_draws_the_gr3(profile: RobotProfile, tmp_path: Path) -> None:
    robot = Robot(profile)
    rest = Preview("rest", "pose", "standing", {}, {})
    reach = Preview("reach", "pose", "right forearm forward", {"right_elbow_pitch": -1.5}, {})
    a = draw(rest, profile, tmp_path / "rest.png", robot)
    b = draw(reach, profile, tmp_path / "reach.png", robot)
    assert a.read_bytes()[:4] == b"\x89PNG" and b.stat().st_size > 20_000
    assert a.read_bytes() != b.read_bytes()
    segments = robot.segments({})
    assert len(segments) >= 31  # a limb per moving link at least
    assert robot.extent()[2] > 0.5  # the GR-3 is taller than the Atom's fixed frame was


def test_a_gr3_run_file_carries_its_model(profile: RobotProfile) -> None:
    channels = catalogue(profile)
    model = channels[bodychannels.MODEL]
    scene = json.loads(model.static)
    jsonschema.validate(scene, model.schema)
    kinds = Counter(
        kind
        for e in scene["entities"]
        for kind in ("cubes", "cylinders", "spheres")
        for _ in e[kind]
    )
    assert kinds == {"cylinders": 14, "cubes": 3, "spheres": 3}
    frames = bodychannels.Frames(profile)
    frames.measured(list(profile.topics["body"]), np.zeros(31))
    message = frames.message(0)
    jsonschema.validate(message, channels[bodychannels.TRANSFORMS].schema)
    assert len(message["transforms"]) == len(bodyframes.links(body.load(profile)))
