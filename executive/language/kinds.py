"""What a node kind is declared with: field types, ``Field`` and ``NodeKind``.

Composites, decorators and ``include`` are declared in ``executive.mission.registry``;
each leaf kind is declared beside the behaviour that runs it (``behaviours/actions/*.py``,
``behaviours/conditions/*.py``, the class attribute ``kinds``), like a BehaviorTree.CPP
node's ``providedPorts()``: its fields, what it waits on, the robot capability it needs,
how a validated ``model.Leaf`` becomes the behaviour, and any check of its own against the
robot profile (``LeafKind``, in ``executive.language.leaf``). The registry collects them
from an explicit list of behaviour classes.

This module imports nothing of the project: the model, the values and the leaf kinds are
declared with its field types, so it is the language's ground floor.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

MAX_TIMEOUT = 3600.0  # s: longer than any step of a mission should ever wait
MAX_TAG = 2**32 - 1  # AMRCommand_.target_id is uint32
MAX_FSM_ID = 2**16 - 1  # SetFsmId_.id is uint16
MAX_COORDINATE = 100.0  # m: a point farther than this from the robot is a typo, not a place
PLACE_NAME = r"^[a-z][a-z0-9_]{0,63}$"  # a place on the blackboard: ``cup``, ``table_2``

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
    """What a field holds. ``PARAM_TYPES`` are also the types a mission parameter may have."""

    NUMBER = "number"
    INTEGER = "integer"
    STRING = "string"
    BOOLEAN = "boolean"
    POSE = "pose"  # a name in missions/poses/*.yaml
    GESTURE = "gesture"  # a name in missions/gestures/*.yaml
    TAG = "tag"  # an AMR tag id
    FSM_STATE = "fsm_state"  # a profile FSM state name, or an id
    BUTTON = "button"  # one of BUTTONS
    POINT = "point"  # [x, y, z]: three finite numbers, m, the robot's base frame
    PLACE = "place"  # a point, or the name of a place on the blackboard (executive.reach)
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
    FieldType.POINT,
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
    FieldType.POINT: frozenset({FieldType.POINT}),
    FieldType.PLACE: frozenset({FieldType.POINT}),
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


# --- fields several kinds share -----------------------------------------------------------

NAME = Field(
    "name",
    FieldType.STRING,
    "Shown in status and renders; defaults to a description of the node.",
    min_length=1,
    max_length=80,
)


def timeout(what: str) -> Field:
    """The mandatory ``timeout`` of a leaf that waits on the robot for ``what``."""
    return Field(
        "timeout",
        FieldType.NUMBER,
        f"Seconds to wait for {what} before failing (mandatory, > 0).",
        required=True,
        gt=0.0,
        le=MAX_TIMEOUT,
    )


def show(value: Any) -> str:
    """An argument in a default leaf name: numbers briefly (``2.5``, not ``2.50000``)."""
    return f"{value:g}" if isinstance(value, float) else str(value)
