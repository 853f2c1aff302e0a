"""Fixtures for the mission-language tests: a scratch mission directory and helpers.

Every test that writes files gets its own copy of the shipped pose and gesture
libraries (and subtrees) under ``tmp_path``, so tests can break things freely and the
shipped files stay untouched. The profile is loaded once per session.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from executive.mission.loader import LoadResult, MissionLoader
from executive.seam.profile import RobotProfile, load_profile

ROOT = Path(__file__).resolve().parents[2]
MISSIONS = ROOT / "missions"
PROFILE = load_profile()


@pytest.fixture(scope="session")
def profile() -> RobotProfile:
    return PROFILE


@pytest.fixture
def mission_dir(tmp_path: Path) -> Path:
    """A mission directory with copies of the shipped libraries and subtrees."""
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(MISSIONS / folder, tmp_path / folder)
    return tmp_path


class Workspace:
    """Write files into a mission directory and check them with one loader per check."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def check(
        self, text: str, name: str = "m.yaml", args: Mapping[str, Any] | None = None
    ) -> LoadResult:
        path = self.write(name, text)
        return MissionLoader(PROFILE, self.root).check(path, args)


@pytest.fixture
def ws(mission_dir: Path) -> Workspace:
    return Workspace(mission_dir)


def errors(result: LoadResult) -> list[str]:
    """The error lines of a result without the file part: ``line:col: path: message``."""
    return [str(d).split(":", 1)[1] for d in result.diagnostics if d.is_error]


def where(result: LoadResult) -> list[tuple[int, int, str]]:
    """(line, col, path) of every error."""
    return [(d.where.line, d.where.col, d.path) for d in result.diagnostics if d.is_error]


def one_error(result: LoadResult) -> tuple[int, int, str, str]:
    """The single error of a result as (line, col, path, message); fails if not exactly one."""
    errs = [d for d in result.diagnostics if d.is_error]
    assert len(errs) == 1, "\n".join(str(d) for d in result.diagnostics)
    d = errs[0]
    return d.where.line, d.where.col, d.path, d.message


def leaf_mission(leaf: str, *, params: str = "") -> str:
    """A mission whose tree is a sequence of acquire_control and the given leaf (YAML at
    indentation 0, one list item); the leaf's first line is line ``LEAF_LINE``."""
    body = textwrap.indent(textwrap.dedent(leaf).strip("\n"), " " * 6)
    return f"mission: t\n{params}tree:\n  sequence:\n    children:\n      - acquire_control: {{timeout: 5}}\n{body}\n"


LEAF_LINE = 6  # line of the leaf in leaf_mission() when params is empty


def leaf_col(leaf: str, token: str) -> int:
    """The column of ``token`` in a one-line leaf as placed by leaf_mission()."""
    return 6 + leaf.index(token) + 1
