"""The real service against the C robot, with no Python robot on the wire.

Why: until the C robot (``tests/crobot``) every test ran the executive against the Python
simulator, which shares the executive's codec, and the executive was deaf to a C
firmware's e-stop while every test passed. Here ``atom-executive run`` runs as its own
process on a leased loopback domain (``executive.harness.stack.Stack``) and the only robot is
``crobot``: a CycloneDDS 0.10 C program built from ``idl/`` by idlc for the interface
variant the service's config names. What the service sent is judged by what the C robot
decoded and recorded (``executive.robots.atom.sim.record.Recording``), never by the service's logs.

Time: the C robot answers a fault line with ``written``, the CLOCK_MONOTONIC time just
before it handed the first sample carrying the fault to ``dds_write`` (it writes that
topic at once, out of turn); the executive's commands carry their send time (``sent``)
on the same clock. Between the fault going out and the executive seeing it, commands
already in flight are still trajectory points: no executive can do better than one hop
of DDS and its own reaction. So "no motion after the trip" is checked from
``written + REACTION_S``, and the reaction is bounded by that margin; the e-stop benchmark
(``bench/parts/estop_c.py``) measures how long it really takes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic

from executive.harness.stack import Stack
from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.sim.record import Recording
from executive.seam.body import Gravity
from executive.seam.profile import load_profile
from executive.wire.codec import raw_write
from tests.crobot.harness import CRobot
from tests.sim.conftest import matched_total, wait_until

pytestmark = pytest.mark.dds

PROFILE = load_profile()
# The vendor's documented joint indices: an independent source, not executive/seam/profile.py.
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "atom_joints.yaml"
PRESETS = ("seed", "sdk-1.0.1", "sdk-1.1.0")
# How long after the fault is on the wire a motion command may still be sent: one DDS hop,
# the fast path (e-stop) or the next 50 Hz tick's watchdog (every other trigger), on a
# shared 2-core machine. Generous on purpose: a deaf executive streams on for seconds.
REACTION_S = 0.1
MOTION_BEFORE_S = 0.5  # motion must have been commanded within this long before the trip
TIMEOUT = 15.0

# A slow reach: every move long enough that the fault lands mid-motion, validated with a
# wide margin whatever the speed caps become (the worst case start is anywhere in limits).
REACH = """\
mission: c_reach
description: Take the upper body, drive the base, and move an arm and a hand slowly.
tree:
  sequence:
    name: Reach
    children:
      - acquire_control: {timeout: 10}
      - set_fsm: {state: joint_control, timeout: 10}
      - parallel:
          name: Drive and move
          children:
            - navigate_to_tag: {tag: 3, timeout: 600}
            - move_joints:
                name: Slow reach
                joints: {right_shoulder_pitch: -0.9, right_elbow_pitch: 1.2}
                duration: 30
                timeout: 120
            - hand_gesture:
                name: Slow grip
                fingers: {right_index: 2.0, right_middle: 2.0}
                duration: 30
                timeout: 120
"""
# Every kind of command once, to completion; its targets are checked against the indices
# of the vendor's reference, and the base's heading against what the robot reports.
ARM = {"right_elbow_pitch": 0.8, "right_wrist_pitch": -0.4}
HAND = {"right_index": 1.4, "right_thumb_bend": 0.5}
TAG, THETA = 2, 1.25
COMPLETE = f"""\
mission: c_complete
description: Upper control, the FSM, an arm, a hand and the base; control handed back.
tree:
  sequence:
    name: Complete
    children:
      - acquire_control: {{timeout: 10}}
      - set_fsm: {{state: joint_control, timeout: 10}}
      - parallel:
          name: Arm, hand and base
          children:
            - move_joints:
                name: Arm
                joints: {ARM}
                duration: 8
                timeout: 30
            - hand_gesture:
                name: Hand
                fingers: {HAND}
                duration: 6
                timeout: 30
            - navigate_to_tag: {{tag: {TAG}, theta: {THETA}, timeout: 30}}
      - release_control: {{timeout: 10}}
