"""The packages import each other as a ladder: each rung imports only the rungs below it.

Every import is read from the source with ``ast`` (those under ``TYPE_CHECKING`` and inside
functions too), so a loop cannot hide in a lazy import. The order is written once, here
(docs/architecture.md says it in words). A module named by a string (``importlib``: the
registry opening a robot, the demos' dispatch) is no edge: the seam names no robot.

Under ``executive/robots``, the shared kits (``native``, ``simkit``) are below the adapters,
and an adapter imports no other adapter: a robot is one folder.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# bottom first: a rung may import any rung before it, none after it
LADDER = (
    "executive",  # the package's face: its version, nothing else
    "executive.text",
    "executive.clock",
    "executive.suggest",
    "executive.logs",
    "executive.seam",  # what a robot is: ports, profile, body, frames, the registry
    "executive.reach",  # inverse kinematics and clearances on the body (mink)
    "executive.wire",  # codecs, participants, readers: robot-neutral
    "executive.motion",  # trajectories and the joint stream
    "executive.robots",  # the adapters, each with its wire and its simulator
    "executive.language",  # the mission language's kinds and values
    "behaviours",  # the leaves
    "executive.mission",  # missions: loader, compiler, validation, tools
    "executive.core",  # the tick loop, the tree, the safety monitor
    "executive.records",  # run records, MCAP, the live view
    "executive.service",  # the systemd service: requests, status, fleet, recovery
    "executive.operator",  # the operator's commands
    "executive.cli",  # atom-executive
    "executive.harness",  # processes for tests, demos and benchmarks
    "executive.scenario",  # mission tests: simulated time, or the real processes (harness)
    "executive.demos",  # make demo
)
# inside executive.robots: the kits, then the adapters, which never import one another
KITS = ("executive.robots.native", "executive.robots.simkit")


def rung(module: str) -> str:
    """The rung a module belongs to: the longest ladder name it is or lies under."""
    best = ""
    for name in LADDER:
        if (module == name or module.startswith(name + ".")) and len(name) > len(best):
            best = name
    return best


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """Each module ``path`` imports, with its line (``from a import b``: ``a.b`` and ``a``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, f"{path}:{node.lineno}: a relative import"
            yield node.lineno, node.module
            yield from ((node.lineno, f"{node.module}.{a.name}") for a in node.names)


SOURCES = sorted(
    p
    for top in ("executive", "behaviours")
    for p in (ROOT / top).rglob("*.py")
    if "wire/gen" not in p.as_posix()
)


def test_every_package_is_on_the_ladder() -> None:
    """A new package is placed, not left out: every module's rung is a named one."""
    unplaced = sorted({module_of(p) for p in SOURCES if rung(module_of(p)) in ("", "executive")})
    assert unplaced == ["executive"], f"not on the ladder (add them to LADDER): {unplaced}"
    assert len(SOURCES) > 150, "the walk found the project"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_imports_from_a_rung_above_it(path: Path) -> None:
    here = rung(module_of(path))
    up = [
        f"{path.relative_to(ROOT)}:{line}: {name} ({rung(name)} is above {here})"
        for line, name in imported(path)
        if rung(name) and LADDER.index(rung(name)) > LADDER.index(here)
    ]
    assert not up, "\n".join(up)


ADAPTERS = sorted(
    p.name
    for p in (ROOT / "executive" / "robots").iterdir()
    if (p / "__init__.py").is_file() and f"executive.robots.{p.name}" not in KITS
)


@pytest.mark.parametrize("robot", ADAPTERS)
def test_a_robot_is_one_folder(robot: str) -> None:
    """An adapter imports the kits and the rungs below, never another adapter; the kits
    import no adapter."""
    mine = f"executive.robots.{robot}"
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "executive" / "robots" / robot).rglob("*.py"))
        for line, name in imported(path)
        if name.startswith("executive.robots.")
        and not name.startswith((mine + ".", *(k + "." for k in KITS)))
        and name not in (mine, *KITS)
    ]
    assert not bad, "\n".join(bad)
    assert len(ADAPTERS) >= 4, ADAPTERS


@pytest.mark.parametrize("kit", KITS)
def test_the_kits_import_no_adapter(kit: str) -> None:
    folder = ROOT.joinpath(*kit.split("."))
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted(folder.rglob("*.py"))
        for line, name in imported(path)
        if any(name.startswith(f"executive.robots.{a}") for a in ADAPTERS)
    ]
    assert not bad, "\n".join(bad)
