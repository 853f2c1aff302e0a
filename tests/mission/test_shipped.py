"""The shipped missions validate; a broken copy of each fails at the right file:line:col.

The broken copies are made by editing the text of a copy of ``missions/`` (so the lines
and columns asserted are those of real files, found by searching the text, not by
asking the loader), one mistake at a time: a missing timeout, an unknown pose, a wrong
joint name, a value outside the joint's limits, an include cycle.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from executive.language.model import Composite, Decorator, Guard, Subtree, walk
from executive.mission.loader import MissionLoader
from executive.seam.profile import load_profile
from tests.mission.conftest import MISSIONS, PROFILE

SHIPPED = sorted(MISSIONS.glob("*.yaml"))
NAMES = [p.stem for p in SHIPPED]
# other robots' missions and libraries live in a folder of their own, validated for them
ROBOT_FOLDERS = {"adam": "adam-pro", "grx": "grx", "aurora": "aurora"}
TESTS = "tests"  # the missions' scenarios (atom-executive test: tests/scenario), not missions
ALL_FILES = sorted(
    p
    for p in MISSIONS.rglob("*.yaml")
    if p.relative_to(MISSIONS).parts[0] not in {*ROBOT_FOLDERS, TESTS}
)
ROBOT_FILES = sorted(
    (p, ROBOT_FOLDERS[p.relative_to(MISSIONS).parts[0]])
    for p in MISSIONS.rglob("*.yaml")
    if p.relative_to(MISSIONS).parts[0] in ROBOT_FOLDERS
)


def test_there_are_at_least_six_missions() -> None:
    assert len(SHIPPED) >= 6
    assert {
        "deliver_drink",
        "greeting_wave",
        "head_scan",
        "pick_and_place",
        "operator_confirmed_step",
        "serve_two_tables",
    } <= set(NAMES)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: str(p.relative_to(MISSIONS)))
def test_every_shipped_file_is_valid_without_warnings(path: Path) -> None:
    result = MissionLoader(PROFILE).check(path)
    assert result.diagnostics == (), "\n".join(map(str, result.diagnostics))


@pytest.mark.parametrize(
    ("path", "profile"), ROBOT_FILES, ids=[str(p.relative_to(MISSIONS)) for p, _ in ROBOT_FILES]
)
def test_every_other_robots_file_is_valid_for_it(path: Path, profile: str) -> None:
    root = MISSIONS / path.relative_to(MISSIONS).parts[0]
    result = MissionLoader(load_profile(profile), root).check(path)
    assert [d for d in result.diagnostics if d.is_error] == [], "\n".join(
        map(str, result.diagnostics)
    )


@pytest.mark.parametrize("path", SHIPPED, ids=NAMES)
def test_every_shipped_mission_can_start(path: Path) -> None:
    mission = MissionLoader(PROFILE).load(path)
    assert mission.kind == "mission" and mission.complete


def test_the_missions_show_the_language() -> None:
    loader = MissionLoader(PROFILE)
    nodes = [n for p in SHIPPED for n in walk(loader.load(p).root)]
    kinds = {getattr(n, "kind", type(n).__name__) for n in nodes}
    assert {"sequence", "fallback", "parallel", "retry", "repeat", "timeout", "delay"} <= kinds
    assert any(isinstance(n, Guard) for n in nodes)
    assert any(isinstance(n, Subtree) for n in nodes)
    assert any(isinstance(n, Decorator) and n.kind == "retry" for n in nodes)
    assert any(isinstance(n, Composite) and n.kind == "parallel" for n in nodes)
    leaf_kinds = {n.kind for p in SHIPPED for n in loader.load(p).leaves()}
    assert {
        "acquire_control",
        "release_control",
        "set_fsm",
        "move_joints",
        "hand_gesture",
        "navigate_to_tag",
        "wait",
        "wait_for_button",
        "check_battery",
        "log",
    } <= leaf_kinds


# -- broken copies -------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    file: Path
    line: int
    col: int
    path_suffix: str
    message: str


Mutation = Callable[[Path, Path], Expected]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _first(lines: list[str], pattern: str) -> tuple[int, re.Match[str]]:
    for i, line in enumerate(lines):
        m = re.match(pattern, line)
        if m:
            return i, m
    raise LookupError(pattern)


def missing_timeout(mission: Path, root: Path) -> Expected:
    lines = _lines(mission)
    i, m = _first(lines, r"^( +)timeout: \S+\s*$")
    indent = len(m.group(1))
    j = i - 1  # the leaf's kind key: the nearest line above that is less indented
    while len(lines[j]) - len(lines[j].lstrip(" ")) >= indent:
        j -= 1
    kind = re.match(r"^ *(?:- )?(\w+):\s*$", lines[j])
    assert kind is not None, lines[j]
    del lines[i]
    mission.write_text("".join(lines), encoding="utf-8")
    return Expected(
        mission, j + 1, lines[j].index(kind.group(1)) + 1, f".{kind.group(1)}", "missing timeout"
    )


def unknown_pose(mission: Path, root: Path) -> Expected:
    lines = _lines(mission)
    i, m = _first(lines, r"^( +pose: )([a-z_]+)\s*$")
    lines[i] = f"{m.group(1)}no_such_pose\n"
    mission.write_text("".join(lines), encoding="utf-8")
    return Expected(mission, i + 1, len(m.group(1)) + 1, ".pose", "unknown pose 'no_such_pose'")


JOINT_LINE = r"^( +)(" + "|".join(PROFILE.joints) + r"): (-?[0-9.]+)\s*$"


def _joint_target(mission: Path, root: Path) -> tuple[Path, int, re.Match[str]]:
    """The first inline joint target of the mission, else the first of the first pose used."""
    try:
        i, m = _first(_lines(mission), JOINT_LINE)
        return mission, i, m
    except LookupError:
        pass
    _, pose = _first(_lines(mission), r"^ +pose: ([a-z_]+)\s*$")
    for library in sorted((root / "poses").glob("*.yaml")):
        lines = _lines(library)
        try:
            start, _ = _first(lines, rf"^  {pose.group(1)}:\s*$")
        except LookupError:
            continue
        i, m = _first(lines[start:], JOINT_LINE)
        return library, start + i, m
    raise LookupError(pose.group(1))


def wrong_joint(mission: Path, root: Path) -> Expected:
    file, i, m = _joint_target(mission, root)
    lines = _lines(file)
    lines[i] = f"{m.group(1)}left_elbow_yaw: {m.group(3)}\n"
    file.write_text("".join(lines), encoding="utf-8")
    return Expected(file, i + 1, len(m.group(1)) + 1, ".left_elbow_yaw", "unknown joint")


def out_of_limits(mission: Path, root: Path) -> Expected:
    file, i, m = _joint_target(mission, root)
    lines = _lines(file)
    prefix = f"{m.group(1)}{m.group(2)}: "
    lines[i] = f"{prefix}9.5\n"
    file.write_text("".join(lines), encoding="utf-8")
    return Expected(file, i + 1, len(prefix) + 1, f".{m.group(2)}", "9.5 rad is outside")


def include_cycle(mission: Path, root: Path) -> Expected:
    lines = _lines(mission)
    i, m = _first(lines, r"^( +)- \w+:")
    lines.insert(i, f"{m.group(1)}- include: {mission.name}\n")
    mission.write_text("".join(lines), encoding="utf-8")
    col = len(m.group(1)) + len("- include: ") + 1
    return Expected(
        mission, i + 1, col, ".include.file", f"include cycle: {mission.name} -> {mission.name}"
    )


MUTATIONS: dict[str, Mutation] = {
    "missing_timeout": missing_timeout,
    "unknown_pose": unknown_pose,
    "wrong_joint": wrong_joint,
    "out_of_limits": out_of_limits,
    "include_cycle": include_cycle,
}


@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("name", NAMES)
def test_broken_copy_fails_at_the_right_place(tmp_path: Path, name: str, mutation: str) -> None:
    root = tmp_path / "missions"
    shutil.copytree(MISSIONS, root)
    mission = root / f"{name}.yaml"
    expected = MUTATIONS[mutation](mission, root)
    result = MissionLoader(PROFILE, root).check(mission)
    errs = result.errors
    assert len(errs) == 1, "\n".join(map(str, result.diagnostics))
    (d,) = errs
    assert Path(d.where.file).resolve() == expected.file.resolve()
    assert (d.where.line, d.where.col) == (expected.line, expected.col), str(d)
    assert d.path.endswith(expected.path_suffix), str(d)
    assert d.message.startswith(expected.message), str(d)
    # the same error in the CLI's format
    assert str(d).startswith(f"{d.where.file}:{expected.line}:{expected.col}: {d.path}: ")


def test_cycle_through_a_subtree_is_reported_in_the_subtree(tmp_path: Path) -> None:
    root = tmp_path / "missions"
    shutil.copytree(MISSIONS, root)
    sub = root / "subtrees" / "fetch_drink.yaml"
    text = sub.read_text(encoding="utf-8")
    marker = "    children:\n"
    sub.write_text(
        text.replace(marker, marker + "      - include: ../serve_two_tables.yaml\n", 1),
        encoding="utf-8",
    )
    line = (
        sub.read_text(encoding="utf-8")
        .splitlines()
        .index("      - include: ../serve_two_tables.yaml")
        + 1
    )
    result = MissionLoader(PROFILE, root).check(root / "serve_two_tables.yaml")
    (d,) = result.errors
    assert Path(d.where.file).resolve() == sub.resolve()
    assert (d.where.line, d.where.col) == (line, 18)
    assert (
        d.message
        == "include cycle: serve_two_tables.yaml -> fetch_drink.yaml -> serve_two_tables.yaml"
    )
