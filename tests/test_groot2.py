"""The Groot2 publisher (executive/service/groot2.py): BehaviorTree.CPP's protocol, request by
request, over a real executive (the in-process rig on DDS), read with btview's client.

The requests are those of BehaviorTree.CPP's ``groot2_protocol.h``: a 6-byte header
(protocol 2, type, a 32-bit id) echoed with a 16-byte tree UUID. Statuses are each
tick's, "idle after a result" as its publisher encodes it (10 + the result).
"""

from __future__ import annotations

import json
import struct
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import msgpack
import py_trees
import pytest
import zmq
from btview.client import Groot2Client
from btview.protocol.groot2 import RequestHeader
from py_trees.common import Status

from executive.core.tree import ExecState
from executive.mission import btcpp
from executive.mission.store import MissionStore
from executive.service.groot2 import (
    REFUSED_HOOKS,
    Groot2Publisher,
    LiveTree,
    Recording,
    Statuses,
    blackboard_of,
)
from tests import btcpp as theirs
from tests.mission.conftest import MISSIONS
from tests.rigs import PROFILE, Rig


def _tree(*nodes: py_trees.behaviour.Behaviour) -> LiveTree:
    elements = [btcpp.Element("X", {"name": n.name}, node=n) for n in nodes]
    for uid, e in enumerate(elements, start=1):
        e.uid = uid
    trees = btcpp.Trees("t", elements[0])
    return LiveTree(b"\0" * 16, trees, tuple(elements), nodes, (), frozenset())


def _bytes(buffer: bytes) -> list[int]:
    return [buffer[i + 2] for i in range(0, len(buffer), 3)]


def test_statuses_are_each_ticks_and_idle_after_a_result_is_ten_plus_it() -> None:
    a, b, c = (py_trees.behaviours.Running(name=n) for n in "abc")
    statuses = Statuses(_tree(a, b, c))
    assert _bytes(statuses.update(None)) == [0, 0, 0]  # never ticked: idle
    a.status, b.status, c.status = Status.RUNNING, Status.SUCCESS, Status.FAILURE
    buffer = statuses.update(None)
    assert [struct.unpack_from("<H", buffer, i)[0] for i in range(0, 9, 3)] == [1, 2, 3]
    assert _bytes(buffer) == [1, 2, 3]
    a.status = b.status = c.status = Status.INVALID  # halted, reset, reset
    assert _bytes(statuses.update(None)) == [11, 12, 13]
    assert _bytes(statuses.update(None)) == [11, 12, 13]  # stays so while idle
    b.status = Status.RUNNING
    assert _bytes(statuses.update(None)) == [11, 1, 13]


def test_a_finished_mission_shows_each_nodes_last_result_as_idle_after_it() -> None:
    """The core [slot SubTree [mission [a, b, c]]]: at the mission's end its nodes go idle
    after their last result, as BehaviorTree.CPP resets a finished tree (a failed 13, a
    succeeded 12, a halted 11, never ticked 0), the SubTree as its tree's root; the core
    goes on (Idle running), the mission's nodes are not read again."""
    core, slot, mission = (py_trees.behaviours.Running(name=n) for n in ("core", "slot", "m"))
    a, b, c, d = (py_trees.behaviours.Running(name=n) for n in "abcd")
    leaves = [btcpp.Element("X", {"name": n.name}, node=n) for n in (a, b, c, d)]
    body = btcpp.Element("Sequence", {"name": "m"}, leaves, mission)
    sub = btcpp.Element("SubTree", {"ID": "m"}, [body], slot)
    root = btcpp.Element("X", {"name": "core"}, [sub], core)
    elements = btcpp.number(root)
    nodes = tuple(e.node for e in elements)
    statuses = Statuses(
        LiveTree(b"\0" * 16, btcpp.Trees("t", root), tuple(elements), nodes, (), frozenset())
    )
    core.status = slot.status = mission.status = a.status = c.status = Status.RUNNING
    statuses.update(None)
    # the last tick: a succeeded, b failed, c was halted (stopped), d never ran
    slot.status = mission.status = b.status = Status.FAILURE
    a.status, c.status = Status.SUCCESS, Status.INVALID
    assert _bytes(statuses.update(None)) == [1, 3, 3, 2, 3, 11, 0]
    recording = Recording()
    assert _bytes(statuses.finish(recording)) == [1, 13, 13, 12, 13, 11, 0]
    assert len(recording.take()) == 9 * 4  # slot, mission, a, b: to idle
    # the slot ticks on empty (FAILURE), the nodes are left as they were: nothing changes
    slot.status, a.status = Status.FAILURE, Status.RUNNING
    assert _bytes(statuses.update(None)) == [1, 13, 13, 12, 13, 11, 0]


