"""Places on the blackboard: named points a ``reach`` goes to, handed over at run time.

A place known only while a mission runs (a cup a camera found, a table at a site's own
height) is written under ``/places/<name>`` (``cup``) as a ``Place``: three finite
numbers in metres in the robot's base frame, who set it and when. A leaf that finds
one registers WRITE access on the key and calls ``write``; an operator sets one with the
signed request ``atom-executive set NAME [x, y, z]`` (``executive.service.requests``),
which the tick thread applies. ``reach: {at: cup}`` reads it when it starts.

Places belong to a run: the executive clears them when a run starts and when it ends
(``clear``), so a reach never goes to where the cup was during another mission, and
``set`` is refused while no mission runs.
"""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass

import py_trees

from executive.language.kinds import PLACE_NAME
from executive.language.values import point

NAMESPACE = "/places"


@dataclass(frozen=True)
class Place:
    """A point (m, the robot's base frame), who set it and when (monotonic s)."""

    at: tuple[float, float, float]
    by: str
    when: float


def key(name: str) -> str:
    """The blackboard key of place ``name`` (interned: py_trees interns what it sets)."""
    return sys.intern(f"{NAMESPACE}/{name}")


def check(name: object, value: object) -> tuple[tuple[float, float, float] | None, str]:
    """(the point, "") for a valid place name and value, else (None, why not), the why
    naming the request's field (``args.name``, ``args.at``) that is wrong."""
    if not isinstance(name, str) or not re.fullmatch(PLACE_NAME, name):
        return None, (
            f"args.name: place name {name!r}: lower_case letters, digits and _, "
            "starting with a letter"
        )
    at, problem = point(value)
    if problem is not None or at is None:
        return None, f"args.at: place {name}: {problem}"
    return at, ""


def write(name: str, at: tuple[float, float, float], by: str) -> Place:
    """Set place ``name`` (checked with ``check`` first); on the tick thread."""
    if not all(math.isfinite(v) for v in at):
        raise ValueError(f"place {name}: not finite: {at}")
    place = Place(at, by, time.monotonic())
    py_trees.blackboard.Blackboard.set(key(name), place)
    return place


def read(client: py_trees.blackboard.Client, name: str) -> Place | None:
    """Place ``name`` as ``client`` (with READ access on ``key(name)``) sees it; None: unset."""
    try:
        value = client.get(key(name))
    except KeyError:
        return None
    return value if isinstance(value, Place) else None


def names() -> list[str]:
    """The places set now."""
    prefix = NAMESPACE + "/"
    return sorted(
        k.removeprefix(prefix)
        for k in py_trees.blackboard.Blackboard.storage
        if k.startswith(prefix)
    )


def clear() -> None:
    """Forget every place (a run starts or ends)."""
    for name in names():
        py_trees.blackboard.Blackboard.unset(key(name))
