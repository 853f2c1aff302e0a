"""One executive on the fleet plane (issue 24, 1): the real service beside the simulated
Atom, ``fleet:`` in its config, a real router (``atom-executive router``, its own process on
a free port of 127.0.0.1) and the operator's ``FleetClient`` through it.

The status document arrives on ``fleet/<id>/status`` (at the steady rate and on change),
a signed start through a zenoh query runs the mission, a flood of queries while it runs
is answered BUSY beyond the rate limit and leaves the tick loop at its rate, and losing
the router leaves the robot running (the plane comes back with the router)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from executive.harness.fleet import fleet_client, fleet_mapping, free_port, start_router
from executive.harness.stack import Stack, running_stack
from executive.operator.fleet import FleetClient

pytestmark = pytest.mark.dds

ROBOT = "atom-1"
Plane = tuple[Stack, FleetClient, int]


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    work = tmp_path_factory.mktemp("fleet-plane")
    with running_stack(work / "stack") as stack:
        port = free_port()
        start_router(stack, port)
        stack.write_config(fleet=fleet_mapping(stack, ROBOT, port))
        stack.start_sim("--amr-speed", "1.0", "--seed", "3")
        stack.start_service()
        client = fleet_client(work, port, key=stack.key)
        try:
            yield stack, client, port
        finally:
            client.close()


def ticks(stack: Stack) -> tuple[float, int]:
    """(when, ticks) of the latest status sample: the service's own stamp and count."""
    s = stack.client.status()
    return s.stamp_ns / 1e9, int(s.ticks)


def test_the_status_document_arrives_at_the_steady_rate(plane: Plane) -> None:
    stack, client, _ = plane
    assert client.wait_for(lambda c: ROBOT in c.robots, 20), "no status on the fleet plane"
    row = client.row(ROBOT)
    assert row is not None and row["kind"] == "atom" and not row["stale"], row
    assert row["state"] in ("IDLE", "SUCCEEDED", "ABORTED"), row
    doc = client.robots[ROBOT].document
    assert doc["schema"] == "atom-executive/status" and doc["executive_id"].endswith(
        f":{stack.pid('executive')}"
    )
    seen: list[float] = []
    sub = client.session.declare_subscriber(
        f"fleet/{ROBOT}/status", lambda s: seen.append(time.monotonic())
    )
    time.sleep(2.0)
    sub.undeclare()  # type: ignore[no-untyped-call]
    assert len(seen) >= 7, f"{len(seen)} status samples in 2 s (5 Hz expected)"


def test_unsigned_and_foreign_commands_are_refused(plane: Plane) -> None:
    _, client, _ = plane
    unsigned = FleetClient.send(client, ROBOT, "stop", {}, "", 5.0)
    assert unsigned["code"] == 3, unsigned  # UNAUTHENTICATED: no signature
    foreign = client.request(ROBOT, "stop", {}, 5.0, instance="f" * 32)
    assert foreign["code"] == 3 and "another service instance" in foreign["message"], foreign
    status = client.request(ROBOT, "status")
    assert status["code"] == 0 and json.loads(status["payload"])["instance"]


