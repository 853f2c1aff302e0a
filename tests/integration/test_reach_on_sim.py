"""Places, not angles, on the simulated Atom (MuJoCo physics, its own process, real DDS):
a pose given only by its intent and a ``reach`` to points given at start put the measured
hand within 3 cm of the place, by the vendor URDF's forward kinematics in plain numpy
(tests/reach/urdf_fk.py, no code of the project's); a point inside the torso or out of
reach fails the leaf with the reason, and the arm is not commanded anywhere new."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from executive.harness.stack import running_stack
from executive.robots.atom.interface import Interface
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.topics import TOPICS, AtomIO
from tests.reach.test_urdf_fk import PROFILE_DATA, witness

pytestmark = pytest.mark.dds

ROOT = Path(__file__).resolve().parents[2]
UPPER = (
    "torso",
    *(
        f"{s}_{j}"
        for s in ("left", "right")
        for j in (
            "shoulder_pitch",
            "shoulder_roll",
            "shoulder_yaw",
            "elbow_pitch",
            "elbow_roll",
            "wrist_pitch",
            "wrist_roll",
        )
    ),
    "head_yaw",
    "head_pitch",
)  # the SDK order (atom-sdk.yaml)

POSES = """
poses:
  cup_on_counter:
    description: Right hand at a cup on the counter (solved).
    solve: right_arm
    intent:
      right_hand: {at: [0.42, -0.22, 0.12], within: 0.02}
"""

POSE_MISSION = """
mission: to_the_cup
tree:
  sequence:
    children:
      - acquire_control: {timeout: 5}
      - set_fsm: {state: joint_control, timeout: 5}
      - move_joints: {pose: home, speed: 0.5, timeout: 15}
      - move_joints: {pose: cup_on_counter, speed: 1.0, timeout: 15}
      - wait: {name: Hold, seconds: 2}
"""

REACH_MISSION = """
mission: reach_point
params:
  cup: {type: point, default: [0.45, -0.20, 0.10]}
tree:
  sequence:
    children:
      - acquire_control: {timeout: 5}
      - set_fsm: {state: joint_control, timeout: 5}
      - move_joints: {pose: home, speed: 0.5, timeout: 15}
      - wait: {name: Home, seconds: 1}
      - reach: {point: right_hand, at: '${cup}', solve: right_arm, within: 0.02, speed: 1.0, timeout: 15}
      - wait: {name: Hold, seconds: 2}
"""

# spread over the right arm's workspace: low and high in front, out to the side, up high
POINTS = [(0.45, -0.20, 0.10), (0.35, -0.40, -0.05), (0.50, -0.10, 0.30), (0.20, -0.45, 0.45)]


def missions(tmp: Path) -> Path:
    root = tmp / "missions"
    for folder in ("poses", "gestures"):
        shutil.copytree(ROOT / "missions" / folder, root / folder)
    (root / "poses" / "places.yaml").write_text(POSES)
    (root / "to_the_cup.yaml").write_text(POSE_MISSION)
    (root / "reach_point.yaml").write_text(REACH_MISSION)
    return root


def hand(state: AtomIO) -> np.ndarray:  # type: ignore[type-arg]
    sample = state.latest("upper_state")
    assert sample is not None
    q = {name: float(m.q) for name, m in zip(UPPER, sample.motor_state, strict=False)}
    return witness("right_hand", q)


def test_an_intent_pose_and_reaches_put_the_measured_hand_at_the_place(tmp_path: Path) -> None:
    profile = yaml.safe_load((ROOT / "executive/robots/profiles/atom-sdk.yaml").read_text())
    assert "right_hand" in PROFILE_DATA["points"] and tuple(UPPER) == tuple(
        profile["topics"]["upper"]
    )
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(missions_dir=str(missions(tmp_path)))
        stack.start_sim(record=True)
        stack.start_service()
        client = stack.client
        state = AtomIO(stack.dds, Interface(), topics={"upper_state": TOPICS["upper_state"]})

        def run(mission: str, params: dict, hold: str = "Hold") -> np.ndarray:  # type: ignore[type-arg]
            reply = client.request("start", {"mission": mission, "params": params})
            assert reply.code == 0, reply.message
            held = client.wait_status(lambda s: hold in s.active_node, 60)
            assert held is not None, client.status().last_reason
            time.sleep(0.5)  # settled under gravity (the feed-forward holds it)
            at = hand(state)
            done = client.wait_status(lambda s: s.state in ("SUCCEEDED", "FAILED", "ABORTED"), 30)
            assert done is not None and done.state == "SUCCEEDED", done
            return at

        at = run("to_the_cup", {})
        assert np.linalg.norm(at - [0.42, -0.22, 0.12]) < 0.03, at
        for point in POINTS:
            at = run("reach_point", {"cup": list(point)})
            assert np.linalg.norm(at - point) < 0.03, (point, at)

        # a point inside the torso, then one out of reach: the reach FAILS saying why, and
        # the arm is commanded nothing new from when it holds home to the run's end
        windows = []
        for point, why in (
            ((0.0, 0.0, 0.1), "inside torso_link"),
            ((1.0, -0.2, 0.1), "out of reach"),
        ):
            reply = client.request(
                "start", {"mission": "reach_point", "params": {"cup": list(point)}}
            )
            assert reply.code == 0, reply.message
            assert client.wait_status(lambda s: "Home" in s.active_node, 60) is not None
            home = time.monotonic()
            done = client.wait_status(lambda s: s.state in ("SUCCEEDED", "FAILED", "ABORTED"), 30)
            assert done is not None and done.state == "FAILED", done
            assert why in done.last_reason, done.last_reason
            windows.append((home, time.monotonic()))
        stack.stop("executive")
        stack.stop("sim")
    rec = Recording.load(stack.record_path)
    for home, end in windows:
        upper = [c for c in rec.streams if c.topic == "upper_cmd"]
        before = [c for c in upper if c.sent < home and not c.repeat]
        assert len(before) > 10, "the arm was being moved (to home) before"
        during = [c for c in upper if home < c.sent < end and not c.repeat]
        assert during == [], f"{len(during)} new arm targets after the reach started"
