"""The real service (``atom-executive run``, ``profile: aurora``) and its bridge process
against two robots, each its own process on the test's own DDS domain:

- ``sim``: the simulated Aurora (``python -m executive.robots.aurora.sim``, cyclonedds 11);
- ``vendor``: a GR-3 built only from the vendor's wheel (``tests/aurora_vendor/robot.py``,
  fourier-aurora-client 0.1.8, Fast DDS 3), so no byte of our codec is on the robot's end.

What went over the wire is judged from the robot's own record (every command it took, its
time on the shared monotonic clock, what it did with it), never from the executive's side.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from executive.harness.aurora import RobotProcess, bridge_pid, sim, start
from executive.harness.stack import ROOT, Stack, running_stack
from executive.seam.profile import load_profile
from executive.wire import dds

pytestmark = pytest.mark.dds

VENDOR_PYTHON = ROOT / ".venv-aurora-vendor" / "bin" / "python"
VENDOR_ROBOT = ROOT / "tests" / "aurora_vendor" / "robot.py"
ROBOTS = ("sim", "vendor")


def vendor(stack: Stack) -> RobotProcess:
    """The vendor-built robot on ``stack``'s domain, loopback only (its README)."""
    argv = [str(VENDOR_PYTHON), str(VENDOR_ROBOT), "--domain", str(stack.domain), "--rate", "100"]
    return RobotProcess(
        argv,
        stack.workdir / "robot.jsonl",
        stack.log_path("robot"),
        {**stack.env(), "FASTDDS_BUILTIN_TRANSPORTS": "NONE"},
    )


@pytest.fixture(params=ROBOTS)
def aurora(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Stack, RobotProcess]]:
    with running_stack(tmp_path) as stack:
        robot = start(stack, vendor(stack) if request.param == "vendor" else sim(stack))
        try:
            yield stack, robot
        finally:
            robot.close()


def start_mission(stack: Stack, name: str, **params: object) -> None:
    reply = stack.client.request("start", {"mission": name, "params": params})
    assert reply.code == 0, reply.message


def test_arm_hand_walk_succeeds_and_the_robot_took_each_command_exactly(
    aurora: tuple[Stack, RobotProcess],
) -> None:
    stack, robot = aurora
    t0 = time.monotonic()
    start_mission(stack, "arm_hand_walk", walk_seconds=1.0)
    done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
    assert done is not None and done.state == "SUCCEEDED", stack.client.status().last_reason
    time.sleep(0.3)  # the records are flushed every 100 ms
    rec = robot.records()
    # control (11) confirmed, released to the FSM found (2), locomotion (3), PD stand (2)
    whole = [
        (f["desired_state"], r) for _, f, r in rec.taken("whole_body_fsm_state_change_cmd", t0)
    ]
    assert [s for s, r in whole if r == "applied"] == [11, 2, 3, 2], whole
    # the arm arrived where the pose says, in the group's order (the planner's last sample)
    profile = load_profile("aurora")
    arm = profile.topics["left_manipulator"]
    pose = {
        "left_shoulder_pitch": 0.0,
        "left_shoulder_roll": 0.1,
        "left_shoulder_yaw": 0.0,
        "left_elbow_pitch": -0.3,
        "left_wrist_yaw": 0.0,
        "left_wrist_pitch": 0.0,
        "left_wrist_roll": 0.0,
    }
    last = [
        c
        for _, cmds in rec.groups(t0)
        for c in cmds
        if c["group_name"] == "left_manipulator" and c["group_motion_state"] == 1
    ][-1]
    assert last["position"] == pytest.approx([pose[j] for j in arm], abs=1e-12)
    assert last["control_type"] == 0 and last["motor_mode"] == profile.motor_mode
    hands = [c for _, cmds in rec.groups(t0) for c in cmds if c["group_name"] == "left_hand"]
    assert hands and hands[-1]["position"] == [0.0] * 6  # left_open
    # only the groups the mission moved were commanded
    named = {c["group_name"] for _, cmds in rec.groups(t0) for c in cmds}
    assert named == {"left_manipulator", "left_hand"}
    # gains once each group engaged, as the profile gives them
    cfg = [c for _, f, _ in rec.taken("robot_motor_cfg_group_cmd", t0) for c in f["group_cmd"]]
    left = next(c for c in cfg if c["group_name"] == "left_manipulator")
    assert left["pd_kp"] == [40.0] * 7 and left["pd_kd"] == [2.0] * 7 and left["mode"] == 4
    # the walk: navigation source, forward at the profile's scale, zero after
    sources = [f["desired_source"] for _, f, _ in rec.taken("velocity_source_cmd", t0)]
    assert sources and set(sources) == {2}
    walk = [(f, r) for _, f, r in rec.taken("velocity_cmd", t0)]
    forward = [i for i, (f, r) in enumerate(walk) if f["vx"] > 0 and r == "applied"]
    assert forward, walk[:5]
    assert walk[forward[0]][0]["vx"] == pytest.approx(0.5 * 0.4)  # speed 0.5 of 0.4 m/s
    assert any(f["vx"] == 0.0 for f, _ in walk[forward[-1] :])


def test_fsm9_raised_by_the_robot_latches_safe_stop_and_nothing_moving_reaches_it_after(
    aurora: tuple[Stack, RobotProcess],
) -> None:
    stack, robot = aurora
    t0 = time.monotonic()
    start_mission(stack, "arm_wave", waves=20)
    assert stack.wait_for(lambda: len(robot.records().moving(t0)) > 30, 20), "never waved"
    robot.fsm9()
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None, stack.client.status()
    assert "estop" in stopped.safety_reason and "FSM 9" in stopped.safety_reason
    time.sleep(0.5)
    rec = robot.records()
    raised = rec.fault_at("fsm9")
    assert raised is not None
    assert rec.moving(t0)[0] < raised  # motion was being commanded first
    holds = rec.holds(raised)
    assert holds, "no hold reached the robot"
    assert holds[0] - raised < 0.5
    assert not rec.moving(holds[0]), "a moving command after the hold"
    # and the release at the mission's end did not try to take the robot out of FSM 9
    assert not [f for _, f, _ in rec.taken("whole_body_fsm_state_change_cmd", raised)]


