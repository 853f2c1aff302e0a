"""The Aurora's wire child (the bridge) killed mid-move: the service makes the robot safe
through a fresh child (executive/robots/aurora/adapter.py, "A dead bridge").

Real processes on the test's own loopback DDS domain: the service (``atom-executive run``,
profile aurora), its bridge child on cyclonedds 11, the simulated Aurora as its own
process. What reached the robot is judged from the sim's own record (every command it took,
on the shared monotonic clock) and its status; what the operator is told, from the
service's status and replies.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from executive.harness.aurora import RobotProcess, bridge_pid
from executive.harness.stack import Stack, alive
from executive.operator.lines import motion

pytestmark = pytest.mark.dds

CONTROL_FSM, RELEASE_FSM = 11, 2  # the profile's upper_body_user_cmd, and the FSM found


def kill_bridge(
    stack: Stack, robot: RobotProcess, t0: float, *, silence: bool = False
) -> tuple[int, float]:
    """SIGKILL the service's bridge child mid-move (motion commanded first); its pid and
    when. ``silence``: the robot stops publishing its state at once too (until cleared), so
    that a fresh bridge cannot hear it."""
    old = bridge_pid(stack.procs["executive"].pid)
    assert old is not None
    t_kill = time.monotonic()
    os.kill(old, signal.SIGKILL)
    if silence:
        robot.control({"fault": "silence"})
    moving = robot.records().moving(t0)
    assert moving and moving[0] < t_kill, "no moving command reached the robot before the kill"
    assert stack.wait_for(lambda: not alive(old), 3)
    return old, t_kill


def fresh_bridge(stack: Stack, old: int, timeout: float = 15.0) -> tuple[int, float]:
    """The service's new bridge child (not ``old``) and when it was first seen."""
    service = stack.procs["executive"].pid
    found: list[int] = []

    def started() -> bool:
        pid = bridge_pid(service)
        if pid is not None and pid != old:
            found.append(pid)
        return bool(found)

    assert stack.wait_for(started, timeout), "no fresh bridge was started"
    return found[0], time.monotonic()


def whole_fsm(robot: RobotProcess) -> int:
    return int(robot.control({"status": True})["status"]["whole_body_fsm_state"])


def released(robot: RobotProcess, after: float) -> list[int]:
    """The whole-body FSMs the robot applied after ``after``."""
    taken = robot.records().taken("whole_body_fsm_state_change_cmd", after)
    return [f["desired_state"] for _, f, r in taken if r == "applied"]


def test_a_fresh_bridge_holds_the_robot_and_nothing_moving_follows_the_kill(
    aurora_waving: tuple[Stack, RobotProcess, float],
) -> None:
    stack, robot, t0 = aurora_waving
    assert whole_fsm(robot) == CONTROL_FSM
    old, t_kill = kill_bridge(stack, robot, t0)
    new, t_new = fresh_bridge(stack, old)
    # repeated while latched (every 0.1 s; a moving command would be among them)
    assert stack.wait_for(lambda: len(robot.records().holds(t_new)) >= 3, 10), (
        "no hold reached the robot from the fresh bridge, or it was not repeated"
    )
    rec = robot.records()
    held = rec.taken("robot_control_group_cmd", t_new)
    assert held[0][2] == "left_manipulator:held", held[0]  # obeyed in FSM 11, not ignored
    # none written after the kill (one the dead bridge wrote just before it may still be
    # taken after it, on a loaded machine): the fresh bridge sends only the hold
    assert not rec.moving(t_kill, clock="sent"), "a moving command was sent after the kill"
    assert stack.client.status().state == "SAFE_STOP"
    assert bridge_pid(stack.procs["executive"].pid) == new


def test_the_safe_stop_says_the_wire_child_died_and_what_to_do(
    aurora_waving: tuple[Stack, RobotProcess, float],
) -> None:
    stack, robot, t0 = aurora_waving
    old, _ = kill_bridge(stack, robot, t0)
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None, stack.client.status()
    reason = stopped.safety_reason
    assert reason.startswith(f"stale_state: the Aurora bridge (pid {old}) was killed by signal 9")
    assert "the service's wire child is dead" in reason, reason
    assert "reset once it hears the robot again" in reason, reason
    assert "restart the service" in reason, reason  # if no fresh bridge can start


def test_the_status_does_not_say_still_from_no_data(
    aurora_waving: tuple[Stack, RobotProcess, float],
) -> None:
    stack, robot, t0 = aurora_waving
    old, _ = kill_bridge(stack, robot, t0, silence=True)
    assert stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5) is not None
    time.sleep(0.6)  # past group_state's limit (0.5 s)
    said = motion(stack.client.status())
    assert said is not None and said[1].startswith("not reported"), said


def test_the_reset_is_refused_until_the_fresh_bridge_hears_the_robot(
    aurora_waving: tuple[Stack, RobotProcess, float],
) -> None:
    stack, robot, t0 = aurora_waving
    old, t_kill = kill_bridge(stack, robot, t0, silence=True)
    assert stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5) is not None
    reply = stack.client.request("reset")
    assert reply.code != 0 and "never received" in reply.message, reply.message
    assert stack.client.status().state == "SAFE_STOP"

    robot.control({"clear": True})  # heard again, by the fresh bridge

    def reset() -> bool:
        return stack.client.request("reset").code == 0

    assert stack.wait_for(reset, 10, every=0.2), stack.client.status().not_ready
    assert stack.client.wait_status(lambda s: s.state == "IDLE", 5) is not None
    assert bridge_pid(stack.procs["executive"].pid) not in (None, old)
    time.sleep(0.3)  # the sim flushes its record every 100 ms
    assert not robot.records().moving(t_kill), "a moving command reached the robot"
    assert released(robot, t_kill) == [RELEASE_FSM]  # the reset handed control back
    assert whole_fsm(robot) == RELEASE_FSM
    said = motion(stack.client.status())
    assert said is not None and said[1].startswith("still"), said


def test_a_service_stopped_after_its_bridge_was_killed_releases_the_robot(
    aurora_waving: tuple[Stack, RobotProcess, float],
) -> None:
    """SIGINT with SAFE_STOP still latched (no reset): the clean stop hands upper-body
    control back through the fresh bridge, which then exits; no FSM 11 left held."""
    stack, robot, t0 = aurora_waving
    old, t_kill = kill_bridge(stack, robot, t0)
    new, t_new = fresh_bridge(stack, old)
    assert stack.wait_for(lambda: bool(robot.records().holds(t_new)), 10)
    assert stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5) is not None
    assert stack.stop("executive", signal.SIGINT) == 0
    assert stack.wait_for(lambda: not alive(new), 5), "the fresh bridge outlived the service"
    time.sleep(0.3)
    assert not robot.records().moving(t_kill), "a moving command reached the robot"
    assert released(robot, t_kill) == [RELEASE_FSM]
    assert whole_fsm(robot) == RELEASE_FSM
