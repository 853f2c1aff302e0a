"""Fault injection into the simulated Atom, over its DDS topic and from its command line."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from executive.robots.atom.sim.client import FaultRejectedError
from tests.sim.conftest import TIMEOUT, Sim, wait_until

pytestmark = pytest.mark.dds

FLAGS = {
    "estop-soft": "soft_emergency_triggered",
    "estop-hard": "hard_emergency_triggered",
    "estop-amr": "amr_emergency_triggered",
}


def _flags(sample: Any) -> dict[str, bool]:
    return {name: bool(sample[name]) for name in sample.dtype.names}


def test_each_emergency_flag_sets_and_clears_and_joints_stop_obeying(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim(record=False)
    for kind, field in FLAGS.items():
        sim.client.inject(kind)
        state = sim.wait_state("emergency_state", lambda s, f=field: bool(s[f]))
        assert [f for f, on in _flags(state).items() if on] == [field]
        sim.client.clear(kind)
        sim.wait_state("emergency_state", lambda s: not any(_flags(s).values()))
    with pytest.raises(FaultRejectedError, match="four flags"):
        sim.client.inject("estop-di")  # this interface has three flags

    # While an e-stop is set, valid commands are ignored (the firmware's safety function).
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    sim.client.inject("estop-soft")
    rec = sim.command_record("hands_cmd")
    sim.stream("hands_cmd", rec, seconds=0.2)
    sim.counters("hands", lambda c: c["ignored"] >= 5 and c["applied"] == 0)
    sim.client.clear("estop-soft")
    sim.stream("hands_cmd", rec, lambda: sim.client.counters("hands")["applied"] > 0)


def test_di_emergency_flag_on_a_four_flag_interface(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(interface="sdk-1.1.0", record=False)
    assert "di_emergency_triggered" in sim.state("emergency_state").dtype.names
    sim.client.inject("estop-di")
    state = sim.wait_state("emergency_state", lambda s: bool(s["di_emergency_triggered"]))
    assert [f for f, on in _flags(state).items() if on] == ["di_emergency_triggered"]
    assert "imu_state" not in sim.state("upper_state").dtype.names  # the SDK 1.x layout
    sim.client.clear_all()
    sim.wait_state("emergency_state", lambda s: not any(_flags(s).values()))


def test_bms_alarm_upper_lower_or_both(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)

    def alarms() -> tuple[int, int]:
        upper = int(sim.fresh_state("upper_state")["bms_state"]["bms_alarms"])
        return upper, int(sim.fresh_state("lower_state")["bms_state"]["bms_alarms"])

    sim.client.inject("bms-alarm", "lower", value=4)
    assert alarms() == (0, 4)
    sim.client.inject("bms-alarm", "upper")
    assert alarms() == (1, 4)
    sim.client.clear("bms-alarm")
    assert alarms() == (0, 0)
    sim.client.inject_spec("bms-alarm=0x10")  # no target: both blocks
    assert alarms() == (0x10, 0x10)
    sim.client.clear("bms-alarm", "both")
    assert alarms() == (0, 0)


def test_servo_error_shows_in_main_nodes_and_clear_errors_clears_it(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim(record=False)
    sim.client.inject("servo-error", "left_elbow_pitch", value=0x2310)  # by joint name
    sim.client.inject("servo-error", "head[1]", value=0x7)  # by node name
    nodes = sim.wait_state("main_nodes_state", lambda s: int(s["left_arm"]["error_code"][3]) != 0)
    assert int(nodes["left_arm"]["error_code"][3]) == 0x2310
    nodes = sim.wait_state("main_nodes_state", lambda s: int(s["head"]["error_code"][1]) == 7)
    assert int(nodes["waist"]["error_code"]) == 0
    assert sorted(t for k, t, _ in sim.client.active_faults() if k == "servo-error") == [
        "head[1]",
        "left_arm[3]",
    ]
    with pytest.raises(FaultRejectedError, match="known axis"):
        sim.client.inject("servo-error", "left_tail")

    sim.send("clear_errors", sim.iface.ClearErrors_(1))
    sim.wait_state(
        "main_nodes_state",
        lambda s: int(s["left_arm"]["error_code"].max()) == 0
        and int(s["head"]["error_code"].max()) == 0,
    )
    assert sim.client.wait_status(lambda s: not s.faults) is not None


def test_a_joint_whose_servo_is_in_error_stops_until_cleared(start_sim: Callable[..., Sim]) -> None:
    # the lag: the stopped joint is compared to the micro-radian (the body: test_physics.py)
    sim = start_sim("--physics", "kinematic", record=False)
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    sim.client.inject("servo-error", "left_elbow_pitch")
    names = list(sim.profile.topics["upper"])
    elbow, shoulder = names.index("left_elbow_pitch"), names.index("left_shoulder_pitch")
    start = sim.q("upper")
    target = sim.target("upper", {"left_elbow_pitch": 0.5, "left_shoulder_pitch": 0.5})
    rec = sim.command_record("upper_cmd", target)
    assert sim.stream(
        "upper_cmd", rec, lambda: abs(sim.q("upper")[shoulder] - target[shoulder]) < 0.01
    )
    assert sim.q("upper")[elbow] == pytest.approx(start[elbow], abs=1e-6)
    sim.send("clear_errors", sim.iface.ClearErrors_(2))
    assert sim.stream("upper_cmd", rec, lambda: abs(sim.q("upper")[elbow] - target[elbow]) < 0.01)


def test_amr_failure_fails_the_running_task_and_new_ones_until_cleared(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim("--amr-speed", "2", "--amr-turn-rate", "6", record=False)
    i = sim.iface
    sim.amr("MOVE_TO_TAG", command_id=1, target_id=2)
    sim.wait_state(
        "amr_state", lambda s: s["navigation_status"] == i.NavigationStatus_.RUNNING.value
    )
    sim.client.inject("amr-failure")
    failed = sim.wait_state(
        "amr_state",
        lambda s: int(s["task_id"]) == 1
        and s["navigation_status"] == i.NavigationStatus_.FAILED.value,
    )
    assert int(failed["device_status"]) == i.DeviceStatus_.ERROR.value
    sim.amr("MOVE_TO_TAG", command_id=2, target_id=1)
    sim.wait_state(
        "amr_state",
        lambda s: int(s["task_id"]) == 2
        and s["navigation_status"] == i.NavigationStatus_.FAILED.value,
    )
    sim.client.clear("amr-failure")
    sim.wait_state("amr_state", lambda s: s["device_status"] == i.DeviceStatus_.DEVIDLE.value)
    sim.amr("MOVE_TO_TAG", command_id=3, target_id=1, theta=math.pi)
    sim.wait_state(
        "amr_state",
        lambda s: int(s["task_id"]) == 3
        and s["navigation_status"] == i.NavigationStatus_.COMPLETED.value,
    )


def test_amr_estop_halts_the_base_until_released(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim("--amr-speed", "1.5", "--amr-turn-rate", "6", record=False)
    i = sim.iface
    sim.amr("MOVE_TO_TAG", command_id=8, target_id=2)
    sim.wait_state("amr_state", lambda s: float(s["position"][0]) > 0.2)
    sim.client.inject("amr-estop")
    pressed = sim.wait_state("amr_state", lambda s: bool(s["amr_event"]["emergency_stop_pressed"]))
    x = float(sim.fresh_state("amr_state")["position"][0])
    assert float(sim.fresh_state("amr_state")["position"][0]) == pytest.approx(x, abs=1e-6)
    assert x < 1.9
    assert int(pressed["navigation_status"]) == i.NavigationStatus_.RUNNING.value
    assert not any(_flags(sim.state("emergency_state")).values())  # a separate flag
    sim.client.clear("amr-estop")
    sim.wait_state(
        "amr_state",
        lambda s: int(s["task_id"]) == 8
        and s["navigation_status"] == i.NavigationStatus_.COMPLETED.value,
    )


def test_state_dropout_silences_one_topic_for_n_seconds(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)
    arrivals: list[float] = []
    lock = threading.Lock()

    def on_upper(_: Any) -> None:
        with lock:
            arrivals.append(time.monotonic())

    sim.ctl.readers["upper_state"].add_callback(on_upper)
    upper, lower = sim.ctl.readers["upper_state"], sim.ctl.readers["lower_state"]
    sim.client.inject_spec("dropout:rt/upper/state@1.5")
    injected = time.monotonic()
    count = upper.count
    lower_count = lower.count
    assert wait_until(lambda: lower.count > lower_count + 100)  # the others keep publishing
    assert upper.count <= count + 2  # at most what was already in flight
    assert wait_until(lambda: upper.count > count + 10), "upper_state never came back"
    with lock:
        gaps = np.diff([t for t in arrivals if t > injected - 1.0])
    assert gaps.max() >= 1.2  # silent for about the 1.5 s asked
    assert sim.client.wait_status(lambda s: not s.faults) is not None

    sim.client.inject("state-dropout")  # no topic: every state topic, until cleared
    count, amr = upper.count, sim.ctl.readers["amr_state"].count
    assert not wait_until(lambda: upper.count > count + 5, timeout=0.5)
    assert sim.ctl.readers["amr_state"].count <= amr + 1
    sim.client.clear("state-dropout")
    assert wait_until(lambda: sim.ctl.readers["amr_state"].count > amr + 3)


def test_battery_level_fault_sets_and_clears(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim("--battery", "80", "--battery-drain", "0", record=False)
    sim.client.inject("battery", value=12)
    amr = sim.wait_state("amr_state", lambda s: float(s["basic_status"]["battery_level"]) == 12.0)
    assert bool(amr["amr_event"]["low_battery"])
    sim.wait_state("upper_state", lambda s: int(s["bms_state"]["battery_level"]) == 12)
    sim.wait_state("lower_state", lambda s: int(s["bms_state"]["battery_level"]) == 12)
    sim.client.inject("battery-level", value=55.5)  # replaces the previous level
    sim.wait_state("amr_state", lambda s: float(s["basic_status"]["battery_level"]) == 55.5)
    sim.client.clear("battery")
    sim.wait_state("amr_state", lambda s: float(s["basic_status"]["battery_level"]) == 80.0)
    with pytest.raises(FaultRejectedError, match="0..100"):
        sim.client.inject("battery", value=140)


def test_faults_from_the_command_line_are_active_from_start(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim(
        "--fault",
        "estop-hard",
        "--fault",
        "bms-alarm:lower=4",
        "--fault",
        "servo-error:waist=0x55",
        "--fault",
        "battery=30",
        "--fault",
        "refuse-upper-control",
        "--fault",
        "estop-soft@1",
        record=False,
    )
    assert bool(sim.state("emergency_state")["hard_emergency_triggered"])
    assert int(sim.state("lower_state")["bms_state"]["bms_alarms"]) == 4
    assert int(sim.state("main_nodes_state")["waist"]["error_code"]) == 0x55
    assert float(sim.state("amr_state")["basic_status"]["battery_level"]) == 30.0
    sim.upper_control(True)
    assert sim.client.wait_status(lambda s: s.events_received >= 1) is not None
    assert not sim.fresh_state("upper_state")["is_upper_control"]
    # estop-soft@1 clears itself after a second; the others stay
    sim.wait_state("emergency_state", lambda s: not s["soft_emergency_triggered"], TIMEOUT)
    kinds = sorted(k for k, _, _ in sim.client.active_faults())
    assert kinds == [
        "battery-level",
        "bms-alarm",
        "estop-hard",
        "refuse-upper-control",
        "servo-error",
    ]


def test_gamepad_button_press_and_stick(start_sim: Callable[..., Sim]) -> None:
    """The operator's gamepad in wireless_remote (byte 3 bit 0 is A; bytes 4-7 LX)."""
    sim = start_sim(record=False)
    sim.client.inject("button", "a", duration=0.5)  # a press: released by itself
    for key in ("upper_state", "lower_state"):
        sim.wait_state(key, lambda s: int(s["wireless_remote"][3]) == 0b0000_0001)
    sim.wait_state("upper_state", lambda s: int(s["wireless_remote"][3]) == 0)
    sim.client.inject_spec("stick:LX=-0.5")
    sim.client.inject("button", "LT")  # held until cleared
    pad = sim.wait_state("lower_state", lambda s: int(s["wireless_remote"][2]) == 0b0010_0000)
    lx = np.frombuffer(bytes(np.asarray(pad["wireless_remote"][4:8], dtype=np.uint8)), "<f4")
    assert float(lx[0]) == -0.5
    sim.client.clear_all()
    sim.wait_state("lower_state", lambda s: not np.asarray(s["wireless_remote"]).any())


