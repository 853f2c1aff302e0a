"""A small JSON Schema (2020-12) validator for exactly the keywords our schema uses.

We cannot add the ``jsonschema`` package, and a structural check that ignores keywords
would prove nothing. So this validator implements every keyword the exported schema
contains, and ``KEYWORDS`` lists them: ``unknown_keywords`` finds any keyword in a
schema that this validator would silently skip, and a test asserts there are none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "default"}
KEYWORDS = ANNOTATIONS | {
    "$ref",
    "type",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "oneOf",
    "not",
}
_SUBSCHEMA_MAPS = {"properties", "$defs"}
_SUBSCHEMAS = {"additionalProperties", "propertyNames", "items", "not"}
_SUBSCHEMA_LISTS = {"anyOf", "oneOf"}


def unknown_keywords(schema: Any, path: str = "#") -> Iterator[str]:
    """Every keyword used in ``schema`` that this validator does not implement."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key not in KEYWORDS:
            yield f"{path}/{key}"
        if key in _SUBSCHEMA_MAPS:
            for name, sub in value.items():
                yield from unknown_keywords(sub, f"{path}/{key}/{name}")
        elif key in _SUBSCHEMAS:
            yield from unknown_keywords(value, f"{path}/{key}")
        elif key in _SUBSCHEMA_LISTS:
            for i, sub in enumerate(value):
                yield from unknown_keywords(sub, f"{path}/{key}/{i}")


def _type_ok(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    raise ValueError(name)


class Validator:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def errors(self, value: Any, schema: Any = None, path: str = "$") -> list[str]:
        schema = self.root if schema is None else schema
        out: list[str] = []
        if "$ref" in schema:
            ref = schema["$ref"]
            assert ref.startswith("#/$defs/"), ref
            out += self.errors(value, self.root["$defs"][ref.removeprefix("#/$defs/")], path)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_type_ok(value, t) for t in types):
                return [*out, f"{path}: not of type {types}"]
        if "enum" in schema and value not in schema["enum"]:
            out.append(f"{path}: {value!r} not in enum")
        out += self._numbers(value, schema, path)
        out += self._strings(value, schema, path)
        out += self._objects(value, schema, path)
        if isinstance(value, list):
            if len(value) < schema.get("minItems", 0):
                out.append(f"{path}: too few items")
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                out.append(f"{path}: too many items")
            if "items" in schema:
                for i, item in enumerate(value):
                    out += self.errors(item, schema["items"], f"{path}[{i}]")
        if "anyOf" in schema and not any(not self.errors(value, s, path) for s in schema["anyOf"]):
            out.append(f"{path}: matches none of anyOf")
        if "oneOf" in schema:
            matches = sum(1 for s in schema["oneOf"] if not self.errors(value, s, path))
            if matches != 1:
                out.append(f"{path}: matches {matches} of oneOf")
        if "not" in schema and not self.errors(value, schema["not"], path):
            out.append(f"{path}: matches a 'not' schema")
        return out

    @staticmethod
    def _numbers(value: Any, schema: dict[str, Any], path: str) -> list[str]:
        if not (isinstance(value, int | float) and not isinstance(value, bool)):
            return []
        out = []
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: below minimum")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: above maximum")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            out.append(f"{path}: not above exclusiveMinimum")
        return out

    @staticmethod
    def _strings(value: Any, schema: dict[str, Any], path: str) -> list[str]:
        if not isinstance(value, str):
            return []
        out = []
        if len(value) < schema.get("minLength", 0):
            out.append(f"{path}: too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{path}: too long")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: does not match {schema['pattern']}")
        return out

    def _objects(self, value: Any, schema: dict[str, Any], path: str) -> list[str]:
        if not isinstance(value, dict):
            return []
        out = [f"{path}: missing {key}" for key in schema.get("required", []) if key not in value]
        if len(value) < schema.get("minProperties", 0):
            out.append(f"{path}: too few properties")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            out.append(f"{path}: too many properties")
        props = schema.get("properties", {})
        for key, item in value.items():
            if "propertyNames" in schema:
                out += self.errors(key, schema["propertyNames"], f"{path}.{key}(name)")
            if key in props:
                out += self.errors(item, props[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                out.append(f"{path}.{key}: additional property")
            elif isinstance(schema.get("additionalProperties"), dict):
                out += self.errors(item, schema["additionalProperties"], f"{path}.{key}")
        return out
