"""``make demo PROFILE=adam-pro``: the executive waving the simulated PND Adam's arm.

As the Atom's demo (``executive/demos/atom.py``), everything runs for real on a leased loopback
DDS domain, as separate processes: the simulated Adam (``atom-executive sim --profile P``)
and the service (``atom-executive run``, ``profile: P``, ``missions_dir: missions/adam``).
This script plays the operator (signed requests) and the trouble (a motor fault in the
middle of a wave), prints the live tree as status arrives and checks the sim's record of
what was sent. Exit 0 only if every check held; its processes end whatever happens.
"""

from __future__ import annotations

import time

import numpy as np

from executive.demos.kit import Demo, accepted, say
from executive.harness.stack import ROOT, LogTail, Stack, log_time, running_stack
from executive.robots.adam.sim.client import AdamSimClient, client_for
from executive.robots.adam.sim.record import BODY_TOPIC, HAND_TOPIC, Recording
from executive.seam.profile import load_profile
from executive.service.client import ExecutiveClient

FAULT_JOINT = "right_elbow"
FAULT_CODE = 0x21


def adam_ready(stack: Stack, pid: int) -> bool:
    """``Stack.start_sim``'s hook: the simulated Adam's own status, from this process."""
    return client_for(stack.dds).wait_status(lambda s: s.pid == pid, 30) is not None


def main(profile: str) -> int:
    started = time.monotonic()
    with running_stack() as stack:  # a leased domain: no test run or other demo shares it
        return run(Demo(), stack, profile, started)


def run(demo: Demo, stack: Stack, profile_name: str, started: float) -> int:
    profile = load_profile(profile_name)
    body = tuple(profile.topics["body"])
    say(f"starting the simulated Adam ({profile_name}) and the executive on domain {stack.domain}")
    stack.write_config(profile=profile_name, missions_dir=str(ROOT / "missions" / "adam"))
    stack.start_sim("--profile", profile_name, "--seed", "1", record=True, sim_ready=adam_ready)
    stack.start_service()
    client, sim = stack.client, client_for(stack.dds, timeout=10)
    status = client.status(30)
    demo.check(
        f"executive ready: {status.state}, interface {status.interface_variant}, "
        f"profile {status.profile}, every state source heard",
        status.state == "IDLE" and status.profile == profile_name and not status.not_ready,
    )
    print("  missions:", client.request("list_missions").payload, flush=True)  # noqa: T201

    say("operator: start arms_wave (2 waves)")
    reply = client.request("start", {"mission": "arms_wave", "params": {"waves": 2}})
    demo.check(f"start accepted (run {reply.message})", accepted(client, reply))
    done = demo.follow(client, lambda s: s.state != "RUNNING", 60)
    demo.check("arms_wave SUCCEEDED", done is not None and done.state == "SUCCEEDED")
    time.sleep(0.3)  # the sim flushes its record every 100 ms
    rec = Recording.load(stack.record_path)
    cmds = rec.commands(BODY_TOPIC)
    legs = [i for i, n in enumerate(body) if profile.joints[n].group == "legs"]
    lower = np.array([profile.joints[n].lower for n in body])
    upper = np.array([profile.joints[n].upper for n in body])
    whole = bool(cmds) and all(
        c.result == "applied"
        and len(c.q) == len(body)
        and min(c.kp) > 0
        and bool(np.all((np.asarray(c.q) >= lower) & (np.asarray(c.q) <= upper)))
        for c in cmds
    )
    demo.check(
        f"the sim's record: {len(cmds)} LowCmd_, each {len(body)} motors, mode 1, "
        "inside the limits, kp > 0",
        whole and not [e for e in rec.events if e.topic == BODY_TOPIC],
    )
    first_legs = np.asarray(cmds[0].q)[legs] if cmds else np.zeros(0)
    still = (
        bool(cmds)
        and np.abs(first_legs).max() > 1e-4
        and all(np.allclose(np.asarray(c.q)[legs], np.asarray(cmds[0].q)[legs]) for c in cmds)
    )
    demo.check("the legs were held where they were measured (not at 0) while the arm waved", still)
    hands = rec.commands(HAND_TOPIC)
    demo.check(
        f"{len(hands)} HandCmd_, every position in 0..1000",
        bool(hands) and all(0 <= v <= 1000 for c in hands for v in c.q),
    )

    fault_scene(demo, stack, client, sim)

    return demo.summary(started)


def fault_scene(demo: Demo, stack: Stack, client: ExecutiveClient, sim: AdamSimClient) -> None:
    """A motor fault mid-wave: SAFE_STOP naming the joint, the body held, clear, reset."""
    log = LogTail(stack.log_path("executive"))
    log.skip()
    say("operator: start arms_wave again; a motor will fault while the arm rises")
    reply = client.request("start", {"mission": "arms_wave", "params": {"waves": 3}})
    demo.check(f"start accepted (run {reply.message})", accepted(client, reply))
    demo.follow(client, lambda s: "Raise arm" in s.active_node or s.state != "RUNNING", 30)
    time.sleep(0.7)  # rising; the sim flushes its record every 100 ms
    moving = Recording.load(stack.record_path).motion_commands(
        time.monotonic() - 0.5, topic=BODY_TOPIC
    )
    demo.check(f"the arm is being moved ({len(moving)} motion commands in 0.5 s)", bool(moving))
    say(f"trouble: {FAULT_JOINT}'s motor reports error 0x{FAULT_CODE:x} (MotorState_.state)")
    sim.inject("servo-error", FAULT_JOINT, value=FAULT_CODE)
    stopped = demo.follow(client, lambda s: s.state == "SAFE_STOP", 5)
    reason = stopped.safety_reason if stopped is not None else "-"
    demo.check(
        f"SAFE_STOP latched: {reason}",
        stopped is not None and "servo_error" in reason and FAULT_JOINT in reason,
    )
    trip = None
    deadline = time.monotonic() + 5
    while trip is None and time.monotonic() < deadline:
        trip = next((log_time(e) for e in log.read() if e.get("event") == "safe stop"), None)
        time.sleep(0.05)
    time.sleep(1.0)
    rec = Recording.load(stack.record_path)
    held = rec.commands(BODY_TOPIC, after=(trip or 0.0) + 0.1)
    demo.check(
        f"the sim's record: nothing moved after the trip ({len(held)} holding LowCmd_ since, "
        "all the same)",
        trip is not None
        and len(held) > 10
        and all(c.q == held[0].q for c in held)
        and rec.motion_commands(trip) == [],
    )
    reply = client.request("reset")
    demo.check(f"reset refused while the motor reports the error: {reply.message}", reply.code != 0)
    say("the motor's error is cleared; operator: reset")
    sim.clear("servo-error", FAULT_JOINT)
    time.sleep(0.5)
    demo.reset_to_idle(client)
