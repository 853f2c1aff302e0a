"""The operator CLI as an operator runs it: its own process, talking DDS to the service."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import structlog

from executive.cli import main as cli_main
from executive.harness.stack import Stack, running_stack
from executive.operator import commands as operator
from executive.operator import lines as status_lines
from executive.service.auth import write_key_file

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.dds


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "executive.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    path = tmp_path / "keys.yaml"
    write_key_file(path, {"operator": os.urandom(32)})
    return path


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    """The sim and the service as processes; the CLI talks to them on their domain."""
    with running_stack(tmp_path / "stack") as s:
        s.start_sim()
        s.start_service()
        yield s


def test_no_executive_is_a_clear_message_and_exit_3(dds_domain: int) -> None:
    done = cli("status", "--timeout", "1")
    assert done.returncode == 3
    assert "no executive status within 1" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["start", "head_scan", "--param", "novalue"], "--param 'novalue' must be name=value"),
        (["stop", "--key-file", "{keys}", "--client-id", "nobody"], "no key for client 'nobody'"),
        # keygen's file holds its one client, not the default 'operator': say which to use
        (
            ["start", "head_scan", "--key-file", "{alice}"],
            "it holds 'alice': add --client-id alice",
        ),
        (["stop", "--key-file", "{two}"], "it holds 'alice', 'bob': choose one with --client-id"),
        (["stop", "--key-file", "{open}"], "too open; chmod 600 it"),
        (["stop", "--key-file", "/nonexistent/keys.yaml"], "/nonexistent/keys.yaml"),
    ],
)
def test_bad_command_line_input_is_one_line_and_exit_2(
    tmp_path: Path, keys: Path, args: list[str], words: str
) -> None:
    loose = tmp_path / "open.yaml"
    loose.write_text(keys.read_text())
    loose.chmod(0o644)
    alice, two = tmp_path / "alice.yaml", tmp_path / "two.yaml"
    write_key_file(alice, {"alice": os.urandom(32)})
    write_key_file(two, {"bob": os.urandom(32), "alice": os.urandom(32)})
    done = cli(*(a.format(keys=keys, open=loose, alice=alice, two=two) for a in args))
    assert done.returncode == 2, done
    assert words in done.stderr and "Traceback" not in done.stderr + done.stdout


def test_an_operator_session(stack: Stack) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return cli(*args, env=stack.env())

    signed = ("--key-file", str(stack.workdir / "keys.yaml"))
    missions = run("missions")
    assert missions.returncode == 0 and "head_scan" in missions.stdout.split()
    assert "      sweeps (integer, 1..20): default 2" in missions.stdout, missions.stdout
    typo = run("start", "head_scn", *signed)
    assert (
        typo.returncode == 1 and "no mission 'head_scn' (did you mean 'head_scan'?)" in typo.stdout
    )
    started = run("start", "head_scan", "--param", "sweeps=20", *signed)  # outlasts the test
    assert started.returncode == 0, started
    run_id = started.stdout.strip()
    again = run("start", "greeting_wave", *signed)
    assert again.returncode == 1 and "'head_scan' is running" in again.stdout
    unsigned = run("stop")
    assert unsigned.returncode == 1 and "refused" in unsigned.stdout
    status = json.loads(run("status", "--json").stdout)  # the status document
    assert (status["schema"], status["version"]) == ("atom-executive/status", 1)
    assert (status["state"], status["mission"], status["run_id"]) == (
        "RUNNING",
        "head_scan",
        run_id,
    )
    assert "Atom/Priorities/Mission Slot/Head scan" in [n["path"] for n in status["tree"]]
    assert status["counters"]["ticks"] > 0 and status["telemetry"]["battery"]["percent"] > 0
    watch = run("watch", "--duration", "2")
    assert watch.returncode == 0 and "Mission Slot" in watch.stdout
    stopped = run("stop", *signed)
    assert stopped.returncode == 0, stopped
    assert "ABORTED" in run("status").stdout
    ended = json.loads(run("status", "--json").stdout)
    assert ended["run_id"] == run_id and ended["last_run"]["result"] == "ABORTED"


# -- nothing from a mission or a request drives the operator's terminal ----------------------

HOSTILE = "\x1b[2J\x1b[Hstate: IDLE\nsafety: CLEAR\x07\x9b31m\u202e"


def _node(path: str, status: str, feedback: str, depth: int) -> Any:
    return SimpleNamespace(path=path, kind="Log", status=status, feedback=feedback, depth=depth)


def test_summary_and_tree_show_escapes_as_text() -> None:
    status: Any = SimpleNamespace(
        state="RUNNING",
        mission="m" + HOSTILE,
        run_id="r" + HOSTILE,
        active_node="Atom/" + HOSTILE,
        safety="CLEAR",
        safety_reason=HOSTILE,
        last_result="FAILED",
        last_reason=HOSTILE,
        not_ready="rt/emergency/state silent for 3.00 s" + HOSTILE,
        problems=["run records: 1 writes failed" + HOSTILE],
        sources=[SimpleNamespace(topic="rt/emergency/state", decode_errors=2, last_error=HOSTILE)],
        tree=[
            _node("Atom", "RUNNING", "", 0),
            _node("Atom/" + HOSTILE, "SUCCESS", HOSTILE, 1),
            _node("Atom/deep", "RUNNING", "", 60_000),  # a forged depth: drawn, not 240 kB wide
        ],
    )
    text = status_lines.summary(status) + "\n\n" + status_lines.render_tree(status)
    assert not set(text) & {"\x1b", "\x07", "\x9b", "\u202e", "\r"}, repr(text)
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("state:")] == ["state: RUNNING"]
    assert [line for line in lines if line.startswith("safety:")] == [
        "safety: CLEAR (\\x1b[2J\\x1b[Hstate: IDLE\\nsafety: CLEAR\\x07\\x9b31m\\u202e)"
    ]
    assert "    ✓ \\x1b[2J" in text and len(max(lines, key=len)) < 400
    shown = [line for line in lines if line.startswith(("not ready", "problem", "decode"))]
    assert [line.split("\\x1b")[0] for line in shown] == [
        "not ready: rt/emergency/state silent for 3.00 s",
        "problem: run records: 1 writes failed",
        "decode errors: rt/emergency/state 2 (",
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("1.5", 1.5),
        ("true", True),
        ("[1, 2]", [1, 2]),
        ("hello", "hello"),
        ("[oops", "[oops"),  # not YAML: yaml.safe_load raised (a traceback)
        ("2024-01-02", "2024-01-02"),  # a date: json.dumps raised later, in the client
        (".nan", ".nan"),  # not JSON
        ("!!binary aGk=", "!!binary aGk="),
        ("a: [", "a: ["),
    ],
)
def test_param_values(text: str, value: Any) -> None:
    assert operator._param_value(text) == value
    json.dumps(operator._param_value(text), allow_nan=False)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["status", "--domain", "500"], "--domain 500 is outside 0..232"),
        (["status", "--timeout", "nan"], "is not a number of seconds"),
        (["watch", "--duration", "-1"], "is not a number of seconds"),
        (["start", "m", "--param", "x=oops", "--key-file", "/nonexistent"], "cannot read"),
        # a bracketed value is a point: three finite numbers, refused here in one line
        (["start", "m", "--param", "x=[oops"], "--param x: not valid YAML"),
        (["start", "m", "--param", "cup=[1,2]"], "--param cup: expected a point [x, y, z]"),
        (["start", "m", "--param", "cup=[.nan,0,0]"], "not a finite number"),
        (["set", "cup", "[0.4, 0, 1.0e+9]"], "set cup: [0.4, 0, 1000000000.0] is more than 100 m"),
    ],
)
def test_more_bad_input_is_one_line_and_exit_2(args: list[str], words: str) -> None:
    done = cli(*args)
    assert done.returncode == 2, done
    assert words in done.stderr and "Traceback" not in done.stderr + done.stdout
    # the error is the last line, whole (argparse prints its usage above it)
    assert words in done.stderr.strip().splitlines()[-1], done.stderr


FAST_STATUS = """
import dataclasses, sys, time
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from executive.wire import dds
from executive.service.protocol import STATUS_QOS, STATUS_TOPIC
from executive.wire.gen.own.atom_executive.msg import Status_

