"""The closed registry of node kinds a mission may use, with every parameter's spec.

This is the whole vocabulary of the language (BehaviorTree.CPP's lesson: tree files go
through a registry, nothing in them is imported or evaluated). A kind is data
(``kinds.NodeKind``): its category, its fields with types and ranges, which fields
exclude each other, whether it waits on the robot (then a ``timeout`` is mandatory) and
whether it is a condition (one tick, no side effects: allowed in guards and before
actions in reactive composites). The loader, the JSON Schema and the docs are all
derived from here.

Composites, decorators and ``include`` are declared below. Each leaf kind is declared
beside the behaviour that runs it (the class attribute ``kinds``, a ``leaf.LeafKind``:
fields, the robot capability it needs, its builder, its own checks); ``LEAF_BEHAVIOURS``
is the one explicit list of those classes, so the vocabulary stays closed and nothing
is discovered by scanning. ``check_builders`` says whether a builder table covers the
leaf kinds (``executive.mission.builders.BUILDERS`` is the declared builders).
"""

from __future__ import annotations

from collections.abc import Mapping

from behaviours.actions.basic import Log, Wait
from behaviours.actions.checkpoint import Checkpoint
from behaviours.actions.control import AcquireControl, ClearErrors, ReleaseControl, SetFsm
from behaviours.actions.motion import MoveJoints
from behaviours.actions.navigation import NavigateToTag
from behaviours.actions.reach import Reach
from behaviours.actions.tasks import RunTask
from behaviours.actions.walking import Walk
from behaviours.base import RobotLeaf
from behaviours.conditions.robot import CheckBattery, WaitForButton
from executive.language.kinds import (
    ACCEPTS,
    BUTTONS,
    MAX_FSM_ID,
    MAX_TAG,
    MAX_TIMEOUT,
    NAME,
    PARAM_TYPES,
    Category,
    Field,
    FieldType,
    NodeKind,
)
from executive.language.leaf import LeafBuilder, LeafKind
from executive.seam.ports import CAPABILITIES

__all__ = [
    "ACCEPTS",
    "ALIASES",
    "BUTTONS",
    "KINDS",
    "LEAF_BEHAVIOURS",
    "LEAF_KINDS",
    "LEAVES",
    "MAX_DEPTH",
    "MAX_FSM_ID",
    "MAX_NODES",
    "MAX_TAG",
    "MAX_TIMEOUT",
    "PARAM_TYPES",
    "Category",
    "Field",
    "FieldType",
    "LeafBuilder",
    "LeafKind",
    "NodeKind",
    "check_builders",
    "collect",
]

MAX_DEPTH = 32  # tree nesting limit, counted across includes
MAX_NODES = 2000  # nodes of one mission after includes are expanded


def _memory(doc: str) -> Field:
    return Field("memory", FieldType.BOOLEAN, doc, default=True, refs=False)


CHILDREN = Field("children", FieldType.NODES, "The child nodes, in order.", required=True)
CHILD = Field("child", FieldType.NODE, "The decorated node.", required=True)
_SEQ_MEMORY = (
    "true (default): a child that finished is not ticked again, the sequence resumes at the "
    "running child. false: every tick restarts from the first child (reactive); then only "
    "conditions may precede the last child."
)

# --- the structural kinds ------------------------------------------------------------

