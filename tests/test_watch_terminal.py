"""``watch`` in a real terminal against a real executive, then the executive killed -9
under it: the screen (tmux capture-pane) must say "no executive for N s".

The captures are the issue's screenshot-equivalent: printed (``pytest -s``), kept in the
test's tmp dir, and copied to ``$ATOM_WATCH_CAPTURES`` (a directory) when set. Without
tmux the watch runs on a pty and the same words are looked for in what it drew.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from executive.harness.stack import Stack, running_stack

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.dds

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]")


def _started(s: Stack) -> None:
    s.start_sim()
    s.start_service()
    started = s.client.request("start", {"mission": "head_scan", "params": {"sweeps": 20}}, 20)
    assert started.code == 0, started.message


def _watch_command(s: Stack) -> list[str]:
    env = s.env()
    return [
        "env",
        "-u",  # pytest exports COLUMNS=80 LINES=24, and rich believes them over the pty
        "COLUMNS",
        "-u",
        "LINES",
        f"ATOM_DDS_DOMAIN={env['ATOM_DDS_DOMAIN']}",
        f"CYCLONEDDS_URI={env['CYCLONEDDS_URI']}",
        sys.executable,
        "-m",
        "executive.cli",
        "watch",
        "--stale",
        "2",
    ]


def _until(read: Callable[[], str], done: Callable[[str], bool], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    text = read()
    while not done(text) and time.monotonic() < deadline:
        time.sleep(0.2)
        text = read()
    return text


def _keep(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    target = os.environ.get("ATOM_WATCH_CAPTURES")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        (Path(target) / name).write_text(text, encoding="utf-8")
    print(f"\n--- {name} ---\n{text}")


def _running(text: str) -> bool:
    return "● Head scan" in text and "◆ Safety Watchdog" in text and "s old" in text


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_watch_in_tmux_says_when_the_executive_is_killed(tmp_path: Path) -> None:
    socket = f"atom-watch-{os.getpid()}"  # a tmux server of this test's own
    tmux = ["tmux", "-L", socket]
    with running_stack(tmp_path / "stack") as s:
        _started(s)
        session = ["new-session", "-d", "-x", "120", "-y", "40", "-s", "w", "-c", str(ROOT)]
        command = shlex.join(_watch_command(s)) + "; sleep 60"
        subprocess.run([*tmux, "-f", "/dev/null", *session, command], check=True)
        try:

            def screen() -> str:
                done = subprocess.run(
                    [*tmux, "capture-pane", "-p", "-t", "w"],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                return "\n".join(line.rstrip() for line in done.stdout.rstrip().splitlines())

            # a leaf of the sweep has been running a while: elapsed times are shown
            during = _until(screen, lambda t: _running(t) and "took" in t, 20)
            _keep(tmp_path, "watch-during-run.txt", during)
            assert _running(during), during
            lines = during.splitlines()
            assert lines[0].startswith("atom-executive watch") and "status" in lines[0]
            assert "state: RUNNING" in lines and "safety: CLEAR" in lines
            watchdog = next(line for line in lines if "Safety Watchdog" in line)
            assert watchdog.split() == ["◆", "Safety", "Watchdog", "clear"], watchdog
            assert re.search(r"● Head scan\s+≥\s+\d+\.\d s", during), during
            assert any(line.startswith("legend:") for line in lines)

            s.stop("executive", signal.SIGKILL)
            after = _until(screen, lambda t: t.startswith("no executive for"), 15)
            _keep(tmp_path, "watch-after-kill.txt", after)
            assert re.match(r"no executive for \d+ s", after), after
            assert "what it last said, not now" in after.splitlines()[0]
        finally:
            subprocess.run([*tmux, "kill-server"], check=False)


@pytest.mark.skipif(shutil.which("tmux") is not None, reason="tmux runs the test above")
def test_watch_on_a_pty_says_when_the_executive_is_killed(tmp_path: Path) -> None:
    with running_stack(tmp_path / "stack") as s:
        _started(s)
        main, child = pty.openpty()
        os.set_blocking(main, False)
        watcher = subprocess.Popen(
            _watch_command(s), stdin=child, stdout=child, stderr=child, cwd=ROOT
        )
        os.close(child)
        drawn: list[bytes] = []

        def screen() -> str:
            while select.select([main], [], [], 0)[0]:
                try:
                    chunk = os.read(main, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                drawn.append(chunk)
            return ESCAPES.sub("", b"".join(drawn).decode("utf-8", "replace"))

        try:
            during = _until(screen, _running, 20)
            assert _running(during), during
            s.stop("executive", signal.SIGKILL)
            after = _until(screen, lambda t: "no executive for" in t, 15)
            _keep(tmp_path, "watch-pty.txt", after[-4000:])
            assert re.search(r"no executive for \d+ s", after)
        finally:
            watcher.kill()
            watcher.wait()
            os.close(main)
