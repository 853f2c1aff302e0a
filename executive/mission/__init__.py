"""The mission language's compiler: YAML missions validated against the robot profile, built as py_trees.

Pipeline: ``yaml_source`` (safe, located YAML) -> ``compile`` (registry-driven walk of
nodes; ``fields`` reads values and substitutes ``params``, ``includes`` follows
subtrees, ``library`` holds poses and gestures) with ``validate`` (leaves against the
robot profile) and ``tree_checks`` (how nodes combine) -> ``model`` (the validated
mission) -> ``build`` (py_trees tree, leaves from ``builders``) -> ``render``.
``registry`` is the closed vocabulary (``kinds`` the types it is declared with; leaf
kinds are declared beside their behaviours); ``schema`` derives the JSON Schema from
it; ``loader`` is the entry point; ``cli`` the validate/schema/render subcommands.

The primitives (``diagnostics``, ``yaml_source``, ``kinds``, ``values``, ``model``,
``library``, ``check``) are ``executive.language``, below the behaviours; this package
is above them (the registry imports the leaves), so it imports them all without a cycle.
"""

from __future__ import annotations

from executive.mission.build import BuildError, build, placeholder_builders
from executive.mission.loader import LoadResult, MissionLoader, validate_files
from executive.mission.registry import KINDS, LEAF_KINDS, check_builders

__all__ = [
    "KINDS",
    "LEAF_KINDS",
    "BuildError",
    "LoadResult",
    "MissionLoader",
    "build",
    "check_builders",
    "placeholder_builders",
    "validate_files",
]
