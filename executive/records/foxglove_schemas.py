"""Foxglove's message schemas as JSON Schema, from the definitions ``foxglove-sdk`` ships.

The run's channels are JSON with a JSON Schema (``executive.records.runchannels``). For
Foxglove's own message types (``foxglove.FrameTransforms``, ``foxglove.SceneUpdate``)
the schema should be Foxglove's, not one written here that drifts: ``foxglove-sdk``
0.30.3 carries each type's definition as a protobuf ``FileDescriptorSet``
(``foxglove.messages.<Type>.get_schema()``) but no JSON Schema. This module turns that
descriptor into the JSON Schema Foxglove publishes for its JSON encoding: every field
required, nested messages inline with their ``foxglove.<Type>`` title, a
``google.protobuf.Timestamp`` as ``{sec, nsec}`` (Foxglove's ``time``), a ``Duration``
likewise, ``bytes`` as base64 text, an enum as its integer values, a repeated field as an
array. Field descriptions are not in the descriptor (the SDK strips comments), so the
schema has none. An SDK upgrade brings its new fields here by itself.

A few dozen lines of protobuf's wire format read the descriptor: the ``protobuf``
package is not a dependency for this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

# FieldDescriptorProto.Type -> JSON Schema (protobuf's JSON mapping as Foxglove uses it)
_SCALARS: dict[int, dict[str, Any]] = {
    1: {"type": "number"},  # double
    2: {"type": "number"},  # float
    3: {"type": "integer"},  # int64
    4: {"type": "integer", "minimum": 0},  # uint64
    5: {"type": "integer"},  # int32
    6: {"type": "integer", "minimum": 0},  # fixed64
    7: {"type": "integer", "minimum": 0},  # fixed32
    8: {"type": "boolean"},
    9: {"type": "string"},
    12: {"type": "string", "contentEncoding": "base64"},  # bytes
    13: {"type": "integer", "minimum": 0},  # uint32
    15: {"type": "integer"},  # sfixed32
    16: {"type": "integer"},  # sfixed64
    17: {"type": "integer"},  # sint32
    18: {"type": "integer"},  # sint64
}
_MESSAGE, _ENUM, _REPEATED = 11, 14, 3
_NSEC = {"type": "integer", "minimum": 0, "maximum": 999_999_999}
_WELL_KNOWN: dict[str, dict[str, Any]] = {
    ".google.protobuf.Timestamp": {
        "type": "object",
        "title": "time",
        "properties": {"sec": {"type": "integer", "minimum": 0}, "nsec": _NSEC},
    },
    ".google.protobuf.Duration": {
        "type": "object",
        "title": "duration",
        "properties": {"sec": {"type": "integer"}, "nsec": _NSEC},
    },
}


class SchemaError(ValueError):
    """The SDK has no such message, or its descriptor is not what protobuf writes."""


@dataclass
class _Field:
    name: str = ""
    label: int = 1
    type: int = 0
    type_name: str = ""


@dataclass
class _Message:
    name: str = ""
    fields: list[_Field] = field(default_factory=list)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(data):
            raise SchemaError("descriptor ends inside a varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """A protobuf message's (field number, value) pairs: ints for varints, bytes for
    length-delimited fields; fixed-width fields are skipped (descriptors use none we read)."""
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire == 2:
            length, i = _varint(data, i)
            out.append((number, data[i : i + length]))
            i += length
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise SchemaError(f"descriptor has wire type {wire}")
    return out


def _text(value: int | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else ""


def _message(data: bytes, scope: str, messages: dict[str, _Message], enums: set[str]) -> None:
    """A DescriptorProto (name 1, field 2, nested_type 3, enum_type 4) into ``messages``."""
    message = _Message()
    nested: list[bytes] = []
    for number, value in _fields(data):
        if number == 1:
            message.name = _text(value)
        elif number == 2 and isinstance(value, bytes):
            f = _Field()
            for n, v in _fields(value):  # name 1, label 4, type 5, type_name 6
                if n == 1:
                    f.name = _text(v)
                elif n == 4 and isinstance(v, int):
                    f.label = v
                elif n == 5 and isinstance(v, int):
                    f.type = v
                elif n == 6:
                    f.type_name = _text(v)
            message.fields.append(f)
        elif number == 3 and isinstance(value, bytes):
            nested.append(value)
        elif number == 4 and isinstance(value, bytes):
            enums.add(f"{scope}.{message.name}.{_enum_name(value)}")
    full = f"{scope}.{message.name}"
    messages[full] = message
    for child in nested:
        _message(child, full, messages, enums)


def _enum_name(data: bytes) -> str:
    return next((_text(v) for n, v in _fields(data) if n == 1), "")


def _descriptors(file_set: bytes) -> tuple[dict[str, _Message], set[str]]:
    """Every message (by full name, ``.foxglove.Vector3``) and enum of a FileDescriptorSet."""
    messages: dict[str, _Message] = {}
    enums: set[str] = set()
    for number, file in _fields(file_set):
        if number != 1 or not isinstance(file, bytes):
            continue
        parts = _fields(file)
        package = next((_text(v) for n, v in parts if n == 2), "")
        scope = f".{package}" if package else ""
        for n, v in parts:
            if n == 4 and isinstance(v, bytes):
                _message(v, scope, messages, enums)
            elif n == 5 and isinstance(v, bytes):
                enums.add(f"{scope}.{_enum_name(v)}")
    return messages, enums


def _schema(full: str, messages: dict[str, _Message], enums: set[str]) -> dict[str, Any]:
    if full in _WELL_KNOWN:
        return dict(_WELL_KNOWN[full])
    message = messages.get(full)
    if message is None:
        raise SchemaError(f"the descriptor does not define {full}")
    properties: dict[str, Any] = {}
    for f in message.fields:
        if f.type == _MESSAGE:
            item = _schema(f.type_name, messages, enums)
        elif f.type == _ENUM:
            item = {"type": "integer"}
        elif f.type in _SCALARS:
            item = dict(_SCALARS[f.type])
        else:
            raise SchemaError(f"{full}.{f.name}: field type {f.type} has no JSON mapping")
        properties[f.name] = {"type": "array", "items": item} if f.label == _REPEATED else item
    return {
        "title": full.lstrip("."),
        "type": "object",
        "properties": properties,
        "required": [f.name for f in message.fields],
    }


@cache
def json_schema(message: str) -> dict[str, Any]:
    """The JSON Schema of Foxglove's ``message`` (``FrameTransforms``, ``SceneUpdate``...)
    from the installed SDK's own definition, titled ``foxglove.<message>``."""
    import foxglove.messages  # the SDK: its native module loads only when a schema is asked for

    kind = getattr(foxglove.messages, message, None)
    if kind is None or not hasattr(kind, "get_schema"):
        raise SchemaError(f"foxglove-sdk has no message {message!r}")
    schema = kind.get_schema()
    if schema.encoding != "protobuf":
        raise SchemaError(f"foxglove.{message}: schema encoding {schema.encoding!r}")
    messages, enums = _descriptors(bytes(schema.data))
    out = _schema(f".{schema.name}", messages, enums)
    out["$comment"] = "From foxglove-sdk's own definition (executive/records/foxglove_schemas.py)"
    return out
