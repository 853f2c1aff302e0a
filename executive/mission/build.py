"""The validated model to a py_trees tree.

Composites and decorators map onto py_trees classes here; leaves are made by builders
from the ``behaviours`` package (one ``LeafBuilder`` per registry leaf kind, receiving
the validated ``Leaf``). Every constructor only stores parameters — no I/O — so a tree
can be built and rendered with no robot, and connects in ``setup``.

Mapping (memory is explicit on every composite, default true):

- sequence  -> ``py_trees.composites.Sequence(memory=...)``
- fallback  -> ``py_trees.composites.Selector(memory=...)``
- parallel  -> ``py_trees.composites.Parallel``: success_on_all ->
  ``SuccessOnAll(synchronise=memory)``, success_on_one -> ``SuccessOnOne()``
- retry     -> ``decorators.Retry(num_failures=attempts)``
- repeat    -> ``decorators.Repeat(num_success=times)``
- timeout   -> ``ClockTimeout`` (py_trees' Timeout on an injected monotonic clock)
- inverter  -> ``decorators.Inverter``
- guard     -> ``Sequence(memory=False)[condition, child]``: py_trees' behaviour-based
  eternal guard (its ``EternalGuard`` decorator takes a callable; ours are leaves with a
  lifecycle). The condition is ticked before the child every tick; when it fails the
  sequence stops the running child (``terminate(INVALID)``) and fails.
- delay     -> ``Sequence(memory=True)[wait leaf (from the builders), child]``, so the
  delay runs on the same clock as every ``wait``.
- include   -> the included tree itself (its root carries the include's name).

Every node built keeps the model node it was built from (``source``; an include's root
also ``includes``, the include nodes it stands for), so a view of the running tree can
say what each node is in the mission's terms (``executive.mission.btcpp``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import py_trees
from py_trees.common import ParallelPolicy, Status

from executive.language.leaf import LeafBuilder
from executive.language.model import (
    Composite,
    Decorator,
    Guard,
    Leaf,
    Mission,
    Node,
    Subtree,
    Unresolved,
    frozen,
)

Clock = Callable[[], float]


class BuildError(ValueError):
    """A model that cannot become a tree (unresolved parameters, incomplete builders)."""


class ClockTimeout(py_trees.decorators.Timeout):
    """py_trees' Timeout, reading an injected monotonic clock so ticks can be tested."""

    def __init__(
        self, name: str, child: py_trees.behaviour.Behaviour, duration: float, clock: Clock
    ) -> None:
        super().__init__(name=name, child=child, duration=duration)
        self.clock = clock

    def initialise(self) -> None:
        self.finish_time = self.clock() + self.duration
        self.feedback_message = ""

    def update(self) -> Status:
        if self.decorated.status == Status.RUNNING and self.clock() > self.finish_time:
            self.feedback_message = f"timed out after {self.duration:g} s"
            self.decorated.stop(Status.INVALID)
            return Status.FAILURE
        return self.decorated.status


class Placeholder(py_trees.behaviour.Behaviour):
    """Stands in for a leaf whose behaviour is not plugged in: carries the kind and the
    validated args so structure can be rendered and tested. Fails if ever ticked — a
    placeholder must never look like a robot doing something."""

    def __init__(self, leaf: Leaf) -> None:
        super().__init__(leaf.name)
        self.kind = leaf.kind
        self.args: Mapping[str, Any] = leaf.args
        self.path = leaf.path

    def update(self) -> Status:
        self.feedback_message = f"placeholder for {self.kind}: no behaviour plugged in"
        return Status.FAILURE


def placeholder_builders() -> dict[str, LeafBuilder]:
    """A builder table of ``Placeholder`` leaves, for rendering and structure tests only."""
    from executive.mission.registry import LEAF_KINDS  # imports the behaviours: on demand

    return dict.fromkeys(LEAF_KINDS, Placeholder)


