"""Samples as plain data and back: JSON-able dicts for records, tests and the bridge's link.

``plain(sample)`` gives every field (dataclasses as dicts in member order, enums as their
numbers, sequences as lists); ``build(cls, fields)`` makes a sample of ``cls`` from such a
mapping (missing members keep their defaults; an unknown member is a KeyError naming it).
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Mapping
from typing import Any


def plain(value: Any) -> Any:
    """A decoded sample as JSON-able data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _element(hint: Any) -> Any:
    """The element type of a ``sequence[X]`` member (Annotated[Sequence[X], ...]), or None."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    args = typing.get_args(hint)
    return args[0] if typing.get_origin(hint) is not None and args else None


def build(cls: type[Any], fields: Mapping[str, Any]) -> Any:
    """A ``cls`` (an IdlStruct dataclass) with ``fields`` set."""
    hints = typing.get_type_hints(cls, include_extras=True)
    values: dict[str, Any] = {}
    for name, value in fields.items():
        if name not in hints:
            raise KeyError(f"{cls.__name__} has no member {name!r}")
        hint = hints[name]
        element = _element(hint)
        if isinstance(value, Mapping):
            values[name] = build(hint, value)
        elif isinstance(value, list) and dataclasses.is_dataclass(element):
            values[name] = [build(typing.cast(type[Any], element), v) for v in value]
        elif isinstance(hint, type) and issubclass(hint, enum.Enum):
            values[name] = hint(value)
        else:
            values[name] = value
    return cls(**values)
