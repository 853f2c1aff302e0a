"""Every signal has an answer (issue 25, problem 2): the real service mid-mission on the
simulated Atom, each as its own process, and a signal sent to the service.

Before, SIGHUP, SIGQUIT or SIGUSR1 killed the service on the spot: upper-body control
stayed on, the run stayed RUNNING, and systemd counted SIGHUP as a clean exit. Now every
signal whose default ends the process holds motion, closes the run and hands control back
as SIGTERM does (the sim's record is the witness: what the service sent, not what it
logged); SIGHUP is the daemon's reload; SIGPIPE stays ignored.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from executive.harness.stack import ROOT, Stack, running_stack
from executive.robots.atom.sim.record import Recording
from executive.service import faultpoints
from executive.service.auth import write_key_file
from executive.service.client import ExecutiveClient
from executive.service.run import SHUTDOWN_DUMP_S, SHUTDOWN_EXIT_S

pytestmark = pytest.mark.dds

# (signal, exit code): a stop is 0; any other signal 128 + it, so systemd restarts the unit
STOPPING = [
    (signal.SIGTERM, 0),
    (signal.SIGINT, 0),
    (signal.SIGQUIT, 128 + signal.SIGQUIT),
    (signal.SIGUSR1, 128 + signal.SIGUSR1),
    (signal.SIGUSR2, 128 + signal.SIGUSR2),
    (signal.SIGALRM, 128 + signal.SIGALRM),
]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One sim for every signal (a service is started per test); missions in a copy of the
    shipped directory, so the SIGHUP test can add one."""
    work = tmp_path_factory.mktemp("signals")
    missions = work / "missions"
    shutil.copytree(ROOT / "missions", missions)
    with running_stack(work / "stack") as s:
        s.write_config(missions_dir=str(missions))
        s.start_sim("--seed", "3", record=True)
        yield s


def _moving(stack: Stack, env: dict[str, str] | None = None) -> str:
    """Start a long head scan; return its run id once the head is being streamed."""
    stack.start_service(env=env)
    client = stack.client
    reply = client.request("start", {"mission": "head_scan", "params": {"sweeps": 20}})
    assert reply.code == 0, reply.message
    assert client.wait_status(lambda s: "One sweep" in s.active_node, 30), client.status()
    time.sleep(0.3)  # the head is moving
    return reply.message


def _last_state(stack: Stack, run_id: str) -> str:
    lines = (stack.data_dir / "runs" / f"{run_id}.jsonl").read_text().splitlines()
    states = [e for e in map(json.loads, lines) if e.get("event") == "state"]
    return str(states[-1]["state"])


@pytest.mark.parametrize(("sig", "code"), STOPPING, ids=[s.name for s, _ in STOPPING])
def test_a_terminating_signal_holds_releases_and_closes_the_run(
    stack: Stack, sig: signal.Signals, code: int
) -> None:
    run_id = _moving(stack)
    asked = time.monotonic()
    assert stack.stop("executive", sig, timeout=20) == code
    exited = time.monotonic()
    time.sleep(0.3)  # the sim flushes its record at 10 Hz
    rec = Recording.load(stack.record_path)
    assert rec.commands("upper_cmd", after=asked - 0.5), "the head was not being streamed"
    after = [(e.topic, e.fields) for e in rec.event_commands(after=asked)]
    released = [
        e.t for e in rec.event_commands("switch_upper_control", after=asked) if not e.fields["flag"]
    ]
    # as SIGTERM: control handed back, nothing else (no FSM switch, no base command)
    assert [t for t, _ in after] == ["switch_upper_control"] and released, after
    last_motion = rec.last_motion(topic="upper_cmd", clock="sent")
    assert last_motion is not None and asked - 0.5 < last_motion < released[0] < exited
    rec.assert_no_motion_after(released[0], clock="sent")
    assert _last_state(stack, run_id) == "ABORTED"  # closed by this instance, not RUNNING
    log = stack.log_path("executive").read_text()
    assert f'"signal": "{sig.name}"' in log or f'"signal":"{sig.name}"' in log