def test_recording_keeps_each_change_as_nine_bytes() -> None:
    a = py_trees.behaviours.Running(name="a")
    statuses, recording = Statuses(_tree(a)), Recording()
    statuses.update(recording)
    a.status = Status.RUNNING
    statuses.update(recording)
    a.status = Status.SUCCESS
    statuses.update(recording)
    data = recording.take()
    assert len(data) == 18
    assert [(struct.unpack_from("<H", data, i + 6)[0], data[i + 8]) for i in (0, 9)] == [
        (1, 1),
        (1, 2),
    ]
    assert recording.take() == b""  # taken once, as BehaviorTree.CPP's swap


# -- over a real executive ---------------------------------------------------------------


@pytest.fixture
def served(rig: Rig) -> Iterator[tuple[Rig, Groot2Publisher]]:
    publisher = Groot2Publisher(rig.ex, 0, "127.0.0.1", blackboard_of(rig.ex))
    publisher.start()
    try:
        yield rig, publisher
    finally:
        publisher.close()


def _ticks(rig: Rig, publisher: Groot2Publisher, n: int = 3) -> None:
    for _ in range(n):
        rig.state()
        rig.ex.tick()
        publisher.on_tick()
        time.sleep(0.01)


def _start(rig: Rig, name: str) -> str:
    prepared = MissionStore(MISSIONS, PROFILE).prepare(name, {})
    assert prepared.root is not None, prepared.errors
    ok, run_id = rig.ex.start_mission(name, prepared.root, prepared.meta)
    assert ok, run_id
    return run_id


def _request(port: int, *frames: bytes) -> list[bytes]:
    context = zmq.Context.instance()
    s = context.socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, 3000)
    s.connect(f"tcp://127.0.0.1:{port}")
    try:
        s.send_multipart(list(frames))
        return list(s.recv_multipart())
    finally:
        s.close(linger=0)


