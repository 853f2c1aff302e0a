"""The real service (``profile: grx``, ``zenoh_config:`` a per-test copy of the loopback
config) against the simulated GRX process, watched by a plain zenoh + msgpack subscriber
(``demo.Watcher``: no schema or adapter code between it and the wire): what went over the
wire is what it saw."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from executive.harness.grx import Watcher, start
from executive.harness.stack import Stack, running_stack
from executive.robots.grx.sim.process import SimProcess

pytestmark = pytest.mark.dds

AXES = ("virtual_joystick_axis_left", "virtual_joystick_axis_right")


def nonzero(fields: dict[str, Any]) -> bool:
    return any(v for k in AXES for v in fields.get(k, ()))


@pytest.fixture(scope="module")
def grx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, SimProcess, Watcher]]:
    with running_stack(tmp_path_factory.mktemp("grx")) as stack:
        sim = start(stack, task_seconds=0.2)
        assert sim.service_port is not None
        wire = Watcher(sim.service_port)  # the service's own puts (peers route nothing)
        time.sleep(0.3)  # the link and its subscription
        try:
            yield stack, sim, wire
        finally:
            wire.close()
            sim.close()
        assert not wire.malformed, wire.malformed  # every map: msgpack, string keys


def start_mission(stack: Stack, name: str, **params: Any) -> None:
    if stack.client.status().state == "SAFE_STOP":  # a test before failed with it latched
        reset(stack)
    reply = stack.client.request("start", {"mission": name, "params": params})
    assert reply.code == 0, reply.message


def reset(stack: Stack) -> None:
    deadline = time.monotonic() + 5
    reply = stack.client.request("reset")
    while reply.code != 0 and time.monotonic() < deadline:
        time.sleep(0.2)
        reply = stack.client.request("reset")
    assert reply.code == 0, reply.message
    assert stack.client.wait_status(lambda s: s.state == "IDLE", 5) is not None


def test_stand_up_succeeds_and_each_task_is_command_then_flag(grx) -> None:
    stack, sim, wire = grx
    t0 = time.monotonic()
    start_mission(stack, "stand_up")
    done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 20)
    assert done is not None and done.state == "SUCCEEDED", stack.client.status().last_reason
    assert sim.cmd("status")["accepted"][-2:] == [35, 960]
    tasks = [f for f in wire.maps(t0, "task") if "robot_component_command" not in f]
    firsts = [i for i, f in enumerate(tasks) if "robot_task_command" in f]
    assert [tasks[i]["robot_task_command"] for i in firsts][:1] == [35]
    assert 960 in [tasks[i]["robot_task_command"] for i in firsts]
    for i in firsts:  # every command is followed by its flag, on its own map
        assert tasks[i] == {"robot_task_command": tasks[i]["robot_task_command"]}
        assert tasks[i + 1] == {"flag_task_command_update": True}


def test_an_error_code_mid_walk_safe_stops_with_zero_axes_and_the_safe_task(grx) -> None:
    stack, sim, wire = grx
    t0 = time.monotonic()
    start_mission(stack, "walk_square", leg_seconds=20.0)
    assert stack.wait_for(lambda: any(map(nonzero, wire.maps(t0, "grx"))), 10)
    t_fault = time.monotonic()
    sim.cmd("error 0x2310")
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None and "servo_error" in stopped.safety_reason, stack.client.status()
    assert_safe_stopped(sim, wire, t_fault)  # the safe task is refused by the faulted sim
    sim.cmd("clear-error")
    reset(stack)


def assert_safe_stopped(sim: SimProcess, wire: Watcher, t_fault: float) -> None:
    """What went over the wire after ``t_fault``: zero axes, and none but zero after the
    first; the profile's safe task (ready, 960); the sim stands with zero axes."""
    time.sleep(0.5)
    after = wire.maps(t_fault, "grx")
    zeros = [i for i, f in enumerate(after) if not nonzero(f)]
    assert zeros, "no zero axes after the trip"
    assert not [f for f in after[zeros[0] :] if nonzero(f)], "non-zero axes after the stop"
    task_cmds = [f.get("robot_task_command") for f in wire.maps(t_fault, "task")]
    assert 960 in task_cmds  # the profile's safe task (ready)
    assert sim.cmd("status")["axes"] == [[0.0, 0.0], [0.0, 0.0]]


def test_heartbeat_loss_mid_walk_safe_stops_stale_state(grx) -> None:
    stack, sim, wire = grx
    t0 = time.monotonic()
    start_mission(stack, "walk_square", leg_seconds=20.0)  # silence trips while active
    assert stack.wait_for(lambda: any(map(nonzero, wire.maps(t0, "grx"))), 10)  # walking
    t_fault = time.monotonic()
    sim.cmd("heartbeat off")
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None and "stale_state" in stopped.safety_reason, stack.client.status()
    assert "comm" in stopped.safety_reason
    assert_safe_stopped(sim, wire, t_fault)
    sim.cmd("heartbeat on")
    reset(stack)


@pytest.fixture(scope="module")
def grx_m4(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Stack, SimProcess, Watcher]]:
    """The same, both ends on the M4 schema (service config ``interface: m4``)."""
    with running_stack(tmp_path_factory.mktemp("grx-m4")) as stack:
        sim = start(stack, task_seconds=0.2, interface="m4")
        assert sim.service_port is not None
        wire = Watcher(sim.service_port)
        time.sleep(0.3)
        try:
            yield stack, sim, wire
        finally:
            wire.close()
            sim.close()
        assert not wire.malformed, wire.malformed


@pytest.mark.parametrize(
    ("fault", "clear", "cause"),
    [("estop on", "estop off", "estop"), ("battery 0.04", "battery 0.9", "battery_critical")],
)
def test_m4_estop_and_battery_mid_walk_safe_stop(grx_m4, fault: str, clear: str, cause: str):
    """The M4 schema's emergency-stop flag and battery, through the real service: walking
    first, then the trip, zero axes and the safe task, nothing non-zero after."""
    stack, sim, wire = grx_m4
    t0 = time.monotonic()
    start_mission(stack, "walk_square", leg_seconds=20.0)
    assert stack.wait_for(lambda: any(map(nonzero, wire.maps(t0, "grx"))), 10)  # walking
    t_fault = time.monotonic()
    sim.cmd(fault)
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None and cause in stopped.safety_reason, stack.client.status()
    assert_safe_stopped(sim, wire, t_fault)
    refused = stack.client.request("reset")
    assert refused.code != 0 and "still present" in refused.message
    sim.cmd(clear)
    reset(stack)