def test_a_killed_bridge_is_a_safe_stop_naming_it(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        robot = start(stack)
        try:
            t0 = time.monotonic()
            start_mission(stack, "arm_wave", waves=20)
            assert stack.wait_for(lambda: len(robot.records().moving(t0)) > 10, 20)
            service = stack.procs["executive"].pid
            pid = bridge_pid(service)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
            assert stopped is not None, stack.client.status()
            assert "stale_state" in stopped.safety_reason
            assert f"Aurora bridge (pid {pid})" in stopped.safety_reason
            # nothing is heard of the robot any more, and the status says whose fault it is
            silent = stack.client.wait_status(lambda s: "Aurora bridge" in s.not_ready, 5)
            assert silent is not None, stack.client.status().not_ready
            assert stack.client.request("reset").code != 0
        finally:
            robot.close()


@pytest.mark.parametrize(
    ("fault", "code", "named"),
    [
        ({"fault": "group_error", "group": "left_manipulator"}, "servo_error", "left_manipulator"),
        ({"fault": "silence", "topics": ["aurora_state"]}, "stale_state", "aurora_state"),
        (
            {"fault": "undecodable", "topic": "robot_control_group_state"},
            "undecodable",
            "robot_control_group_state",
        ),
    ],
)
def test_each_fault_the_bridge_sees_holds_and_latches_naming_it(
    tmp_path: Path, fault: dict[str, object], code: str, named: str
) -> None:
    with running_stack(tmp_path) as stack:
        robot = start(stack)
        try:
            t0 = time.monotonic()
            start_mission(stack, "arm_wave", waves=20)
            assert stack.wait_for(lambda: len(robot.records().moving(t0)) > 10, 20)
            t_fault = time.monotonic()
            assert robot.control(fault)["ok"]
            stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
            assert stopped is not None, stack.client.status()
            assert code in stopped.safety_reason and named in stopped.safety_reason
            time.sleep(0.5)
            rec = robot.records()
            holds = rec.holds(t_fault)
            assert holds, "no hold reached the robot"
            assert not rec.moving(holds[0]), "a moving command after the hold"
        finally:
            robot.close()


def test_namespace_ros_naming_and_a_domain_of_its_own_come_from_the_profile(
    tmp_path: Path,
) -> None:
    """A profile extending aurora puts the robot on another DDS domain than the executive's
    own topics, under the seed's RobotName/SerialNumber prefix, in the vendor's ROS-compatible
    naming (rt/..., dds_ types): the simulated Aurora speaking exactly that is driven."""
    profile = yaml.safe_load((ROOT / "executive/robots/profiles/aurora.yaml").read_text())
    options = dict(profile["aurora"])
    robot_domain = dds.lease_domain()
    try:
        options.update(domain=robot_domain.domain, namespace="GR3/SN0042", ros_compatible=True)
        path = tmp_path / "aurora-site.yaml"
        path.write_text(
            yaml.safe_dump({"extends": "aurora", "name": "aurora-site", "aurora": options})
        )
        with running_stack(tmp_path / "stack") as stack:
            argv = [
                str(ROOT / ".venv-aurora/bin/python"),
                "-m",
                "executive.robots.aurora.sim",
                "--domain",
                str(robot_domain.domain),
                "--namespace",
                "GR3/SN0042",
                "--ros",
            ]
            robot = start(
                stack,
                RobotProcess(argv, stack.workdir / "robot.jsonl", stack.log_path("robot")),
                profile=str(path),
            )
            try:
                t0 = time.monotonic()
                start_mission(stack, "arm_wave", waves=1)
                done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
                assert done is not None and done.state == "SUCCEEDED", stack.client.status()
                time.sleep(0.3)
                rec = robot.records()
                assert rec.moving(t0)
                whole = [
                    f["desired_state"]
                    for _, f, _ in rec.taken("whole_body_fsm_state_change_cmd", t0)
                ]
                assert whole == [11, 2]
            finally:
                robot.close()
    finally:
        robot_domain.release()


def test_the_seed_variant_end_to_end(tmp_path: Path) -> None:
    """Service config ``interface: seed`` against the simulated Aurora speaking seed 003's
    types as written (VelocityCmd without duration, MotorCfgGroupCmd with the PD gains only)."""
    with running_stack(tmp_path) as stack:
        robot = start(stack, sim(stack, "--interface", "seed"), interface="seed")
        try:
            t0 = time.monotonic()
            start_mission(stack, "arm_hand_walk", walk_seconds=0.5)
            done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
            assert done is not None and done.state == "SUCCEEDED", stack.client.status()
            assert stack.client.status().interface_variant == "seed"
            time.sleep(0.3)
            rec = robot.records()
            walk = [f for _, f, r in rec.taken("velocity_cmd", t0) if r == "applied"]
            assert any(f["vx"] > 0 for f in walk) and all("duration" not in f for f in walk)
            cfg = [
                c for _, f, _ in rec.taken("robot_motor_cfg_group_cmd", t0) for c in f["group_cmd"]
            ]
            assert cfg and set(cfg[0]) == {"group_name", "pd_kp", "pd_kd"}
        finally:
            robot.close()