"""


class CStack:
    """The service (its own process) and the C robot on one leased domain."""

    def __init__(self, stack: Stack, start_crobot: Callable[..., CRobot]) -> None:
        self.stack = stack
        self._start_crobot = start_crobot
        self.robot: CRobot | None = None

    def start(self, variant: str = "seed", **robot: Any) -> CRobot:
        """The C robot for ``variant``, then the service speaking it, ready: it has heard
        every safety source (decoded), so it would accept a mission."""
        missions = self.stack.workdir / "missions"
        missions.mkdir(parents=True, exist_ok=True)
        (missions / "c_reach.yaml").write_text(REACH)
        (missions / "c_complete.yaml").write_text(COMPLETE)
        self.stack.write_config(missions_dir=str(missions), interface=variant)
        self.robot = self._start_crobot(variant, **robot)
        self.stack.start_service(ready=True)
        return self.robot

    def run(self, mission: str) -> tuple[str, float]:
        """Start ``mission``; its run id and when it was asked for."""
        asked = time.monotonic()
        reply = self.stack.client.request("start", {"mission": mission}, timeout=TIMEOUT)
        assert reply.code == 0, reply.message
        return reply.message, asked

    def wait_moving(self, after: float) -> Recording:
        """Until the C robot has taken moving commands on the arm and the hand (so a test
        cannot pass on an empty recording); the record then."""
        assert self.robot is not None
        rec: list[Recording] = []

        def moving() -> bool:
            assert self.robot is not None
            rec[:] = [self.robot.recording()]
            return all(rec[0].motion_commands(after, topic=t) for t in ("upper_cmd", "hands_cmd"))

        status = self.stack.client.status()
        assert wait_until(moving, TIMEOUT, every=0.1), (
            f"no motion commanded: {status.state} {status.last_reason} {status.safety_reason}"
        )
        return rec[0]


@pytest.fixture
def cstack(
    tmp_path: Path,
    dds_domain: int,
    start_crobot: Callable[..., CRobot],
) -> Iterator[CStack]:
    """A ``Stack`` on the test's leased domain (the C robot's too); after the test every
    process is stopped and the service's log must hold no traceback, shutdown included."""
    stack = Stack(tmp_path / "stack", dds_domain)
    stack.workdir.mkdir(parents=True)
    try:
        yield CStack(stack, start_crobot)
    finally:
        stack.close()
    log = stack.log_path("executive")
    text = log.read_text(errors="replace") if log.exists() else ""
    assert "Traceback" not in text, f"{log}:\n{text[-4000:]}"


def _cancels(rec: Recording, after: float) -> list[float]:
    return [
        e.t
        for e in rec.event_commands("amr_cmd", after=after)
        if e.fields["command_type"] == "CANCEL_TASK"
    ]


def held_recording(robot: CRobot, trip: float) -> Recording:
    """The robot's record once it holds 0.2 s of commands taken after ``trip + REACTION_S``
    (the hold streams on; a loaded machine may deliver it late, never not at all), or
    after ``TIMEOUT``: a fixed sleep judged the machine's load, not the hold."""
    until = trip + REACTION_S + 0.2
    deadline = time.monotonic() + TIMEOUT
    while True:
        rec = robot.recording()
        if rec.commands("upper_cmd", after=until) or time.monotonic() > deadline:
            return rec
        time.sleep(0.05)


def assert_stopped_in_time(rec: Recording, trip: float) -> None:
    """Motion up to the trip, none from ``trip + REACTION_S``, the hold still streaming,
    and the base's task canceled: DESIGN.md 4's reaction, as the robot saw it."""
    before = rec.motion_commands(trip - MOTION_BEFORE_S, before=trip)
    assert before, f"no motion commanded in the {MOTION_BEFORE_S} s before the trip"
    rec.assert_no_motion_after(trip + REACTION_S, clock="sent")
    held = rec.commands("upper_cmd", after=trip + REACTION_S)
    assert held and len({c.q for c in held}) == 1, "the arm is not held at one position"
    assert _cancels(rec, trip), "the base's task was not canceled"