def test_a_stop_whose_close_hangs_after_the_hold_dumps_the_stacks_and_ends(stack: Stack) -> None:
    """The close blocks after motion is held and control handed back (the ``close-hang``
    fault point): every thread's stack reaches the log at SHUTDOWN_DUMP_S, and the process
    leaves at SHUTDOWN_EXIT_S with the signal's code, before systemd's SIGKILL would;
    nothing moves after the hold. Before, it stayed until killed."""
    run_id = _moving(stack, env={faultpoints.ENV: "close-hang"})
    asked = time.monotonic()
    assert stack.stop("executive", signal.SIGQUIT, timeout=SHUTDOWN_EXIT_S + 6) == (
        128 + signal.SIGQUIT
    ), "killed: the guard did not end the stop"
    exited = time.monotonic()
    assert SHUTDOWN_EXIT_S - 0.5 < exited - asked < SHUTDOWN_EXIT_S + 5, exited - asked
    time.sleep(0.3)
    rec = Recording.load(stack.record_path)
    assert rec.commands("upper_cmd", after=asked - 0.5), "the head was not being streamed"
    released = [
        e.t for e in rec.event_commands("switch_upper_control", after=asked) if not e.fields["flag"]
    ]
    assert released and released[0] < asked + SHUTDOWN_DUMP_S, released
    rec.assert_no_motion_after(released[0], clock="sent")
    assert _last_state(stack, run_id) == "ABORTED"
    log = stack.log_path("executive").read_text()
    assert f"Timeout (0:00:0{SHUTDOWN_DUMP_S:.0f})!" in log, "no stacks written"
    assert "in hang_in_close" in log, "the stacks do not say where it hung"
    assert "stop overran; motion held and control released" in log


def test_sigpipe_is_ignored_the_mission_goes_on(stack: Stack) -> None:
    run_id = _moving(stack)
    proc = stack.procs["executive"]
    asked = time.monotonic()
    os.kill(proc.pid, signal.SIGPIPE)
    time.sleep(1.0)
    assert proc.poll() is None
    status = stack.client.status()
    assert status.state == "RUNNING" and status.run_id == run_id
    time.sleep(0.3)
    rec = Recording.load(stack.record_path)
    assert rec.motion_commands(asked + 0.5, topic="upper_cmd"), "the head stopped moving"
    assert stack.stop("executive", signal.SIGTERM, timeout=20) == 0


def test_sighup_reloads_keys_at_once_and_missions_once_idle(stack: Stack) -> None:
    """Mid-mission: the service goes on running the mission; a client added to the keys
    file is heard at once (it stops the mission); a mission file added is listed once idle."""
    missions = Path(yaml.safe_load(stack.config_path.read_text())["missions_dir"])
    run_id = _moving(stack)
    proc = stack.procs["executive"]
    bob = os.urandom(32)
    write_key_file(stack.workdir / "keys.yaml", {"operator": stack.key, "bob": bob})
    text = (missions / "head_scan.yaml").read_text()
    (missions / "head_nod.yaml").write_text(text.replace("mission: head_scan", "mission: head_nod"))
    asked = time.monotonic()
    os.kill(proc.pid, signal.SIGHUP)
    as_bob = ExecutiveClient(stack.dds, key=bob, client_id="bob")
    deadline = time.monotonic() + 10
    while (reply := as_bob.request("stop", timeout=10)).code != 0:
        assert "unknown client" in reply.message and time.monotonic() < deadline, reply.message
        time.sleep(0.2)
    time.sleep(0.3)
    rec = Recording.load(stack.record_path)
    assert rec.motion_commands(asked, topic="upper_cmd"), "the mission stopped at SIGHUP"
    assert proc.poll() is None
    assert stack.client.wait_status(lambda s: s.state != "RUNNING", 10)
    assert _last_state(stack, run_id) == "ABORTED"
    deadline = time.monotonic() + 10
    while "head_nod" not in (names := json.loads(stack.client.request("list_missions").payload)):
        assert time.monotonic() < deadline, names
        time.sleep(0.2)
    assert stack.stop("executive", signal.SIGTERM, timeout=20) == 0
