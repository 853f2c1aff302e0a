"""The real service against the simulated PND Adam Pro, as separate processes.

One stack for the module (the sim started once, the service once): its missions directory
is ``missions/adam`` plus one Atom mission, so the same service shows the capability
refusal. The sim's record is the witness of what was sent: every ``LowCmd_`` with all 31
motors, mode 1, finite q inside the limits, kp > 0, the legs held where they were
measured; hand counts in 0..1000; and nothing moving after a trip.

The service's profile extends adam-pro with the battery range of the simulated pack
(``executive/robots/simkit/battery.py``, computed from its constants; the shipped profiles
leave it unset), so the sim's ``battery_data.voltage`` (sdk-1.2, both sides) is the
snapshot's battery and the watchdog's ``battery_critical`` applies. The sim runs adam-pro
itself: the same body.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import yaml
from cyclonedds.topic import Topic

from executive.harness.stack import ROOT, LogTail, Stack, log_time, running_stack
from executive.robots.adam.interface import AdamInterface
from executive.robots.adam.sim.client import client_for
from executive.robots.adam.sim.record import BODY_TOPIC, HAND_TOPIC, Recording
from executive.robots.simkit import battery as pack
from executive.seam.profile import load_profile
from executive.service.protocol import Code
from executive.wire import dds
from executive.wire.robot_io import LatestReader

pytestmark = pytest.mark.dds

PROFILE = load_profile("adam-pro")
BODY = tuple(PROFILE.topics["body"])
LEGS = [i for i, name in enumerate(BODY) if PROFILE.joints[name].group == "legs"]
# the simulated pack's range (volts): CELLS cells from empty to full
BATTERY_VOLTAGE = {
    "empty": pack.CELLS * pack.CELL_EMPTY_MV / 1000.0,
    "full": pack.CELLS * pack.CELL_FULL_MV / 1000.0,
}


def adam_ready(stack: Stack, pid: int) -> bool:
    """``Stack.start_sim``'s hook: the simulated Adam's own status, from this process."""
    return client_for(stack.dds).wait_status(lambda s: s.pid == pid, 30) is not None


class Adam:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.client = stack.client
        self.sim = client_for(stack.dds, timeout=10)
        iface = AdamInterface("sdk-1.2")
        topic = Topic(stack.dds, "rt/lowstate", iface.LowState_)
        self.low_state: LatestReader[Any] = LatestReader(
            stack.dds, topic, dds.STATE_READER_QOS, codec=iface.codec("LowState_", len(BODY))
        )
        self.log = LogTail(stack.log_path("executive"))

    def measured(self) -> np.ndarray:
        sample = self.low_state.wait_for(lambda s: True, 5)
        assert sample is not None, "no rt/lowstate"
        return np.asarray(sample["motor_state"]["q"], dtype=np.float64)

    def start(self, mission: str, **params: Any) -> str:
        reply = self.client.request("start", {"mission": mission, "params": params})
        assert reply.code == 0, reply.message
        assert self.client.wait_status(lambda s: s.run_id == reply.message, 10) is not None
        return str(reply.message)

    def record(self) -> Recording:
        time.sleep(0.3)  # the sim flushes its record every 100 ms
        return Recording.load(self.stack.record_path)

    def trip_time(self) -> float:
        """When the service logged its safe stop (``time.monotonic()`` clock)."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            for event in self.log.read():
                if event.get("event") == "safe stop" and (t := log_time(event)) is not None:
                    return t
            time.sleep(0.05)
        raise AssertionError("no 'safe stop' in the service's log")

    def battery(self) -> float | None:
        """The battery percent the service reports (its status document's telemetry)."""
        telemetry = json.loads(self.client.status().document)["telemetry"]
        return None if telemetry["battery"] is None else float(telemetry["battery"]["percent"])

    def reset(self) -> None:
        deadline = time.monotonic() + 5
        reply = self.client.request("reset")
        while reply.code != 0 and time.monotonic() < deadline:  # the cause must be gone first
            time.sleep(0.2)
            reply = self.client.request("reset")
        assert reply.code == 0, reply.message
        assert self.client.wait_status(lambda s: s.state == "IDLE", 5) is not None


