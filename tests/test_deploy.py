"""The shipped systemd unit verifies cleanly and the example config loads."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from executive.config import load_config

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
