"""Simulated robots run as robots do under test: SCHED_FIFO from ``ATOM_ROBOT_FIFO``
(tests/conftest.py), so test load does not silence their state (issue 35)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from executive.harness.stack import running_stack
from executive.robots.simkit import realtime


def test_the_priority_comes_from_the_environment_and_a_bad_one_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(realtime.ENV, "30")
    assert realtime.priority() == 30
    assert realtime.command(["robot", "7"]) == ["chrt", "-f", "30", "robot", "7"]
    monkeypatch.delenv(realtime.ENV)
    assert realtime.priority() is None and realtime.take() == ""
    assert realtime.command(["robot"]) == ["robot"]
    for bad in ("0", "100", "fast"):
        monkeypatch.setenv(realtime.ENV, bad)
        with pytest.raises(ValueError, match=f"ATOM_ROBOT_FIFO='{bad}'"):
            realtime.priority()


def test_take_makes_the_process_and_its_later_threads_fifo() -> None:
    code = (
        "import os, threading\n"
        "from executive.robots.simkit import realtime\n"
        "print(realtime.take())\n"
        "seen = []\n"
        "t = threading.Thread(target=lambda: seen.append(os.sched_getscheduler(0)))\n"
        "t.start(); t.join()\n"
        "print(seen[0] == os.SCHED_FIFO, os.sched_getparam(0).sched_priority)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, realtime.ENV: "12"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\n")
    assert out[:2] == ["SCHED_FIFO 12", "True 12"], out


@pytest.mark.dds
def test_a_stack_s_simulated_atom_runs_fifo_under_test(tmp_path: Path) -> None:
    assert realtime.priority() == 30  # tests/conftest.py
    with running_stack(tmp_path) as stack:
        proc = stack.start_sim("--physics", "kinematic")
        assert os.sched_getscheduler(proc.pid) == os.SCHED_FIFO
        # its DDS threads too (made after it took the priority; a thread numpy's BLAS made
        # at import, idle, is not the robot's)
        dds = [
            t
            for t in Path(f"/proc/{proc.pid}/task").iterdir()
            if (t / "comm").read_text().strip() in ("recv", "recvUC", "tev", "dq.user")
        ]
        assert len(dds) == 4, dds
        assert all(os.sched_getscheduler(int(t.name)) == os.SCHED_FIFO for t in dds)