# (variant, fault line, cause code, words the status's reason must hold)
TRIGGERS = [
    *[(v, "estop soft on", "estop", "soft_emergency_triggered") for v in PRESETS],
    ("seed", "estop hard on", "estop", "hard_emergency_triggered"),
    ("seed", "estop amr on", "estop", "amr_emergency_triggered"),
    ("sdk-1.1.0", "estop di on", "estop", "di_emergency_triggered"),
    ("seed", "bms upper 0x4", "bms_alarm", "0x00000004 in upper_state"),
    ("seed", "bms lower 0x10", "bms_alarm", "0x00000010 in lower_state"),
    ("seed", "servo right_arm 3 8976", "servo_error", "right_arm[3]=0x2310"),
    ("seed", "amr-estop on", "amr_estop", "emergency stop is pressed"),
    ("seed", "battery 5", "battery_critical", "battery at 5 %"),
    ("seed", "revoke", "control_revoked", "revoked"),
    ("seed", "silence rt/emergency/state", "stale_state", "rt/emergency/state"),
]


@pytest.mark.parametrize(
    ("variant", "fault", "code", "words"),
    TRIGGERS,
    ids=[f"{v}-{f.split(' on')[0].replace(' ', '-')}" for v, f, _, _ in TRIGGERS],
)
def test_a_trigger_raised_in_c_latches_safe_stop_and_no_motion_follows(
    cstack: CStack, variant: str, fault: str, code: str, words: str
) -> None:
    robot = cstack.start(variant, amr_trip_s=600.0)  # the base is still driving at the trip
    _, asked = cstack.run("c_reach")
    cstack.wait_moving(asked)
    reply = robot.fault(fault)
    if code == "stale_state":  # silent from its last sample: trips once older than the limit
        trip = reply["last"] + PROFILE.safety_sources["emergency_state"]
    else:
        trip = reply["written"]
    status = cstack.stack.client.wait_status(lambda s: s.state == "SAFE_STOP", TIMEOUT)
    assert status is not None, cstack.stack.client.status().safety_reason
    reasons = status.safety_reason.split("; ")
    assert any(r.startswith(f"{code}: ") and words in r for r in reasons), reasons
    assert_stopped_in_time(held_recording(robot, trip), trip)


def _reference_indices() -> dict[str, tuple[str, int]]:
    """Joint name -> (stream, index on the wire), from the vendor's reference: upper by
    the SDK order (``sdk_local``, the default profile's), hands by seed 000's finger order,
    right hand 0-5 and left hand 6-11."""
    ref = yaml.safe_load(REFERENCE.read_text())
    out = {j["name"]: ("upper_cmd", int(j["sdk_local"])) for j in ref["upper"]}
    out |= {j["name"]: ("lower_cmd", int(j["index"])) for j in ref["lower"]}
    fingers = ref["hands"]["order_seed_000"]
    for side, offset in (("right", 0), ("left", len(fingers))):
        out |= {f"{side}_{f}": ("hands_cmd", offset + i) for i, f in enumerate(fingers)}
    return out


@pytest.mark.parametrize("variant", PRESETS)
def test_a_whole_mission_runs_to_success_and_every_command_is_valid(
    cstack: CStack, variant: str
) -> None:
    robot = cstack.start(variant, amr_trip_s=1.0)
    run_id, asked = cstack.run("c_complete")
    done = cstack.stack.client.wait_status(
        lambda s: s.state != "RUNNING" and s.last_result and s.mission == "", 60
    )
    assert done is not None and done.last_result == "SUCCEEDED", done and (
        done.last_result,
        done.last_reason,
    )
    rec = robot.recording()
    streams = rec.commands(after=asked)
    assert streams, "no joint command was taken"
    results = {c.result for c in streams}
    assert results <= {"applied", "ignored"}, results  # never non_finite/out_of_range/bad_gains
    assert all(math.isfinite(x) for c in streams for x in (*c.q, *c.kp))
    events = rec.event_commands(after=asked)
    kinds = [(e.topic, e.result) for e in events]
    assert ("switch_upper_control", "upper control on") in kinds, kinds
    assert ("switch_upper_control", "upper control off") in kinds, kinds
    joint_fsm = PROFILE.fsm_id("joint_control")
    assert any(e.topic == "set_fsm_id" and e.fields["id"] == joint_fsm for e in events), kinds
    (move,) = [e for e in events if e.topic == "amr_cmd" and e.result.endswith("running")]
    assert move.fields["command_type"] == "MOVE_TO_TAG" and move.fields["target_id"] == TAG
    assert move.fields["theta"] == pytest.approx(THETA, abs=1e-6)
    # the last commands carry the mission's targets at the vendor's indices
    index = _reference_indices()
    for name, target in (ARM | HAND).items():
        topic, i = index[name]
        last = rec.commands(topic, after=asked)[-1]
        assert last.q[i] == pytest.approx(target, abs=1e-6), (name, topic, i, last.q)
    # and the robot got there: the record's dev is |q - measured| when taken
    for topic in ("upper_cmd", "hands_cmd"):
        applied = [c for c in rec.commands(topic, after=asked) if c.result == "applied"]
        assert applied and applied[-1].dev < 0.05, (topic, applied[-1:])
    assert robot.status()["amr"]["navigation_status"] == "COMPLETED"
    assert_gravity_feedforward_as_c_reads_it(robot.record_path)


