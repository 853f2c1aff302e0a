"""Checks of how nodes are combined, which no single leaf can see.

- Reactive composites (``memory: false``) re-tick children that already finished. A
  finished *action* re-ticked would run again (re-send a navigation goal, re-plan a
  move) and stop whatever runs after it, so only conditions may sit where re-ticking
  happens: before the last child of a sequence/fallback, beside at most one action in a
  parallel.
- A guard's condition is re-checked every tick, so it must be a condition subtree.
- Children of a parallel must not drive the same joint, the base, the control switch
  or the FSM: they would fight over it (what a leaf drives is its kind's ``drives``, and
  the joints of its targets when it ``moves_joints``).
- (warning) A motion leaf before any ``acquire_control`` in tree order: the firmware
  ignores joint commands from outside until upper-body control is granted.
"""

from __future__ import annotations

from collections.abc import Iterator

from executive.language.diagnostics import Diagnostics
from executive.language.model import Composite, Decorator, Guard, Leaf, Node, Subtree, walk
from executive.mission.registry import KINDS, LEAVES

# the leaf kinds that move joints (their args carry "targets")
MOTION = tuple(k.name for k in LEAVES if k.moves_joints)
DRIVES = {k.name: k.drives for k in LEAVES}


def is_condition(node: Node) -> bool:
    """One tick, no side effects: condition leaves, and inverters/sequences/fallbacks of them."""
    if isinstance(node, Leaf):
        return KINDS[node.kind].condition
    if isinstance(node, Decorator):
        return node.kind == "inverter" and is_condition(node.child)
    if isinstance(node, Composite):
        return node.kind != "parallel" and all(is_condition(c) for c in node.nodes)
    if isinstance(node, Subtree):
        return is_condition(node.root)
    return False


def check_composite(node: Composite, diags: Diagnostics) -> None:
    _reactive(node, diags)
    if node.kind == "parallel":
        _conflicts(node, diags)


def _reactive(node: Composite, diags: Diagnostics) -> None:
    if node.memory:
        return
    why = (
        f"a {node.kind} with memory: false re-ticks finished children every tick, "
        "so an action here would run again"
    )
    if node.kind == "parallel":
        actions = [c for c in node.nodes if not is_condition(c)]
        for child in actions[1:]:
            diags.error(
                child.where,
                child.path,
                f"{why}: at most one child may be an action (use memory: true)",
            )
        return
    for child in node.nodes[:-1]:
        if not is_condition(child):
            diags.error(
                child.where,
                child.path,
                f"{why}: only conditions may come before the last child "
                "(use memory: true, or a guard)",
            )


def check_guard(node: Guard, diags: Diagnostics) -> None:
    if not is_condition(node.condition):
        diags.error(
            node.condition.where,
            node.condition.path,
            "a guard's condition is re-checked every tick, so it must be a condition "
            "(check_battery, or inverter/sequence/fallback of conditions)",
        )


def resources(node: Node) -> Iterator[str]:
    """What the leaves under ``node`` drive, as names for a conflict message."""
    for n in walk(node):
        if not isinstance(n, Leaf):
            continue
        yield from DRIVES[n.kind]
        if n.kind in MOTION:
            targets = n.args.get("targets")
            if isinstance(targets, dict):
                yield from (f"joint {j}" for j in targets)
            joints = n.args.get("joints")  # a reach: the joints it solves for
            if isinstance(joints, tuple):
                yield from (f"joint {j}" for j in joints)


def _conflicts(node: Composite, diags: Diagnostics) -> None:
    owner: dict[str, int] = {}
    for i, child in enumerate(node.nodes):
        clashes: dict[int, list[str]] = {}
        for res in dict.fromkeys(resources(child)):
            if res in owner and owner[res] != i:
                clashes.setdefault(owner[res], []).append(res)
            else:
                owner[res] = i
        for other, names in clashes.items():
            shown = ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")
            diags.error(
                child.where,
                child.path,
                f"drives {shown} like child {other} of this parallel: they would fight over it",
            )


def check_control_order(root: Node, diags: Diagnostics) -> None:
    """Warn about motion reached before any acquire_control in depth-first order."""
    for n in walk(root):
        if isinstance(n, Leaf):
            if n.kind == "acquire_control":
                return
            if n.kind in MOTION:
                diags.warning(
                    n.where,
                    n.path,
                    "moves joints before any acquire_control: the robot ignores joint "
                    "commands until upper-body control is granted",
                )
                return
