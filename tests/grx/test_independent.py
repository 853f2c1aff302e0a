"""The GRX wire checked without project code on the robot's side.

The "robot" here is a plain zenoh session with msgpack, written from the seed alone
(keys ``fourier-grx/dynalink_interface/{category}/{server,client}``, one msgpack map with
string keys per message): it listens on this test's loopback port, publishes server maps
and records every client map. Only the executive's side is project code (the adapter).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import msgpack
import pytest
import zenoh

from executive.robots.grx.adapter import GrxAdapter
from tests.grx.conftest import wait_for

pytestmark = pytest.mark.dds  # real zenoh sessions on loopback

PREFIX = "fourier-grx/dynalink_interface"


class PlainRobot:
    """A bare zenoh peer speaking the seed's User API: no import from the project."""

    def __init__(self, port: int) -> None:
        config = zenoh.Config()
        config.insert_json5("mode", '"peer"')
        config.insert_json5("listen/endpoints", f'["tcp/127.0.0.1:{port}"]')
        config.insert_json5("connect/endpoints", "[]")
        config.insert_json5("scouting/multicast/enabled", "false")
        config.insert_json5("scouting/gossip/enabled", "false")
        self.session = zenoh.open(config)
        self.lock = threading.Lock()
        self.received: list[tuple[str, dict[str, Any]]] = []  # (category, map), in order
        self.raw: list[bytes] = []
        self.subscriber = self.session.declare_subscriber(f"{PREFIX}/*/client", self._on_client)

    def _on_client(self, sample: zenoh.Sample) -> None:
        payload = sample.payload.to_bytes()
        fields = msgpack.unpackb(payload, raw=False, strict_map_key=True)
        category = str(sample.key_expr).split("/")[2]
        with self.lock:
            self.raw.append(payload)
            self.received.append((category, fields))

    def client_maps(self, category: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [m for c, m in self.received if category in (None, c)]

    def log(self) -> list[tuple[str, dict[str, Any]]]:
        with self.lock:
            return list(self.received)

    def publish(self, category: str, fields: Any) -> None:
        self.session.put(f"{PREFIX}/{category}/server", msgpack.packb(fields))

    def publish_raw(self, category: str, payload: bytes) -> None:
        self.session.put(f"{PREFIX}/{category}/server", payload)

    def healthy(self, task_state: int = 36, in_process: bool = False, errors: int = 0) -> None:
        self.publish("comm", {"flag_heart_beat": True})
        # the GR-1 T2 of profile grx: 32 joints (an N1 reports 23)
        self.publish("robot", {"joint_measured_position": [0.0] * 32})
        self.publish(
            "task",
            {
                "flag_task_in_process": in_process,
                "robot_task_state": task_state,
                "robot_task_substate": 0,
            },
        )
        self.publish(
            "grx",
            {
                "fourier_core_version": "x",
                "fourier_grx_version": "x",
                "robot_error_codes": errors,
            },
        )

    def close(self) -> None:
        self.session.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def robot(port: int) -> Iterator[PlainRobot]:
    r = PlainRobot(port)
    yield r
    r.close()


def connected(robot: PlainRobot, adapter: GrxAdapter, task_state: int = 36) -> None:
    """Publish until the adapter has heard every category (the link and both sides'
    declarations are up), then once more so the adapter's snapshot is this state."""

    def heard() -> bool:
        robot.healthy(task_state)
        snap = adapter.snapshot()
        return all(s.received is not None for s in snap.sources.values())

    wait_for(heard, what="the adapter to hear the plain robot")
    time.sleep(0.1)  # the robot's subscription reaches the adapter's publishers too


def test_task_command_then_flag_as_str_keyed_maps(robot: PlainRobot, open_adapter, port) -> None:
    adapter = open_adapter(port)
    connected(robot, adapter)
    adapter.commands.set_fsm(35)  # servo_on
    maps = wait_for(lambda: len(robot.client_maps("task")) >= 2 and robot.client_maps("task"))
    assert maps[0]["robot_task_command"] == 35
    assert maps[1] == {"flag_task_command_update": True}
    # the command travels before its flag, alone: a flag with the command would be one map
    assert "flag_task_command_update" not in maps[0]
    for payload in robot.raw:  # strict_map_key would have refused anything but str keys
        assert all(isinstance(k, str) for k in msgpack.unpackb(payload, raw=False))


def test_plain_server_maps_drive_the_snapshot(robot: PlainRobot, open_adapter, port) -> None:
    adapter = open_adapter(port)
    events: list[tuple[str, str]] = []
    adapter.on_safety_event(lambda code, message: events.append((code, message)))
    connected(robot, adapter, task_state=960)
    snap = adapter.snapshot()
    assert snap.fsm is not None and snap.fsm.sample == 960
    assert snap.task is not None and snap.task.sample == (960, False)
    assert snap.servo_errors is not None and snap.servo_errors.sample == ()
    assert snap.estop is None and snap.battery is None  # the seed schema has neither
    assert snap.control is None  # no control authority on the User API
    assert list(snap.joints) == ["robot"]  # measured only: no stream commands them
    assert snap.positions(["head_yaw"]) == {"head_yaw": 0.0} and adapter.streams == ()

    robot.publish("task", {"flag_task_in_process": True, "robot_task_state": 965})
    wait_for(lambda: (t := adapter.snapshot().task) and t.sample == (965, True), what="walk")

    robot.publish("grx", {"robot_error_codes": 0x2310})
    errors = wait_for(lambda: (e := adapter.snapshot().servo_errors) and e.sample)
    assert errors == ("robot_error_codes=0x2310",)
    wait_for(lambda: events, what="the fast path")
    assert events == [("servo_error", "servo error: robot_error_codes=0x2310")]

    # a heartbeat map saying the robot's program is down does not count as heard
    before = adapter.snapshot().sources["comm"].received
    robot.publish("comm", {"flag_heart_beat": False})
    robot.publish("task", {"robot_task_state": 965})  # a map after it: comm has arrived
    wait_for(lambda: adapter.snapshot().task.received > before, what="the task map")
    assert adapter.snapshot().sources["comm"].received == before

    # something that is not a msgpack map: counted, named, on the fast path
    robot.publish_raw("grx", b"\xc1\xc1")
    wait_for(lambda: adapter.snapshot().sources["grx"].health.undecodable, what="undecodable")
    health = adapter.snapshot().sources["grx"].health
    assert health.errors == 1 and health.topic == f"{PREFIX}/grx/server"
    wait_for(lambda: events[-1][0] == "undecodable", what="the fast path")
    assert f"{PREFIX}/grx/server" in events[-1][1]
    robot.publish("grx", [1, 2, 3])  # msgpack, but not a map
    wait_for(lambda: adapter.snapshot().sources["grx"].health.errors == 2, what="a list")
    robot.publish("grx", {"robot_error_codes": 0})
    wait_for(lambda: not adapter.snapshot().sources["grx"].health.undecodable, what="recovery")


def test_safe_stop_zero_axes_then_safe_task(robot: PlainRobot, open_adapter, port) -> None:
    adapter = open_adapter(port, joystick_hz=100.0)
    connected(robot, adapter, task_state=965)  # walking: the safe task is sent
    adapter.commands.set_velocity(0.5, 0.0, -0.25, ttl=5.0)
    wait_for(lambda: len(robot.client_maps("grx")) >= 5, what="the joystick stream")
    streamed = robot.client_maps("grx")
    assert streamed[0] == {
        "virtual_joystick_axis_left": [0.0, 0.5],
        "virtual_joystick_axis_right": [-0.25, 0.0],
    }

    adapter.safe_stop()
    wait_for(lambda: len(robot.client_maps("task")) >= 2, what="the safe task")
    time.sleep(0.1)  # anything the stream would still send arrives meanwhile
    log = robot.log()
    zero = {"virtual_joystick_axis_left": [0.0, 0.0], "virtual_joystick_axis_right": [0.0, 0.0]}
    first_zero = log.index(("grx", zero))
    command = log.index(("task", {"robot_task_command": 960}))  # ready, the profile's safe task
    assert first_zero < command
    assert log[command + 1] == ("task", {"flag_task_command_update": True})
    assert all(m == zero for c, m in log[first_zero:] if c == "grx"), "axes after the stop"
    assert not adapter.commands.streaming


def test_no_safe_task_while_passive(robot: PlainRobot, open_adapter, port) -> None:
    """In servo_off the safe task (ready) would energise the motors: zero axes only."""
    adapter = open_adapter(port)
    connected(robot, adapter, task_state=36)
    adapter.safe_stop()
    wait_for(lambda: robot.client_maps("grx"), what="zero axes")
    time.sleep(0.1)
    assert robot.client_maps("task") == []


def test_the_stream_is_a_dead_man(robot: PlainRobot, open_adapter, port) -> None:
    adapter = open_adapter(port, joystick_hz=100.0)
    connected(robot, adapter)
    adapter.commands.set_velocity(1.0, 0.0, 0.0, ttl=0.1)  # and never renewed
    wait_for(lambda: not adapter.commands.streaming, timeout=1.0, what="the ttl")
    time.sleep(0.1)
    maps = robot.client_maps("grx")
    zero = {"virtual_joystick_axis_left": [0.0, 0.0], "virtual_joystick_axis_right": [0.0, 0.0]}
    assert maps[0] == {"virtual_joystick_axis_left": [0.0, 1.0], **_right(0.0)}
    assert maps[-1] == zero
    assert 5 <= len(maps) <= 20  # ~10 at 100 Hz for 0.1 s, then the zeros


def _right(yaw: float) -> dict[str, list[float]]:
    return {"virtual_joystick_axis_right": [yaw, 0.0]}


def test_a_map_without_its_error_codes_mid_walk_stops_the_walk(
    robot: PlainRobot, open_adapter, port
) -> None:
    """A grx map that says nothing of errors was "no error"; now it is an undecodable
    sample on a safety source: the fast path runs (past a callback that raises, which
    zenoh's thread never sees) and zero axes follow; the joystick stays latched at zero
    until the executive's reset frees it."""
    adapter = open_adapter(port, joystick_hz=100.0)
    connected(robot, adapter, task_state=965)
    events: list[tuple[str, str]] = []

    def broken(code: str, message: str) -> None:
        raise RuntimeError("a callback's bug")

    def fast_path(code: str, message: str) -> None:
        events.append((code, message))
        adapter.safe_stop()

    adapter.on_safety_event(broken)
    adapter.on_safety_event(fast_path)
    adapter.commands.set_velocity(0.5, 0.0, 0.0, ttl=5.0)
    moving = {"virtual_joystick_axis_left": [0.0, 0.5], "virtual_joystick_axis_right": [0.0, 0.0]}
    wait_for(lambda: moving in robot.client_maps("grx"), what="non-zero axes")  # walking first

    robot.publish("grx", {"fourier_core_version": "x", "fourier_grx_version": "x"})
    wait_for(lambda: events, what="the safety event")
    assert events == [
        (
            "undecodable",
            "fourier-grx/dynalink_interface/grx/server: undecodable sample "
            "(no robot_error_codes (a safety field of this map))",
        )
    ]
    zero = {"virtual_joystick_axis_left": [0.0, 0.0], "virtual_joystick_axis_right": [0.0, 0.0]}
    wait_for(lambda: zero in robot.client_maps("grx"), what="zero axes")
    adapter.commands.set_velocity(0.5, 0.0, 0.0, ttl=5.0)  # a leaf that has not seen the trip
    time.sleep(0.2)
    log = robot.client_maps("grx")
    assert all(m == zero for m in log[log.index(zero) :]), "non-zero axes after the trip"

    adapter.install_reflex(None, lambda trip: None).reset()  # the executive's reset
    adapter.commands.set_velocity(0.5, 0.0, 0.0, ttl=5.0)
    wait_for(lambda: robot.client_maps("grx")[-1] == moving, what="axes after the reset")
