"""The mission language: YAML missions validated against the robot profile, built as py_trees.

Pipeline: ``yaml_source`` (safe, located YAML) -> ``compile`` (registry-driven walk of
nodes; ``fields`` reads values and substitutes ``params``, ``includes`` follows
subtrees, ``library`` holds poses and gestures) with ``validate`` (leaves against the
robot profile) and ``tree_checks`` (how nodes combine) -> ``model`` (the validated
mission) -> ``build`` (py_trees tree, leaves from the behaviours' builders) -> ``render``.
``registry`` is the closed vocabulary; ``schema`` derives the JSON Schema from it;
``loader`` is the entry point; ``cli`` the validate/schema/render subcommands.
"""

from executive.mission.build import BuildError, build, placeholder_builders
from executive.mission.diagnostics import Diagnostic, Location, MissionError
from executive.mission.loader import LoadResult, MissionLoader, validate_files
from executive.mission.model import Mission
from executive.mission.registry import KINDS, LEAF_KINDS, LeafBuilder, check_builders

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
