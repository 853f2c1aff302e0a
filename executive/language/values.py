"""Checking one value against a field's type and range, with messages people can act on.

Used for literals in a file, for parameter defaults, for include arguments and for
values substituted from ``${param}``: every value meets the same checks wherever it
came from. Messages name what was expected and what was found, and point out YAML 1.1
surprises (``yes`` is a boolean, ``1e3`` is text).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from executive.language.diagnostics import Location
from executive.language.kinds import (
    BUTTONS,
    MAX_COORDINATE,
    MAX_FSM_ID,
    MAX_TAG,
    PLACE_NAME,
    Field,
    FieldType,
)
from executive.language.yaml_source import MAX_INT, describe_value, int_digits

EXPECTED: dict[FieldType, str] = {
    FieldType.NUMBER: "a number",
    FieldType.INTEGER: "a whole number",
    FieldType.STRING: "text",
    FieldType.BOOLEAN: "true or false",
    FieldType.POSE: "a pose name",
    FieldType.GESTURE: "a gesture name",
    FieldType.TAG: f"a tag id (0..{MAX_TAG})",
    FieldType.FSM_STATE: "an FSM state name or id",
    FieldType.BUTTON: "a button name",
    FieldType.POINT: "a point [x, y, z] (three numbers, m, the robot's base frame)",
    FieldType.PLACE: "a point [x, y, z] (m, the robot's base frame) or a place's name",
    FieldType.CHOICE: "one of the listed choices",
    FieldType.JOINT_TARGETS: "a mapping of joint name to rad",
    FieldType.SELECTION: "a joint, joint set or group name, or a list of them",
    FieldType.NODE: "a node",
    FieldType.NODES: "a list of nodes",
    FieldType.FILE: "a file path",
    FieldType.ARGS: "a mapping of parameter name to value",
}


@dataclass(frozen=True, slots=True)
class Val:
    """A checked value and where it was written. ``note`` says where a substituted value
    came from and is appended to any message about it; ``written`` how a value that
    involved ``${`` was written."""

    value: Any
    where: Location
    note: str = ""
    # the text as the file writes it when it holds "${" (a parameter reference, text with
    # references, a "$${" escape): what a translation that keeps the parameters writes
    # (``executive.mission.btcpp``); None for a plain value
    written: str | None = None


class Names(Protocol):
    """What names are known: the libraries' poses and gestures and the profile's FSM."""

    @property
    def poses(self) -> Collection[str]: ...
    @property
    def gestures(self) -> Collection[str]: ...
    @property
    def fsm_states(self) -> Collection[str]: ...


def suggest(name: str, known: Iterable[str], what: str) -> str:
    """`` (did you mean 'x'?)`` or `` (known: a, b, c)``, for messages about unknown names."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if not known:
        return f" (there are no {what})"
    if len(known) <= 12:
        return f" (known: {', '.join(known)})"
    return f" ({len(known)} known {what}, e.g. {', '.join(known[:6])}...)"


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _hint(value: object, ftype: FieldType) -> str:
    if isinstance(value, bool) and ftype in (FieldType.STRING, FieldType.BUTTON):
        return " (YAML reads yes/no/on/off/true/false as booleans: quote it)"
    if isinstance(value, str) and ftype in (FieldType.NUMBER, FieldType.INTEGER):
        low = value.lower()
        if "e" in low and low.replace("e", "").replace("-", "").replace("+", "").isdigit():
            return " (YAML 1.1 needs a dot in exponents: write 1.0e3)"
    return ""


def check_value(value: object, field: Field, names: Names) -> tuple[Any, str | None]:
    """(converted value, None) or (None, message) for ``value`` in ``field``."""
    ftype = field.type
    if ftype in (FieldType.NUMBER, FieldType.INTEGER, FieldType.TAG):
        return _number(value, field)
    if ftype is FieldType.POINT or (ftype is FieldType.PLACE and not isinstance(value, str)):
        return point(value)
    if ftype is FieldType.PLACE and isinstance(value, str):
        if re.fullmatch(PLACE_NAME, value):
            return value, None
        return None, (
            f"expected {EXPECTED[ftype]} (a name: lower_case letters, digits and _), "
            f"got {describe_value(value)}"
        )
    if ftype is FieldType.BOOLEAN:
        if isinstance(value, bool):
            return value, None
        return None, f"expected true or false, got {describe_value(value)}"
    if ftype is FieldType.FSM_STATE and is_number(value):
        return _number(value, Field(field.name, FieldType.INTEGER, "", ge=0, le=MAX_FSM_ID))
    if not isinstance(value, str):
        return None, f"expected {EXPECTED[ftype]}, got {describe_value(value)}{_hint(value, ftype)}"
    if ftype in (FieldType.STRING, FieldType.FILE):
        if len(value) < field.min_length:
            return None, "must not be empty"
        if field.max_length is not None and len(value) > field.max_length:
            return None, f"longer than {field.max_length} characters"
        return value, None
    return _named(value, field, names)


def point(value: object) -> tuple[tuple[float, float, float] | None, str | None]:
    """``[x, y, z]``: three finite numbers (m, the robot's base frame), each within
    ``MAX_COORDINATE`` of it; (the point as a tuple of floats, None) or (None, why not)."""
    want = EXPECTED[FieldType.POINT]
    if not isinstance(value, list | tuple):
        return None, f"expected {want}, got {describe_value(value)}"
    if len(value) != 3 or not all(is_number(v) for v in value):
        shown = ", ".join(describe_value(v) for v in value) if len(value) <= 6 else "..."
        return None, f"expected {want}, got {len(value)} values: {shown}"
    try:  # an integer past a float's range (JSON has them) is no more a place than inf
        x, y, z = (float(v) for v in value)
    except OverflowError:
        return None, f"expected {want}, got a number too large to be a coordinate"
    if not all(math.isfinite(v) for v in (x, y, z)):
        return None, f"expected {want}, got a value that is not a finite number: {list(value)}"
    if any(abs(v) > MAX_COORDINATE for v in (x, y, z)):
        return None, (
            f"{list(value)} is more than {MAX_COORDINATE:g} m from the robot: "
            "a point is in metres, in the robot's base frame"
        )
    return (x, y, z), None


def _named(value: str, field: Field, names: Names) -> tuple[Any, str | None]:
    """A name that must be one of a known set (pose, gesture, FSM state, button, choice)."""
    table: dict[FieldType, tuple[Collection[str], str]] = {
        FieldType.POSE: (names.poses, "poses"),
        FieldType.GESTURE: (names.gestures, "gestures"),
        FieldType.FSM_STATE: (names.fsm_states, "FSM states in the robot profile"),
        FieldType.BUTTON: (BUTTONS, "buttons"),
        FieldType.CHOICE: (field.choices, "choices"),
    }
    if field.type not in table:
        return None, f"expected {EXPECTED[field.type]}, got {describe_value(value)}"
    known, what = table[field.type]
    if value in known:
        return value, None
    noun = {"poses": "pose", "gestures": "gesture", "buttons": "button", "choices": "choice"}
    return None, f"unknown {noun.get(what, 'FSM state')} {value!r}{suggest(value, known, what)}"


def _number(value: object, field: Field) -> tuple[Any, str | None]:
    ftype = field.type
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None, f"expected {EXPECTED[ftype]}, got {describe_value(value)}{_hint(value, ftype)}"
    number = value
    if isinstance(number, int) and abs(number) >= MAX_INT:  # beyond any float's precision
        return None, f"number too large ({int_digits(number)} digits)"
    if not math.isfinite(number):
        return None, f"must be a finite number, got {number}"
    if ftype in (FieldType.INTEGER, FieldType.TAG) and not isinstance(value, int):
        return None, f"expected {EXPECTED[ftype]}, got {describe_value(value)}"
    if ftype is FieldType.TAG and not 0 <= number <= MAX_TAG:
        return None, f"must be a tag id 0..{MAX_TAG}, got {number}"
    if field.gt is not None and not number > field.gt:
        return None, f"must be > {field.gt:g}, got {number:g}"
    if field.ge is not None and number < field.ge:
        return None, f"must be >= {field.ge:g}, got {number:g}"
    if field.le is not None and number > field.le:
        return None, f"must be <= {field.le:g}, got {number:g}"
    if ftype is FieldType.NUMBER:
        return float(number), None
    return value, None
