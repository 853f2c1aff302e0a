"""What a leaf kind's own check sees: one leaf's checked fields, and the checker it reports to.

A leaf kind declared beside its behaviour may check its fields against the robot profile
and the libraries (``LeafKind.check``). The behaviours sit below the mission compiler, so
they are handed these two types, not the compiler: ``LeafInput`` (the data) and the
``LeafChecker`` protocol (the profile, the libraries, where problems go). The checker the
compiler runs is ``executive.mission.validate.LeafValidator``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from executive.language.diagnostics import Location
from executive.language.kinds import LeafKind, NodeKind
from executive.language.library import Library
from executive.language.values import Val
from executive.robots.profile import RobotProfile


@dataclass(frozen=True)
class LeafInput:
    """One leaf's checked fields. ``broken`` names fields that were given but invalid
    (already reported), so checks that combine fields stay quiet about them."""

    kind: NodeKind
    vals: Mapping[str, Val]
    broken: frozenset[str]
    where: Location
    path: str

    def value(self, name: str) -> Any:
        """The field's value, else the kind's default for it."""
        if name in self.vals:
            return self.vals[name].value
        f = self.kind.field(name)
        return f.default if f is not None else None

    def leaf_name(self, args: Mapping[str, Any]) -> str:
        """What the leaf is called in messages: its ``name``, else its default name (its
        kind's ``label``)."""
        name = self.value("name")
        if isinstance(name, str):
            return name
        if not isinstance(self.kind, LeafKind):
            raise TypeError(f"{self.kind.name} is not a leaf kind")
        return self.kind.label(args)


class LeafChecker(Protocol):
    """What a kind's own check (``LeafKind.check``) reports to, with the robot profile and
    the libraries of the load it belongs to."""

    @property
    def profile(self) -> RobotProfile: ...

    @property
    def library(self) -> Library: ...

    def error(self, where: Location, path: str, message: str) -> None: ...

    def warning(self, where: Location, path: str, message: str) -> None: ...
