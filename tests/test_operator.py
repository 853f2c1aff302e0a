"""The operator CLI as an operator runs it: its own process, talking DDS to the service."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.auth import write_key_file
from executive.stack import Stack, running_stack

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
    done = cli(*(a.format(keys=keys, open=loose) for a in args))
    assert done.returncode == 2, done
    assert words in done.stderr and "Traceback" not in done.stderr + done.stdout


def test_an_operator_session(stack: Stack) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return cli(*args, env=stack.env())

    signed = ("--key-file", str(stack.workdir / "keys.yaml"))
    missions = run("missions")
    assert missions.returncode == 0 and "head_scan" in missions.stdout.split()
    started = run("start", "head_scan", "--param", "sweeps=20", *signed)  # outlasts the test
    assert started.returncode == 0, started
    run_id = started.stdout.strip()
    again = run("start", "greeting_wave", *signed)
    assert again.returncode == 1 and "'head_scan' is running" in again.stdout
    unsigned = run("stop")
    assert unsigned.returncode == 1 and "refused" in unsigned.stdout
    status = json.loads(run("status", "--json").stdout)
    assert status["summary"][:2] == ["state: RUNNING", f"mission: head_scan ({run_id})"]
    assert "Atom/Priorities/Mission Slot/Head scan" in [n["path"] for n in status["tree"]]
    watch = run("watch", "--duration", "2")
    assert watch.returncode == 0 and "Mission Slot" in watch.stdout
    stopped = run("stop", *signed)
    assert stopped.returncode == 0, stopped
    assert "ABORTED" in run("status").stdout
