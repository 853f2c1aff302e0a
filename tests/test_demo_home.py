"""Each robot's demo is ``executive/demos/<robot>.py``; the dispatch is robot-neutral.

``make demo [PROFILE=...]`` runs ``python -m executive.demos``, which picks the
profile's robot and runs ``executive/demos/<robot>.py``'s ``main(profile)``. The demos
drive the service and the operator's tools, so they live above both, not in the robots'
folders (issue 33). Read from the source, so a robot's import never has to load here;
``tests/integration/test_demo.py`` runs every demo for real. Every robot that has a
simulator has its demo; one that has none yet (a robot made from docs/robot-template) has
no demo to run (``python -m executive.demos`` says so).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from executive.seam.registry import SPECS

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ROOT / "executive" / "demos"


def imports(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("module", [DEMOS / "__main__.py", DEMOS / "kit.py"])
def test_the_demo_dispatch_and_kit_import_no_robot(module: Path) -> None:
    robots = sorted(
        m
        for m in imports(module)
        for name in SPECS
        if m == f"executive.robots.{name}" or m.startswith(f"executive.robots.{name}.")
    )
    assert not robots, f"{module.relative_to(ROOT)} imports {robots}: robot code goes to its robot"


@pytest.mark.parametrize("robot", sorted(name for name, spec in SPECS.items() if spec.sim))
def test_every_robot_with_a_simulator_has_its_demo_with_main_of_a_profile(robot: str) -> None:
    """A demo runs the robot's mission against its simulator: a robot without one (the
    template's, docs/robot-template) has none yet, and ``make demo`` says so."""
    path = DEMOS / f"{robot}.py"
    assert path.is_file(), f"{robot}: no {path.relative_to(ROOT)}"
    tree = ast.parse(path.read_text(), str(path))
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains and mains[0].args.args[0].arg == "profile", f"{robot}: main(profile) expected"
