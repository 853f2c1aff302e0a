"""The parts of ``make bench`` (``python -m bench.run``), a module each, each behind a ``Part``.

A part's module measures one thing and runs alone (``python -m bench.parts.estop -h``); its
``PART`` is what ``bench.run`` loops over: a name, ``run(options, earlier)`` (the options
of the run, the results of the parts before it) giving the part's result, its table
(``report``), its rows of the summary with their verdicts (``rows``) and, for some, its
plots (``plot``). Every part has three sizes (``options.size``): ``full`` (the figures of
``docs/benchmarks.md``), ``quick`` (shortened, to check the harness) and ``smallest``
(seconds and a few events: each part's rows and verdict keys, figures that mean nothing).

To add a part: a module here with its measurement and its ``PART``, and the module in
``bench.run.PARTS``, in the order the parts run.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

SIZES = ("full", "quick", "smallest")
T = TypeVar("T")


@dataclass(frozen=True)
class Part:
    """One part of ``make bench``."""

    name: str
    run: Callable[[argparse.Namespace, Mapping[str, Any]], dict[str, Any]]
    report: Callable[[dict[str, Any]], str]
    rows: Callable[
        [dict[str, Any]], list[list[str]]
    ]  # benchmark, condition, median, p99, target, verdict
    plot: Callable[[dict[str, Any], Path], list[Path]] | None = None


def options(size: str = "full", **given: Any) -> argparse.Namespace:
    """The options ``bench.run`` gives every part: the size, and the counts given on its
    command line (None: the size's)."""
    if size not in SIZES:
        raise ValueError(f"size {size!r}: one of {', '.join(SIZES)}")
    fields = {"events": None, "c_events": None, "grx_events": None, "runs": None}
    unknown = set(given) - set(fields)
    if unknown:
        raise ValueError(f"unknown options: {', '.join(sorted(unknown))}")
    return argparse.Namespace(size=size, **(fields | given))


def sized(options: argparse.Namespace, full: T, quick: T, smallest: T) -> T:
    """What a part runs at the size of ``options``."""
    return {"full": full, "quick": quick, "smallest": smallest}[options.size]
