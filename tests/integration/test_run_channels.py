"""A run against the simulated Atom as Foxglove sees it: its MCAP file and the live view.

The service's recording (``record_runs``: the MCAP sink and the live view on a free
loopback port) is wired into the real in-process assembly as ``service._wire`` does; a
mission runs, an e-stop hits it, and then:

- a real WebSocket client on loopback (tests/foxglove_ws.py) has been subscribed to
  channels of the live view and received their messages while the run went on;
- the run's MCAP file, read back with ``mcap.reader.make_reader``, lists every channel
  with its JSON Schema, every message validates against its channel's schema, the
  counts are what the decimation promises, and the timeline is ordered.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import pytest
from mcap.reader import make_reader

from executive.core.tree import ExecState
from executive.records.foxglove_live import LiveView
from executive.records.mcaprecord import FoxgloveConfig, McapRecorder, record_runs
from executive.records.runchannels import RunChannels
from executive.service.status import active_node
from tests.foxglove_ws import FoxgloveClient
from tests.integration.conftest import Live
from tests.sim.conftest import wait_until

pytestmark = pytest.mark.dds


@pytest.fixture
def recorded(live: Live, tmp_path: Path) -> Iterator[RunChannels]:
    ex = live.runtime.executive
    channels = record_runs(
        ex, live.store.profile, tmp_path, FoxgloveConfig(enabled=True, host="127.0.0.1", port=0)
    )
    ex.on_change = channels.on_change
    live.runtime.after_tick.append(lambda: channels.on_tick(ex))
    try:
        yield channels
    finally:
        channels.close()


def _live_port(channels: RunChannels) -> int:
    views = [s for s in channels.sinks if isinstance(s, LiveView)]
    assert views, channels.problems()
    return views[0].port


def _read(path: Path) -> tuple[Any, list[tuple[Any, Any, Any]], dict[str, dict[str, str]]]:
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        messages = list(reader.iter_messages(log_time_order=False))  # as the file has them
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
    return summary, messages, metadata


def test_a_run_is_an_mcap_file_and_a_live_view(live: Live, recorded: RunChannels) -> None:
    ex = live.runtime.executive
    client = FoxgloveClient("127.0.0.1", _live_port(recorded))
    try:
        joints = client.subscribe("/robot/joints/upper")
        events = client.subscribe("/executive/events")
        targets = client.subscribe("/cmd/joints/upper")
        started = time.monotonic()
        run_id = live.start("head_scan", sweeps=1)
        assert wait_until(lambda: "One sweep" in active_node(ex.tree.root), 30), ex.last_run
        time.sleep(1.5)  # the head is moving
        live.sim.client.inject("estop-soft")
        assert wait_until(lambda: ex.state is ExecState.SAFE_STOP, 5)
        time.sleep(0.5)  # the hold as the MCAP's tail shows it
        live.sim.client.clear("estop-soft")
        assert wait_until(lambda: ex.submit(ex.reset).result(5)[0], 5)
        elapsed = time.monotonic() - started

        # the live view: messages on every subscription while the run went on
        assert client.wait(lambda: len(client.received(joints)) >= 20, 5)
        assert client.wait(
            lambda: any(r.json().get("state") == "SAFE_STOP" for r in client.received(events)),
            5,
        ), [r.json() for r in client.received(events)]
        assert client.wait(lambda: any(r.json()["held"] for r in client.received(targets)), 5)
        sample = client.received(joints)[-1].json()
        assert set(sample["position"]) == set(live.store.profile.topics["upper"])
        advertised = client.channels["/robot/joints/upper"]
        assert advertised["encoding"] == "json"
        assert advertised["schemaEncoding"] == "jsonschema"
    finally:
        client.close()

    recorded.close()  # finishes the file (as the service does on SIGTERM)
    assert recorded.problems() == []
    files = recorded.sinks[0]
    assert isinstance(files, McapRecorder)
    path = files.path(run_id)
    summary, messages, metadata = _read(path)

    # every channel, each with its JSON Schema
    topics = {c.topic: c for c in summary.channels.values()}
    assert set(topics) == set(recorded.channels)
    schemas = {}
    for channel in summary.channels.values():
        schema = summary.schemas[channel.schema_id]
        assert channel.message_encoding == "json"
        assert schema.encoding == "jsonschema"
        schemas[channel.topic] = json.loads(schema.data)
        jsonschema.Draft7Validator.check_schema(schemas[channel.topic])
        assert schema.name == recorded.channels[channel.topic].schema_name

    # every message validates; the timeline is ordered as written
    counts: Counter[str] = Counter()
    last = 0
    decoded: dict[str, list[Any]] = {}
    for _, channel, message in messages:
        assert message.log_time >= last, (channel.topic, message.log_time, last)
        last = message.log_time
        body = json.loads(message.data)
        jsonschema.validate(body, schemas[channel.topic])
        counts[channel.topic] += 1
        decoded.setdefault(channel.topic, []).append(body)
    assert summary.statistics.message_count == sum(counts.values())

    span_s = (messages[-1][2].log_time - messages[0][2].log_time) / 1e9
    assert span_s < elapsed + 5  # the run, a second before it and the tail at most
    for topic in ("/robot/joints/upper", "/robot/joints/lower", "/robot/joints/hands"):
        # decimated from 500 Hz (hands 100 Hz) to at most 50 Hz, and not much less
        assert 10 * span_s < counts[topic] <= 55 * span_s, (topic, counts[topic], span_s)
    # 50 Hz of 500, and every change of held besides
    assert 0 < counts["/cmd/joints/upper"] <= 52 * span_s + 4
    assert counts["/robot/base"] > 0 and counts["/robot/emergency"] > 0
    assert counts["/robot/status"] > 0 and counts["/executive/tree"] > 0
    assert counts["/robot/sources"] > 0
    assert counts["/cmd/joints/lower"] == 0  # the legs were never commanded: never recorded
    # the robot's body: its model first, then every link's transform from the measured
    # joints (as often as the joints), the head turning through the scan
    assert messages[0][1].topic == "/robot/model" and counts["/robot/model"] == 1
    assert 10 * span_s < counts["/robot/transforms"] <= 55 * span_s, counts["/robot/transforms"]
    head = {
        round(t["rotation"]["z"], 3)
        for m in decoded["/robot/transforms"]
        for t in m["transforms"]
        if t["child_frame_id"] == "head_yaw_link"
    }
    assert len(head) > 5, head

    # one-shot commands in full: control and FSM from the mission, the reaction's cancel
    oneshot = decoded["/cmd/oneshot"]
    assert {"command": "request_control", "args": {"on": True}, "id": None} in oneshot
    assert any(c["command"] == "set_fsm" for c in oneshot)
    assert any(c["command"] == "safe_stop" for c in oneshot)  # the trip's base cancel
    # the hold after the e-stop, and the e-stop in the robot's flags
    assert any(t["held"] for t in decoded["/cmd/joints/upper"])
    assert any(
        "soft_emergency_triggered" in e["on"] and e["any"] for e in decoded["/robot/emergency"]
    )
    # the base's pose: the sim's AMRState_.position (x, y, yaw) through the Atom adapter's
    # snapshot, numbers on every sample (null before the snapshot carried a pose), where
    # the sim's own base is (it stood still: head_scan drives no base)
    poses = [b["position"] for b in decoded["/robot/base"]]
    assert all(
        isinstance(p[k], float | int) and math.isfinite(p[k])
        for p in poses
        for k in ("x", "y", "yaw")
    ), poses[:3]
    x, y, yaw = (float(v) for v in live.sim.state("amr_state")["position"])
    assert poses[-1] == pytest.approx({"x": x, "y": y, "yaw": yaw}, abs=1e-4)
    # robot state from the snapshot: status, every safety source with its age
    status = decoded["/robot/status"][-1]
    assert status["battery_percent"] > 0 and isinstance(status["fsm_id"], int)
    keys = {s["key"] for s in decoded["/robot/sources"][-1]["sources"]}
    assert set(live.store.profile.safety_sources) <= keys
    # events: the run's states, the latch with its cause, its clear
    states = [e["state"] for e in decoded["/executive/events"] if e["event"] == "state"]
    assert states[:1] == ["RUNNING"] and "SAFE_STOP" in states
    end = next(e for e in decoded["/executive/events"] if e.get("result"))
    assert end["result"] == "SAFE_STOP" and end["causes"][0]["code"] == "estop"
    safety = [e for e in decoded["/executive/events"] if e["event"] == "safety"]
    assert safety[0]["latched"] and safety[0]["causes"][0]["code"] == "estop"
    assert any(not e["causes"] for e in safety)  # the reset's clear
    assert any("SAFE-STOP" in line["message"] for line in decoded["/executive/log"])
    # the tree: the mission's nodes, with their statuses as they changed
    paths = {n["path"] for t in decoded["/executive/tree"] for n in t["nodes"]}
    assert any(p.endswith("/Look ahead") for p in paths), sorted(paths)
    # the run's final statuses, sent once after the executive pruned its subtree: the
    # preemption stopped every node (INVALID), nothing is left running
    with_run = [
        t for t in decoded["/executive/tree"] if any("/Look ahead" in n["path"] for n in t["nodes"])
    ]
    final = [n["status"] for n in with_run[-1]["nodes"] if "/Mission Slot/" in n["path"]]
    assert with_run[-1]["state"] == "SAFE_STOP" and with_run[-1]["run_id"] == run_id
    assert final and set(final) <= {"INVALID", "SUCCESS", "FAILURE"}, final
    assert metadata["run"]["run_id"] == run_id and metadata["run"]["mission"] == "head_scan"
    assert metadata["result"]["result"] == "SAFE_STOP"

    # and the picture of it: the timeline reads the same file
    from executive.operator.timeline import draw, load

    data = load(path)
    assert data.run_id == run_id and data.mission == "head_scan"
    assert any(name.startswith("head_") for name in data.targets)
    assert any(latched for _, latched, _ in data.safety)
    assert data.base and all(x is not None and y is not None for _, _, x, y in data.base)
    png = draw(data, path.with_suffix(".png"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_the_service_as_a_process_serves_the_live_view_and_writes_the_mcap(
    tmp_path: Path,
) -> None:
    """As deployed: ``foxglove: {enabled: true, port: 0}`` in the config; the port is the
    one the service logs. A run stopped by the operator leaves its MCAP file, finished
    when the service ends on SIGTERM."""
    from executive.harness.stack import LogTail, running_stack

    with running_stack(tmp_path) as stack:
        stack.write_config(foxglove={"enabled": True, "host": "127.0.0.1", "port": 0})
        stack.start_sim("--seed", "2")
        stack.start_service()
        tail = LogTail(stack.log_path("executive"))
        urls: list[str] = []  # the service logs where the view listens

        def logged() -> bool:
            urls.extend(e["url"] for e in tail.read() if e.get("event") == "foxglove live view")
            return bool(urls)

        assert wait_until(logged, 10)
        host, port = urls[0].removeprefix("ws://").rsplit(":", 1)
        assert host == "127.0.0.1"
        client = FoxgloveClient(host, int(port))
        try:
            sub = client.subscribe("/robot/emergency")  # idle, the robot's state is live
            assert client.wait(lambda: len(client.received(sub)) >= 5, 10)
            assert client.received(sub)[-1].json()["any"] is False
        finally:
            client.close()
        reply = stack.client.request("start", {"mission": "head_scan", "params": {"sweeps": 1}})
        assert reply.code == 0, reply.message
        assert stack.client.wait_status(lambda s: s.run_id == reply.message, 10) is not None
        time.sleep(1.0)
        assert stack.client.request("stop").code == 0
        assert stack.client.wait_status(lambda s: s.state == "ABORTED", 10) is not None
        assert stack.stop("executive") == 0
        _, messages, metadata = _read(stack.data_dir / "runs" / f"{reply.message}.mcap")
        states = [
            json.loads(m.data)["state"]
            for _, c, m in messages
            if c.topic == "/executive/events" and json.loads(m.data)["event"] == "state"
        ]
        assert states == ["RUNNING", "ABORTED"] and metadata["result"]["result"] == "ABORTED"
