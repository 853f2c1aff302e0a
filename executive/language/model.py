"""The validated mission: what the loader produces and the tree builder consumes.

Everything here is immutable and already checked against the robot profile and the
pose/gesture libraries: targets are joint-name -> rad maps inside the limits, FSM names
carry their ids, parameters are substituted. Building a py_trees tree from it needs no
further lookups and no I/O.

A subtree file validated on its own may have parameters without values; those fields
hold ``Unresolved`` and the document is not ``complete`` (it can be rendered, not run).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from executive.language.diagnostics import Location
from executive.language.kinds import FieldType
from executive.seam.body import EMPTY_SCENE, Scene


@dataclass(frozen=True, slots=True)
class Unresolved:
    """The value of a parameter nobody gave a value (a subtree validated on its own)."""

    param: str

    def __str__(self) -> str:
        return "${" + self.param + "}"


def frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only view of a copy, so a validated model cannot be edited behind the loader."""
    return MappingProxyType(dict(mapping))


def is_complete(value: Any) -> bool:
    """Whether a value holds no ``Unresolved`` anywhere inside."""
    if isinstance(value, Unresolved):
        return False
    if isinstance(value, Mapping):
        return all(is_complete(v) for v in value.values())
    if isinstance(value, tuple | list):
        return all(is_complete(v) for v in value)
    return True


@dataclass(frozen=True, kw_only=True)
class Node:
    """A node of the tree. ``where`` is its kind key in the file, ``path`` its field path.
    ``written``: the fields whose value involved ``${`` as the file writes them (``name:
    Wave ${waves} times``, ``times: ${waves}``; an include's values as ``with.NAME``), so
    a translation can keep the parameters (``executive.mission.btcpp``); how a value is
    spelled, not what it is, so nodes compare without it."""

    name: str
    where: Location
    path: str
    written: Mapping[str, str] = field(default_factory=lambda: frozen({}), compare=False)

    def children(self) -> tuple[Node, ...]:
        return ()


@dataclass(frozen=True, kw_only=True)
class Leaf(Node):
    """A leaf: ``kind`` names a registry leaf kind, ``args`` holds exactly its ``args`` keys.
    ``spots`` says where each field given in the file was written (checks that look at the
    whole tree, such as ``pacing``, point at the field, not just at the leaf); ``fields``
    the values of those fields, parameters substituted, as the file states them (``pose:
    home``, not the pose's joint targets): what a translation to another tree language
    writes back (``executive.mission.btcpp``)."""

    kind: str
    args: Mapping[str, Any]
    spots: Mapping[str, Location] = field(default_factory=lambda: frozen({}))
    fields: Mapping[str, Any] = field(default_factory=lambda: frozen({}))


@dataclass(frozen=True, kw_only=True)
class Composite(Node):
    """sequence, fallback or parallel. ``policy`` is set for parallel only."""

    kind: str
    memory: bool
    policy: str | None
    nodes: tuple[Node, ...]

    def children(self) -> tuple[Node, ...]:
        return self.nodes


@dataclass(frozen=True, kw_only=True)
class Decorator(Node):
    """retry (attempts), repeat (times), timeout (seconds), inverter, delay (seconds)."""

    kind: str
    child: Node
    args: Mapping[str, Any]

    def children(self) -> tuple[Node, ...]:
        return (self.child,)


@dataclass(frozen=True, kw_only=True)
class Guard(Node):
    """An eternal guard: ``condition`` is re-checked before every tick of ``child``."""

    condition: Node
    child: Node

    def children(self) -> tuple[Node, ...]:
        return (self.condition, self.child)


@dataclass(frozen=True, kw_only=True)
class Subtree(Node):
    """An included file's tree, with the parameter values it was included with."""

    file: str
    document: str
    args: Mapping[str, Any]
    root: Node

    def children(self) -> tuple[Node, ...]:
        return (self.root,)


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class ParamDecl:
    """A declared mission parameter (``where`` is its name in ``params:``). ``minimum`` and
    ``maximum`` only for number and integer; an invalid default is ``Unresolved``."""

    name: str
    type: FieldType
    where: Location
    default: Any = NO_DEFAULT
    description: str = ""
    minimum: float | None = None
    maximum: float | None = None
    default_where: Location | None = None  # where the default was written

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT


@dataclass(frozen=True)
class Mission:
    """A validated mission (``kind`` "mission") or subtree file (``kind`` "subtree")."""

    name: str
    kind: str
    file: str
    where: Location
    description: str
    params: Mapping[str, ParamDecl]
    args: Mapping[str, Any]  # the parameter values in force
    root: Node
    includes: tuple[str, ...] = field(default=())  # every file included, directly or not
    scene: Scene = EMPTY_SCENE  # obstacles its moves are checked against (body_checks)

    @property
    def complete(self) -> bool:
        """No unresolved parameter anywhere: the mission can be built and run."""
        return is_complete(self.args) and all(_node_complete(n) for n in walk(self.root))

    def leaves(self) -> Iterator[Leaf]:
        return (n for n in walk(self.root) if isinstance(n, Leaf))

    def node_count(self) -> int:
        return sum(1 for _ in walk(self.root))


def _node_complete(node: Node) -> bool:
    if isinstance(node, Leaf | Decorator):
        return is_complete(node.args)
    return True


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, depth first, parents before children (iterative)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children()))
