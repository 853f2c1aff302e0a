"""``atom-executive sim``: run the simulated Atom (placeholder until the sim lands)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sim", help="run the simulated Atom on DDS")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError
