"""Paths around the body on the simulated Atom (MuJoCo physics, its own process, real
DDS, the service as deployed): a move across the torso that validation refuses runs with
``path: plan`` and the sim's record has no contact at all; a reach around a box of the
scene (the mission's, and the sim's) likewise; a plan that cannot be found in time FAILS
the reach with the reason, and the arm is commanded nothing new from that leaf; an e-stop
while the arm follows a planned path is SAFE_STOP with no motion after it."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from executive.harness.stack import running_stack
from executive.mission.loader import MissionLoader
from executive.robots.atom.interface import Interface
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.profile import load_profile
from tests.integration.test_reach_on_sim import UPPER
from tests.reach.across import ACROSS

pytestmark = pytest.mark.dds

ROOT = Path(__file__).resolve().parents[2]
ENDS = ("SUCCEEDED", "FAILED", "ABORTED")
TUCK = (
    "{right_shoulder_pitch: 0.5, right_shoulder_roll: 0.0, right_shoulder_yaw: 0.0, "
    "right_elbow_pitch: -0.5, right_elbow_roll: 0.0, right_wrist_pitch: 0.0, right_wrist_roll: 0.0}"
)


def across_mission(path: str) -> str:
    joints = "{" + ", ".join(f"{j}: {q}" for j, q in ACROSS.items()) + "}"
    return f"""
mission: across
tree:
  sequence:
    children:
      - acquire_control: {{timeout: 5}}
      - set_fsm: {{state: joint_control, timeout: 5}}
      - move_joints: {{pose: home, speed: 0.5, timeout: 15}}
      - move_joints: {{name: Tuck, joints: {TUCK}, speed: 1.0, timeout: 15}}
      - move_joints: {{name: Across, joints: {joints}, speed: 1.0, timeout: 20{path}}}
      - wait: {{name: Hold, seconds: 1}}
"""


SCENE = """scene:
  board: {box: {center: [0.345, -0.297, -0.137], size: [0.06, 0.06, 0.06]}}
"""

REACH = f"""
mission: around_the_board
params:
  budget: {{type: number, default: 2.0}}
{SCENE}
tree:
  sequence:
    children:
      - acquire_control: {{timeout: 5}}
      - set_fsm: {{state: joint_control, timeout: 5}}
      - move_joints: {{pose: home, speed: 0.5, timeout: 15}}
      - wait: {{name: Home, seconds: 1}}
      - reach: {{point: right_hand, at: [0.45, -0.20, 0.10], solve: right_arm, speed: 1.0, timeout: 20, path: plan, plan_timeout: '${{budget}}'}}
      - wait: {{name: Hold, seconds: 1}}
"""


def missions(tmp: Path) -> Path:
    root = tmp / "missions"
    for folder in ("poses", "gestures"):
        shutil.copytree(ROOT / "missions" / folder, root / folder)
    (root / "across.yaml").write_text(across_mission(", path: plan"))
    (root / "around_the_board.yaml").write_text(REACH)
    return root


def test_moves_around_the_body_leave_no_contact_and_a_plan_out_of_time_moves_nothing(
    tmp_path: Path,
) -> None:
    root = missions(tmp_path)
    refused = root / "straight.yaml"
    refused.write_text(across_mission(""))
    result = MissionLoader(load_profile(), root).check(refused)
    assert not result.ok and "collides with itself" in str(result.errors[0])  # refused today
    refused.unlink()
    (tmp_path / "scene.yaml").write_text(SCENE)
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(missions_dir=str(root))
        stack.start_sim("--scene", str(tmp_path / "scene.yaml"), record=True)
        stack.start_service()
        client = stack.client
        state = AtomIO(stack.dds, Interface(), topics={"upper_state": TOPICS["upper_state"]})

        def run(mission: str, params: dict[str, object], end: str) -> str:
            reply = client.request("start", {"mission": mission, "params": params})
            assert reply.code == 0, reply.message
            assert client.wait_status(lambda s: s.run_id == reply.message, 10) is not None
            done = client.wait_status(lambda s: s.state in ENDS, 90)  # (after ours started)
            assert done is not None and done.state == end, done
            return str(done.last_reason)

        run("across", {}, "SUCCEEDED")
        sample = state.latest("upper_state")
        assert sample is not None
        q = {n: float(m.q) for n, m in zip(UPPER, sample.motor_state, strict=False)}
        assert max(abs(q[j] - v) for j, v in ACROSS.items()) < 0.06, q  # it got there
        run("around_the_board", {}, "SUCCEEDED")

        # the same reach with no time to plan: FAILED saying so, nothing new commanded
        reply = client.request("start", {"mission": "around_the_board", "params": {"budget": 1e-6}})
        assert reply.code == 0, reply.message
        run_id = reply.message
        assert client.wait_status(lambda s: s.run_id == run_id and "Home" in s.active_node, 60)
        home = time.monotonic()
        done = client.wait_status(lambda s: s.state in ENDS, 30)
        assert done is not None and done.state == "FAILED", done
        assert "no path around the body found within 1e-06 s" in done.last_reason
        window = (home, time.monotonic())

        # an e-stop while the arm follows the planned path: SAFE_STOP, and after it no
        # motion (no further segment) leaves the executive
        reply = client.request("start", {"mission": "across", "params": {}})
        assert reply.code == 0, reply.message
        assert client.wait_status(lambda s: "Across" in s.active_node, 60) is not None
        across = time.monotonic()
        time.sleep(0.6)  # planned (tens of ms), and the first segment under way
        injected = time.monotonic()
        stack.sim.inject_spec("estop-soft")
        stopped = client.wait_status(lambda s: s.state == "SAFE_STOP", 10)
        assert stopped is not None, client.status()
        seen = time.monotonic()
        stack.stop("executive")
        stack.stop("sim")
    rec = Recording.load(stack.record_path)
    assert rec.contacts == [], rec.contacts  # no self-contact, nothing touched the board
    upper = [c for c in rec.streams if c.topic == "upper_cmd"]
    before = [c for c in upper if c.sent < window[0] and not c.repeat]
    assert len(before) > 10, "the arm was being moved (to home) before"
    during = [c for c in upper if window[0] < c.sent < window[1] and not c.repeat]
    assert during == [], f"{len(during)} new arm targets after the reach started"
    assert rec.motion_commands(across, before=injected, topic="upper_cmd"), "not moving"
    rec.assert_no_motion_after(seen, topic="upper_cmd")
