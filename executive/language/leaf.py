"""What a leaf kind is: ``LeafKind``, how it is built, and what its own check sees.

A leaf kind is declared beside its behaviour (``behaviours/``) and may check its fields
against the robot profile and the libraries (``LeafKind.check``). The behaviours sit below the mission compiler, so
they are handed these two types, not the compiler: ``LeafInput`` (the data) and the
``LeafChecker`` protocol (the profile, the libraries, where problems go). The checker the
compiler runs is ``executive.mission.validate.LeafValidator``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from executive.language.diagnostics import Location
from executive.language.kinds import Category, NodeKind
from executive.language.library import Library
from executive.language.values import Val
from executive.seam.profile import RobotProfile

if TYPE_CHECKING:
    import py_trees

    from executive.language.model import Leaf


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


LeafBuilder = Callable[["Leaf"], "py_trees.behaviour.Behaviour"]
# A leaf kind's own checks against the robot profile and the libraries, run after every
# field's type and range passed: the builder args (exactly ``LeafKind.args``), or None
# once the problems are reported through the checker.
LeafCheck = Callable[["LeafChecker", "LeafInput"], "dict[str, Any] | None"]


@dataclass(frozen=True, kw_only=True)
class LeafKind(NodeKind):
    """A leaf kind, declared beside its behaviour.

    - ``requires``: the robot capability it needs (``executive.seam.ports.CAPABILITIES``),
      None if it needs none; validation refuses it on a robot without it.
    - ``build``: the validated ``model.Leaf`` (``name``, and ``args`` with exactly the keys
      ``args``) -> the behaviour; the constructor does no I/O.
    - ``label``: the leaf's name when the file gives none, from its args.
    - ``check``: checks of its own (``LeafCheck``); without one, the args are the fields'
      values or defaults.
    - ``drives``: what it takes hold of, which a parallel sibling must not also drive;
      ``moves_joints``: it drives the joints of ``args["targets"]`` (pacing follows them,
      and they want upper-body control first).
    """

    category: Category = field(default=Category.LEAF, init=False)
    requires: str | None
    build: LeafBuilder
    label: Callable[[Mapping[str, Any]], str]
    check: LeafCheck | None = None
    drives: tuple[str, ...] = ()
    moves_joints: bool = False
