"""Checkpoints in the model: where they may sit, and the mission that goes on from one.

A ``checkpoint`` leaf (``behaviours/actions/checkpoint.py``) says "after a crash, the mission
may go on from here". That is only defined where the tree runs its nodes once each, in
order: so every ancestor of a checkpoint, up to the root, must be a ``sequence`` with
``memory: true`` (or an ``include``, which is its file's tree in place). Inside a
fallback, a parallel, a reactive sequence or a decorator (a retry, a repeat, a timeout)
what "the rest" is depends on what ran before, which a restart has forgotten. ``check``
refuses such a checkpoint naming the file, line and field, and the ancestor in the way;
names must be unique in the mission (recovery finds a checkpoint by its name).

``resume_at`` is the mission recovery runs (``atom-executive recover RUN_ID``): every node
up to and including the checkpoint is skipped (each ancestor sequence starts at the child
holding the checkpoint), and the checkpoint becomes ``sequence [recover, checkpoint]``: its
``recover`` subtree first (take back control and the FSM a restart released), then the
checkpoint itself, recorded again for the new run (a second crash goes on from it too).
Moves after it start from the measured pose, as every move does.

``check`` also runs the mission's whole-tree checks on each resumed mission (control order,
pacing: a ``recover`` subtree starts with the joints anywhere, so its first move must be
paced, and a timed move after the checkpoint must be reachable from where ``recover``
leaves the joints), reporting each as "recovered from checkpoint 'X': ...", and the body
checks on each ``recover`` subtree.

``reaches`` lists the moves of a tree to named poses and gestures (the joints each moves
there), and ``library_record`` the library entries a mission moves to, as its run's record
keeps them: a pose edited after a crash moves the recovered run to where the crashed one
never went, so recovery compares what the recovered part reaches with what the run had
(``executive/service/recover.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from executive.language.diagnostics import Diagnostics, Location
from executive.language.library import Library
from executive.language.model import Composite, Leaf, Mission, Node, Subtree, walk
from executive.mission import body_checks, pacing, tree_checks
from executive.seam.profile import RobotProfile

KIND = "checkpoint"


def chain(root: Node, target: Node) -> list[Node] | None:
    """The nodes from ``root`` down to ``target`` (both included), or None."""
    stack: list[tuple[Node, list[Node]]] = [(root, [root])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        stack.extend((c, [*path, c]) for c in reversed(node.children()))
    return None


def find(mission: Mission, name: str) -> Leaf | None:
    """The checkpoint named ``name`` in ``mission`` (names are unique), or None."""
    for node in walk(mission.root):
        if isinstance(node, Leaf) and node.kind == KIND and node.name == name:
            return node
    return None


def names(mission: Mission) -> list[str]:
    return [n.name for n in walk(mission.root) if isinstance(n, Leaf) and n.kind == KIND]


def recover_of(leaf: Leaf) -> Node | None:
    recover = leaf.args.get("recover")
    return recover if isinstance(recover, Node) else None


def _in_the_way(ancestors: list[Node]) -> Node | None:
    """The first ancestor (from the root) that is neither a memory sequence nor an include."""
    for node in ancestors:
        if isinstance(node, Subtree):
            continue
        if isinstance(node, Composite) and node.kind == "sequence" and node.memory:
            continue
        return node
    return None


def _what(node: Node) -> str:
    if isinstance(node, Composite):
        kind = (
            node.kind
            if node.kind == "parallel" or node.memory
            else f"{node.kind} with memory: false"
        )
        return f"a {kind}"
    kind = getattr(node, "kind", type(node).__name__.lower())
    return f"a {kind}"


def _line(where: Location, here: Location) -> str:
    """``line 4``, or ``subtrees/x.yaml line 4`` when in another file than ``here``."""
    return f"line {where.line}" if where.file == here.file else f"{where.file} line {where.line}"


def check(mission: Mission, profile: RobotProfile, library: Library, diags: Diagnostics) -> None:
    """Report every checkpoint that recovery could not go on from (see the module)."""
    seen: dict[str, Location] = {}
    for leaf in (n for n in walk(mission.root) if isinstance(n, Leaf) and n.kind == KIND):
        path = chain(mission.root, leaf)
        assert path is not None
        blocker = _in_the_way(path[:-1])
        if blocker is not None:
            diags.error(
                leaf.where,
                leaf.path,
                f"a checkpoint must sit in sequences with memory: true all the way up to the "
                f"root; here it is inside {_what(blocker)} ({blocker.name!r}, "
                f"{_line(blocker.where, leaf.where)}), where 'going on from here' is not defined",
            )
            continue
        if leaf.name in seen:
            diags.error(
                leaf.where,
                f"{leaf.path}.name",
                f"checkpoint {leaf.name!r} is declared twice (first on "
                f"{_line(seen[leaf.name], leaf.where)}): "
                "recovery finds a checkpoint by its name",
            )
            continue
        seen[leaf.name] = leaf.where
        recover = recover_of(leaf)
        if recover is not None:
            for inner in walk(recover):
                if isinstance(inner, Leaf) and inner.kind == KIND:
                    diags.error(
                        inner.where, inner.path, "a checkpoint's recover subtree cannot hold one"
                    )
            body_checks.check(recover, mission.where, profile, library, mission.scene, diags)
        _check_resumed(mission, leaf, profile, diags)


def _check_resumed(mission: Mission, leaf: Leaf, profile: RobotProfile, diags: Diagnostics) -> None:
    """The whole-tree checks of the mission recovery would run from ``leaf``."""
    resumed = resume_at(mission, leaf)
    scratch = Diagnostics()
    if "control" in profile.capabilities:
        tree_checks.check_control_order(resumed.root, scratch)
    pacing.check(resumed.root, profile, scratch)
    for d in scratch.items():
        report = diags.error if d.is_error else diags.warning
        report(d.where, d.path, f"recovered from checkpoint {leaf.name!r}: {d.message}")


def resume_at(mission: Mission, checkpoint: Leaf | str) -> Mission:
    """``mission`` as recovery runs it from ``checkpoint`` (a leaf of it, or its name):
    raises ``KeyError`` if there is no such checkpoint, ``ValueError`` if it does not sit on
    a chain of memory sequences (``check`` refuses those)."""
    leaf = find(mission, checkpoint) if isinstance(checkpoint, str) else checkpoint
    if leaf is None:
        raise KeyError(f"{mission.name} has no checkpoint {checkpoint!r}")
    path = chain(mission.root, leaf)
    if path is None:
        raise KeyError(f"{leaf.path} is not a node of {mission.name}")
    if _in_the_way(path[:-1]) is not None:
        raise ValueError(f"checkpoint {leaf.name!r} is not on a chain of memory sequences")
    recover = recover_of(leaf)
    current: Node = Composite(
        name=f"Recover from {leaf.name}",
        where=leaf.where,
        path=f"{leaf.path}.recover" if recover is not None else leaf.path,
        kind="sequence",
        memory=True,
        policy=None,
        nodes=(recover, leaf) if recover is not None else (leaf,),
    )
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:]), strict=True):
        if isinstance(parent, Subtree):
            current = dataclasses.replace(parent, root=current)
            continue
        assert isinstance(parent, Composite)
        i = next(i for i, c in enumerate(parent.nodes) if c is child)
        current = dataclasses.replace(parent, nodes=(current, *parent.nodes[i + 1 :]))
    return dataclasses.replace(mission, root=current)


# a leaf's field that names a library entry, and the library's table of such entries
NAMED = (("pose", "poses"), ("gesture", "gestures"))


@dataclass(frozen=True)
class Reach:
    """A leaf that moves to a named pose or gesture (``table`` "poses" or "gestures"): the
    leaf's name, and the joints it moves there (all the entry's, or a ``select``'s)."""

    table: str
    name: str
    node: str
    joints: Mapping[str, float]


