"""The service's Groot2 publisher seen by clients we did not write: btview (its CLI and
its protocol module) and BehaviorTree.CPP's own ``Groot2Publisher`` beside it.

The service and the simulated Atom run as processes (``groot2: {port}`` in the config).
A client sees the running mission's tree and each node's status as the status document
gives it, within one tick; a mission that ended stays, each node idle after its last
result (the failed one 13), until a second mission, a new tree it follows; and the
mission's part of our tree is, path for path, what BehaviorTree.CPP's publisher serves
for the exported XML (``export --resolved``: what runs). A hostile client (random bytes,
a request flood, half-open connections) leaves the tick loop within its period and the
service answering.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from btview.client import Groot2Client
from btview.model import BTNode

from executive.harness.stack import Stack, running_stack
from executive.mission.btcpp_export import export_xml
from executive.mission.loader import MissionLoader
from executive.seam.profile import load_profile
from tests import btcpp as theirs

pytestmark = pytest.mark.dds
ROOT = Path(__file__).resolve().parents[2]
BTVIEW = Path(sys.executable).with_name("btview")
DOC_BYTE = {"RUNNING": 1, "SUCCESS": 2, "FAILURE": 3}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[Stack, int]]:
    port = theirs.free_pair()
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(groot2={"port": port})
        stack.start_sim("--amr-speed", "3.0", "--seed", "3")
        stack.start_service()
        yield stack, port


def _start(stack: Stack, name: str) -> str:
    reply = stack.client.request("start", {"mission": name})
    assert reply.code == 0, reply.message
    run_id = reply.message
    seen = stack.client.wait_status(lambda s: s.run_id == run_id and s.state == "RUNNING", 20)
    assert seen is not None
    return run_id


def _named_paths(node: BTNode, prefix: str = "") -> Iterator[tuple[str, BTNode]]:
    """Node paths as the status document writes them: names from the root down (a
    subtree node is the name of the slot it fills, its ``_fullpath``)."""
    name = node.name or node.path.rsplit("/", 1)[-1]
    here = f"{prefix}/{name}" if prefix else name
    yield here, node
    for child in node.children:
        yield from _named_paths(child, here)


def _mission_tree(client: Groot2Client, root: str, timeout: float = 5.0) -> dict[str, BTNode]:
    """The tree once the slot holds the mission whose root is named ``root``: the status
    that says a mission runs is published in the tick whose hand-over makes its tree, a
    moment before it (a client that asks at once may get the tree before)."""
    deadline = time.monotonic() + timeout
    while True:
        nodes = dict(_named_paths(client.fetch_tree().roots[0]))
        if f"Atom/Priorities/Mission Slot/{root}" in nodes or time.monotonic() > deadline:
            return nodes
        time.sleep(0.02)


def _consistent(stack: Stack, client: Groot2Client) -> tuple[dict[str, Any], dict[int, Any]]:
    """A status document and the publisher's statuses of one tick: two polls around the
    document that agree with each other (a tick between them: asked again)."""
    for _ in range(50):
        before = client.poll()
        doc = json.loads(stack.client.status().document)
        after = client.poll()
        assert before is not None and after is not None
        if {u: s.raw for u, s in before.statuses.items()} == {
            u: s.raw for u, s in after.statuses.items()
        }:
            return doc, after.statuses
        time.sleep(0.005)
    raise AssertionError("no two consecutive polls agreed in 50 tries")


def test_btview_shows_the_running_tree_and_follows_a_second_mission(
    service: tuple[Stack, int],
) -> None:
    stack, port = service
    shown = subprocess.run(
        [str(BTVIEW), "snapshot", "-p", str(port), "--no-color", "--ascii", "--timeout", "3"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert shown.returncode == 0, shown.stderr
    for name in ("Atom", "Gather Robot State", "Safety Watchdog", "Mission Slot", "Idle"):
        assert name in shown.stdout, shown.stdout
    _start(stack, "head_scan")
    client = Groot2Client("127.0.0.1", port, timeout_ms=3000)
    try:
        # in its sweeps (seconds long: "Look ahead", from a head already ahead, may be one
        # tick, which the status need not show)
        sweeping = stack.client.wait_status(lambda s: "One sweep" in s.active_node, 30)
        assert sweeping is not None, stack.client.status().last_reason
        tree = client.fetch_tree()
        first = client.tree_uuid
        nodes = dict(_named_paths(tree.roots[0]))
        doc, statuses = _consistent(stack, client)
        by_path = {n["path"]: n["status"] for n in doc["tree"]}
        # every node of the status document is a node of the tree (the delay's own wait
        # aside: it is inside its Delay), with the status the document gives it
        assert set(nodes) <= set(by_path)
        assert "Atom/Priorities/Mission Slot/Head scan/Look ahead" in nodes
        compared = 0
        for path, node in nodes.items():
            raw = statuses[node.uid].raw
            status = by_path[path]
            if status == "INVALID":
                assert raw == 0 or raw >= 10, (path, raw)
            else:
                assert raw == DOC_BYTE[status], (path, status, raw)
                compared += 1
        assert compared >= 5  # the root, the gatherer, the slot, the mission, its leaf ...
        running = subprocess.run(
            [str(BTVIEW), "snapshot", "-p", str(port), "--no-color", "--ascii", "--active"],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        line = next(x for x in running.stdout.splitlines() if "Head scan" in x)
        assert "RUNNING" in line, running.stdout  # only the running branch: the mission's
        # a second mission: a new tree, which the client is told of by its UUID
        assert stack.client.request("stop").code == 0
        _start(stack, "greeting_wave")
        again = _mission_tree(client, "Greet")
        assert client.tree_uuid != first
        assert "Atom/Priorities/Mission Slot/Greet" in again
        assert not any("Head scan" in p for p in again)
    finally:
        client.close()
        stack.client.request("stop")


def test_ours_and_btcpps_own_publisher_look_alike_to_a_client(
    service: tuple[Stack, int],
) -> None:
    """The running mission in our tree and the exported XML (resolved: the tree that
    runs) in BehaviorTree.CPP's Groot2Publisher: the same node paths, IDs and names, the
    same framing."""
    stack, port = service
    _start(stack, "deliver_drink")
    mission = MissionLoader(load_profile()).load(ROOT / "missions" / "deliver_drink.yaml")
    ours, our_xml, our_statuses = theirs.fetch(port)
    slot = next(n for _, n in theirs.paths(ours.roots[0]) if n.registration == "SubTree")
    assert slot.subtree_id == "deliver_drink" and len(slot.children) == 1
    with theirs.their_publisher(export_xml(mission, params=False)) as their_port:
        their_tree, their_xml, their_statuses = theirs.fetch(their_port)
    mine = [p for p, _ in theirs.paths(slot.children[0])]
    assert mine == [p for p, _ in theirs.paths(their_tree.roots[0])]
    assert len(mine) > 20
    # the same framing: every node a 3-byte record, a status a known byte
    assert set(their_statuses) == {n.uid for _, n in theirs.paths(their_tree.roots[0])}
    assert set(our_statuses) == {n.uid for _, n in theirs.paths(ours.roots[0])}
    stack.client.request("stop")


def test_a_failed_mission_stays_in_view_until_the_next_starts(
    service: tuple[Stack, int],
) -> None:
    """head_scan with min_battery 95 on a robot at 85 %: its guard's battery check fails,
    and the mission with it. A client connected while it ran keeps the same tree after the
    end (the same UUID: nothing to reload), the failed check and every node that failed
    with it idle after FAILURE (13), the steps that had succeeded idle after SUCCESS (12),
    the sweeps that never ran idle (0), the core ticking on (Idle running); it stays so
    until the next mission, whose tree replaces it."""
    stack, port = service
    reply = stack.client.request("start", {"mission": "head_scan", "params": {"min_battery": 95}})
    assert reply.code == 0, reply.message
    run_id = reply.message
    client = Groot2Client("127.0.0.1", port, timeout_ms=3000)
    try:
        assert stack.client.wait_status(lambda s: s.run_id == run_id and s.state == "RUNNING", 20)
        assert "Atom/Priorities/Mission Slot/Head scan" in _mission_tree(client, "Head scan")
        running = client.tree_uuid
        failed = stack.client.wait_status(lambda s: s.state == "FAILED", 60)
        assert failed is not None, stack.client.status().last_reason
        assert "Battery >= 95 %" in failed.last_reason
        nodes = dict(_named_paths(client.fetch_tree().roots[0]))
        assert client.tree_uuid == running
        slot = nodes["Atom/Priorities/Mission Slot"].uid
        deadline = time.monotonic() + 2.0  # the status said it a moment before the tree
        while (poll := client.poll()) is not None and poll.statuses[slot].raw < 10:
            assert time.monotonic() < deadline, poll.statuses[slot]
            time.sleep(0.01)
        for _ in range(2):  # at once, and still after a while of ticks
            poll = client.poll()
            assert poll is not None and client.tree_uuid == running
            assert dict(_named_paths(client.fetch_tree().roots[0])).keys() == nodes.keys()
            shown = {path: poll.statuses[n.uid].raw for path, n in nodes.items()}
            mission = "Atom/Priorities/Mission Slot/Head scan"
            guard = f"{mission}/While the battery holds"
            assert shown[f"{guard}/Battery >= 95 %"] == 13
            assert shown[guard] == shown[mission] == shown["Atom/Priorities/Mission Slot"] == 13
            assert shown[f"{mission}/Look ahead"] == shown[f"{mission}/Acquire control"] == 12
            assert shown[f"{guard}/Repeat x2"] == 0
            assert shown["Atom/Priorities/Idle"] == 1
            time.sleep(0.5)
        _start(stack, "greeting_wave")
        again = _mission_tree(client, "Greet")
        assert client.tree_uuid != running
        assert "Atom/Priorities/Mission Slot/Greet" in again
        assert not any("Head scan" in p for p in again)
    finally:
        client.close()
        stack.client.request("stop")


def _window(stack: Stack, port: int, seconds: float) -> tuple[dict[str, int], int, float]:
    """The tick counters over ``seconds`` while a well-behaved client polls statuses
    (each answer within a second) and the DDS status keeps coming: (counters' deltas,
    polls answered, seconds)."""
    before = json.loads(stack.client.status().document)["counters"]
    good = Groot2Client("127.0.0.1", port, timeout_ms=1000)
    answered = 0
    started = time.monotonic()
    try:
        while time.monotonic() - started < seconds:
            poll = good.poll()  # raises after 1 s without an answer
            assert poll is not None and poll.statuses
            answered += 1
            assert stack.client.status(timeout=1.0).state == "RUNNING"
            time.sleep(0.02)
    finally:
        good.close()
    elapsed = time.monotonic() - started
    after = json.loads(stack.client.status().document)["counters"]
    return (
        {k: after[k] - before[k] for k in ("ticks", "overruns", "tick_errors")},
        answered,
        elapsed,
    )


@pytest.mark.serial
def test_a_hostile_client_leaves_the_tick_loop_in_its_period(
    service: tuple[Stack, int],
) -> None:
    """Timing (the tick loop's overruns): serial. A mission runs (the full 50 Hz); twice,
    3 s quiet, then 3 s of a flood of requests nobody reads, random bytes, half-open
    connections and malformed frames on the port (``groot2_attacker``, its own niced
    process): the tick loop ticks under attack as in the quiet windows beside it (as many
    ticks, no more overruns than scheduling noise: 2 periods), and the service goes on
    answering: its DDS status and a well-behaved Groot2 client, each request within a
    second. Before the ZAP domain (executive/service/groot2.py) random bytes left the REP
    socket waiting for the rest of a message: no answer at all."""
    stack, port = service
    _start(stack, "head_scan")
    time.sleep(1.0)  # past the mission's start (its planning)
    quiet = {"ticks": 0, "overruns": 0, "tick_errors": 0}
    attacked = dict(quiet)
    answered = [0, 0]
    elapsed = 0.0
    for _ in range(2):
        q, n, _ = _window(stack, port, 3.0)
        attacker = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.groot2_attacker", str(port), "3.7"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            time.sleep(0.4)
            a, m, seconds = _window(stack, port, 3.0)
            out, _ = attacker.communicate(timeout=30)
        finally:
            attacker.kill()
        assert int(out.strip()) > 1000, "the flood did not flood"
        for k in quiet:
            quiet[k] += q[k]
            attacked[k] += a[k]
        answered[0] += n
        answered[1] += m
        elapsed += seconds
    assert answered[1] > 0.5 * answered[0], answered
    # against the quiet windows beside them, not against 50 Hz: on a machine busy with other
    # work (four CPU hogs beside a CI run) the tick thread, normal priority as deployed,
    # misses periods in both; what the attack may not do is add to that
    assert attacked["ticks"] >= 0.9 * quiet["ticks"], (attacked, quiet, elapsed)
    assert attacked["overruns"] <= 1.5 * quiet["overruns"] + 2, (attacked, quiet)
    assert attacked["tick_errors"] == 0
    # and the publisher is still the service's: a plain snapshot after the attack
    assert theirs.fetch(port)[0].roots[0].name == "Atom"
    stack.client.request("stop")
