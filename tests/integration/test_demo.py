"""``make demo`` is the main job: it runs here as it runs for a newcomer, in its own process."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.dds


def test_the_demo_passes_every_check_and_leaves_no_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "executive.demos"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "FAILED" not in done.stdout and "Traceback" not in done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    passed, total = summary.split("summary: ")[1].split(" checks")[0].split("/")
    assert passed == total and int(total) >= 11, summary


@pytest.mark.parametrize(
    ("profile", "least"),
    [
        ("adam-pro", 13),
        # the GRX's 0.25 s freshness is judged by the service's zenoh threads, at normal
        # priority as deployed: beside three workers and four CPU hogs they heard the sim
        # late and the run ended SAFE_STOP (a fresh-clone CI under hogs): timed, so alone
        pytest.param("grx", 12, marks=pytest.mark.serial),
        ("aurora", 16),
        # seven processes (three sims, their executives, a router) on this 2-core machine:
        # beside three other test workers, a starved GRX sim broke the GRX's 0.25 s
        # freshness (SAFE_STOP stale_state, a fresh-clone CI): it runs with the timing tests
        pytest.param("fleet", 7, marks=pytest.mark.serial),
    ],
)
def test_the_other_robots_demos_pass_every_check(profile: str, least: int) -> None:
    """``make demo PROFILE=adam-pro``, ``PROFILE=grx`` and ``PROFILE=aurora`` (README): each robot's mission
    through the service against its simulator, then a fault mid-motion and the reset."""
    done = subprocess.run(
        [sys.executable, "-m", "executive.demos", "--profile", profile],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "FAILED" not in out and "Traceback" not in out
    counts = re.search(r"(\d+)(?:/| of )(\d+) checks", done.stdout.strip().splitlines()[-1])
    assert counts is not None, done.stdout[-500:]
    passed, total = map(int, counts.groups())
    assert passed == total >= least
