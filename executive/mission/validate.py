"""Semantic checks of leaves against the robot profile and the libraries.

The compiler has already checked each field's type and range; here the fields of one
leaf are checked together and against the robot. Every leaf kind is checked for the
robot capability it ``requires`` (a robot without a base has no ``navigate_to_tag``);
then a kind with checks of its own (``LeafKind.check``, declared beside its behaviour:
joints, limits, selections and speed caps of ``move_joints``/``hand_gesture``, the id of
a ``set_fsm`` state, the map of ``navigate_to_tag``) runs them. The result is the
leaf's ``args``, exactly the keys its kind promises to the builder — normalised (a pose
becomes its joint targets, an FSM name carries its id).

Values that depend on a parameter nobody set (a subtree checked on its own) are
``Unresolved``; checks that need them are skipped, the rest still run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from executive.language.diagnostics import Diagnostics, Location
from executive.language.leaf import LeafInput, LeafKind
from executive.language.library import Library
from executive.mission.registry import KINDS
from executive.seam.profile import RobotProfile


class LeafValidator:
    """Checks leaves of one load; errors go to ``diags``. Kinds' own checks
    (``LeafKind.check``) receive it as their ``executive.language.leaf.LeafChecker``: the
    profile, the libraries and the reporting."""

    def __init__(self, profile: RobotProfile, library: Library, diags: Diagnostics) -> None:
        self.profile = profile
        self.library = library
        self.diags = diags

    def error(self, where: Location, path: str, message: str) -> None:
        self.diags.error(where, path, message)

    def warning(self, where: Location, path: str, message: str) -> None:
        self.diags.warning(where, path, message)

    def check(self, inp: LeafInput) -> dict[str, Any] | None:
        """The leaf's builder args, or None if it has errors (reported)."""
        kind = inp.kind
        if not isinstance(kind, LeafKind):
            raise TypeError(f"{kind.name} is not a leaf kind")
        capable = self._capable(kind, inp)
        if inp.broken:
            return None
        args = (
            kind.check(self, inp)
            if kind.check is not None
            else {name: inp.value(name) for name in kind.args}
        )
        return args if capable else None

    def _capable(self, kind: LeafKind, inp: LeafInput) -> bool:
        """Whether the robot offers the capability the kind needs (reported if not)."""
        have = self.profile.capabilities
        if kind.requires is None or kind.requires in have:
            return True
        self.error(
            inp.where,
            inp.path,
            f"{kind.name} {NEEDS_CAPABILITY} {kind.requires!r} capability; "
            f"{self.profile.robot} (profile {self.profile.name}) has: "
            f"{', '.join(sorted(have)) or 'none'}",
        )
        return False


# the words of a capability refusal: the mission store tells another robot's mission by them
NEEDS_CAPABILITY = "needs the robot's"


def default_name(kind: str, args: Mapping[str, Any]) -> str:
    """What a leaf is called when the file gives no ``name``: what it does, briefly
    (its kind's ``label``)."""
    leaf = KINDS[kind]
    if not isinstance(leaf, LeafKind):
        raise TypeError(f"{kind} is not a leaf kind")
    return leaf.label(args)