def test_refused_fsm_switch_keeps_the_fsm_and_is_recorded(start_sim: Callable[..., Sim]) -> None:
    """REFUSE_FSM: the firmware turns FSM switches down (the vendor's RPC has error codes
    for refused transitions), so a controller waiting for ``fsm_id`` waits in vain."""
    sim = start_sim()
    sim.set_fsm("joint_control")
    sim.client.inject("refuse-fsm")
    stand = sim.profile.fsm_id("stand")
    sim.send("set_fsm_id", sim.iface.SetFsmId_(stand, ""))
    assert sim.client.wait_status(lambda s: s.events_received >= 2) is not None
    joint_control = sim.profile.fsm_id("joint_control")
    assert int(sim.fresh_state("upper_state")["fsm_id"]) == joint_control
    assert int(sim.fresh_state("lower_state")["fsm_id"]) == joint_control
    assert sim.status().fsm_id == joint_control
    sim.client.clear("refuse-fsm")
    sim.set_fsm("stand")  # waits until lower_state shows it
    sim.stop()
    results = [e.result for e in sim.recording().event_commands("set_fsm_id")]
    assert results == [
        f"fsm {joint_control} (joint_control)",
        f"refused (fault); fsm stays {joint_control}",
        f"fsm {stand} (stand)",
    ]
