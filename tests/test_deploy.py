"""The shipped systemd unit verifies cleanly and the example config loads."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from bench.harness import REALTIME_PRIORITY
from executive.motion import realtime
from executive.service.config import ServiceConfig, load_config
from executive.service.run import SHUTDOWN_DUMP_S, SHUTDOWN_EXIT_S

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


def test_a_stop_that_overruns_ends_before_the_units_sigkill() -> None:
    """The shutdown guard ends an overrunning stop (motion held) before systemd would."""
    unit = (DEPLOY / "atom-executive.service").read_text()
    match = re.search(r"^TimeoutStopSec=(\d+)s$", unit, re.M)
    assert match, "TimeoutStopSec=Ns is missing from the unit"
    assert SHUTDOWN_DUMP_S < SHUTDOWN_EXIT_S <= int(match[1]) - 1.0


def test_example_config_loads() -> None:
    cfg = load_config(DEPLOY / "config.example.yaml")
    assert cfg.keys_file == "/etc/atom-executive/keys.yaml" and cfg.tick_hz == 50.0


def _example_lines() -> dict[str, tuple[object, object]]:
    """Each key of the example (nested ``safety.x``) -> (its value, its ``# default: X``
    comment's value, or its value when the line has none)."""
    shown: dict[str, tuple[object, object]] = {}
    parent = ""
    for line in (DEPLOY / "config.example.yaml").read_text().splitlines():
        m = re.match(r"^( *)([a-z_][a-z_0-9]*):(.*)$", line)  # groot2: a digit
        if not m:
            continue
        indent, key, rest = m.groups()
        value_text, _, comment = rest.partition("#")
        if not indent:
            parent = key
        name = f"{parent}.{key}" if indent else key
        value = yaml.safe_load(value_text) if value_text.strip() else None
        said = re.match(r"\s*default: (\S+)", comment)
        shown[name] = (value, yaml.safe_load(said.group(1)) if said else value)
    return shown


def test_the_example_config_shows_every_key_and_its_real_default() -> None:
    """deploy/config.example.yaml is where a newcomer reads the config: every key of
    ServiceConfig (and of safety, foxglove) is in it, with the default the code has (or
    what a deployment sets, its default beside it), so the two cannot drift apart. It
    showed interface: seed (the default is the robot's own) and no zenoh_config."""
    defaults: dict[str, object] = {}
    for f in dataclasses.fields(ServiceConfig):
        value = getattr(ServiceConfig(), f.name)
        if dataclasses.is_dataclass(value):
            defaults[f.name] = None  # a section: its keys below
            defaults |= {
                f"{f.name}.{g.name}": getattr(value, g.name) for g in dataclasses.fields(value)
            }
        else:
            defaults[f.name] = value
    shown = _example_lines()
    assert sorted(shown) == sorted(defaults)
    for key, default in defaults.items():
        assert shown[key][1] == default, (key, shown[key], default)


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
