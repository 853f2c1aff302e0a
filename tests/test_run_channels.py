"""The pieces of a run's recording, without DDS: the MCAP files (pre-roll, tail, failures
that are reported and never raised), the live view with a real WebSocket client on
loopback, the command taps, and the ``foxglove`` config key.

The whole thing against the simulated Atom: tests/integration/test_run_channels.py.
"""

from __future__ import annotations

import inspect
import json
import socket
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, get_type_hints

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import numpy as np
import py_trees
import pytest
from mcap.reader import make_reader

from executive.core.taps import CommandTap, chain_publish
from executive.records.foxglove_live import LiveView, start_live
from executive.records.mcaprecord import FoxgloveConfig, McapRecorder
from executive.records.runchannels import Channel, Message, RunChannels, catalogue
from executive.robots.atom.interface import Interface
from executive.robots.atom.state import AtomState
from executive.seam.ports import RobotCommands, Stamped
from executive.seam.profile import load_profile
from executive.service.config import ConfigError, load_config, parse_config
from executive.wire.codec import Codec
from tests.foxglove_ws import FoxgloveClient

ROOT = Path(__file__).resolve().parents[1]
PROFILE = load_profile()
CHANNELS = catalogue(PROFILE)
BASE = "/robot/base"


def msg(topic: str, t_ns: int, **body: Any) -> Message:
    return Message(topic, t_ns, t_ns, json.dumps(body).encode())


def read(path: Path) -> tuple[Any, list[tuple[str, int, dict[str, Any]]]]:
    with path.open("rb") as f:
        reader = make_reader(f)
        out = [(c.topic, m.log_time, json.loads(m.data)) for _, c, m in reader.iter_messages()]
        return reader.get_summary(), out


def test_the_catalogue_names_joints_by_profile_name_and_every_schema_is_an_object() -> None:
    upper = CHANNELS["/robot/joints/upper"].schema
    assert list(upper["properties"]["position"]["properties"]) == list(PROFILE.topics["upper"])
    for channel in CHANNELS.values():
        assert json.loads(channel.schema_data)["type"] == "object", channel.topic
    assert CHANNELS["/executive/log"].schema_name == "foxglove.Log"  # Foxglove's Log panel
    # robot-neutral: the e-stop inputs that are on (any robot's), not one wire's flags
    assert set(CHANNELS["/robot/emergency"].schema["properties"]) == {"on", "any"}
    joint_topics = {t for t in CHANNELS if t.startswith("/robot/joints/")}
    assert joint_topics == {f"/robot/joints/{s}" for s in PROFILE.topics}


def test_every_robot_gets_a_catalogue_from_its_profile() -> None:
    for name in ("adam-lite", "grx"):
        profile = load_profile(name)
        channels = catalogue(profile)
        for stream, names in profile.topics.items():
            position = channels[f"/robot/joints/{stream}"].schema["properties"]["position"]
            assert list(position["properties"]) == list(names), (name, stream)
        assert {"/robot/status", "/robot/sources", "/robot/base"} <= set(channels)


