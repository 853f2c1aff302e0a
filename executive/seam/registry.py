"""Which robots there are, and how to open one: robots are found, not listed.

Each folder ``executive/robots/<name>/`` with a ``robot.py`` is a robot: its ``ROBOT`` is
its ``RobotSpec`` (``executive.seam.spec``). A robot packaged elsewhere names its spec in
the ``atom_executive.robots`` entry point group (``"pkg.robot:ROBOT"``). The specs are plain
data; a robot's adapter, simulator and wire are imported only when asked for, by the
references its spec gives. Adding a robot is one folder and one profile
(docs/robots.md, "Adding a robot"); nothing above the seam names one (``tests/test_seam.py``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from executive.seam.spec import RobotSpec

if TYPE_CHECKING:
    from executive.seam.ports import RobotAdapter
    from executive.seam.profile import RobotProfile

__all__ = [
    "SPECS",
    "RobotSpec",
    "check_interface",
    "check_options",
    "find",
    "open_adapter",
    "part",
    "spec",
]

GROUP = "atom_executive.robots"  # the entry point group of robots packaged elsewhere
ROBOTS = Path(__file__).resolve().parents[1] / "robots"


class RobotError(RuntimeError):
    """A robot's declaration that cannot be used, naming where it is."""


def find() -> dict[str, RobotSpec]:
    """Every robot: the folders of ``executive/robots`` with a ``robot.py``, then the
    entry points of ``atom_executive.robots``; RobotError naming a broken or doubled one."""
    found: dict[str, RobotSpec] = {}
    refs = [
        (f"executive.robots.{p.parent.name}.robot:ROBOT", f"executive.robots.{p.parent.name}")
        for p in sorted(ROBOTS.glob("*/robot.py"))
    ]
    refs += [(ep.value, ep.value.split(":")[0].rpartition(".")[0]) for ep in _entry_points()]
    for ref, package in refs:
        try:
            robot = _load(ref)
        except Exception as e:
            raise RobotError(f"robot {ref}: {type(e).__name__}: {e}") from e
        if not isinstance(robot, RobotSpec):
            raise RobotError(f"robot {ref}: not a RobotSpec but {type(robot).__name__}")
        if robot.name in found:
            raise RobotError(
                f"robot {robot.name!r} twice: {found[robot.name].package} and {package}"
            )
        found[robot.name] = replace(robot, package=robot.package or package)
    return found


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=GROUP))


def _load(ref: str, package: str = "") -> Any:
    """``"module:attribute"`` (a leading "." is relative to ``package``) imported."""
    module, _, attribute = ref.partition(":")
    if module.startswith("."):
        module = package + module
    value: Any = importlib.import_module(module)
    for name in filter(None, attribute.split(".")):
        value = getattr(value, name)
    return value


def part(robot: str, what: str) -> Callable[..., Any] | None:
    """A part of robot ``robot`` by its spec's field (``"adapter"``, ``"sim"``,
    ``"wire_words"``, ...), imported; None where the spec names none."""
    s = spec(robot)
    ref = getattr(s, what)
    if not ref:
        return None
    found: Callable[..., Any] = _load(ref, s.package)
    return found


SPECS: dict[str, RobotSpec] = find()


def spec(name: str) -> RobotSpec:
    """The spec of robot kind ``name``; KeyError naming the known ones."""
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"unknown robot {name!r}; known: {', '.join(sorted(SPECS))}") from None


def open_adapter(profile: RobotProfile, **options: Any) -> RobotAdapter:
    """Open the robot of ``profile`` (its spec's ``adapter``: ``open(profile, **options)``)."""
    opener = part(profile.robot, "adapter")
    if opener is None:
        raise RobotError(f"robot {profile.robot!r} has no adapter")
    adapter: RobotAdapter = opener(profile, **options)
    return adapter


def check_interface(robot: str, text: str, profile: RobotProfile | None = None) -> str | None:
    """Why ``text`` is not an interface variant of robot kind ``robot`` (None if it is), or,
    given the ``profile``, why that variant cannot give what the profile offers (an adapter
    whose ``check_interface`` takes a ``profile``: the Adam's seed variant has no battery)."""
    check = part(robot, "check_interface")
    if check is None:
        return None  # it names no variants: any text is its interface's name
    takes_profile = "profile" in inspect.signature(check).parameters
    why: str | None = check(text, profile=profile) if takes_profile else check(text)
    return why


def check_options(robot: str, options: Mapping[str, Any], profile: Mapping[str, Any]) -> list[str]:
    """Problems with a profile's options for ``robot`` (its adapter's ``check_options``,
    each ``key: message`` relative to the robot's mapping), given the whole profile."""
    check = part(robot, "check_options")
    if check is None:
        return [f"{key}: {robot} takes no options" for key in options]
    problems: list[str] = check(options, profile)
    return problems
