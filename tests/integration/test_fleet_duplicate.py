"""Two executives configured with one fleet robot id (issue 35: 1, 3 and 7), real processes.

A router (``atom-executive router`` on a loopback port the test owns), executive A on its
own DDS domain with the simulated Atom (its own process, recording what it receives), and
executive B on another domain with no robot at all, both configured ``fleet: {robot_id:
atom-1}`` and holding the same operator key: B would run a stop signed for it. The
operator's view (a ``FleetClient``, and ``atom-executive fleet`` as a process) through the
router.

- A's service before its robot is heard: the view says NOT READY, safety UNKNOWN, not
  IDLE and CLEAR (3).
- ``head_scan`` running and moving on A; then B arrives: it is refused the id and stays off
  the fleet plane, both logs say so at level error naming the other's instance, both
  statuses carry it as a problem, and the view shows the duplicate under atom-1's row; then
  ``atom-executive fleet --robot atom-1 stop`` five times, each while the scan runs and
  moves: every one reaches A and stops it (no motion command after the reply), B never
  answers one (1).
- ``fleet --robot nosuch start ...`` says at once that no executive holds that id (7).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from executive.harness.fleet import (
    client_config_file,
    fleet_client,
    fleet_mapping,
    free_port,
    start_router,
)
from executive.harness.stack import LogTail, Stack, running_stack
from executive.operator.fleet import FleetClient
from executive.operator.lines import status_document
from executive.robots.atom.sim.record import Recording

pytestmark = pytest.mark.dds

ROBOT = "atom-1"
HOST = socket.gethostname()
SAFETY = {"max_state_age": 3.0}  # a loaded machine: this test is about the fleet plane
SCAN = {"mission": "head_scan", "params": {"sweeps": 20}}  # a minute of head motion
STOPS = 5


@dataclass
class Duo:
    a: Stack
    b: Stack
    view: FleetClient
    config: Path  # the operator's zenoh client config (the router's port)

    def fleet(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``atom-executive fleet --zenoh-config ... ARGS`` as its own process."""
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "executive.cli",
                "fleet",
                "--zenoh-config",
                str(self.config),
                *args,
            ],
            env=self.a.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if check:
            assert out.returncode == 0, (args, out.stdout, out.stderr)
        return out

    def row(self) -> dict[str, Any]:
        return self.view.row(ROBOT) or {}


@pytest.fixture(scope="module")
def duo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Duo]:
    work = tmp_path_factory.mktemp("fleet-duplicate")
    port = free_port()
    with ExitStack() as scope:
        a = scope.enter_context(running_stack(work / "a"))
        b = scope.enter_context(running_stack(work / "b"))
        b.key = a.key  # one operator, one key: B would run a stop signed for it
        start_router(a, port)
        a.write_config(fleet=fleet_mapping(a, ROBOT, port), safety=SAFETY)
        b.write_config(fleet=fleet_mapping(b, ROBOT, port), safety=SAFETY)
        a.start_service()  # no sim yet: not ready
        view = fleet_client(work, port, key=a.key)
        scope.callback(view.close)
        yield Duo(a, b, view, client_config_file(work / "operator.json5", port))


def errors(log: Path) -> list[dict[str, Any]]:
    return [e for e in LogTail(log).read() if e.get("level") == "error"]


def problems(stack: Stack) -> list[str]:
    """The problems its own status (on its own DDS domain) reports."""
    return list((status_document(stack.client.status()) or {}).get("problems") or [])


def instance_of(stack: Stack) -> str:
    reply = stack.client.request("status")
    assert reply.code == 0, reply.message
    instance = json.loads(reply.payload)["instance"]
    assert isinstance(instance, str) and instance
    return instance


def test_an_executive_that_has_not_heard_its_robot_is_not_ready_in_the_view(duo: Duo) -> None:
    assert duo.view.wait_for(lambda c: ROBOT in c.robots, 20), "A not on the fleet plane"
    assert duo.a.client.status().not_ready  # its own status: the robot is not heard
    row = duo.row()
    assert row.get("ready") is False and row.get("not_ready"), row
    assert row["safety"] == "UNKNOWN", row  # never CLEAR while its sources are silent
    line = duo.fleet("--json", "--wait", "1.5").stdout
    shown = {r["robot_id"]: r for r in json.loads(line)["robots"]}[ROBOT]
    assert shown["ready"] is False and shown["safety"] == "UNKNOWN", shown
    plain = duo.fleet("--plain", "--duration", "1").stdout
    assert "NOT READY" in plain and "CLEAR" not in plain and " IDLE " not in plain, plain
    robot_comes(duo)  # then: ready, CLEAR
    assert duo.view.wait_for(lambda c: duo.row().get("ready") is True, 10), duo.row()
    assert duo.row()["safety"] == "CLEAR" and duo.row()["state"] == "IDLE", duo.row()


def robot_comes(duo: Duo) -> None:
    """A's robot, the simulated Atom, recording what it receives (once); A hears it."""
    if duo.a.pid("sim") is None:
        duo.a.start_sim("--physics", "kinematic", "--seed", "3", record=True)
    assert duo.a.client.wait_status(lambda s: not s.not_ready, 30) is not None


