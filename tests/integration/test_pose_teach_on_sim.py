"""``pose teach`` on the simulated Atom (MuJoCo physics, its own process, real DDS): the
arm is put somewhere, taught, and the library validates with the taught joints equal to
the ones measured on the robot's state topic within 1 mrad, the library file's comments
and key order kept. From both sources: a running executive's status (the arm moved by a
mission, which holds on), and the robot's state topics when no executive runs (the arm
moved by a controller of the test).
A body that collides as measured, a name the library has and a group the profile lacks
are refused in one line, the library untouched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from executive.harness.stack import running_stack
from executive.robots.atom.interface import Interface
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.profile import load_profile
from tests.sim.conftest import Sim, start_sim  # noqa: F401 - the fixture, and its sim

pytestmark = pytest.mark.dds

ROOT = Path(__file__).resolve().parents[2]
PROFILE = load_profile("atom-sdk")
UPPER = list(PROFILE.topics["upper"])
RIGHT_ARM = list(PROFILE.joint_sets["right_arm"])
MRAD = 1e-3

MISSION = """
mission: to_the_counter
tree:
  sequence:
    children:
      - acquire_control: {timeout: 5}
      - set_fsm: {state: joint_control, timeout: 5}
      - move_joints: {pose: home, speed: 0.5, timeout: 15}
      - move_joints: {pose: right_reach_forward, speed: 1.0, timeout: 15}
      - wait: {name: Hold, seconds: 60}
"""

TAUGHT_MISSION = """
mission: to_the_taught
tree:
  sequence:
    children:
      - move_joints: {pose: home, speed: 0.5, timeout: 15}
      - move_joints: {pose: NAME, speed: 1.0, timeout: 15}
"""


def missions(tmp: Path) -> Path:
    root = tmp / "missions"
    for folder in ("poses", "gestures"):
        shutil.copytree(ROOT / "missions" / folder, root / folder)
    (root / "to_the_counter.yaml").write_text(MISSION)
    return root


def teach(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``atom-executive pose teach ARGS`` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "executive.cli", "pose", "teach", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or dict(os.environ),
        check=False,
    )


def validate(root: Path, name: str) -> subprocess.CompletedProcess[str]:
    """Validate a mission that moves to pose ``name``: the library read back, the pose's
    intent checked against the vendor model where the move arrives."""
    mission = root / f"to_{name}.yaml"
    mission.write_text(TAUGHT_MISSION.replace("NAME", name).replace("to_the_taught", f"to_{name}"))
    return subprocess.run(
        [sys.executable, "-m", "executive.cli", "validate", str(mission)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def taught(path: Path, name: str) -> dict[str, float]:
    return dict(yaml.safe_load(path.read_text())["poses"][name]["joints"])


def assert_taught_as_measured(joints: dict[str, float], measured: dict[str, float]) -> None:
    assert list(joints) == RIGHT_ARM
    off = {j: abs(joints[j] - measured[j]) for j in RIGHT_ARM}
    assert max(off.values()) <= MRAD, off


def test_taught_from_a_running_executive_its_status(tmp_path: Path) -> None:
    root = missions(tmp_path)
    arms = root / "poses" / "arms.yaml"
    before = arms.read_text()
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(missions_dir=str(root))
        stack.start_sim()
        stack.start_service()
        client = stack.client
        state = AtomIO(stack.dds, Interface(), topics={"upper_state": TOPICS["upper_state"]})
        env = stack.env()
        reply = client.request("start", {"mission": "to_the_counter", "params": {}})
        assert reply.code == 0, reply.message
        assert client.wait_status(lambda s: "Hold" in s.active_node, 60) is not None
        time.sleep(1.0)  # settled under gravity (the feed-forward holds it)

        # refused before anything is read, the library untouched
        out = teach("right_carry", "--group", "right_arm", "--missions", str(root), env=env)
        assert out.returncode == 1 and out.stdout == "", out
        assert out.stderr.count("\n") == 1
        assert "pose 'right_carry' exists (" in out.stderr and "--force replaces it" in out.stderr
        out = teach("x", "--group", "right_leg", "--profile", "atom-sdk", env=env)
        assert out.returncode == 1 and "no joint group, set or joint 'right_leg'" in out.stderr
        assert arms.read_text() == before

        out = teach(
            "counter_reach",
            "--group",
            "right_arm",
            "--missions",
            str(root),
            "--library",
            str(arms),
            env=env,
        )
        sample = state.latest("upper_state")
        assert out.returncode == 0, out.stderr
        assert "taught from the executive's status" in out.stdout
        assert sample is not None
        measured = {n: float(m.q) for n, m in zip(UPPER, sample.motor_state, strict=False)}
        assert client.status().state == "RUNNING"  # the mission holds on
    after = arms.read_text()
    assert after.startswith(before)  # every comment, key and number of the file as it was
    assert_taught_as_measured(taught(arms, "counter_reach"), measured)
    checked = validate(root, "counter_reach")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def take_upper(sim: Sim) -> None:
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))


def move(sim: Sim, **q: float) -> None:
    """Ramp the upper body to ``q`` (by name; the others where they are), hold, settle."""
    start = sim.q("upper")
    goal = start.copy()
    for name, value in q.items():
        goal[UPPER.index(name)] = value
    rec = sim.command_record("upper_cmd", start)
    for s in np.linspace(0.0, 1.0, 100):  # a 1 s ramp, as a planned move streams
        rec["motor_cmd"]["q"] = start + (goal - start) * s
        sim.stream("upper_cmd", rec, seconds=0.01)
    sim.stream("upper_cmd", rec, seconds=1.5)  # the sim keeps the last target after this


def test_taught_from_the_robot_when_no_executive_runs(
    start_sim: Callable[..., Sim],  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    root = missions(tmp_path)
    sim = start_sim(interface="sdk-1.1.0", record=False)
    take_upper(sim)
    move(
        sim,
        right_shoulder_pitch=-0.6,
        right_shoulder_roll=-0.2,
        right_shoulder_yaw=0.1,
        right_elbow_pitch=0.4,
        right_wrist_pitch=0.2,
    )
    common = ("--missions", str(root), "--interface", "sdk-1.1.0", "--timeout", "2")
    out = teach("ahead", "--group", "right_arm", *common)
    assert out.returncode == 0, out.stderr
    assert "taught from the robot's state topics (no executive answered)" in out.stdout
    measured = dict(zip(UPPER, sim.fresh_state("upper_state")["motor_state"]["q"], strict=False))
    library = root / "poses" / "taught.yaml"
    assert_taught_as_measured(taught(library, "ahead"), measured)
    checked = validate(root, "ahead")
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # the forearm swung into the torso: the body check refuses it, the library untouched
    before = library.read_text()
    move(sim, right_shoulder_pitch=0.0, right_shoulder_yaw=1.5, right_elbow_pitch=-0.5)
    out = teach("into_torso", "--group", "right_arm", *common)
    assert out.returncode == 1, out
    assert out.stderr.count("\n") == 1
    assert "the body as measured collides: torso_link and right_elbow_pitch_link" in out.stderr
    assert library.read_text() == before