def sample(seq):
    values = {}
    for f in dataclasses.fields(Status_):
        t = str(f.type)
        values[f.name] = "" if "str" in t else [] if "sequence" in t else 0
    return Status_(**{**values, "executive_id": "fast:1", "seq": seq, "state": "RUNNING"})

with dds.open_participant() as p:
    writer = DataWriter(p, Topic(p, STATUS_TOPIC, Status_), qos=STATUS_QOS)
    end, seq = time.monotonic() + float(sys.argv[1]), 0
    while time.monotonic() < end:
        seq += 1
        writer.write(sample(seq))
        time.sleep(0.0002)
"""


def test_status_exits_quietly_while_status_pours_in(
    dds_domain: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``DDS_RETCODE_BAD_PARAMETER ... Occurred while taking data`` (and 'NoneType' object
    has no attribute 'take') from the status listener, now and then at CLI exit: a
    sample arriving while the participant was deleted. The CLI's own code path, in this
    process, against a status written thousands of times a second."""
    unraisable: list[str] = []
    monkeypatch.setattr(
        sys, "unraisablehook", lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}")
    )
    publisher = subprocess.Popen(
        [sys.executable, "-c", FAST_STATUS, "60"], env={**os.environ}, cwd=ROOT
    )
    logging = structlog.get_config()  # the CLI configures it for the process
    try:
        rounds = 0
        deadline = time.monotonic() + 40
        while rounds < 60 and time.monotonic() < deadline:
            assert cli_main(["status", "--domain", str(dds_domain), "--timeout", "20"]) == 0
            rounds += 1
    finally:
        publisher.kill()
        publisher.wait()
        structlog.configure(**logging)
    assert rounds >= 20, rounds
    assert not unraisable, f"{len(unraisable)} in {rounds} runs: {sorted(set(unraisable))}"


