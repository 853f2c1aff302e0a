"""``make demo PROFILE=aurora``: the executive driving the simulated Fourier Aurora.

Everything runs for real on a leased loopback DDS domain, as separate processes: the
simulated Aurora (``.venv-aurora/bin/python -m executive.robots.aurora.sim``, cyclonedds 11)
and the service (``atom-executive run``, ``profile: aurora``, ``missions_dir:
missions/aurora``), whose adapter starts its own bridge process on cyclonedds 11. The demo
runs ``arm_hand_walk`` to SUCCEEDED, then ``arm_wave`` and raises FSM 9 (security
protection) in the sim mid-wave: the service must SAFE_STOP naming it, the sim's record
must show the hold (``group_motion_state`` 2) and nothing moving after it; the sim is then
commanded out of FSM 9 and the reset brings the executive back to IDLE. Exit 0 only if every
check held.
"""

from __future__ import annotations

import sys
import time

from executive.demos.kit import Demo, accepted, say
from executive.harness.aurora import Pendant, RobotProcess, leave_fsm9, start
from executive.harness.stack import Stack, running_stack


def main(profile: str = "aurora") -> int:
    if profile != "aurora":
        print(f"the Aurora demo runs profile aurora, not {profile!r}", file=sys.stderr)  # noqa: T201
        return 2
    demo = Demo()
    with running_stack() as stack:
        say(
            f"starting the simulated Aurora (cyclonedds 11) and the executive on domain {stack.domain}"
        )
        robot = start(stack)
        try:
            run(demo, stack, robot)
        finally:
            robot.close()
    failed = [what for what, ok in demo.checks if not ok]
    say(f"{len(demo.checks) - len(failed)} of {len(demo.checks)} checks held")
    return 1 if failed or not demo.checks else 0


def run(demo: Demo, stack: Stack, robot: RobotProcess) -> None:
    client = stack.client
    status = client.status(30)
    demo.check(
        f"executive ready: {status.state}, interface {status.interface_variant}, profile "
        f"{status.profile}, every state source heard",
        status.state == "IDLE" and status.profile == "aurora" and not status.not_ready,
    )

    say("operator: start arm_hand_walk (control, arm and hand, release, walk, stand)")
    t0 = time.monotonic()
    reply = client.request("start", {"mission": "arm_hand_walk", "params": {"walk_seconds": 1.5}})
    demo.check(f"start accepted (run {reply.message})", accepted(client, reply))
    done = demo.follow(client, lambda s: s.state != "RUNNING", 60)
    demo.check("arm_hand_walk SUCCEEDED", done is not None and done.state == "SUCCEEDED")
    time.sleep(0.3)  # the sim flushes its record every 100 ms
    rec = robot.records()
    whole = [
        f["desired_state"]
        for _, f, r in rec.taken("whole_body_fsm_state_change_cmd", t0)
        if r == "applied"
    ]
    demo.check(
        f"the robot took whole-body FSMs 11, 2, 3, 2 in order: {whole}", whole == [11, 2, 3, 2]
    )
    arm = [c for _, cmds in rec.groups(t0) for c in cmds if c["group_name"] == "left_manipulator"]
    demo.check(f"the left arm was commanded ({len(arm)} commands)", len(arm) > 10)
    hand = [c for _, cmds in rec.groups(t0) for c in cmds if c["group_name"] == "left_hand"]
    demo.check(f"the left hand was commanded ({len(hand)} commands)", len(hand) > 10)
    walk = [f for _, f, _ in rec.taken("velocity_cmd", t0)]
    forward = [i for i, f in enumerate(walk) if f["vx"] > 0]
    demo.check(
        f"the robot walked ({len(forward)} velocity commands forward) and was sent zero after",
        bool(forward) and any(f["vx"] == 0.0 for f in walk[forward[-1] :]),
    )

    say("operator: start arm_wave; FSM 9 (security protection) raised by the robot mid-wave")
    t1 = time.monotonic()
    reply = client.request("start", {"mission": "arm_wave", "params": {"waves": 10}})
    demo.check("start accepted", accepted(client, reply))
    waving = stack.wait_for(lambda: len(robot.records().moving(t1)) > 20, 15)
    demo.check("the robot receives moving arm commands", waving)
    t_fault = robot.fsm9()
    stopped = client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    demo.check("SAFE_STOP", stopped is not None)
    if stopped is not None:
        demo.check(f"cause: {stopped.safety_reason}", "estop" in stopped.safety_reason)
    time.sleep(0.5)
    rec = robot.records()
    raised = rec.fault_at("fsm9") or t_fault
    holds = rec.holds(raised)
    demo.check(
        f"the hold reached the robot {1e3 * (holds[0] - raised):.1f} ms after the fault"
        if holds
        else "the hold reached the robot",
        bool(holds),
    )
    late = rec.moving(holds[0]) if holds else []
    demo.check(f"nothing moving reached the robot after the hold ({len(late)})", not late)

    say("the site clears the protection (FSM 2 from the robot's pendant); operator: reset")
    robot.control({"clear": True})
    out = client.request("reset")
    demo.check(f"reset refused while the robot is in FSM 9: {out.message}", out.code != 0)
    pendant = Pendant(stack)
    try:
        answer = leave_fsm9(stack, pendant)
    finally:
        pendant.close()
    demo.check(f"reset accepted once the robot left FSM 9: {answer}", answer is not None)
    demo.check(
        "IDLE after the reset", client.wait_status(lambda s: s.state == "IDLE", 5) is not None
    )


if __name__ == "__main__":
    sys.exit(main())