def _nodes(root: Node) -> Iterator[Node]:
    """Every node once, in file order, a leaf's subtrees (a checkpoint's ``recover``) too."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:  # a resumed mission holds its recover subtree twice
            continue
        seen.add(id(node))
        yield node
        inner = (
            [v for v in node.args.values() if isinstance(v, Node)] if isinstance(node, Leaf) else []
        )
        stack.extend(reversed([*node.children(), *inner]))


def reaches(root: Node) -> list[Reach]:
    """The moves of ``root`` to named poses and gestures, in file order."""
    out = []
    for node in _nodes(root):
        if not isinstance(node, Leaf):
            continue
        targets = node.args.get("targets")
        for field, table in NAMED:
            name = node.args.get(field)
            if isinstance(name, str) and isinstance(targets, Mapping):
                out.append(Reach(table, name, node.name, MappingProxyType(dict(targets))))
    return out


def library_record(mission: Mission, library: Library) -> dict[str, Any]:
    """Every library entry ``mission`` moves to, anywhere, with all its joints:
    ``{"poses": {name: {joint: rad}}, "gestures": {...}}``."""
    out: dict[str, dict[str, dict[str, float]]] = {table: {} for _, table in NAMED}
    for reach in reaches(mission.root):
        entries = library.poses if reach.table == "poses" else library.gestures
        target = entries.get(reach.name)
        if target is not None:
            out[reach.table][reach.name] = dict(target.joints)
    return out
