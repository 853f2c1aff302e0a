"""Fleet membership on loopback (issue 34, 1): robots that are lost stay visible.

A router (``atom-executive router --roster``: atom-1, adam-1, grx-1 and ghost-1
expected), three executives (the service, each its own process on its own DDS domain, no
robot: this is about the plane), and the operator's views as processes:

- a plain view (``fleet --plain``, its output a file: a log) running throughout;
- atom-1 killed -9, adam-1 stopped (SIGTERM), grx-1 frozen (SIGSTOP: silent, then its link
  lost when the router's lease on it runs out) and thawed, ghost-1 never started;
- a view opened afterwards (``fleet --json``) lists atom-1 lost, adam-1 left, ghost-1
  missing, with the last status of each that had one, and grx-1 live again;
- the plain view's log has a line for each change: stale and lost included.

And a refused executive (a second one configured with atom-1) claims the id once the
holder is killed, says so in its log, and answers the id's requests from then on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from executive.harness.fleet import fleet_client, free_port, start_router
from executive.harness.stack import Stack, running_stack

pytestmark = pytest.mark.dds

KEY = os.urandom(32)
LEASE_MS = 2000  # the executives' link lease: a frozen one is dropped by the router after it


def client_config(path: Path, port: int, lease_ms: int | None = None) -> Path:
    """A loopback zenoh client config (scouting off) with the link lease ``lease_ms``."""
    config: dict[str, Any] = {
        "mode": "client",
        "connect": {"endpoints": [f"tcp/127.0.0.1:{port}"], "timeout_ms": -1},
        "listen": {"endpoints": []},
        "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
    }
    if lease_ms is not None:
        config["transport"] = {"link": {"tx": {"lease": lease_ms}}}
    path.write_text(json.dumps(config))
    return path


def executive(scope: ExitStack, work: Path, robot: str, port: int, name: str = "") -> Stack:
    """The service of ``robot`` on the fleet plane through the router on ``port``
    (started, not waited for)."""
    stack = scope.enter_context(running_stack(work / (name or robot)))
    stack.key = KEY
    config = client_config(stack.workdir / "zenoh-fleet.json5", port, LEASE_MS)
    stack.write_config(fleet={"robot_id": robot, "zenoh_config": str(config)})
    stack.start_service(wait=False)
    return stack


def cli(work: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "executive.cli", *args],
        stdout=(work / f"{args[0]}-{time.monotonic_ns()}.out").open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_killed_stopped_frozen_and_never_started_robots_in_views_opened_before_and_after(
    tmp_path: Path,
) -> None:
    port = free_port()
    roster = tmp_path / "roster.yaml"
    roster.write_text("site: cafe\nrobots: [atom-1, adam-1, grx-1, ghost-1]\n")
    operator = client_config(tmp_path / "operator.json5", port)
    with ExitStack() as scope:
        router = scope.enter_context(running_stack(tmp_path / "router"))
        start_router(router, port, roster=roster)
        log = tmp_path / "plain.log"
        plain = subprocess.Popen(
            [
                *(sys.executable, "-m", "executive.cli", "fleet", "--zenoh-config", str(operator)),
                *("--plain", "--duration", "90"),
            ],
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        scope.callback(plain.kill)
        stacks = {r: executive(scope, tmp_path, r, port) for r in ("atom-1", "adam-1", "grx-1")}
        view = fleet_client(tmp_path, port)
        scope.callback(view.close)

        def condition(robot: str) -> str | None:
            return (view.row(robot) or {}).get("condition")

        assert view.wait_for(lambda c: all(condition(r) == "live" for r in stacks), 60), view.rows()
        assert condition("ghost-1") == "missing"  # the router's roster, through its store

        stacks["atom-1"].stop("executive", sig=signal.SIGKILL)
        stacks["adam-1"].stop("executive", sig=signal.SIGTERM)
        grx = stacks["grx-1"].procs["executive"]
        grx.send_signal(signal.SIGSTOP)
        frozen = time.monotonic()
        assert view.wait_for(lambda c: condition("atom-1") == "lost", 5), view.row("atom-1")
        assert view.wait_for(lambda c: condition("adam-1") == "left", 10), view.row("adam-1")
        assert view.wait_for(lambda c: condition("grx-1") == "stale", 5), view.row("grx-1")
        assert view.wait_for(lambda c: condition("grx-1") == "lost", 15), view.row("grx-1")
        print(f"frozen executive lost after {time.monotonic() - frozen:.1f} s")
        time.sleep(0.6)  # the plain view has drawn it
        grx.send_signal(signal.SIGCONT)
        assert view.wait_for(lambda c: condition("grx-1") == "live", 20), view.row("grx-1")

        later = subprocess.run(  # the next shift's operator: a view opened after all that
            [
                *(sys.executable, "-m", "executive.cli", "fleet", "--zenoh-config", str(operator)),
                *("--json", "--wait", "1"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        rows = {r["robot_id"]: r for r in json.loads(later.stdout)["robots"]}
        assert rows["atom-1"]["condition"] == "lost", rows["atom-1"]
        assert rows["adam-1"]["condition"] == "left", rows["adam-1"]
        assert rows["ghost-1"]["condition"] == "missing", rows["ghost-1"]
        assert rows["grx-1"]["condition"] == "live", rows["grx-1"]
        for robot in ("atom-1", "adam-1"):  # the last status, and since when
            assert rows[robot]["kind"] == "atom" and rows[robot]["state"], rows[robot]
            assert rows[robot]["since"] and rows[robot]["age_s"] is not None, rows[robot]
        assert rows["ghost-1"]["state"] is None and rows["ghost-1"]["since"] is None
        summary = json.loads(later.stdout)["summary"]
        assert summary["lost"] == 1 and summary["left"] == 1 and summary["missing"] == 1, summary

        time.sleep(0.6)
        plain.send_signal(signal.SIGINT)
        plain.wait(10)
        lines = log.read_text().splitlines()

        def said(robot: str, words: str) -> bool:
            return any(line.split()[1:2] == [robot] and words in line for line in lines)

        assert said("atom-1", "LOST since"), lines
        assert said("adam-1", "LEFT since"), lines
        assert said("grx-1", "STALE"), lines
        assert said("grx-1", "LOST since"), lines
        changes = [line for line in lines if line.split()[1:2] == ["grx-1"]]
        readings = [
            "STALE" if "STALE" in line else "LOST" if "LOST since" in line else "live"
            for line in changes
        ]  # its not_ready reasons change too (a line each): the conditions in order
        order = [r for i, r in enumerate(readings) if i == 0 or readings[i - 1] != r]
        stale = order.index("STALE")  # silent, then its link lost, then back (briefly
        assert order[stale + 1] == "LOST" and order[-1] == "live", order  # stale again)
        assert any("ghost-1" in line and "MISSING" in line for line in lines), lines


def test_a_refused_executive_claims_the_id_once_its_holder_is_lost(tmp_path: Path) -> None:
    port = free_port()
    with ExitStack() as scope:
        router = scope.enter_context(running_stack(tmp_path / "router"))
        start_router(router, port)
        view = fleet_client(tmp_path, port, key=KEY)
        scope.callback(view.close)
        a = executive(scope, tmp_path, "atom-1", port, "a")
        assert view.wait_for(lambda c: "atom-1" in c.robots, 60), view.rows()
        holder = view.instance("atom-1")
        b = executive(scope, tmp_path, "atom-1", port, "b")
        assert view.wait_for(lambda c: (c.row("atom-1") or {}).get("duplicate") is True, 60)
        b_pid = b.procs["executive"].pid
        a.stop("executive", sig=signal.SIGKILL)
        killed = time.monotonic()
        taken = view.wait_for(
            lambda c: (c.row("atom-1") or {}).get("condition") == "live"
            and (c.row("atom-1") or {}).get("instance") not in (None, holder),
            10,
        )
        assert taken, view.row("atom-1")
        print(f"the refused executive held the id {time.monotonic() - killed:.1f} s after")
        assert not (view.row("atom-1") or {})["duplicate"], view.row("atom-1")
        text = b.log_path("executive").read_text(errors="replace")
        assert "is gone (lost or left); this one claims it" in text, text[-2000:]
        reply = view.request("atom-1", "status")  # reaches b, the holder now
        assert reply["code"] == 0, reply
        assert json.loads(reply["payload"])["instance"] == view.instance("atom-1") != holder
        assert (view.row("atom-1") or {})["executive_id"].endswith(f":{b_pid}")
        assert view.request("atom-1", "stop")["code"] in (0, 4)  # signed for b: authentic
