"""Node references: how a scenario names a mission's nodes, and what they match.

A scenario names a node by its name (``Drive to the table``) or by its path from the
mission's root, whole or the end of it (``Serve the second table/Wait for button A``):
the path tells apart the nodes a name does not (a mission's two ``Move to pose home``).
Paths are the run record's (``executive.records.runrecord``) without the core tree above
the mission (``Atom/Priorities/Mission Slot/``), so ``ran:`` reads the same in every
robot's scenario.
"""

from __future__ import annotations

from collections.abc import Iterable

import py_trees

from executive.core.tree import dismantle, forget_blackboards, node_path

SLOT = "Mission Slot/"  # the core tree's slot (executive.core.tree.MissionSlot) a mission sits in


def mission_path(core_path: str) -> str:
    """A running node's path (``Atom/Priorities/Mission Slot/Deliver a drink/Cup in hand``)
    from the mission's root (``Deliver a drink/Cup in hand``); a path outside the slot as
    it is."""
    head, sep, rest = core_path.partition("/" + SLOT)
    return rest if sep else core_path


def matches(ref: str, path: str) -> bool:
    """Whether reference ``ref`` names the node at mission path ``path``: its name, its
    whole path, or the end of its path."""
    return path == ref or path.endswith("/" + ref)


def paths(root: py_trees.behaviour.Behaviour) -> list[str]:
    """Every node of a mission's tree (not running: its root is the top), by mission path,
    depth first."""
    return [node_path(node) for node in root.iterate()]


def tree_paths(root: py_trees.behaviour.Behaviour) -> list[str]:
    """``paths`` of a tree built only to be looked at, which is then let go (its
    blackboard clients forgotten, its cycles broken)."""
    try:
        return paths(root)
    finally:
        forget_blackboards(root)
        dismantle(root)


def names(all_paths: Iterable[str]) -> list[str]:
    """The nodes' names (the last part of each path), once each, in order."""
    return list(dict.fromkeys(p.rsplit("/", 1)[-1] for p in all_paths))