def test_a_flood_of_queries_while_a_mission_runs_leaves_the_tick_loop_alone(plane: Plane) -> None:
    stack, client, _ = plane
    reply = client.request(ROBOT, "start", {"mission": "deliver_drink", "params": {"table_tag": 4}})
    assert reply["code"] == 0, reply
    assert client.wait_for(lambda c: (c.row(ROBOT) or {}).get("state") == "RUNNING", 10)
    t0, n0 = ticks(stack)
    time.sleep(2.0)
    t1, n1 = ticks(stack)
    quiet_hz = (n1 - n0) / (t1 - t0)
    codes: list[int] = []
    lock = threading.Lock()
    stop = time.monotonic() + 3.0

    def flood() -> None:
        while time.monotonic() < stop:
            try:
                answer = client.query(ROBOT, {"request_id": "x", "verb": "status"}, 2.0)
            except Exception:  # noqa: BLE001 - a query lost in the flood counts as nothing
                continue
            with lock:
                codes.append(int(answer["code"]))

    threads = [threading.Thread(target=flood) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t2, n2 = ticks(stack)
    flood_hz = (n2 - n1) / (t2 - t1)
    busy, ok = codes.count(7), codes.count(0)
    print(f"quiet {quiet_hz:.1f} Hz, flooded {flood_hz:.1f} Hz; {ok} answered, {busy} BUSY")
    assert busy > 0, f"no query refused BUSY among {len(codes)}"
    assert ok <= 20 * (t2 - t1) + 20 + 5, f"{ok} answered: more than the rate limit allows"
    assert flood_hz >= 0.8 * quiet_hz, (quiet_hz, flood_hz)
    assert stack.client.status().state == "RUNNING", stack.client.status().last_reason
    stop_reply = client.request(ROBOT, "stop")
    assert stop_reply["code"] == 0, stop_reply
    assert client.wait_for(lambda c: (c.row(ROBOT) or {}).get("state") == "ABORTED", 10)

    def states() -> list[str]:
        return [
            e["state"] for e in client.events if e["robot_id"] == ROBOT and e["kind"] == "state"
        ]

    # the event comes on its own key: it may follow the status that the row shows
    assert client.wait_for(lambda c: states()[-1:] == ["ABORTED"], 5), states()
    assert states()[-2:] == ["RUNNING", "ABORTED"], states()


def test_a_view_at_another_sites_router_sees_the_robot(plane: Plane) -> None:
    """Sites connect to each other: a second router connected to the robot's, and a view
    connected to the second only, sees the robot and commands it (docs/fleet.md)."""
    stack, _, port = plane
    other = free_port()
    start_router(stack, other, "router-site-b", connect=port)
    view = fleet_client(stack.workdir, other, key=stack.key)
    try:
        assert view.wait_for(lambda c: ROBOT in c.robots, 20), "not seen across the routers"
        assert view.request(ROBOT, "status")["code"] == 0
    finally:
        view.close()
        stack.stop("router-site-b")


def test_losing_the_router_never_disturbs_the_robot(plane: Plane) -> None:
    stack, client, port = plane
    before = stack.client.status()
    stack.stop("router", timeout=5)
    t_lost = time.monotonic()
    time.sleep(1.0)
    after = stack.client.wait_status(lambda s: s.ticks > before.ticks + 25, 5)
    assert after is not None, "the tick loop stopped with the router"
    assert after.state == before.state and after.safety == "CLEAR", after
    start_router(stack, port)
    assert client.wait_for(lambda c: c.robots[ROBOT].received > t_lost + 1.0, 20), (
        "the plane did not come back with the router"
    )
    answer: dict[str, Any] = client.request(ROBOT, "status")
    assert answer["code"] == 0, answer


def test_a_bad_fleet_config_stops_start_up_naming_the_key(tmp_path: Path) -> None:
    from executive.service.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r"fleet\.robot_id: must be"):
        parse_config({"fleet": {"robot_id": "a/b", "zenoh_config": __file__}})
    with pytest.raises(ConfigError, match=r"fleet\.zenoh_config: must be the path"):
        parse_config({"fleet": {"robot_id": "a"}})
    with pytest.raises(ConfigError, match=r"fleet\.prefix: must be key chunks"):
        parse_config({"fleet": {"robot_id": "a", "zenoh_config": __file__, "prefix": "f/*"}})
    with pytest.raises(ConfigError, match=r"fleet\.port: unknown key"):
        parse_config({"fleet": {"robot_id": "a", "zenoh_config": __file__, "port": 1}})
    ok = parse_config({"fleet": {"robot_id": "atom-1", "zenoh_config": __file__}})
    assert ok.fleet is not None and ok.fleet.prefix == "fleet"


def test_the_service_starts_runs_and_stops_with_no_router_at_all(tmp_path: Path) -> None:
    """A fleet config whose router is not there: zenoh's client session waits for it on
    the plane's thread; the service is ready, runs a mission and stops on SIGTERM at once."""
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(fleet=fleet_mapping(stack, ROBOT, free_port()))  # nobody listens
        stack.start_sim("--physics", "kinematic", "--seed", "3")
        stack.start_service()
        reply = stack.client.request("start", {"mission": "head_scan", "params": {"sweeps": 1}})
        assert reply.code == 0, reply.message
        assert stack.client.wait_status(lambda s: s.state == "RUNNING", 10) is not None
        asked = time.monotonic()
        assert stack.stop("executive", timeout=10) == 0
        stopped = time.monotonic() - asked
        print(f"stopped {stopped:.2f} s after SIGTERM with no router")
        assert stopped < 1.9  # the plane does not wait for a router that never came (2 s)


def test_a_fleet_zenoh_config_zenoh_refuses_stops_start_up_naming_the_key(
    tmp_path: Path,
) -> None:
    from executive.service.config import parse_config
    from executive.service.run import _fleet_plane

    bad = tmp_path / "zenoh.json5"
    bad.write_text('{ mode: "client", connect: { endpoints: 7 } }', encoding="utf-8")
    config = parse_config({"fleet": {"robot_id": "a", "zenoh_config": str(bad)}})
    with pytest.raises(ValueError, match=r"^fleet\.zenoh_config: .*zenoh\.json5"):
        _fleet_plane(config)
