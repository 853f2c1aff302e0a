"""The simulated GRX's model and the wire helpers, without zenoh."""

from __future__ import annotations

import pytest

from executive.robots.grx import interface as wire
from executive.robots.grx.settings import settings_of
from executive.robots.grx.sim.model import CommandError, GrxModel
from executive.robots.grx.state import GrxState
from executive.seam.profile import load_profile

SETTINGS = settings_of(load_profile("grx"))
TASKS = {"clear_fault": 34, "servo_on": 35, "servo_off": 36, "ready": 960, "walk": 965}


def model(name: str = "seed") -> GrxModel:
    return GrxModel(wire.schema(name), TASKS, SETTINGS, task_seconds=0.1)


def test_a_flag_applies_the_stored_command_only() -> None:
    m = model()
    m.apply("task", {"flag_task_command_update": True})  # no command yet: nothing
    assert m.task_state == 36 and m.accepted == []
    m.apply("task", {"robot_task_command": 35})
    assert m.task_state == 36
    m.apply("task", {"flag_task_command_update": True})
    assert m.task_state == 35 and m.servo_on
    m.apply("task", {"robot_task_command": 965, "flag_task_command_update": True})  # one map
    assert m.task_state == 965 and m.walking and m.in_process


def test_errors_refuse_motion_until_cleared() -> None:
    m = model()
    m.apply("task", {"robot_task_command": 35, "flag_task_command_update": True})
    m.command("error 0x10")
    m.apply("task", {"robot_task_command": 960, "flag_task_command_update": True})
    assert m.task_state == 35 and m.refused == [(960, "error codes set")]
    m.apply("task", {"robot_task_command": 34, "flag_task_command_update": True})
    assert m.codes == [0] and m.task_state == 34


def test_walks_only_in_walk_and_keeps_the_last_axes() -> None:
    m = model()
    m.apply("grx", {"virtual_joystick_axis_left": [0.0, 1.0]})
    m.step(1.0)
    assert m.x == 0.0  # not walking
    for tid in (35, 965):
        m.apply("task", {"robot_task_command": tid, "flag_task_command_update": True})
    m.step(1.0)
    m.step(1.0)
    assert m.x == pytest.approx(2 * m.max_speed)


def test_server_maps_by_schema() -> None:
    seed, m4 = model("seed").server_maps(), model("m4").server_maps()
    assert seed["grx"]["robot_error_codes"] == 0 and "robot_battery_percentage" not in seed["grx"]
    assert "flag_task_in_process" in seed["task"]
    assert m4["grx"]["robot_error_codes"] == [0, 0, 0, 0]
    assert m4["robot"]["flag_robot_emergent_stop"] is False
    assert "flag_task_running" in m4["task"]
    with pytest.raises(CommandError, match="no e-stop"):
        model("seed").command("estop on")
    with pytest.raises(CommandError, match="unknown command"):
        model().command("explode")


def test_state_reads_what_the_model_publishes() -> None:
    for name in wire.SCHEMAS:
        m, events = model(name), []
        state = GrxState(
            m.schema, lambda c, code, msg, ev=events: ev.append(code), clock=lambda: 5.0
        )
        m.command("error 0x10 0")
        if name == "m4":
            m.command("estop on")
        for category, fields in m.server_maps().items():
            state.receive(category, wire.encode(fields))
        snap = state.snapshot()
        assert snap.fsm is not None and snap.fsm.sample == 36
        as_list = "[0]" if name == "m4" else ""
        expected = (f"robot_error_codes{as_list}=0x0010",)
        if name == "m4":
            expected += ("flag_robot_fault",)
            assert snap.estop is not None and snap.estop.sample == ("flag_robot_emergent_stop",)
            assert snap.battery is not None and snap.battery.sample == pytest.approx(85.0)
        assert snap.servo_errors is not None and snap.servo_errors.sample == expected
        assert sorted(events) == sorted(["servo_error"] + (["estop"] if name == "m4" else []))


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b"\xc1", "not msgpack"),
        (wire.encode({"a": 1}) + b"\x01", "not msgpack"),
        (b"\x93\x01\x02\x03", "not a map"),
        (b"\x81\xc4\x01a\x01", "is not a string"),
        (b"\x81\x01\x02", "not msgpack"),
    ],
)
def test_decode_names_what_it_got(payload: bytes, why: str) -> None:
    with pytest.raises(wire.DecodeError, match=why):
        wire.decode(payload)


def test_a_wrongly_typed_field_is_undecodable() -> None:
    state = GrxState(wire.schema("seed"))
    state.receive("task", wire.encode({"robot_task_state": "walk"}))
    health = state.snapshot().sources["task"].health
    assert health.undecodable and "robot_task_state" in health.last_error
    assert state.snapshot().fsm is None


def test_the_shipped_loopback_config_stays_on_loopback() -> None:
    import json

    from executive.wire.zenoh_session import LOOPBACK_CONFIG, load_config

    config = load_config(LOOPBACK_CONFIG)
    assert json.loads(config.get_json("mode")) == "peer"
    assert json.loads(config.get_json("scouting/multicast/enabled")) is False
    assert json.loads(config.get_json("scouting/gossip/enabled")) is False
    for key in ("listen/endpoints", "connect/endpoints"):
        endpoints = json.loads(config.get_json(key))
        assert endpoints and all(e.startswith("tcp/127.0.0.1:") for e in endpoints), key