@pytest.mark.dds
def test_the_tree_is_the_safety_root_with_the_mission_in_its_slot(
    served: tuple[Rig, Groot2Publisher],
) -> None:
    rig, publisher = served
    client = Groot2Client("127.0.0.1", publisher.port)
    try:
        _ticks(rig, publisher)
        idle = client.fetch_tree()
        idle_uuid = client.tree_uuid
        assert [n.name for n in idle.roots[0].children] == ["Gather Robot State", "Priorities"]
        _start(rig, "head_scan")
        _ticks(rig, publisher)
        xml = client.fetch_tree_xml()
        running_uuid = client.tree_uuid
        assert running_uuid != idle_uuid  # a new tree: a connected client reloads it
        root = ET.fromstring(xml)
        assert root.attrib == {"BTCPP_format": "4", "main_tree_to_execute": "Atom"}
        slot = next(root.iter("SubTree"))
        assert slot.attrib["ID"] == "head_scan" and slot.attrib["_fullpath"] == "Mission Slot"
        blocks = {b.attrib["ID"]: b for b in root.iter("BehaviorTree")}
        assert blocks["head_scan"].attrib["_fullpath"] == "Mission Slot"
        uids = [int(e.attrib["_uid"]) for e in root.iter() if "_uid" in e.attrib]
        assert sorted(uids) == list(range(1, len(uids) + 1))
        models = {m.attrib["ID"] for m in root.find("TreeNodesModel")}  # type: ignore[union-attr]
        assert {"MoveJoints", "CheckBattery", "SafetyWatchdog", "ReactiveParallel"} <= models
        # the same tree tick after tick: the same UUID, the same XML
        _ticks(rig, publisher)
        assert client.fetch_tree_xml() == xml and client.tree_uuid == running_uuid
        # statuses of the last tick, one per uid, as the tree's nodes have them
        statuses = client.poll().statuses  # type: ignore[union-attr]
        assert set(statuses) == set(uids)
        by_uid = {e.uid: e.node for e in publisher._served.tree.elements}
        for uid, state in statuses.items():
            status = by_uid[uid].status
            if status is not Status.INVALID:
                assert (
                    state.raw == {Status.RUNNING: 1, Status.SUCCESS: 2, Status.FAILURE: 3}[status]
                )
        assert statuses[1].raw == 1  # the root runs
        # the mission stopped: its tree stays, each node idle after its last result (the
        # running leaf halted: 11), until the next mission's tree replaces it
        slot = next(e for e in publisher._served.tree.elements if e.tag == "SubTree")
        mission = [e.uid for e in slot.walk()]
        running = [e.uid for e in slot.walk() if not e.children and statuses[e.uid].raw == 1]
        assert running  # a leaf of the mission was running
        rig.ex.stop_mission()
        _ticks(rig, publisher)
        assert client.fetch_tree_xml() == xml and client.tree_uuid == running_uuid
        after = client.poll().statuses  # type: ignore[union-attr]
        assert [after[u].raw for u in running] == [11] * len(running)
        assert all(after[u].raw in (0, 11, 12) for u in mission)
        assert after[1].raw == 1 and after[max(uids)].raw == 1  # the core goes on: Idle runs
        _start(rig, "greeting_wave")
        _ticks(rig, publisher)
        client.fetch_tree()
        assert client.tree_uuid not in (idle_uuid, running_uuid)
    finally:
        client.close()


@pytest.mark.dds
def test_a_mission_over_between_two_hand_overs_is_shown_as_it_ended(
    served: tuple[Rig, Groot2Publisher], tmp_path: Path
) -> None:
    """A mission that starts and fails within one tick (its first check fails: the robot
    is at 90 %) is never seen running; it is still the tree served after that tick, its
    failed check idle after FAILURE, the step after it never ticked."""
    rig, publisher = served
    _ticks(rig, publisher)
    client = Groot2Client("127.0.0.1", publisher.port)
    try:
        client.fetch_tree()
        idle = client.tree_uuid
        (tmp_path / "fail_at_once.yaml").write_text(
            "mission: fail_at_once\ntree:\n  sequence:\n"
            "    - check_battery: {min_level: 95}\n    - wait: {seconds: 1}\n"
        )
        prepared = MissionStore(tmp_path, PROFILE).prepare("fail_at_once", {})
        assert prepared.root is not None, prepared.errors
        assert rig.ex.start_mission("fail_at_once", prepared.root, prepared.meta)[0]
        rig.state()
        rig.ex.tick()
        assert rig.ex.run is None and rig.ex.state is ExecState.FAILED
        publisher.on_tick()
        names = {n.name: n.uid for _, n in theirs.paths(client.fetch_tree().roots[0])}
        assert client.tree_uuid != idle
        statuses = client.poll().statuses  # type: ignore[union-attr]
        assert statuses[names["Battery >= 95 %"]].raw == 13
        assert statuses[names["Wait 1 s"]].raw == 0
    finally:
        client.close()


