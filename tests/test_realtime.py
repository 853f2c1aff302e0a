"""Real-time scheduling: what the kernel grants, what it refuses, and a clear answer for both.

The refusals are real: the check runs in a child process without CAP_SYS_NICE
(``setpriv``) and with RLIMIT_RTPRIO 0, as the service runs under systemd when the unit
gives it no ``LimitRTPRIO=``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from executive.motion import realtime

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = ROOT / "executive" / "resources" / "cyclonedds-loopback.xml"
RT_RECV = (
    '<CycloneDDS xmlns="https://cdds.io/config"><Domain Id="any"><Threads>'
    '<Thread name="recv"><Scheduling><Class>Realtime</Class><Priority>85</Priority>'
    "</Scheduling></Thread>"
    '<Thread name="tev"><Scheduling><Class>timeshare</Class></Scheduling></Thread>'
    "</Threads></Domain></CycloneDDS>"
)


def unprivileged(*argv: str) -> list[str]:
    """``argv`` without CAP_SYS_NICE and with RLIMIT_RTPRIO 0: the service as systemd runs
    it when the unit sets no LimitRTPRIO=."""
    setpriv, prlimit = shutil.which("setpriv"), shutil.which("prlimit")
    if setpriv is None or prlimit is None:
        pytest.skip("util-linux's setpriv and prlimit are needed")
    return [
        prlimit,
        "--rtprio=0",
        setpriv,
        "--bounding-set=-sys_nice",
        "--inh-caps=-sys_nice",
        *argv,
    ]


def test_the_realtime_threads_of_a_dds_config_are_found_in_files_and_inline(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rt.xml"
    path.write_text(RT_RECV)
    assert realtime.dds_realtime_threads(f"{LOOPBACK.as_uri()},{path.as_uri()}") == [("recv", 85)]
    assert realtime.dds_realtime_threads(RT_RECV) == [("recv", 85)]
    assert realtime.dds_realtime_threads(LOOPBACK.as_uri()) == []
    assert realtime.dds_realtime_threads(None) == []
    # what CycloneDDS reports itself: missing files and broken XML
    assert realtime.dds_realtime_threads("file:///nonexistent.xml,<CycloneDDS") == []


def test_out_of_range_priorities_are_refused_with_the_range() -> None:
    assert realtime.fifo_permitted(0) == "priority 0 is outside 1..99"
    assert realtime.fifo_permitted(100) == "priority 100 is outside 1..99"


def test_the_probe_leaves_the_callers_scheduling_alone() -> None:
    before = os.sched_getscheduler(0), os.sched_getparam(0).sched_priority
    realtime.fifo_permitted(10)
    assert (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority) == before


def test_without_rtprio_or_cap_sys_nice_sched_fifo_is_refused_naming_the_fix() -> None:
    code = "from executive.motion import realtime; print(realtime.fifo_permitted(80)); print(realtime.policy())"
    out = subprocess.run(
        unprivileged(sys.executable, "-c", code),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.splitlines()
    assert out == [
        "SCHED_FIFO 80 not permitted: give the service LimitRTPRIO=80 or CAP_SYS_NICE "
        "(deploy/atom-executive.service)",
        "SCHED_OTHER",
    ]


@pytest.mark.dds
def test_the_service_refuses_a_dds_config_it_may_not_run_instead_of_aborting(
    tmp_path: Path,
) -> None:
    """CycloneDDS 0.10 calls abort() when it may not create a realtime thread; the service
    checks first and stops with exit 2 and one line naming the thread and the fix."""
    rt = tmp_path / "rt.xml"
    rt.write_text(RT_RECV)
    env = {**os.environ, "CYCLONEDDS_URI": f"{LOOPBACK.as_uri()},{rt.as_uri()}"}
    argv = [sys.executable, "-m", "executive.cli", "run", "--data-dir", str(tmp_path / "d")]
    proc = subprocess.run(
        unprivileged(*argv),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "Threads/Thread[@name='recv'] asks for realtime: SCHED_FIFO 85 not permitted" in out
    assert "LimitRTPRIO=85" in out and "Traceback" not in out