def assert_gravity_feedforward_as_c_reads_it(record: Path) -> None:
    """MotorCmd_.tau as the C robot decoded it: the vendor model's gravity torque at each
    upper command's q (body.Gravity, float32 on the wire), none on the other streams."""
    gravity = Gravity(PROFILE, PROFILE.topics["upper"])
    lines = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    seen: dict[str, int] = {}
    for obj in lines:
        if obj.get("topic") not in ("upper_cmd", "lower_cmd", "hands_cmd") or "tau" not in obj:
            continue
        topic = obj["topic"]
        seen[topic] = seen.get(topic, 0) + 1
        tau = np.asarray(obj["tau"])
        if topic == "upper_cmd":
            expected = gravity(np.asarray(obj["q"], dtype=np.float32).astype(np.float64))
            assert np.allclose(tau, expected, atol=1e-3), (tau, expected)
        else:
            assert not np.any(tau), (topic, tau)
    assert seen.get("upper_cmd", 0) > 0, seen
    assert any(
        np.any(np.abs(o["tau"]) > 1.0)
        for o in lines
        if o.get("topic") == "upper_cmd" and "tau" in o
    ), "the arms carried no gravity torque"


def test_a_garbled_estop_sample_latches_undecodable_and_no_motion_follows(
    cstack: CStack,
) -> None:
    """A sample on ``rt/emergency/state`` that does not decode (a wrong encapsulation, from
    a plain DataWriter of this process beside the C robot's) may be an e-stop.

    The encapsulation is PL_CDR_LE, a parameter list (what a mutable type would send): one
    CycloneDDS knows but no ``@final EmergencyState_`` can be. An identifier CycloneDDS
    does not know at all (``12 34``) never reaches a reader: CycloneDDS 0.10 drops the
    whole packet as malformed ("recvUC: malformed packet received"), so the executive
    could not see it, and a test with it would wait for nothing."""
    robot = cstack.start("seed", amr_trip_s=600.0)
    iface = Interface(Variant.parse("seed"))
    participant = cstack.stack.dds
    writer: DataWriter[Any] = DataWriter(
        participant, Topic(participant, "rt/emergency/state", iface.EmergencyState_)
    )
    assert wait_until(lambda: matched_total(writer) >= 1), "the service's reader never matched"
    _, asked = cstack.run("c_reach")
    cstack.wait_moving(asked)
    trip = time.monotonic()
    raw_write(writer, b"\x00\x03\x00\x00\x01\x00\x00\x00")  # PL_CDR_LE, a flag set
    status = cstack.stack.client.wait_status(lambda s: s.state == "SAFE_STOP", TIMEOUT)
    assert status is not None, cstack.stack.client.status().safety_reason
    assert status.safety_reason.startswith("undecodable: rt/emergency/state"), status.safety_reason
    assert "PL_CDR_LE" in status.safety_reason, status.safety_reason
    assert_stopped_in_time(held_recording(robot, trip), trip)
