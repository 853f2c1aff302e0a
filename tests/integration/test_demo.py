"""``make demo`` is the main job: it runs here as it runs for a newcomer, in its own process."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.dds


def test_the_demo_passes_every_check_and_leaves_no_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "executive.harness.demo"],
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
