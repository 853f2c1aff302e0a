"""The real service (``profile: grx``, ``zenoh_config:`` a per-test copy of the loopback
config) against the simulated GRX process, watched by a plain zenoh + msgpack subscriber
(``demo.Watcher``: no schema or adapter code between it and the wire): what went over the
wire is what it saw."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from executive.harness.stack import Stack, running_stack
from executive.robots.grx.demo import Watcher, start
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
    time.sleep(0.5)
    after = wire.maps(t_fault, "grx")
    zeros = [i for i, f in enumerate(after) if not nonzero(f)]
    assert zeros, "no zero axes after the trip"
    assert not [f for f in after[zeros[0] :] if nonzero(f)], "non-zero axes after the stop"
    task_cmds = [f.get("robot_task_command") for f in wire.maps(t_fault, "task")]
    assert 960 in task_cmds  # the profile's safe task (ready), refused by the faulted sim
    assert sim.cmd("status")["axes"] == [[0.0, 0.0], [0.0, 0.0]]
    sim.cmd("clear-error")
    reset(stack)


def test_heartbeat_loss_mid_walk_safe_stops_stale_state(grx) -> None:
    stack, sim, wire = grx
    t0 = time.monotonic()
    start_mission(stack, "walk_square", leg_seconds=20.0)  # silence trips while active
    assert stack.wait_for(lambda: any(map(nonzero, wire.maps(t0, "grx"))), 10)
    sim.cmd("heartbeat off")
    stopped = stack.client.wait_status(lambda s: s.state == "SAFE_STOP", 5)
    assert stopped is not None and "stale_state" in stopped.safety_reason, stack.client.status()
    assert "comm" in stopped.safety_reason
    sim.cmd("heartbeat on")
    reset(stack)
