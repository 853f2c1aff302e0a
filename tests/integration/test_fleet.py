"""A fleet on loopback (issue 24, 4): three robots of different kinds, each with its own
executive on its own DDS domain (the simulated Atom, Adam and GRX, each sim and service its
own process), one router (``atom-executive router``, a process), and the operator's view
(``atom-executive fleet --json``, a process, and a ``FleetClient``) through the router.

All three appear with their kinds; a mission started through the fleet (the CLI, signed
with the operator's key) runs on the right robot and only there; an e-stop on the Atom
(``atom-executive sim fault estop-soft``'s request, sent from the test) shows as its SAFE_STOP in the view within 1 s
while the others run on; a request signed for one robot is refused by another; a killed
executive is lost at once (its token goes with its connection) and a view opened
afterwards still lists it, lost, with its last status. The plane is the secure layout
(``atom-executive fleet-site``: TLS with mutual authentication, access control, each robot
with its own certificate, made here), the requests signed as ever. Every zenoh endpoint
is tls/127.0.0.1 with scouting off; DDS is the loopback config.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import make_reader

from executive.harness.fleet import (
    KINDS,
    Site,
    fleet_client,
    free_port,
    secure_site,
    start_router,
    three_robots,
)
from executive.harness.stack import Stack, running_stack
from executive.operator.fleet import FleetClient

pytestmark = pytest.mark.dds

KEY = os.urandom(32)  # the operator's key, in every robot's keys file
# six processes and the test on a loaded machine: a sim held off the CPU for over half a
# second trips stale_state (as it must); this test is about the fleet, not that silence
SAFETY = {"max_state_age": 3.0}
ROBOTS = KINDS


class Fleet:
    def __init__(self, stacks: dict[str, Stack], client: FleetClient, site: Site, work: Path):
        self.stacks, self.client, self.site, self.work = stacks, client, site, work
        self.config = site.config("operator", "operator")  # the operator's TLS config

    def ready(self) -> None:
        """All three on the view (a test run alone waits for them here)."""
        assert self.client.wait_for(lambda c: set(ROBOTS) <= set(c.robots), 60), self.client.rows()

    def cli(self, *args: str, stack: Stack | None = None, timeout: float = 60) -> str:
        """``atom-executive ARGS`` as a process (in ``stack``'s environment: its domain)."""
        env = (stack or self.stacks["atom-1"]).env()
        out = subprocess.run(
            [sys.executable, "-m", "executive.cli", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert out.returncode == 0, (args, out.stdout, out.stderr)
        return out.stdout

    def row(self, robot: str) -> dict[str, Any]:
        return self.client.row(robot) or {}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    work = tmp_path_factory.mktemp("fleet")
    port = free_port()
    site = secure_site(work / "site", port)
    with ExitStack() as scope:
        router = scope.enter_context(running_stack(work / "router"))
        start_router(router, port, site=site)
        stacks = three_robots(scope, work, port, KEY, safety=SAFETY, site=site)
        client = fleet_client(work, port, key=KEY, site=site)
        scope.callback(client.close)
        yield Fleet(stacks, client, site, work)


def test_all_three_robots_appear_in_the_fleet_view(fleet: Fleet) -> None:
    fleet.ready()
    view = json.loads(
        fleet.cli("fleet", "--zenoh-config", str(fleet.config), "--json", "--wait", "2")
    )
    assert view["schema"] == "atom-executive/fleet"
    rows = {r["robot_id"]: r for r in view["robots"]}
    assert {r: rows[r]["kind"] for r in ROBOTS} == ROBOTS, rows
    for robot, row in rows.items():
        assert not row["stale"] and row["safety"] == "CLEAR", (robot, row)
        assert row["state"] == "IDLE", (robot, row)


def test_a_mission_started_through_the_fleet_runs_on_that_robot_only(fleet: Fleet) -> None:
    fleet.ready()
    stacks = fleet.stacks
    runs = {r: stacks[r].client.status().runs for r in ROBOTS}
    keys = stacks["adam-1"].workdir / "keys.yaml"  # holds the operator's key (KEY)
    config = fleet.config
    out = fleet.cli(
        *("fleet", "--zenoh-config", str(config), "--key-file", str(keys)),
        *("--robot", "adam-1", "start", "arms_wave", "--param", "waves=3"),
    )
    assert out.startswith("adam-1: "), out
    assert fleet.client.wait_for(lambda c: fleet.row("adam-1").get("state") == "RUNNING", 10)
    assert fleet.row("adam-1")["mission"] == "arms_wave"
    adam = stacks["adam-1"].client.status()  # the robot's own DDS status agrees
    assert adam.state == "RUNNING" and adam.mission == "arms_wave", adam
    for other in ("atom-1", "grx-1"):
        assert fleet.row(other)["mission"] is None, fleet.row(other)
        assert stacks[other].client.status().runs == runs[other], other
    fleet.cli(
        *("fleet", "--zenoh-config", str(config), "--key-file", str(keys)),
        *("--robot", "adam-1", "stop"),
    )
    ended = fleet.client.wait_for(lambda c: fleet.row("adam-1").get("state") != "RUNNING", 10)
    assert ended and fleet.row("adam-1")["state"] == "ABORTED", fleet.row("adam-1")


def test_an_estop_on_one_robot_shows_within_1_s_while_the_others_run_on(fleet: Fleet) -> None:
    fleet.ready()
    client = fleet.client
    for robot, mission, params in (
        ("atom-1", "deliver_drink", {"table_tag": 4}),
        ("grx-1", "walk_square", {"leg_seconds": 20.0}),
        ("adam-1", "arms_wave", {"waves": 10}),
    ):
        reply = client.request(robot, "start", {"mission": mission, "params": params})
        assert reply["code"] == 0, (robot, reply)
    assert client.wait_for(
        lambda c: all(fleet.row(r).get("state") == "RUNNING" for r in ROBOTS), 15
    ), client.rows()
    record = fleet.work / "fleet-events.mcap"
    config = fleet.config
    view = subprocess.Popen(  # the operator's view, plain frames, recording the events
        [
            *(sys.executable, "-m", "executive.cli", "fleet", "--zenoh-config", str(config)),
            *("--plain", "--duration", "8", "--record", str(record)),
        ],
        env=fleet.stacks["atom-1"].env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(4.0)  # it has started and seen the three
    # what `atom-executive sim fault estop-soft` does (SimClient.inject_spec), from here so
    # the clock starts when it is sent, not after a CLI process has started and exited
    injected = time.monotonic()
    fleet.stacks["atom-1"].sim.inject_spec("estop-soft")
    assert client.wait_for(lambda c: fleet.row("atom-1").get("safety") == "SAFE_STOP", 5)
    shown = time.monotonic() - injected
    row = fleet.row("atom-1")
    assert row["state"] == "SAFE_STOP" and any("estop" in c for c in row["causes"]), row
    print(f"e-stop to SAFE_STOP in the fleet view: {shown * 1000:.0f} ms")
    assert shown < 1.0, shown
    time.sleep(0.5)
    for other in ("adam-1", "grx-1"):
        assert fleet.row(other)["state"] == "RUNNING", fleet.row(other)
        assert fleet.row(other)["safety"] == "CLEAR", fleet.row(other)
    events = [e for e in client.events if e["robot_id"] == "atom-1" and e["kind"] == "safety"]
    assert events and events[-1]["latched"], events
    log, _ = view.communicate(timeout=30)
    assert view.returncode == 0
    lines = log.strip().splitlines()  # the first frame, then a line a change
    assert any(f" {r} " in line for line in lines for r in ("grx-1", "adam-1")), log
    latched = [line for line in lines if line.split()[1:3] == ["atom-1", "atom"]]
    assert latched and "SAFE_STOP" in latched[-1] and "estop" in latched[-1], log
    with record.open("rb") as f:
        recorded = [json.loads(m.data) for _, _, m in make_reader(f).iter_messages()]
    assert any(e["robot_id"] == "atom-1" and e.get("latched") for e in recorded), recorded
    fleet.cli("sim", "fault", "--clear-all", stack=fleet.stacks["atom-1"])
    reset = client.request("atom-1", "reset")
    deadline = time.monotonic() + 10  # refused while the e-stop still reads pressed
    while reset["code"] != 0 and time.monotonic() < deadline:
        time.sleep(0.3)
        reset = client.request("atom-1", "reset")
    assert reset["code"] == 0, reset
    assert client.wait_for(
        lambda c: any(
            e["robot_id"] == "atom-1" and e["kind"] == "safety" and not e["latched"]
            for e in c.events
        ),
        5,
    ), "no safety clear event"
    for robot in ("adam-1", "grx-1"):  # still running, or done by now (REFUSED: nothing runs)
        assert client.request(robot, "stop")["code"] in (0, 4)


def test_a_request_signed_for_one_robot_is_refused_by_another(fleet: Fleet) -> None:
    fleet.ready()
    client = fleet.client
    atom = client.instance("atom-1", 5.0)
    adam = client.instance("adam-1", 5.0)
    assert atom and adam and atom != adam
    # the very request the operator signed for atom-1, sent to adam-1
    from executive.service.auth import new_nonce

    refused = client.send("adam-1", "stop", {}, new_nonce(atom), 5.0)
    assert refused["code"] == 3, refused
    assert "another service instance" in refused["message"], refused
    accepted = client.send("adam-1", "stop", {}, new_nonce(adam), 5.0)
    assert accepted["code"] in (0, 4), accepted  # signed for it: authentic (idle: refused)


def test_a_killed_executive_is_lost_and_a_view_opened_afterwards_lists_it(
    fleet: Fleet,
) -> None:
    fleet.ready()
    grx = fleet.stacks["grx-1"]
    assert fleet.client.wait_for(lambda c: fleet.row("grx-1").get("condition") == "live", 10)
    grx.stop("executive", sig=signal.SIGKILL)
    killed = time.monotonic()
    assert fleet.client.wait_for(lambda c: fleet.row("grx-1").get("condition") == "lost", 5)
    lost_after = time.monotonic() - killed
    print(f"killed executive lost after {lost_after:.2f} s")
    assert lost_after <= 2.0, lost_after
    assert fleet.row("atom-1")["condition"] == fleet.row("adam-1")["condition"] == "live"
    view = json.loads(
        fleet.cli("fleet", "--zenoh-config", str(fleet.config), "--json", "--wait", "1")
    )
    rows = {r["robot_id"]: r for r in view["robots"]}
    assert rows["grx-1"]["condition"] == "lost" and rows["grx-1"]["kind"] == "grx", rows
    assert rows["grx-1"]["since"] and rows["grx-1"]["stale"], rows["grx-1"]
