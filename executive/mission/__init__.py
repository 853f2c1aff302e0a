"""The mission language: YAML missions validated against the robot profile, built as py_trees.

Pipeline: ``yaml_source`` (safe, located YAML) -> ``compile`` (registry-driven walk of
nodes; ``fields`` reads values and substitutes ``params``, ``includes`` follows
subtrees, ``library`` holds poses and gestures) with ``validate`` (leaves against the
robot profile) and ``tree_checks`` (how nodes combine) -> ``model`` (the validated
mission) -> ``build`` (py_trees tree, leaves from the behaviours' builders) -> ``render``.
``registry`` is the closed vocabulary (``kinds`` the types it is declared with; leaf
kinds are declared beside their behaviours); ``schema`` derives the JSON Schema from
it; ``loader`` is the entry point; ``cli`` the validate/schema/render subcommands.

The registry imports the behaviours, and they import ``kinds`` and the modules it rests
on; so this package imports the registry (and the loader, which uses it) only when one
of its names is first asked for, or a behaviour imported first would find it half made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from executive.mission.build import BuildError, build, placeholder_builders
from executive.mission.diagnostics import Diagnostic, Location, MissionError
from executive.mission.kinds import LeafBuilder
from executive.mission.model import Mission

if TYPE_CHECKING:
    from executive.mission.loader import LoadResult, MissionLoader, validate_files
    from executive.mission.registry import KINDS, LEAF_KINDS, check_builders

_LAZY = {
    "LoadResult": "loader",
    "MissionLoader": "loader",
    "validate_files": "loader",
    "KINDS": "registry",
    "LEAF_KINDS": "registry",
    "check_builders": "registry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "KINDS",
    "LEAF_KINDS",
    "BuildError",
    "Diagnostic",
    "LeafBuilder",
    "LoadResult",
    "Location",
    "Mission",
    "MissionError",
    "MissionLoader",
    "build",
    "check_builders",
    "placeholder_builders",
    "validate_files",
]
