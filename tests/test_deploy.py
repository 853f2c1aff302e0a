"""The shipped systemd unit verifies cleanly and the example config loads."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from bench.common import REALTIME_PRIORITY
from executive.motion import realtime
from executive.service.config import load_config

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_unit_verifies(tmp_path: Path) -> None:
    """systemd-analyze verify, with ExecStart pointed at the installed console script."""
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: `make test` installs Debian's systemd package"
    script = shutil.which("atom-executive") or str(
        Path(__file__).resolve().parents[1] / ".venv/bin/atom-executive"
    )
    unit = (DEPLOY / "atom-executive.service").read_text()
    unit = unit.replace("/opt/atom-executive/.venv/bin/atom-executive", script)
    path = tmp_path / "atom-executive.service"
    path.write_text(unit)
    result = subprocess.run(
        [analyze, "verify", "--man=no", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and result.stderr.strip() == "" and result.stdout.strip() == "", (
        result.stderr
    )


def test_unit_essentials() -> None:
    unit = (DEPLOY / "atom-executive.service").read_text()
    for line in (
        "Type=notify",
        "Restart=on-failure",
        "ExecReload=/bin/kill -HUP $MAINPID",  # SIGHUP: the service's reload (run.Signals)
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
    ):
        assert line in unit
    assert re.search(r"^WatchdogSec=\d+", unit, re.M) and re.search(
        r"^StartLimitBurst=\d+", unit, re.M
    )


def test_example_config_loads() -> None:
    cfg = load_config(DEPLOY / "config.example.yaml")
    assert cfg.keys_file == "/etc/atom-executive/keys.yaml" and cfg.tick_hz == 50.0


def _syscalls(group: str, analyze: str) -> set[str]:
    """The system calls of a systemd syscall-filter group, nested groups expanded."""
    out = subprocess.run(
        [analyze, "syscall-filter", group], capture_output=True, text=True, check=True
    ).stdout
    names: set[str] = set()
    for line in out.splitlines()[1:]:
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        names |= _syscalls(name, analyze) if name.startswith("@") else {name}
    return names


def test_the_units_seccomp_filter_lets_the_streamer_take_sched_fifo() -> None:
    """A syscall outside SystemCallFilter kills the service (SIGSYS), so the filter the unit
    builds must keep what executive/motion/realtime.py calls; and LimitRTPRIO covers the priorities
    the shipped configs ask for. Judged with systemd's own group definitions."""
    analyze = shutil.which("systemd-analyze")
    assert analyze
    allowed: set[str] = set()
    limit = 0
    for line in (DEPLOY / "atom-executive.service").read_text().splitlines():
        if line.startswith("SystemCallFilter="):
            value = line.split("=", 1)[1]
            deny = value.startswith("~")
            for item in value.lstrip("~").split():
                names = _syscalls(item, analyze) if item.startswith("@") else {item}
                allowed = allowed - names if deny else allowed | names
        elif line.startswith("LimitRTPRIO="):
            limit = int(line.split("=", 1)[1])
    needed = {"sched_setscheduler", "sched_getscheduler", "sched_getparam", "prctl"}
    assert needed <= allowed, needed - allowed
    assert "setrlimit" not in allowed and "reboot" not in allowed  # the deny list still bites
    assert limit >= REALTIME_PRIORITY  # what deploy/README.md tells the integrator to set
    for xml in DEPLOY.glob("*.xml"):
        assert all(p <= limit for _, p in realtime.dds_realtime_threads(xml.as_uri())), xml