def scan_moving(duo: Duo) -> float:
    """Start the scan on A (its own DDS client: the fleet is what is under test); when
    the head is seen moving (the sim's record: motion commands in the last 0.5 s)."""
    a = duo.a
    reply = a.client.request("start", SCAN)
    assert reply.code == 0, reply.message
    started = time.monotonic()
    assert a.client.wait_status(lambda s: s.state == "RUNNING", 10) is not None

    def moving() -> bool:
        now = time.monotonic()
        return bool(Recording.load(a.record_path).motion_commands(max(started, now - 0.5)))

    assert a.wait_for(moving, 15, every=0.1), "the head scan is not moving the head"
    return time.monotonic()


def test_a_second_executive_with_the_id_is_refused_and_a_stop_reaches_the_holder(
    duo: Duo,
) -> None:
    a, b = duo.a, duo.b
    robot_comes(duo)
    scan_moving(duo)
    assert duo.view.wait_for(lambda c: duo.row().get("state") == "RUNNING", 5), duo.row()
    # the duplicate arrives: B, no robot, the same fleet id and key
    a_log = LogTail(a.log_path("executive"))
    a_log.skip()
    publishers: set[str] = set()  # whose status documents arrive under atom-1 from now
    watch = duo.view.session.declare_subscriber(
        f"fleet/{ROBOT}/status",
        lambda s: publishers.add(json.loads(s.payload.to_bytes())["executive_id"]),
    )
    b.start_service(ready=False)
    assert b.wait_for(
        lambda: any(
            str(e.get("event", "")).startswith("fleet plane")
            for e in LogTail(b.log_path("executive")).read()
        ),
        20,
        every=0.1,
    ), "B never said where it stands on the fleet plane"
    for attempt in range(STOPS):
        if attempt:
            scan_moving(duo)
        assert a.client.status().state == "RUNNING"
        asked = time.monotonic()
        out = duo.fleet("--key-file", str(a.workdir / "keys.yaml"), "--robot", ROBOT, "stop")
        replied = time.monotonic()
        print(f"stop {attempt + 1}: `fleet --robot {ROBOT} stop` took {replied - asked:.2f} s")
        assert out.stdout.strip() == f"{ROBOT}: stopped by request", (attempt, out.stdout)
        ended = a.client.wait_status(lambda s: s.state != "RUNNING", 5)
        assert ended is not None and ended.state == "ABORTED", (attempt, a.client.status())
        assert ended.last_reason == "stopped by request", ended.last_reason
        time.sleep(0.5)  # what the sim receives after the reply is in its record by now
        Recording.load(a.record_path).assert_no_motion_after(replied)
    watch.undeclare()  # type: ignore[no-untyped-call]
    assert publishers == {f"{HOST}:{a.pid('executive')}"}, publishers  # never B's
    answered = [
        e for e in LogTail(b.log_path("executive")).read() if "request" in e.get("event", "")
    ]
    assert not [e for e in answered if e.get("event") == "fleet request"], answered
    # both logs say so, loudly, each naming the other
    a_id, b_id = instance_of(a), instance_of(b)
    b_errors = [e for e in errors(b.log_path("executive")) if "fleet" in e["event"]]
    assert any(a_id in json.dumps(e) for e in b_errors), b_errors
    a_errors = [e for e in a_log.read() if e.get("level") == "error" and "fleet" in e["event"]]
    assert any(b_id in json.dumps(e) for e in a_errors), a_errors
    # and both statuses
    b_problems = problems(b)
    assert any(ROBOT in p and a_id[:8] in p for p in b_problems), b_problems
    a_problems = problems(a)
    assert any(ROBOT in p and b_id[:8] in p for p in a_problems), a_problems
    # the view: one row, A's, the duplicate on it
    row = duo.row()
    assert row.get("holders") == [a_id] and row.get("refused") == [b_id], row
    assert row["duplicate"] and row["executive_id"].endswith(f":{a.pid('executive')}"), row
    shown = {r["robot_id"]: r for r in json.loads(duo.fleet("--json").stdout)["robots"]}
    assert shown[ROBOT]["duplicate"] and shown[ROBOT]["refused"] == [b_id], shown
    plain = duo.fleet("--plain", "--duration", "1").stdout
    assert "DUPLICATE" in plain and b_id[:8] in plain, plain
    # a refused executive never answers for the id: B keeps refusing, A keeps answering
    assert duo.view.request(ROBOT, "status")["code"] == 0
    assert json.loads(duo.view.request(ROBOT, "status")["payload"])["instance"] == a_id


def test_a_command_for_a_robot_nobody_holds_says_so_at_once(duo: Duo) -> None:
    began = time.monotonic()
    out = duo.fleet(
        *("--key-file", str(duo.a.workdir / "keys.yaml"), "--robot", "nosuch"),
        *("start", "head_scan"),
        check=False,
    )
    took = time.monotonic() - began
    assert out.returncode == 1, out
    assert "no executive on the fleet plane holds robot id 'nosuch'" in out.stderr, out.stderr
    assert ROBOT in out.stderr  # what is there instead
    assert "within" not in out.stderr, out.stderr  # it waited for nothing
    print(f"fleet --robot nosuch answered in {took:.2f} s (a process, zenoh's session included)")
