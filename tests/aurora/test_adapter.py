"""The Aurora adapter's start (executive/robots/aurora/adapter.py): a missing bridge
interpreter is refused saying how to get one, before any process is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from executive.robots.aurora.adapter import PYTHON_ENV, BridgeError, bridge_python, open
from executive.seam.profile import load_profile


def test_a_missing_bridge_interpreter_says_make_aurora_env(tmp_path: Path) -> None:
    with pytest.raises(BridgeError, match="make aurora-env"):
        open(load_profile("aurora"), domain=1, python=tmp_path / "python")


def test_the_interpreter_is_the_checkouts_unless_the_environment_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PYTHON_ENV, raising=False)
    assert bridge_python().parts[-3:] == (".venv-aurora", "bin", "python")
    monkeypatch.setenv(PYTHON_ENV, "/opt/aurora/bin/python")
    assert bridge_python() == Path("/opt/aurora/bin/python")