EVIL_MISSION = r"""
mission: evil
description: A node name and a log message that try to drive the operator's terminal.
tree:
  sequence:
    name: "Evil\e[31m\rstate: IDLE"
    children:
      - log:
          message: "\e[2J\e[Hstate: IDLE\nsafety: CLEAR\a"
      - wait:
          seconds: 120
"""


def test_status_and_watch_show_a_hostile_mission_as_text(tmp_path: Path) -> None:
    """``\\x1b[2J`` and a fake status in a mission's log message and node name drew
    'state: IDLE  safety: CLEAR' over a RUNNING mission; now they are shown, escaped."""
    missions = tmp_path / "missions"
    missions.mkdir()
    (missions / "evil.yaml").write_text(EVIL_MISSION)
    with running_stack(tmp_path / "stack") as s:
        s.write_config(missions_dir=str(missions))
        s.start_sim()
        s.start_service()
        started = s.client.request("start", {"mission": "evil"}, timeout=20)
        assert started.code == 0, started.message
        assert s.client.wait_status(lambda st: "Wait" in st.active_node, 20) is not None
        for args in (["status"], ["watch", "--duration", "2"]):
            done = cli(*args, env=s.env())
            assert done.returncode == 0, done
            out = done.stdout + done.stderr
            assert not set(out) & {"\x1b", "\x07", "\r"}, repr(out)
            assert "\\x1b[2J\\x1b[Hstate: IDLE\\nsafety: CLEAR\\x07" in out, out
            assert "Evil\\x1b[31m\\rstate: IDLE" in out, out
            states = {line for line in out.splitlines() if line.startswith("state:")}
            safeties = {line for line in out.splitlines() if line.startswith("safety:")}
            assert states == {"state: RUNNING"} and safeties == {"safety: CLEAR"}, out


def test_status_shows_the_watchdog_as_what_it_means() -> None:
    """``✗ Safety Watchdog [clear]`` read like a failure (issue 15): the watchdog's FAILURE
    is its "no fault", and status says so as watch does."""
    node = SimpleNamespace(
        path="Atom/Priorities/Safety Watchdog", kind="SafetyWatchdog", depth=2, feedback="clear"
    )
    clear: Any = SimpleNamespace(tree=[SimpleNamespace(**vars(node), status="FAILURE")])
    assert status_lines.render_tree(clear) == "        ◆ Safety Watchdog  [clear]"
    tripped: Any = SimpleNamespace(
        tree=[
            SimpleNamespace(
                **{**vars(node), "feedback": "SAFE_STOP: estop"},
                status="RUNNING",
            )
        ]
    )
    assert status_lines.render_tree(tripped) == "        ◆ Safety Watchdog  [SAFE_STOP: estop]"
