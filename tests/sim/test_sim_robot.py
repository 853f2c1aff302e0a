"""The simulated Atom over real DDS: state topics, FSM, upper control, joints and hands."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from executive.seam.profile import load_profile
from tests.sim.conftest import Sim, wait_until

pytestmark = pytest.mark.dds

TOL = 0.01  # rad
# Tests of what the sim obeys that compare positions to the micro-radian run the first-order
# lag: the body sags under gravity (that is tested in test_physics.py and test_sim_body.py).
KINEMATIC = ("--physics", "kinematic")


def test_publishes_every_state_topic_with_heartbeats_and_draining_battery(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim("--battery", "60", "--battery-drain", "120")  # 2 %/s: visible in a second
    upper, lower, amr = sim.state("upper_state"), sim.state("lower_state"), sim.state("amr_state")
    beats = (
        int(upper["bms_state"]["heartbeat"]),
        int(lower["bms_state"]["heartbeat"]),
        int(amr["basic_status"]["heartbeat"]),
    )
    level = float(amr["basic_status"]["battery_level"])
    assert 50.0 < level <= 60.0
    assert bytes(upper["robot_type"]).rstrip(b"\0") == b"Atom"
    sim.wait_state("amr_state", lambda s: s["basic_status"]["battery_level"] < level - 1.0)
    later_upper = sim.fresh_state("upper_state")
    later_lower = sim.fresh_state("lower_state")
    later_amr = sim.fresh_state("amr_state")
    assert int(later_upper["bms_state"]["heartbeat"]) != beats[0]
    assert int(later_lower["bms_state"]["heartbeat"]) != beats[1]
    assert int(later_amr["basic_status"]["heartbeat"]) != beats[2]
    assert int(later_upper["bms_state"]["battery_level"]) < 60
    assert int(later_upper["bms_state"]["bms_alarms"]) == 0
    emergency = sim.state("emergency_state")
    assert not any(bool(emergency[f]) for f in emergency.dtype.names)
    nodes = sim.state("main_nodes_state")
    assert int(nodes["left_arm"]["error_code"].max()) == 0
    # Rates: the 500 Hz topics arrive far more often than the 10 Hz one (no timing bound).
    upper_reader, nodes_reader = sim.ctl.readers["upper_state"], sim.ctl.readers["main_nodes_state"]
    n_upper, n_nodes = upper_reader.count, nodes_reader.count
    assert wait_until(lambda: nodes_reader.count >= n_nodes + 5)
    assert upper_reader.count - n_upper > 5 * (nodes_reader.count - n_nodes)


def test_fsm_switch_is_reflected_in_upper_and_lower_state(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim()
    assert int(sim.state("upper_state")["fsm_id"]) == sim.profile.fsm_id("zero_torque")
    for state in ("stand", "joint_control", "walk", "zero_torque"):
        fsm_id = sim.profile.fsm_id(state)
        sim.set_fsm(state)
        sim.wait_state("upper_state", lambda s, f=fsm_id: s["fsm_id"] == f)
    assert sim.status().fsm_id == 0


def test_upper_control_on_off_and_refused_or_revoked_by_fault(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim()
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    sim.upper_control(False)
    sim.wait_state("upper_state", lambda s: not s["is_upper_control"])

    sim.client.inject("refuse-upper-control")
    sim.upper_control(True)
    assert sim.client.wait_status(lambda s: s.events_received >= 3) is not None
    assert not sim.fresh_state("upper_state")["is_upper_control"]
    sim.client.clear("refuse-upper-control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))

    sim.client.inject("revoke-upper-control")  # someone else takes the upper body
    sim.wait_state("upper_state", lambda s: not s["is_upper_control"])
    sim.client.clear("revoke-upper-control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))


def test_upper_and_lower_joints_move_to_target_with_control_and_joint_fsm(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim(*KINEMATIC)
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    target = sim.target("upper", {"left_elbow_pitch": 0.6, "head_yaw": -0.3, "torso": 0.2})
    rec = sim.command_record("upper_cmd", target)
    assert sim.stream("upper_cmd", rec, lambda: np.abs(sim.q("upper") - target).max() < TOL), (
        f"upper joints at {sim.q('upper')}, target {target}"
    )
    # bounded velocity: a 0.6 rad move cannot be instant, so the joints reported motion
    state = sim.state("upper_state")
    assert np.abs(np.array(state["motor_state"]["q"]) - target).max() < TOL

    lower_target = sim.target("lower", {"left_knee": 0.4, "right_knee": 0.4})
    lower = sim.command_record("lower_cmd", lower_target)
    assert sim.stream("lower_cmd", lower, lambda: np.abs(sim.q("lower") - lower_target).max() < TOL)
    counters = sim.counters("upper", lambda c: c["applied"] > 0)
    assert counters["ignored"] == counters["non_finite"] == counters["out_of_range"] == 0


def test_joint_commands_are_ignored_in_zero_torque_or_without_upper_control(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim(*KINEMATIC)
    start = sim.q("upper")
    target = sim.target("upper", {"left_elbow_pitch": 0.6})
    rec = sim.command_record("upper_cmd", target)

    sim.upper_control(True)  # control on, but FSM zero torque
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    sim.stream("upper_cmd", rec, seconds=0.5)
    sim.counters("upper", lambda c: c["ignored"] >= 20)
    assert np.abs(sim.fresh_state("upper_state")["motor_state"]["q"] - start).max() < 1e-6

    sim.set_fsm("joint_control")  # joint FSM, but control off
    sim.upper_control(False)
    sim.wait_state("upper_state", lambda s: not s["is_upper_control"])
    before = sim.client.counters("upper")["ignored"]
    sim.stream("upper_cmd", rec, seconds=0.5)
    sim.counters("upper", lambda c: c["ignored"] >= before + 20)
    assert np.abs(sim.fresh_state("upper_state")["motor_state"]["q"] - start).max() < 1e-6
    assert sim.client.counters("upper")["applied"] == 0

    # lower joints need only the FSM; in zero torque they ignore commands too
    sim.set_fsm("zero_torque")
    lower = sim.command_record("lower_cmd", sim.target("lower", {"left_knee": 0.5}))
    sim.stream("lower_cmd", lower, seconds=0.3)
    sim.counters("lower", lambda c: c["ignored"] >= 10 and c["applied"] == 0)


INVALID: list[tuple[str, Callable[[np.ndarray], None]]] = [
    ("non_finite", lambda m: m["q"].__setitem__(4, np.nan)),
    ("non_finite", lambda m: m["kd"].__setitem__(0, np.inf)),
    ("out_of_range", lambda m: m["q"].__setitem__(4, 3.0)),  # left elbow pitch limit is 2.0
    ("bad_gains", lambda m: m["kp"].__setitem__(2, 0.0)),
    ("bad_gains", lambda m: m["kd"].__setitem__(2, -1.0)),
]


def test_invalid_joint_commands_are_counted_and_ignored(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(*KINEMATIC, record=False)
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    start = sim.q("upper")
    for reason, mutate in INVALID:
        rec = sim.command_record("upper_cmd", sim.target("upper", {"left_shoulder_pitch": 0.5}))
        mutate(rec["motor_cmd"])
        before = sim.client.counters("upper")[reason]
        sim.stream("upper_cmd", rec, seconds=0.2)
        sim.counters("upper", lambda c, r=reason, b=before: c[r] >= b + 5)
    counters = sim.client.counters("upper")  # one status: a consistent snapshot
    assert counters["applied"] == counters["ignored"] == 0
    assert counters["received"] == (
        counters["non_finite"] + counters["out_of_range"] + counters["bad_gains"]
    )
    assert np.abs(sim.fresh_state("upper_state")["motor_state"]["q"] - start).max() < 1e-6


def test_hands_move_to_target(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)
    target = sim.target("hands", {"right_index": 1.5, "left_thumb_rotate": 0.8})
    rec = sim.command_record("hands_cmd", target)
    assert sim.stream("hands_cmd", rec, lambda: np.abs(sim.q("hands") - target).max() < TOL)
    sim.counters("hands", lambda c: c["applied"] > 0)


def test_other_interface_variant_and_profile(start_sim: Callable[..., Sim]) -> None:
    """SDK 1.0.1 types (SetFsmId_ without action, UpperState_ without IMU), MOVE_TO_CHARGE
    numbering, and the seed-001 upper-body order: a joint named in the profile moves."""
    sim = start_sim(
        "--profile",
        "atom-seed001",
        "--amr-speed",
        "3",
        "--amr-turn-rate",
        "6",
        interface="sdk-1.0.1+amr_command_type=move_to_charge",
        record=False,
    )
    sim.profile = load_profile("atom-seed001")
    assert "imu_state" not in sim.state("upper_state").dtype.names
    assert "current_action" not in sim.iface.SetFsmId_.__dataclass_fields__
    sim.set_fsm("stand")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))
    target = sim.target("upper", {"left_elbow_pitch": 0.5})
    elbow = sim.profile.topics["upper"].index("left_elbow_pitch")
    assert elbow == 3  # seed 001: left arm 0-6
    rec = sim.command_record("upper_cmd", target)
    assert sim.stream("upper_cmd", rec, lambda: abs(sim.q("upper")[elbow] - target[elbow]) < TOL)

    i = sim.iface
    sim.amr("MOVE_TO_CHARGE", command_id=77)
    done = sim.wait_state(
        "amr_state",
        lambda s: int(s["task_id"]) == 77
        and s["navigation_status"] == i.NavigationStatus_.COMPLETED.value,
    )
    assert float(done["position"][0]) == pytest.approx(-1.0, abs=0.02)  # the charger tag
    assert int(done["device_status"]) == i.DeviceStatus_.CHARGING.value