def test_a_run_file_has_its_preroll_its_run_and_its_tail(tmp_path: Path) -> None:
    rec = McapRecorder(tmp_path, CHANNELS.values(), preroll_s=1.0, tail_s=2.0)
    t0 = time.time_ns()
    s = 1_000_000_000
    rec.write(msg("/robot/base", t0 - 3 * s, n=0))  # too early for the pre-roll
    rec.write(msg("/robot/base", t0 - s // 2, n=1))  # in it
    rec.begin("r1", {"run_id": "r1", "mission": "m"}, t0)
    rec.write(msg("/robot/base", t0 + s, n=2))
    rec.end("r1", {"result": "SUCCEEDED"}, t0 + 2 * s)
    rec.write(msg("/robot/base", t0 + 3 * s, n=3))  # in the tail
    rec.write(msg("/robot/base", t0 + 5 * s, n=4))  # after it: the file is finished
    assert rec.flush()
    summary, messages = read(rec.path("r1"))
    assert [b["n"] for t, _, b in messages if t == "/robot/base"] == [1, 2, 3]
    assert messages[0][0] == "/robot/model"  # the robot's model first, at the pre-roll's start
    assert messages[0][1] == messages[1][1]
    assert {c.topic for c in summary.channels.values()} == set(CHANNELS)  # all, even empty
    assert rec.problems() == []
    rec.close()


def test_a_run_in_the_tail_of_another_ends_it_and_gets_its_preroll_too(tmp_path: Path) -> None:
    rec = McapRecorder(tmp_path, CHANNELS.values(), preroll_s=1.0, tail_s=2.0)
    t0 = time.time_ns()
    ms = 1_000_000
    rec.begin("a", {}, t0)
    rec.write(msg("/robot/base", t0 + 100 * ms, n=1))
    rec.end("a", {}, t0 + 200 * ms)
    rec.write(msg("/robot/base", t0 + 300 * ms, n=2))  # a's tail, b's pre-roll
    rec.begin("b", {}, t0 + 400 * ms)
    rec.write(msg("/robot/base", t0 + 500 * ms, n=3))
    rec.close()  # finishes b
    assert [b["n"] for t, _, b in read(rec.path("a"))[1] if t == BASE] == [1, 2]
    assert [b["n"] for t, _, b in read(rec.path("b"))[1] if t == BASE] == [1, 2, 3]


def test_a_tail_ends_on_time_with_no_traffic(tmp_path: Path) -> None:
    rec = McapRecorder(tmp_path, CHANNELS.values(), tail_s=0.2)
    now = time.time_ns()
    rec.begin("quiet", {}, now)
    rec.end("quiet", {"result": "ABORTED"}, now)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # finished by the writer thread on its own
        try:
            read(rec.path("quiet"))
            break
        except Exception:  # noqa: BLE001 - not finished yet
            time.sleep(0.05)
    with rec.path("quiet").open("rb") as f:
        metadata = {m.name: dict(m.metadata) for m in make_reader(f).iter_metadata()}
    assert metadata["result"] == {"result": "ABORTED"}
    rec.close()


def test_a_file_that_cannot_be_written_is_reported_never_raised(tmp_path: Path) -> None:
    rec = McapRecorder(tmp_path, CHANNELS.values())
    rec.path("blocked").mkdir()  # a directory where the file should go
    now = time.time_ns()
    rec.begin("blocked", {}, now)  # neither raises here nor on the writer thread
    rec.write(msg("/robot/base", now + 1, n=1))
    rec.end("blocked", {}, now + 2)
    rec.begin("next", {}, now + 3)  # the next run gets its file
    rec.write(msg("/robot/base", now + 4, n=2))
    assert rec.flush()
    problems = rec.problems()
    assert len(problems) == 1 and "blocked.mcap" in problems[0], problems
    rec.close()
    assert [b["n"] for t, _, b in read(rec.path("next"))[1] if t == BASE] == [1, 2]


def test_a_full_queue_drops_and_counts(tmp_path: Path) -> None:
    rec = McapRecorder(tmp_path, CHANNELS.values(), queue_items=0)  # always full
    rec.write(msg("/robot/base", 1))
    assert rec.dropped >= 1 and "queue full" in rec.problems()[0]
    rec.close()


def test_an_unfinished_file_is_drawn_as_far_as_it_goes(tmp_path: Path) -> None:
    from executive.operator.timeline import draw, load

    rec = McapRecorder(tmp_path, CHANNELS.values())
    t0 = time.time_ns()
    rec.begin("cut", {}, t0)
    event = {"event": "state", "state": "RUNNING", "mission": "m", "run_id": "cut"}
    rec.write(Message("/executive/events", t0, t0, json.dumps(event).encode()))
    for i in range(3000):
        body = {"position": {"head_yaw": i / 3000}, "held": False}
        rec.write(Message("/cmd/joints/upper", t0 + i * 20_000_000, 0, json.dumps(body).encode()))
    rec.close()
    data = rec.path("cut").read_bytes()
    cut = tmp_path / "cut-short.mcap"
    cut.write_bytes(data[: len(data) * 2 // 3])  # as a kill leaves it: no summary, no footer
    run = load(cut)
    assert run.mission == "m" and 0 < len(run.targets["head_yaw"]) < 3000
    assert draw(run, tmp_path / "cut.png").stat().st_size > 0


def test_the_live_view_serves_a_real_websocket_client_on_loopback() -> None:
    view = LiveView(CHANNELS.values(), "127.0.0.1", 0)
    client = FoxgloveClient("127.0.0.1", view.port)
    try:
        assert client.wait(lambda: set(CHANNELS) <= set(client.channels))
        assert client.server_info["name"] == "atom-executive"
        channel = client.channels["/robot/joints/upper"]
        assert json.loads(channel["schema"]) == CHANNELS["/robot/joints/upper"].schema
        assert not view.wants(0)  # no viewer subscribed: the encoder need not run
        sub = client.subscribe("/executive/events")
        assert client.wait(lambda: view.wants(0))  # the subscription reached the server
        for i in range(3):
            view.write(msg("/executive/events", 1_000 + i, event="state", state=f"S{i}"))
        view.write(msg("/robot/base", 5_000, n=1))  # not subscribed: not sent
        assert client.wait(lambda: len(client.received(sub)) == 3)
        got = client.received(sub)
        assert [r.json()["state"] for r in got] == ["S0", "S1", "S2"]
        assert [r.log_time for r in got] == [1_000, 1_001, 1_002]
        assert {r.subscription for r in client.data} == {sub}
    finally:
        client.close()
        view.close()


def test_a_live_view_whose_port_is_taken_is_reported_not_fatal() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        view, problems = start_live(CHANNELS.values(), "127.0.0.1", taken.getsockname()[1])
    assert view is None and "not started" in problems[0]


class Recorded:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def request_control(self, on: bool) -> None:
        self.calls.append(("control", on))

    def set_fsm(self, fsm_id: int) -> None:
        self.calls.append(("fsm", fsm_id))

    def clear_faults(self) -> int:
        return 7

    def go_to_tag(self, tag: int, theta: float) -> int:
        self.calls.append(("go", tag))
        return 42

    def cancel_base(self) -> int:
        self.calls.append(("cancel", 0))
        return 43


def test_the_command_tap_sends_first_and_a_failing_listener_stops_nothing() -> None:
    inner = Recorded()
    tap = CommandTap(inner)  # type: ignore[arg-type]  # the verbs this test sends
    heard: list[tuple[str, dict[str, Any], int | None]] = []

    def broken(*_: Any) -> None:
        raise RuntimeError("a recorder's bug")

    tap.listeners += [broken, lambda c, a, r: heard.append((c, a, r))]
    tap.request_control(True)
    assert tap.go_to_tag(3, 1.5) == 42
    assert tap.clear_faults() == 7
    assert inner.calls == [("control", True), ("go", 3)]
    assert heard[0] == ("request_control", {"on": True}, None)
    assert heard[1] == ("go_to_tag", {"tag": 3, "theta": 1.5}, 42)
    assert heard[2] == ("clear_faults", {}, 7)
    assert tap.listener_errors == 3


class EveryVerb:
    """Commands with every verb anyone may ask for: each call is recorded, returns 5."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def verb(*args: Any) -> int:
            self.calls.append((name, args))
            return 5

        return verb


SAMPLE = {bool: True, int: 3, float: 0.25}


def port_verbs() -> list[str]:
    """The verbs of the ``RobotCommands`` protocol (ports.py), whatever it grows to."""
    return [n for n, v in vars(RobotCommands).items() if inspect.isfunction(v) and n[0] != "_"]


@pytest.mark.parametrize("verb", port_verbs())
def test_the_command_tap_passes_every_port_verb_through_and_tells_it(verb: str) -> None:
    inner = EveryVerb()
    tap = CommandTap(inner)  # every verb, recorded (its __getattr__)
    heard: list[tuple[str, dict[str, Any], int | None]] = []
    tap.listeners.append(lambda c, a, r: heard.append((c, a, r)))
    hints = get_type_hints(getattr(RobotCommands, verb))
    params = [p for p in inspect.signature(getattr(RobotCommands, verb)).parameters if p != "self"]
    args = tuple(SAMPLE[hints[p]] for p in params)
    getattr(tap, verb)(*args)
    assert [name for name, _ in inner.calls] == [verb], f"the tap did not pass {verb} through"
    assert inner.calls[0][1][: len(args)] == args
    assert [c for c, _, _ in heard] == [verb], f"the tap passed {verb} but told nobody"


def test_the_command_tap_passes_a_robots_own_verbs_and_hides_none() -> None:
    """The GRX's run_component is not a port verb: the leaf finds it with getattr on the
    context's commands (the tap); a tap that hid it failed the GRX's shipped wave mission
    with "the robot has no component 'natural_arm_swing'" (issue 25)."""

    class Grx(Recorded):
        def run_component(self, component_id: int, data: dict[str, Any] | None = None) -> None:
            self.calls.append(("component", component_id))

    inner = Grx()
    tap = CommandTap(inner)  # type: ignore[arg-type]  # the verbs this test sends
    heard: list[tuple[str, dict[str, Any], int | None]] = []
    tap.listeners.append(lambda c, a, r: heard.append((c, a, r)))
    run = getattr(tap, "run_component", None)
    assert run is not None
    run(3407)
    assert inner.calls == [("component", 3407)]
    assert heard == [("run_component", {"component_id": 3407}, None)]
    # a verb the robot lacks stays missing: the leaf says "the robot has no component"
    assert getattr(CommandTap(Recorded()), "run_component", None) is None  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        tap._hidden  # noqa: B018 - private names are never forwarded


def test_chain_publish_keeps_the_hook_already_there() -> None:
    class Streamer:
        on_publish: Any = None

    streamer = Streamer()
    seen: list[str] = []
    streamer.on_publish = lambda t, q, h: seen.append(f"first {t}")
    chain_publish(streamer, lambda t, q, h: seen.append(f"second {t}"))  # type: ignore[arg-type]
    streamer.on_publish("upper", np.zeros(3), False)
    assert seen == ["first upper", "second upper"]


def test_the_foxglove_key_is_off_by_default_and_checked() -> None:
    assert parse_config({}).foxglove == FoxgloveConfig(False, "127.0.0.1", 8765)
    assert parse_config({"foxglove": {"enabled": True, "port": 0}}).foxglove.port == 0
    with pytest.raises(ConfigError) as e:
        parse_config({"foxglove": {"enabled": "yes", "port": 70000, "hots": "x"}})
    text = str(e.value)
    assert "foxglove.enabled" in text and "foxglove.port" in text and "foxglove.hots" in text
    example = load_config(ROOT / "deploy" / "config.example.yaml").foxglove
    assert example == FoxgloveConfig()  # the example shows the defaults


def test_a_channel_schema_is_deterministic_bytes() -> None:
    channel = Channel("/x", "X", {"type": "object", "b": 1, "a": 2})
    assert channel.schema_data == b'{"a": 2, "b": 1, "type": "object"}'


def test_the_timeline_keeps_the_preroll_robot_state_not_the_previous_runs_events(
    tmp_path: Path,
) -> None:
    from executive.operator.timeline import load

    rec = McapRecorder(tmp_path, CHANNELS.values())
    t0 = time.time_ns()
    ms = 1_000_000
    before = {"event": "state", "state": "SUCCEEDED", "mission": "old", "run_id": "old"}
    rec.write(Message("/executive/events", t0 - 500 * ms, t0, json.dumps(before).encode()))
    joints = {"position": {"head_yaw": 0.1}, "velocity": {"head_yaw": 0.0}}
    rec.write(Message("/robot/joints/upper", t0 - 400 * ms, t0, json.dumps(joints).encode()))
    rec.begin("new", {}, t0)
    event = {"event": "state", "state": "RUNNING", "mission": "m", "run_id": "new"}
    rec.write(Message("/executive/events", t0, t0, json.dumps(event).encode()))
    rec.close()
    run = load(rec.path("new"))
    assert [s for _, s, _ in run.states] == ["RUNNING"] and run.run_id == "new"
    [(t, q)] = run.measured["head_yaw"]  # before the start
    assert t == pytest.approx(-0.4) and q == 0.1


class ListSink:
    """A sink that keeps every message (the encoder thread writes, the test reads after
    ``flush``)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    preroll_ns = 0

    def wants(self, log_ns: int) -> bool:
        return True  # every message as it comes

    def begin(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        pass

    def end(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        pass

    def write(self, message: Message) -> None:
        self.messages.append(message)

    def problems(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


class AmrExecutive:
    """What ``RunChannels.on_tick`` reads of an executive, with the Atom adapter's snapshot
    of one decoded ``AMRState_`` record (``amr``): the base is the wire's."""

    def __init__(self) -> None:
        self.iface = Interface()
        self.codec = Codec(self.iface.AMRState_)
        self.atom = AtomState(self.iface, {}, {}, ("amr_state",))
        self.monitor = SimpleNamespace(max_age={}, reasons=[], latched=False)
        self.tree = SimpleNamespace(root=py_trees.behaviours.Success("root"))
        self.run, self.state = None, SimpleNamespace(value="IDLE")
        self.received = 0.0
        self.record = self.codec.zeros()

    def amr(self, position: tuple[float, float, float], received: float) -> None:
        record = self.codec.zeros()
        record["navigation_status"] = self.iface.NavigationStatus_.RUNNING.value
        record["device_status"] = self.iface.DeviceStatus_.TASKING.value
        record["task_id"] = 4
        record["position"][:] = position
        self.record, self.received = self.codec.decode(self.codec.encode(record)), received

    def state_now(self) -> Any:
        state = {"amr_state": Stamped(self.record, self.received)}
        return self.atom.build(state, {}, self.received)


def test_the_base_channel_carries_the_amr_position_as_its_pose() -> None:
    """Decoded ``AMRState_`` records through the Atom adapter's snapshot and the real
    encoder: ``/robot/base``'s ``position`` is the wire's x, y, yaw, valid against the
    channel's schema; a NaN position is null (JSON has no NaN)."""
    ex = AmrExecutive()
    sink = ListSink()
    channels = RunChannels(ex, PROFILE, [sink])  # type: ignore[arg-type]  # a test double
    try:
        for i, position in enumerate([(0.5, -1.25, 1.5), (1.0, -1.0, 3.0), (float("nan"), 0, 0)]):
            ex.amr(position, 100.0 + i)  # a second apart: every sample is due
            channels.on_tick(ex)  # type: ignore[arg-type]
        assert channels.flush()
    finally:
        channels.close()
    schema = CHANNELS["/robot/base"].schema
    bodies = [json.loads(m.data) for m in sink.messages if m.topic == "/robot/base"]
    for body in bodies:
        jsonschema.validate(body, schema)
    assert [b["position"] for b in bodies] == [
        {"x": 0.5, "y": -1.25, "yaw": 1.5},
        {"x": 1.0, "y": -1.0, "yaw": 3.0},
        {"x": None, "y": None, "yaw": None},  # not finite: the snapshot has no pose
    ]
    assert {(b["status"], b["tasking"], b["task_id"]) for b in bodies} == {("RUNNING", True, 4)}
    assert channels.problems() == []


def test_an_idle_recording_encodes_nothing_until_a_run_begins(tmp_path: Path) -> None:
    """No file open and no viewer: the ticks' items are kept raw (the last pre-roll of
    them) and nothing is encoded; a run's begin encodes the kept ones first, in order, so
    its file still starts with the pre-roll (issue 22: the pre-roll's JSON and transforms
    were about a quarter of an idle service's CPU)."""
    rec = McapRecorder(tmp_path, CHANNELS.values(), preroll_s=0.3, tail_s=0.2)
    ex = AmrExecutive()
    channels = RunChannels(ex, PROFILE, [rec])  # type: ignore[arg-type]  # a test double
    encoded: list[str] = []
    encode_now = channels._encode_now

    def counted(item: tuple[Any, ...]) -> None:
        encoded.append(item[0])
        encode_now(item)

    channels._encode_now = counted  # type: ignore[method-assign]
    try:
        ex.amr((0.0, 0.0, 0.0), 100.0)
        channels.on_tick(ex)  # type: ignore[arg-type]  # older than the pre-roll at the begin
        time.sleep(0.5)
        ex.amr((1.0, 0.0, 0.0), 101.0)
        channels.on_tick(ex)  # type: ignore[arg-type]  # in it
        assert channels.flush()
        assert encoded == [] and not rec.wants(time.time_ns())
        assert channels.kept >= 1  # the first tick's items, past the pre-roll
        ex.run = SimpleNamespace(run_id="r1", name="m")
        ex.state = SimpleNamespace(value="RUNNING")
        channels.on_change(ex)  # type: ignore[arg-type]
        ex.amr((2.0, 0.0, 0.0), 102.0)
        channels.on_tick(ex)  # type: ignore[arg-type]
        assert channels.flush()
        assert "begin" in encoded and encoded.index("base") < encoded.index("begin")
        assert rec.wants(time.time_ns())
    finally:
        channels.close()
    _, messages = read(rec.path("r1"))
    assert [b["position"]["x"] for t, _, b in messages if t == BASE] == [1.0, 2.0]
    times = [t for _, t, _ in messages]
    assert times == sorted(times)