@pytest.mark.dds
def test_every_request_is_answered_as_btcpp_answers_it(
    served: tuple[Rig, Groot2Publisher],
) -> None:
    rig, publisher = served
    _ticks(rig, publisher)
    port = publisher.port

    def ask(kind: str, *rest: bytes) -> list[bytes]:
        head = RequestHeader(ord(kind), unique_id=0x01020304).encode()
        return _request(port, head, *rest)

    reply = ask("S")
    assert reply[0][:6] == bytes((2, ord("S"), 4, 3, 2, 1)) and len(reply[0]) == 22
    assert len(reply[1]) == 3 * 6  # the idle tree: six nodes
    assert _request(port, b"\x02S") == [b"error", b"wrong request header"]
    assert ask("Z") == [b"error", b"Request not recognized"]
    assert ask("B") == [b"error", b"must be 2 parts message"]
    hook = json.dumps({"uid": 5, "position": 0, "enabled": True, "mode": 0, "once": False,
                       "desired_status": "SUCCESS"}).encode()  # fmt: skip
    assert ask("I", hook) == [b"error", REFUSED_HOOKS.encode()]
    assert ask("R", hook) == [b"error", b"Node ID not found"]
    assert ask("U", hook)[0] == b"error"
    assert ask("I", b"{not json")[0] == b"error"  # answered, never a crash
    assert len(ask("A")) == 1 and len(ask("X")) == 1  # nothing to remove or disable: done
    assert ask("D")[1] == b"[]"
    # recording: the start's wall time (us), then each change as 9 bytes
    start = ask("r", b"start")
    assert abs(int(start[1]) / 1e6 - time.time()) < 5
    _start(rig, "head_scan")
    _ticks(rig, publisher)
    transitions = ask("t")[1]
    assert transitions and len(transitions) % 9 == 0
    assert len(ask("r", b"stop")) == 1
    # the blackboard: the robot's snapshot under each tree's name; unknown names skipped
    board = msgpack.unpackb(ask("B", b"Atom;Mission Slot;nope")[1])
    assert set(board) == {"Atom", "Mission Slot"}
    assert board["Atom"]["/robot/snapshot"]["battery"]["percent"] == 90.0
    assert msgpack.unpackb(ask("B", b"nope")[1]) is None
    # still serving
    assert len(ask("S")[1]) == 3 * len(publisher._served.tree.elements)
    assert publisher.errors >= 1  # the malformed hook, counted


class Broken(py_trees.behaviours.Running):
    """A node whose status cannot be read (a view's bug, simulated)."""

    @property  # type: ignore[override]
    def status(self) -> Status:
        raise RuntimeError("status unreadable")

    @status.setter
    def status(self, value: Status) -> None:
        pass


@pytest.mark.dds
def test_a_view_that_fails_never_raises_into_the_tick_loop(
    served: tuple[Rig, Groot2Publisher],
) -> None:
    """The publisher's hand-over runs on the tick thread (``after_tick``): an exception
    there would be the tick loop's, an internal SAFE_STOP. It is counted and said in the
    status instead, and the last good tree is still served."""
    rig, publisher = served
    _ticks(rig, publisher)
    good = publisher._served
    publisher._statuses.tree = _tree(Broken(name="broken"))  # type: ignore[misc]
    publisher._statuses.uids = [1]
    publisher.on_tick()  # does not raise
    assert publisher.problems() == [
        "groot2 publisher: 1 ticks not served; last: RuntimeError: status unreadable"
    ]
    assert publisher._served is good
    assert _request(publisher.port, RequestHeader(ord("S")).encode())[0] != b"error"


@pytest.mark.dds
def test_a_reset_server_socket_comes_back_on_its_port(rig: Rig) -> None:
    """After a reply it could not send, the REP socket is made again on the same port
    (libzmq frees a closed socket's port in its own time: the bind is tried again)."""
    publisher = Groot2Publisher(rig.ex, 0, "127.0.0.1")
    try:
        publisher._server.close(linger=0)
        assert publisher._rebind()
        publisher.start()
        reply = _request(publisher.port, RequestHeader(ord("S")).encode())
        assert reply[0] != b"error" and len(reply[0]) == 22
    finally:
        publisher.close()