@pytest.fixture(scope="module")
def adam(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Adam]:
    work = tmp_path_factory.mktemp("adam")
    missions = work / "missions"
    shutil.copytree(ROOT / "missions" / "adam", missions)
    shutil.copy(ROOT / "missions" / "greeting_wave.yaml", missions)  # an Atom mission
    profile = work / "adam-pro-battery.yaml"
    profile.write_text(
        yaml.safe_dump(
            {
                "extends": "adam-pro",
                "name": "adam-pro-battery",
                "capabilities": ["joints", "hands", "battery"],
                "adam": {"battery_voltage": BATTERY_VOLTAGE},
            }
        )
    )
    with running_stack(work / "stack") as stack:
        stack.write_config(profile=str(profile), interface="sdk-1.2", missions_dir=str(missions))
        stack.start_sim(
            *("--profile", "adam-pro", "--interface", "sdk-1.2", "--seed", "2"),
            record=True,
            sim_ready=adam_ready,
        )
        stack.start_service()
        yield Adam(stack)


def test_arms_wave_succeeds_and_every_command_is_whole_body(adam: Adam) -> None:
    legs_before = adam.measured()[LEGS]
    adam.start("arms_wave", waves=1)
    done = adam.client.wait_status(lambda s: s.state != "RUNNING", 40)
    assert done is not None and done.state == "SUCCEEDED", adam.client.status().last_reason
    rec = adam.record()
    assert not [e for e in rec.events if e.topic == BODY_TOPIC], "a LowCmd_ without 31 motors"
    body = rec.commands(BODY_TOPIC)
    hands = rec.commands(HAND_TOPIC)
    assert len(body) > 400 and hands
    lower = np.array([PROFILE.joints[n].lower for n in BODY])
    upper = np.array([PROFILE.joints[n].upper for n in BODY])
    for cmd in body:
        q = np.asarray(cmd.q)
        assert cmd.result == "applied", cmd  # the sim rejects any mode but 1 as bad_mode
        assert len(q) == 31 and len(cmd.kp) == 31
        assert np.isfinite(q).all() and (q >= lower).all() and (q <= upper).all(), q
        assert min(cmd.kp) > 0
        # the legs are held where they were measured, not sent to 0
        np.testing.assert_allclose(q[LEGS], legs_before, atol=1e-5)
    assert np.abs(legs_before).max() > 1e-4, "measured legs at 0: the check would prove nothing"
    assert any(max(abs(a - b) for a, b in zip(c.q, body[0].q, strict=True)) > 1.0 for c in body)
    for cmd in hands:
        assert cmd.result == "applied" and all(0 <= v <= 1000 for v in cmd.q), cmd.q


def test_servo_error_mid_motion_safe_stops_and_holds(adam: Adam) -> None:
    adam.log.skip()
    adam.start("arms_wave", waves=3)
    assert adam.client.wait_status(
        lambda s: "Raise arm" in s.active_node or "wave_raise" in s.active_node, 20
    ), adam.client.status().active_node
    time.sleep(0.5)
    since = time.monotonic() - 0.4  # before record() waits for the sim's flush, not after
    moving = adam.record().motion_commands(since, topic=BODY_TOPIC)
    assert moving, "the arm was not being moved when the fault hit"
    adam.sim.inject("servo-error", "right_elbow", value=0x21)
    stopped = adam.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None, adam.client.status()
    assert "servo_error" in stopped.safety_reason and "right_elbow" in stopped.safety_reason
    trip = adam.trip_time()
    time.sleep(1.0)
    rec = adam.record()
    assert rec.motion_commands(trip, topic=BODY_TOPIC) == []
    assert rec.motion_commands(trip, topic=HAND_TOPIC) == []
    held = rec.commands(BODY_TOPIC, after=trip + 0.1)
    assert len(held) > 100, "the hold stopped streaming"
    assert all(c.q == held[0].q for c in held), "a joint moved after the trip"
    adam.sim.clear("servo-error", "right_elbow")
    adam.reset()


