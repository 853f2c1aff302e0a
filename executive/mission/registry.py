"""The closed registry of node kinds a mission may use, with every parameter's spec.

This is the whole vocabulary of the language (BehaviorTree.CPP's lesson: tree files go
through a registry, nothing in them is imported or evaluated). A kind is data: its
category, its fields with types and ranges, which fields exclude each other, whether
it waits on the robot (then a ``timeout`` is mandatory) and whether it is a condition
(one tick, no side effects: allowed in guards and before actions in reactive
composites). The loader, the JSON Schema and the docs are all derived from here.

Leaf kinds become behaviours through builders the ``behaviours`` package provides:
a ``LeafBuilder`` takes a validated ``model.Leaf`` — its ``name`` and its ``args``, whose
keys are exactly ``NodeKind.args`` — and returns a py_trees behaviour whose constructor
does no I/O. ``check_builders`` says whether a builder table covers the registry.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import py_trees

    from executive.mission.model import Leaf

MAX_DEPTH = 32  # tree nesting limit, counted across includes
MAX_NODES = 2000  # nodes of one mission after includes are expanded
MAX_TIMEOUT = 3600.0  # s: longer than any step of a mission should ever wait
MAX_TAG = 2**32 - 1  # AMRCommand_.target_id is uint32
MAX_FSM_ID = 2**16 - 1  # SetFsmId_.id is uint16

# Gamepad buttons (wireless_remote bytes 2-3, DESIGN.md 3.3).
BUTTONS = (
    "A",
    "B",
    "X",
    "Y",
    "LB",
    "RB",
    "LT",
    "RT",
    "SELECT",
    "START",
    "UP",
    "DOWN",
    "LEFT",
    "RIGHT",
)


class Category(enum.Enum):
    COMPOSITE = "composite"
    DECORATOR = "decorator"
    LEAF = "leaf"
    INCLUDE = "include"


class FieldType(enum.Enum):
    """What a field holds. The first nine are also the types a mission parameter may have."""

    NUMBER = "number"
    INTEGER = "integer"
    STRING = "string"
    BOOLEAN = "boolean"
    POSE = "pose"  # a name in missions/poses/*.yaml
    GESTURE = "gesture"  # a name in missions/gestures/*.yaml
    TAG = "tag"  # an AMR tag id
    FSM_STATE = "fsm_state"  # a profile FSM state name, or an id
    BUTTON = "button"  # one of BUTTONS
    CHOICE = "choice"  # one of Field.choices
    JOINT_TARGETS = "joint_targets"  # {joint name: rad}
    SELECTION = "selection"  # joint, joint set or group names (profile.expand)
    NODE = "node"
    NODES = "nodes"
    FILE = "file"  # an include path
    ARGS = "args"  # an include's parameter values


PARAM_TYPES = (
    FieldType.NUMBER,
    FieldType.INTEGER,
    FieldType.STRING,
    FieldType.BOOLEAN,
    FieldType.POSE,
    FieldType.GESTURE,
    FieldType.TAG,
    FieldType.FSM_STATE,
    FieldType.BUTTON,
)

# Which parameter types may fill a field of a given type through ``${name}``.
ACCEPTS: Mapping[FieldType, frozenset[FieldType]] = {
    FieldType.NUMBER: frozenset({FieldType.NUMBER, FieldType.INTEGER}),
    FieldType.INTEGER: frozenset({FieldType.INTEGER}),
    FieldType.STRING: frozenset(PARAM_TYPES),  # interpolated as text
    FieldType.BOOLEAN: frozenset({FieldType.BOOLEAN}),
    FieldType.POSE: frozenset({FieldType.POSE}),
    FieldType.GESTURE: frozenset({FieldType.GESTURE}),
    FieldType.TAG: frozenset({FieldType.TAG, FieldType.INTEGER}),
    FieldType.FSM_STATE: frozenset({FieldType.FSM_STATE}),
    FieldType.BUTTON: frozenset({FieldType.BUTTON}),
}


@dataclass(frozen=True)
class Field:
    """One parameter of a node kind. Ranges: ``gt`` exclusive, ``ge``/``le`` inclusive."""

    name: str
    type: FieldType
    doc: str
    required: bool = False
    default: Any = None
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    min_length: int = 0
    max_length: int | None = None
    refs: bool = True  # may be written as ${param}


@dataclass(frozen=True)
class NodeKind:
    """A node kind: its fields, their constraints, and what the builder receives."""

    name: str
    category: Category
    doc: str
    fields: tuple[Field, ...]
    one_of: tuple[str, ...] = ()  # exactly one of these fields must be given
    exclusive: tuple[str, ...] = ()  # at most one of these fields may be given
    waits: bool = False  # waits on the robot: a timeout > 0 is mandatory
    condition: bool = False  # one tick, no side effects
    args: tuple[str, ...] = ()  # leaves: the keys of Leaf.args handed to the builder

    def field(self, name: str) -> Field | None:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> Mapping[str, Field]:
        return {f.name: f for f in self.fields}

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)


LeafBuilder = Callable[["Leaf"], "py_trees.behaviour.Behaviour"]

# --- shared fields ---------------------------------------------------------------------

NAME = Field(
    "name",
    FieldType.STRING,
    "Shown in status and renders; defaults to a description of the node.",
    min_length=1,
    max_length=80,
)


def _timeout(what: str) -> Field:
    return Field(
        "timeout",
        FieldType.NUMBER,
        f"Seconds to wait for {what} before failing (mandatory, > 0).",
        required=True,
        gt=0.0,
        le=MAX_TIMEOUT,
    )


def _memory(doc: str) -> Field:
    return Field("memory", FieldType.BOOLEAN, doc, default=True, refs=False)


CHILDREN = Field("children", FieldType.NODES, "The child nodes, in order.", required=True)
CHILD = Field("child", FieldType.NODE, "The decorated node.", required=True)
_SEQ_MEMORY = (
    "true (default): a child that finished is not ticked again, the sequence resumes at the "
    "running child. false: every tick restarts from the first child (reactive); then only "
    "conditions may precede the last child."
)
_DURATION = Field(
    "duration",
    FieldType.NUMBER,
    "Seconds the move takes (all joints arrive together); refused if a joint could exceed its "
    "speed cap from where it may start (pace a joint's first move with speed instead).",
    gt=0.0,
    le=600.0,
)
_SPEED = Field(
    "speed",
    FieldType.NUMBER,
    "Peak joint speed in rad/s; at most the speed cap of every joint moved. Without duration "
    "or speed, the joints' caps set the pace.",
    gt=0.0,
)
_SELECT = Field(
    "select",
    FieldType.SELECTION,
    "Move only these of the target's joints: joint names, joint sets (left_arm, right_hand...) "
    "or groups (arms, head, hands...).",
)


def _tolerance(default: float) -> Field:
    return Field(
        "tolerance",
        FieldType.NUMBER,
        "Largest error in rad at which a joint counts as arrived.",
        default=default,
        gt=0.0,
        le=0.5,
    )


# --- the kinds -------------------------------------------------------------------------

_KINDS = (
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
    # leaves
    NodeKind(
        "acquire_control",
        Category.LEAF,
        "Takes upper-body control (rt/switch/upper/control) and waits for the robot to confirm.",
        (NAME, _timeout("the confirmation")),
        waits=True,
        args=("timeout",),
    ),
    NodeKind(
        "release_control",
        Category.LEAF,
        "Hands upper-body control back and waits for the robot to confirm.",
        (NAME, _timeout("the confirmation")),
        waits=True,
        args=("timeout",),
    ),
    NodeKind(
        "set_fsm",
        Category.LEAF,
        "Switches the firmware state machine and waits until the robot reports the state.",
        (
            NAME,
            Field(
                "state",
                FieldType.FSM_STATE,
                "An FSM state name from the robot profile, or a numeric id.",
                required=True,
            ),
            _timeout("the robot to report the state"),
        ),
        waits=True,
        args=("state", "fsm_id", "timeout"),
    ),
    NodeKind(
        "move_joints",
        Category.LEAF,
        "Moves joints to a named pose or to inline targets on a smooth trajectory, and waits "
        "until they arrive.",
        (
            NAME,
            Field("pose", FieldType.POSE, "A pose from missions/poses/."),
            Field("joints", FieldType.JOINT_TARGETS, "Inline targets: joint name -> rad."),
            _SELECT,
            _DURATION,
            _SPEED,
            _tolerance(0.05),
            _timeout("the joints to arrive"),
        ),
        one_of=("pose", "joints"),
        exclusive=("duration", "speed"),
        waits=True,
        args=("targets", "pose", "duration", "speed", "tolerance", "timeout"),
    ),
    NodeKind(
        "hand_gesture",
        Category.LEAF,
        "Moves the fingers to a named gesture or to inline finger targets, and waits until "
        "they arrive.",
        (
            NAME,
            Field("gesture", FieldType.GESTURE, "A gesture from missions/gestures/."),
            Field(
                "fingers",
                FieldType.JOINT_TARGETS,
                "Inline targets: finger joint (right_index, left_thumb_rotate...) -> rad.",
            ),
            _SELECT,
            _DURATION,
            _SPEED,
            _tolerance(0.1),
            _timeout("the fingers to arrive"),
        ),
        one_of=("gesture", "fingers"),
        exclusive=("duration", "speed"),
        waits=True,
        args=("targets", "gesture", "duration", "speed", "tolerance", "timeout"),
    ),
    NodeKind(
        "navigate_to_tag",
        Category.LEAF,
        "Sends the wheeled base to a tag (MOVE_TO_TAG) and waits for COMPLETED.",
        (
            NAME,
            Field("tag", FieldType.TAG, "The tag id (target_id).", required=True, ge=0, le=MAX_TAG),
            Field(
                "theta",
                FieldType.NUMBER,
                "Absolute heading at the tag, rad.",
                default=0.0,
                ge=-math.pi,
                le=math.pi,
            ),
            _timeout("the base to arrive"),
        ),
        waits=True,
        args=("tag", "theta", "timeout"),
    ),
    NodeKind(
        "wait",
        Category.LEAF,
        "Succeeds after some seconds (the tree keeps ticking).",
        (
            NAME,
            Field("seconds", FieldType.NUMBER, "How long.", required=True, gt=0.0, le=MAX_TIMEOUT),
        ),
        args=("seconds",),
    ),
    NodeKind(
        "wait_for_button",
        Category.LEAF,
        "Waits until the operator presses a gamepad button (a fresh press, not a held one).",
        (
            NAME,
            Field(
                "button",
                FieldType.BUTTON,
                "One of " + ", ".join(BUTTONS) + ".",
                required=True,
            ),
            _timeout("the press"),
        ),
        waits=True,
        args=("button", "timeout"),
    ),
    NodeKind(
        "clear_errors",
        Category.LEAF,
        "Asks the firmware to clear servo errors (rt/clear/errors).",
        (NAME,),
    ),
    NodeKind(
        "check_battery",
        Category.LEAF,
        "Succeeds if the battery is at least `min_level` percent, else fails.",
        (
            NAME,
            Field(
                "min_level",
                FieldType.NUMBER,
                "Percent, 0-100.",
                required=True,
                ge=0.0,
                le=100.0,
            ),
        ),
        condition=True,
        args=("min_level",),
    ),
    NodeKind(
        "log",
        Category.LEAF,
        "Writes a message to the run's status feed and log; succeeds.",
        (
            NAME,
            Field(
                "message",
                FieldType.STRING,
                "Text; ${param} is replaced by the parameter's value.",
                required=True,
                min_length=1,
                max_length=500,
            ),
        ),
        args=("message",),
    ),
)

KINDS: Mapping[str, NodeKind] = {k.name: k for k in _KINDS}
LEAF_KINDS: tuple[str, ...] = tuple(k.name for k in _KINDS if k.category is Category.LEAF)

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