_STRUCTURE: tuple[NodeKind, ...] = (
    # composites
    NodeKind(
        "sequence",
        Category.COMPOSITE,
        "Runs its children in order; fails as soon as one fails.",
        (NAME, _memory(_SEQ_MEMORY), CHILDREN),
    ),
    NodeKind(
        "fallback",
        Category.COMPOSITE,
        "Tries its children in order until one succeeds (a selector).",
        (NAME, _memory(_SEQ_MEMORY.replace("sequence", "fallback")), CHILDREN),
    ),
    NodeKind(
        "parallel",
        Category.COMPOSITE,
        "Ticks all its children every tick; fails as soon as one fails.",
        (
            NAME,
            Field(
                "policy",
                FieldType.CHOICE,
                "success_on_all: succeed when every child has; success_on_one: succeed when "
                "one has (the others are stopped).",
                default="success_on_all",
                choices=("success_on_all", "success_on_one"),
                refs=False,
            ),
            _memory(
                "success_on_all only. true (default): a child that succeeded is not ticked "
                "again (py_trees synchronise). false: finished children are re-ticked; then "
                "at most one child may be an action."
            ),
            CHILDREN,
        ),
    ),
    # decorators
    NodeKind(
        "retry",
        Category.DECORATOR,
        "Runs its child again after a failure, up to `attempts` runs in all.",
        (
            NAME,
            Field(
                "attempts",
                FieldType.INTEGER,
                "Runs in all (py_trees num_failures).",
                required=True,
                ge=1,
                le=100,
            ),
            CHILD,
        ),
    ),
    NodeKind(
        "repeat",
        Category.DECORATOR,
        "Runs its child `times` times in a row; fails as soon as a run fails.",
        (
            NAME,
            Field(
                "times",
                FieldType.INTEGER,
                "Successful runs needed (py_trees num_success).",
                required=True,
                ge=1,
                le=10000,
            ),
            CHILD,
        ),
    ),
    NodeKind(
        "timeout",
        Category.DECORATOR,
        "Fails (stopping its child) if the child is still running after `seconds`.",
        (
            NAME,
            Field("seconds", FieldType.NUMBER, "Time limit.", required=True, gt=0.0, le=86400.0),
            CHILD,
        ),
    ),
    NodeKind(
        "inverter",
        Category.DECORATOR,
        "Swaps its child's success and failure.",
        (NAME, CHILD),
    ),
    NodeKind(
        "guard",
        Category.DECORATOR,
        "Re-checks `condition` before every tick of `child`; the moment it fails, the child "
        "is stopped and the guard fails (an eternal guard).",
        (
            NAME,
            Field(
                "condition",
                FieldType.NODE,
                "A condition: check_battery, or inverter/sequence/fallback of conditions.",
                required=True,
            ),
            CHILD,
        ),
    ),
    NodeKind(
        "delay",
        Category.DECORATOR,
        "Waits `seconds`, then runs its child.",
        (
            NAME,
            Field("seconds", FieldType.NUMBER, "Delay.", required=True, gt=0.0, le=MAX_TIMEOUT),
            CHILD,
        ),
    ),
    # subtrees
    NodeKind(
        "include",
        Category.INCLUDE,
        "Inserts the tree of another file, with parameter values.",
        (
            Field(
                "file",
                FieldType.FILE,
                "Path relative to this file, inside the mission directory.",
                required=True,
                refs=False,
            ),
            NAME,
            Field("with", FieldType.ARGS, "Values for the included file's parameters."),
        ),
    ),
)

# The behaviours that run mission leaves, in the order the docs and the schema list their
# kinds. A new leaf kind is declared on its behaviour (``kinds``) and its class added here.
LEAF_BEHAVIOURS: tuple[type[RobotLeaf], ...] = (
    AcquireControl,
    ReleaseControl,
    SetFsm,
    MoveJoints,
    Reach,
    NavigateToTag,
    Wait,
    WaitForButton,
    ClearErrors,
    CheckBattery,
    Log,
    Walk,
    RunTask,
    Checkpoint,
)


def collect(classes: tuple[type[RobotLeaf], ...]) -> tuple[LeafKind, ...]:
    """The leaf kinds ``classes`` declare, checked: a mistake in a declaration is a
    programming error, so it fails at import (in every test), not in a mission."""
    out: list[LeafKind] = []
    for cls in classes:
        if not cls.kinds:
            raise TypeError(f"{cls.__name__} declares no leaf kind (kinds = (LeafKind(...),))")
        for kind in cls.kinds:
            if kind.requires is not None and kind.requires not in CAPABILITIES:
                raise ValueError(
                    f"{kind.name} requires {kind.requires!r}, which is not a robot capability "
                    f"({', '.join(CAPABILITIES)})"
                )
            if kind.waits and kind.field("timeout") is None:
                raise ValueError(f"{kind.name} waits on the robot but has no timeout field")
            out.append(kind)
    names = [k.name for k in (*_STRUCTURE, *out)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"node kinds declared twice: {', '.join(twice)}")
    return tuple(out)


LEAVES: tuple[LeafKind, ...] = collect(LEAF_BEHAVIOURS)
KINDS: Mapping[str, NodeKind] = {k.name: k for k in (*_STRUCTURE, *LEAVES)}
LEAF_KINDS: tuple[str, ...] = tuple(k.name for k in LEAVES)

# Names people reach for from other behaviour-tree dialects.
ALIASES: Mapping[str, str] = {
    "selector": "fallback",
    "priority": "fallback",
    "subtree": "include",
    "retry_until_successful": "retry",
    "repeat_until": "repeat",
    "sleep": "wait",
    "not": "inverter",
}


def check_builders(builders: Mapping[str, LeafBuilder]) -> list[str]:
    """Problems with a builder table: leaf kinds it lacks, names that are no leaf kind."""
    problems = [f"no builder for leaf kind {k!r}" for k in LEAF_KINDS if k not in builders]
    problems += [
        f"{k!r} is not a leaf kind of the mission language" for k in builders if k not in LEAF_KINDS
    ]
    return problems
