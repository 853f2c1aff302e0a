"""Every module imports on its own, whatever was imported before it.

An import cycle only shows when the cycle's modules are imported in one particular order: the
service imports ``executive.robots.atom`` before ``executive.reflex`` and worked, while a
program importing ``executive.reflex`` first failed ("cannot import name 'Measured' from
partially initialized module"), and the whole suite stayed green. Here each module is imported
first, in one child interpreter that forgets every project module between imports (the
generated IDL types stay: they register with cyclonedds once per process).

And the mission language is a ladder, read from the source (every import, those under
``TYPE_CHECKING`` and inside functions too): ``executive.language`` (kinds, fields, values,
the check protocol) < ``behaviours`` (the leaves, which declare their kinds with it) <
``executive.mission`` (registry, compiler, loader, builders, which take the leaves). A rung
never imports one above it, so the two upper rungs cannot form a cycle again.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import importlib, pkgutil, sys, traceback

    import behaviours, executive

    def ours(name):
        return name.split(".")[0] in ("executive", "behaviours") and ".wire.gen" not in name

    names = sorted(
        m.name
        for pkg in (executive, behaviours)
        for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
        if ".wire.gen" not in m.name and not m.name.endswith("__main__")
    )
    failed = 0
    for name in names:
        for loaded in [m for m in sys.modules if ours(m)]:
            del sys.modules[loaded]
        try:
            importlib.import_module(name)
        except Exception:
            failed += 1
            print(f"--- {name}", traceback.format_exc(limit=-3), sep="\\n")
    print("imported", len(names) - failed, "of", len(names))
    """
)


def test_every_module_imports_first() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    words = last.split()
    assert done.returncode == 0 and len(words) == 4 and words[1] == words[3], (
        done.stdout[-4000:] + done.stderr[-2000:]
    )
    assert int(words[3]) > 100, last  # the walk found the project, not an empty package


# each rung, and the packages above it that it must never import
LADDER = {
    "executive/language": ("behaviours", "executive.mission"),
    "behaviours": ("executive.mission",),
}


def _imported(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: a relative import"
            yield from ((node.lineno, f"{node.module}.{a.name}") for a in node.names)


@pytest.mark.parametrize("rung", sorted(LADDER))
def test_the_mission_language_is_a_ladder(rung: str) -> None:
    above = LADDER[rung]
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / rung).rglob("*.py"))
        for line, name in _imported(path)
        if any(name == a or name.startswith(a + ".") for a in above)
    ]
    assert sorted((ROOT / rung).rglob("*.py")), rung  # the rung is where it is said to be
    assert not found, f"{rung} imports from above it ({', '.join(above)}):\n" + "\n".join(found)
