"""The Aurora's bridge is supervised both ways (executive/robots/aurora/bridge.py): it holds
and exits when the service dies, holds on its own when the service goes silent, and holds
when the executive trips on something only the executive sees. Judged from the simulated
Aurora's own record, each on its own DDS domain."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from executive.harness.aurora import Pendant, bridge_pid, sim, start
from executive.harness.stack import alive, running_stack

pytestmark = pytest.mark.dds


def test_the_bridge_holds_and_exits_when_the_service_is_killed(aurora_waving) -> None:
    stack, robot, t0 = aurora_waving
    service = stack.procs["executive"]
    bridge = bridge_pid(service.pid)
    assert bridge is not None
    t_kill = time.monotonic()
    service.kill()
    service.wait(5)
    assert stack.wait_for(lambda: not alive(bridge), 3), "the bridge outlived the service"
    time.sleep(0.3)
    rec = robot.records()
    assert rec.moving(t0)[0] < t_kill  # it was moving
    holds = rec.holds(t_kill)
    assert holds, "no hold reached the robot after the service died"
    assert holds[0] - t_kill < 1.0
    assert not rec.moving(holds[0])


@pytest.mark.serial  # the hold's time after the stop is measured
def test_a_silent_service_is_held_by_the_bridge_then_latched_when_it_wakes(aurora_waving) -> None:
    stack, robot, _ = aurora_waving
    service = stack.procs["executive"]
    t_stop = time.monotonic()
    os.kill(service.pid, signal.SIGSTOP)
    try:
        # the profile's parent_timeout_s is 1.0; the bridge's own loop may be late on a
        # loaded machine, never early. Stopped 3 s: long past the link's buffer filling up
        # (about 1.4 s of state), which must not stop the bridge holding (it repeats its hold
        # every 0.1 s while latched)
        time.sleep(3.0)
        rec = robot.records()
        holds = rec.holds(t_stop)
        assert holds, "the bridge did not hold a silent service's robot"
        assert 0.9 < holds[0] - t_stop < 2.5
        assert holds[-1] > t_stop + 2.5, "the bridge stopped repeating its hold"
        assert not rec.moving(holds[0])
    finally:
        os.kill(service.pid, signal.SIGCONT)
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None, stack.client.status()
    # the executive's own stall is its cause (internal); the bridge's trip, told as it woke,
    # is the same code and is logged
    assert "internal" in stopped.safety_reason
    log = stack.log_path("executive")
    assert stack.wait_for(lambda: "heard nothing from the service" in log.read_text(), 3)
    time.sleep(0.3)
    assert not robot.records().moving(holds[0])


def test_a_trip_only_the_executive_sees_goes_down_as_a_hold(aurora_waving) -> None:
    """Another controller takes the robot out of upper-body control (FSM 11 -> 10): the
    executive's control_revoked, which the bridge cannot judge, reaches it as ``hold``."""
    stack, robot, _ = aurora_waving
    pendant = Pendant(stack)
    try:
        t_trip = time.monotonic()
        pendant.whole(10)
        stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    finally:
        pendant.close()
    assert stopped is not None, stack.client.status()
    assert "control_revoked" in stopped.safety_reason
    time.sleep(0.5)
    rec = robot.records()
    holds = rec.holds(t_trip)
    assert holds, "the executive's trip never reached the robot as a hold"
    assert not rec.moving(holds[0])
    # in FSM 10 the robot takes group commands: the hold was obeyed, not ignored
    taken = [r for t, _, r in rec.taken("robot_control_group_cmd", holds[0] - 1e-6)]
    assert taken[0] == "left_manipulator:held"


def test_upper_body_control_left_taken_is_handed_back_on_start(tmp_path: Path) -> None:
    """A previous instance died holding upper-body control (the robot in FSM 11): the
    service's recovery finds it, sends zero velocity at once, then the release FSM."""
    with running_stack(tmp_path) as stack:
        robot = start(stack, sim(stack, "--fsm", "11"))
        try:

            def released() -> bool:
                taken = robot.records().taken("whole_body_fsm_state_change_cmd")
                return any(f["desired_state"] == 2 and r == "applied" for _, f, r in taken)

            assert stack.wait_for(released, 15), stack.client.status().not_ready
            rec = robot.records()
            zero = rec.taken("velocity_cmd")
            assert zero and zero[0][1]["vx"] == 0.0  # make_safe_now, before the release
            assert zero[0][0] < rec.taken("whole_body_fsm_state_change_cmd")[0][0]
            assert not rec.groups()  # nothing of the arms was touched
            reply = stack.client.request("start", {"mission": "arm_wave", "params": {"waves": 1}})
            assert reply.code == 0, reply.message
            done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 30)
            assert done is not None and done.state == "SUCCEEDED"
        finally:
            robot.close()


def test_a_pause_mid_walk_sends_zero_velocity_and_holds_the_arm_then_resumes(
    tmp_path: Path,
) -> None:
    """``atom-executive pause`` on the Aurora: the walk is sent zero at once and nothing but
    zero while paused; resume walks on and the mission succeeds."""
    with running_stack(tmp_path) as stack:
        robot = start(stack)
        try:
            t0 = time.monotonic()
            reply = stack.client.request(
                "start", {"mission": "arm_hand_walk", "params": {"walk_seconds": 4.0}}
            )
            assert reply.code == 0, reply.message

            def walking(after: float) -> bool:
                taken = robot.records().taken("velocity_cmd", after)
                return any(f["vx"] > 0 and r == "applied" for _, f, r in taken)

            assert stack.wait_for(lambda: walking(t0), 30)
            asked = time.monotonic()
            reply = stack.client.request("pause")
            assert reply.code == 0 and "base (zero velocity)" in reply.message, reply.message
            time.sleep(1.5)
            resumed = time.monotonic()
            reply = stack.client.request("resume")
            assert reply.code == 0, reply.message
            done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
            assert done is not None and done.state == "SUCCEEDED", stack.client.status()
            time.sleep(0.3)
            during = [f for t, f, _ in robot.records().taken("velocity_cmd", asked) if t < resumed]
            zeros = [i for i, f in enumerate(during) if f["vx"] == 0.0]
            assert zeros, "no zero velocity after the pause"
            assert not [f for f in during[zeros[0] :] if f["vx"] != 0.0], "walked while paused"
            assert walking(resumed), "it did not walk on after resume"
        finally:
            robot.close()