def build(
    mission: Mission,
    builders: Mapping[str, LeafBuilder],
    *,
    clock: Clock = time.monotonic,
    for_display: bool = False,
) -> py_trees.behaviour.Behaviour:
    """The py_trees tree of ``mission``. ``builders`` must cover every leaf kind.

    ``for_display`` lets a subtree with unset parameters be built for rendering only:
    decorator counts that are ``${param}`` become 1, and the tree must never be ticked.
    """
    from executive.mission.registry import check_builders  # imports the behaviours

    problems = check_builders(builders)
    if problems:
        raise BuildError("; ".join(problems))
    if not mission.complete and not for_display:
        raise BuildError(
            f"{mission.file}: parameters without values; a subtree cannot be run on its own"
        )
    return _Builder(builders, clock).node(mission.root)


def build_node(node: Node) -> py_trees.behaviour.Behaviour:
    """One model node (a checkpoint's ``recover``) built with placeholder leaves, for
    display only: it must never be ticked."""
    return _Builder(placeholder_builders(), time.monotonic).node(node)


class _Builder:
    def __init__(self, builders: Mapping[str, LeafBuilder], clock: Clock) -> None:
        self.builders = builders
        self.clock = clock

    def node(self, node: Node) -> py_trees.behaviour.Behaviour:
        built = self._node(node)
        if isinstance(node, Subtree):
            setattr(built, "includes", (node, *getattr(built, "includes", ())))  # noqa: B010
        else:
            setattr(built, "source", node)  # noqa: B010 - py_trees declares no such attribute
        return built

    def _node(self, node: Node) -> py_trees.behaviour.Behaviour:
        if isinstance(node, Leaf):
            return self.builders[node.kind](node)
        if isinstance(node, Composite):
            return self._composite(node)
        if isinstance(node, Decorator):
            return self._decorator(node)
        if isinstance(node, Guard):
            return py_trees.composites.Sequence(
                name=node.name,
                memory=False,
                children=[self.node(node.condition), self.node(node.child)],
            )
        if isinstance(node, Subtree):
            root = self.node(node.root)
            root.name = node.name
            return root
        raise BuildError(f"{node.path}: unknown node type {type(node).__name__}")

    def _composite(self, node: Composite) -> py_trees.behaviour.Behaviour:
        children = [self.node(c) for c in node.nodes]
        if node.kind == "sequence":
            return py_trees.composites.Sequence(
                name=node.name, memory=node.memory, children=children
            )
        if node.kind == "fallback":
            return py_trees.composites.Selector(
                name=node.name, memory=node.memory, children=children
            )
        policy: py_trees.common.ParallelPolicy.Base = (
            ParallelPolicy.SuccessOnOne()
            if node.policy == "success_on_one"
            else ParallelPolicy.SuccessOnAll(synchronise=node.memory)
        )
        return py_trees.composites.Parallel(name=node.name, policy=policy, children=children)

    def _decorator(self, node: Decorator) -> py_trees.behaviour.Behaviour:
        child = self.node(node.child)
        a = {k: 1 if isinstance(v, Unresolved) else v for k, v in node.args.items()}
        if node.kind == "retry":
            return py_trees.decorators.Retry(
                name=node.name, child=child, num_failures=int(a["attempts"])
            )
        if node.kind == "repeat":
            return py_trees.decorators.Repeat(
                name=node.name, child=child, num_success=int(a["times"])
            )
        if node.kind == "timeout":
            return ClockTimeout(node.name, child, float(a["seconds"]), self.clock)
        if node.kind == "inverter":
            return py_trees.decorators.Inverter(name=node.name, child=child)
        # delay
        seconds = float(a["seconds"])
        wait = Leaf(
            name=f"Wait {seconds:g} s",
            where=node.where,
            path=f"{node.path}.seconds",
            kind="wait",
            args=frozen({"seconds": seconds}),
        )
        return py_trees.composites.Sequence(
            name=node.name, memory=True, children=[self.node(wait), child]
        )
