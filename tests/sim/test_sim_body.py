"""The simulated Atom's body over real DDS (the default, ``--physics mujoco``): gravity
against the commanded gains, a self-collision and a scene contact as sim events (record,
status, and the servo error of ``--contact-fault``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from executive.robots.atom.sim.node import CONTACT_ERROR
from executive.seam import body
from executive.seam.profile import load_profile
from tests.sim.conftest import Sim

pytestmark = pytest.mark.dds


def take_upper(sim: Sim) -> None:
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))


def targets(sim: Sim, **q: float) -> np.ndarray:  # type: ignore[type-arg]
    """The upper body at zero but for ``q`` (by joint name)."""
    names = list(sim.profile.topics["upper"])
    out = np.zeros(len(names))
    for name, value in q.items():
        out[names.index(name)] = value
    return out


def test_gravity_sags_an_arm_held_out_and_a_forearm_into_the_torso_is_one_contact(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim()
    assert sim.status().physics == "mujoco"
    take_upper(sim)
    names = list(sim.profile.topics["upper"])
    roll, yaw = names.index("left_shoulder_roll"), names.index("right_shoulder_yaw")
    # the left arm straight out to the side, the right forearm swung into the torso
    goal = targets(
        sim,
        left_shoulder_roll=1.5,
        left_elbow_pitch=1.5,
        right_shoulder_yaw=1.5,
        right_elbow_pitch=-0.5,
    )
    rec = sim.command_record("upper_cmd", sim.q("upper"))
    for s in np.linspace(0.0, 1.0, 100):  # a 1 s ramp, as a planned move streams
        rec["motor_cmd"]["q"] = goal * s
        sim.stream("upper_cmd", rec, seconds=0.01)
    status = sim.client.wait_status(lambda s: s.contact_events >= 1, timeout=15)
    assert status is not None, sim.client.status()
    sim.stream("upper_cmd", rec, seconds=1.5)  # hold: settle

    q = sim.q("upper")
    sag = goal[roll] - q[roll]
    assert 0.03 < sag < 0.15, sag  # kp 200 holds 5 kg at 0.25 m with a steady error
    assert q[yaw] < 1.2  # the torso stopped the forearm
    status = sim.status()
    assert status.contact_events == 1
    assert [(c.a, c.b, c.kind) for c in status.contacts] == [
        ("right_elbow_pitch_link", "torso_link", "self")
    ]
    assert status.contacts[0].distance < 0
    contacts = sim.recording().contacts
    assert [(c["action"], c["a"], c["b"], c["kind"], c["fault"]) for _, c in contacts] == [
        ("begin", "right_elbow_pitch_link", "torso_link", "self", None)
    ]
    assert "contact" in sim.log()
    nodes = sim.fresh_state("main_nodes_state")
    assert int(nodes["right_arm"]["error_code"].max()) == 0  # no --contact-fault


def test_a_scene_contact_with_contact_fault_is_the_servo_error_of_the_joint_that_made_it(
    start_sim: Callable[..., Sim], tmp_path: Path
) -> None:
    reach = {"right_shoulder_pitch": -1.2, "right_elbow_pitch": 1.3}
    model = body.load(load_profile())
    model.pose(reach)
    hand = [round(float(v), 3) for v in model.point("right_hand")]
    scene = tmp_path / "shelf.yaml"
    scene.write_text(
        yaml.safe_dump({"scene": {"shelf": {"box": {"center": hand, "size": [0.3, 0.3, 0.3]}}}})
    )
    sim = start_sim("--scene", str(scene), "--contact-fault")
    take_upper(sim)
    goal = targets(sim, **reach)
    rec = sim.command_record("upper_cmd", sim.q("upper"))
    for s in np.linspace(0.0, 1.0, 100):
        rec["motor_cmd"]["q"] = goal * s
        sim.stream("upper_cmd", rec, seconds=0.01)
    nodes = sim.wait_state(
        "main_nodes_state", lambda s: int(s["right_arm"]["error_code"][3]) == CONTACT_ERROR
    )
    assert int(nodes["left_arm"]["error_code"].max()) == 0
    status = sim.client.wait_status(lambda s: bool(s.faults))
    assert status is not None
    assert [(f.kind.name, f.target) for f in status.faults] == [("SERVO_ERROR", "right_arm[3]")]
    assert [(c.a, c.b, c.kind) for c in status.contacts] == [
        ("right_elbow_pitch_link", "shelf", "scene")
    ]
    recording = sim.recording()
    assert [(c["a"], c["b"], c["fault"]) for _, c in recording.contacts] == [
        ("right_elbow_pitch_link", "shelf", "right_arm[3]")
    ]
    assert [(f["kind"], f["target"], f["source"]) for _, f in recording.faults] == [
        ("servo-error", "right_arm[3]", "contact")
    ]
    assert sorted(recording.header["scene"]) == ["floor", "shelf"]  # the profile's and the file's


def test_a_bad_scene_file_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("table: {box: {center: [0.5, 0], size: [1, 1, 1]}}\n")
    out = subprocess.run(
        [sys.executable, "-m", "executive.robots.atom.sim", "--scene", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert "bad.yaml" in out.stderr and "table.box.center" in out.stderr


def test_a_profile_without_a_body_model_runs_kinematic_and_says_so(
    start_sim: Callable[..., Sim], tmp_path: Path
) -> None:
    profile = tmp_path / "atom-site.yaml"
    profile.write_text(
        "extends: atom-sdk\nname: atom-site\nbody: {none: a site profile with no model}\n"
    )
    sim = start_sim("--profile", str(profile), record=False)
    assert sim.status().physics == "kinematic"
    assert "no body model in the profile" in sim.log()
