"""The Aurora's environments: one cyclonedds per process, nothing of ours in the vendor's.

The service (``.venv``) keeps cyclonedds 0.10.2 and never imports the wire module (which
loads cyclonedds 11 in ``.venv-aurora``); the vendor's environment holds the vendor's client
and cannot import the project at all, so the vendor peers are the vendor's code only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.aurora.harness import AURORA_PY, ROOT, VENDOR_PY, env, require


def _run(python: str, code: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [python, "-c", code], capture_output=True, text=True, env=env(), cwd=cwd, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_service_side_never_loads_the_wire_module() -> None:
    code = (
        "import importlib, importlib.util, sys\n"
        "import executive.robots.aurora\n"
        "for name in ('interface', 'settings', 'ipc'):\n"
        "    if importlib.util.find_spec(f'executive.robots.aurora.{name}'):\n"
        "        importlib.import_module(f'executive.robots.aurora.{name}')\n"
        "from executive.seam.registry import SPECS\n"
        "import cyclonedds\n"
        "bad = [m for m in sys.modules if m.startswith(('executive.robots.aurora.wire',\n"
        "       'executive.robots.aurora.sim.node', 'executive.robots.aurora.bridge'))]\n"
        "print(cyclonedds.__version__ if hasattr(cyclonedds, '__version__') else '?', bad)\n"
    )
    out = _run(sys.executable, code)
    assert out.endswith("[]"), f"the service side imported the Aurora's wire: {out}"


def test_the_aurora_env_has_cyclonedds_11_and_the_wire() -> None:
    code = (
        "import importlib.metadata as m\n"
        "import executive.robots.aurora.wire.node, executive.robots.aurora.sim.node\n"
        "print(m.version('cyclonedds'))\n"
    )
    assert _run(str(require(AURORA_PY)), code) == "11.0.1"


def test_the_vendor_env_has_the_vendor_client_and_nothing_of_ours() -> None:
    code = (
        "import importlib.metadata as m, importlib.util\n"
        "import fastdds, fourier_aurora_client\n"
        "print(m.version('fourier-aurora-client'), importlib.util.find_spec('executive'))\n"
    )
    # from outside the checkout: `python -c` puts the working directory on the path (the
    # vendor peers run as scripts, whose own folder is on it instead)
    assert _run(str(require(VENDOR_PY)), code, cwd=Path("/")) == "0.1.8 None"
