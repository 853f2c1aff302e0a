"""Every module imports on its own, whatever was imported before it.

An import cycle only shows when the cycle's modules are imported in one particular order: the
service imports ``executive.robots.atom`` before ``executive.reflex`` and worked, while a
program importing ``executive.reflex`` first failed ("cannot import name 'Measured' from
partially initialized module"), and the whole suite stayed green. Here each module is imported
first, in one child interpreter that forgets every project module between imports (the
generated IDL types stay: they register with cyclonedds once per process).

That the packages form a ladder (no loop at all) is ``tests/test_ladder.py``'s.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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
