"""``atom-executive sim --profile aurora``: the simulated Aurora runs in .venv-aurora
(cyclonedds 11, as the robot's wire needs), so from the service's environment this replaces
the process with that interpreter running ``executive.robots.aurora.sim`` (its options as
given, ``--profile P`` too: the body comes from it); ``ATOM_AURORA_PYTHON`` names another
interpreter."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    python = Path(os.environ.get("ATOM_AURORA_PYTHON") or REPO / ".venv-aurora" / "bin" / "python")
    if not python.exists():
        print(  # noqa: T201 - CLI output
            f"atom-executive: the simulated Aurora runs in {python}, which is missing "
            "(make aurora-env)",
            file=sys.stderr,
        )
        return 2
    os.execv(python, [str(python), "-m", "executive.robots.aurora.sim", *args])  # noqa: S606 - no shell: argv as given
    return 0  # (not reached)