def test_critical_battery_mid_motion_safe_stops_and_holds(adam: Adam) -> None:
    """The sim's pack voltage, as a percent of the profile's range, trips the watchdog's
    robot-neutral battery_critical; the arms stop where they are."""
    level = adam.battery()
    assert level is not None and 50 < level <= 86, level  # the sim starts at 85 %
    adam.log.skip()
    adam.start("arms_wave", waves=3)
    assert adam.client.wait_status(
        lambda s: "Raise arm" in s.active_node or "wave_raise" in s.active_node, 20
    ), adam.client.status().active_node
    time.sleep(0.5)
    since = time.monotonic() - 0.4  # before record() waits for the sim's flush, not after
    moving = adam.record().motion_commands(since, topic=BODY_TOPIC)
    assert len(moving) > 10, "the arm was not being moved when the fault hit"
    assert len({c.q for c in moving}) > 10, "motion commands without a changing q"
    adam.sim.inject("battery-level", value=5)  # 5 % < battery_critical (10 %)
    stopped = adam.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None, adam.client.status()
    assert "battery_critical" in stopped.safety_reason, stopped.safety_reason
    trip = adam.trip_time()
    time.sleep(1.0)
    rec = adam.record()
    rec.assert_no_motion_after(trip, topic=BODY_TOPIC)
    rec.assert_no_motion_after(trip, topic=HAND_TOPIC)
    held = rec.commands(BODY_TOPIC, after=trip + 0.1)
    assert len(held) > 100, "the hold stopped streaming"
    assert all(c.q == held[0].q for c in held), "a joint moved after the trip"
    level = adam.battery()
    assert level is not None and level < 10, level
    adam.sim.clear("battery-level")
    adam.reset()  # once the level is back above critical + hysteresis


def test_silent_low_state_mid_mission_safe_stops(adam: Adam) -> None:
    adam.start("hands_open_close", cycles=2)
    assert adam.client.wait_status(
        lambda s: "cycles" in s.active_node or "Close" in s.active_node, 10
    )
    adam.sim.inject("state-dropout", "low_state", duration=1.5)
    stopped = adam.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None and "stale_state" in stopped.safety_reason, adam.client.status()
    assert "low_state" in stopped.safety_reason or "rt/lowstate" in stopped.safety_reason
    adam.reset()


def test_an_atom_mission_is_refused_naming_the_capability(adam: Adam) -> None:
    problems = adam.client.request("validate", {"mission": "greeting_wave"})
    assert problems.code == Code.INVALID, (problems.code, problems.message)
    reply = adam.client.request("start", {"mission": "greeting_wave"})
    assert reply.code == Code.INVALID, (reply.code, reply.message)
    assert reply.message.startswith("not a mission this robot can run: "), reply.message
    assert "acquire_control needs the robot's 'control' capability" in reply.message, reply.message
    assert "adam (profile adam-pro" in reply.message, reply.message
    assert adam.client.status().state == "IDLE"
    listed = json.loads(adam.client.request("list_missions").payload)
    assert listed == ["arms_wave", "hands_open_close"], listed  # the Adam's, and only them
    assert "greeting_wave" not in listed  # in the directory (shown above), not listed
    reloaded = adam.client.request("reload")  # a directory shared with the Atom's reloads
    assert reloaded.code == 0, reloaded.message  # (it was refused: the Atom's were problems)
    assert json.loads(adam.client.request("list_missions").payload) == listed
    verdicts = {m: adam.client.request("validate", {"mission": m}) for m in listed}
    valid = [m for m, r in verdicts.items() if r.code == 0]
    assert valid == ["arms_wave", "hands_open_close"], {
        m: (r.code, r.message) for m, r in verdicts.items()
    }
