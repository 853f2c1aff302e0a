"""Golden vendor layouts and the introspection that compares generated Python classes to them.

The golden data (``vendor_layout.yaml``) is a hand transcription of the vendor's headers, kept
apart from ``idl/`` on purpose: if both were derived from one source, a typo would be copied
into both and nothing would notice. This module knows nothing about ``executive.wire`` beyond
the generated classes it is handed, so the same comparison runs on the committed code and on
code regenerated from a deliberately broken copy of ``idl/`` (the mutation test).
"""

from __future__ import annotations

import importlib
import re
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import yaml
from cyclonedds.idl import IdlEnum, IdlStruct
from cyclonedds.idl import types as idl_types

GOLDEN_PATH = Path(__file__).with_name("vendor_layout.yaml")
TYPENAME_PREFIX = "dobot_atom.msg.dds_."

# cyclonedds-python has one annotation for IDL octet and uint8 (``types.uint8``); both are
# XTypes TK_BYTE in CycloneDDS 0.10 and identical on the wire (test_c_interop checks the C
# side's type information), so the Python view cannot and need not tell them apart.
PYTHON_SPELLING = {"octet": "uint8"}

_PRIMITIVES: dict[Any, str] = {
    idl_types.uint8: "uint8",
    idl_types.uint16: "uint16",
    idl_types.uint32: "uint32",
    idl_types.uint64: "uint64",
    idl_types.int8: "int8",
    idl_types.int16: "int16",
    idl_types.int32: "int32",
    idl_types.int64: "int64",
    idl_types.float32: "float",
    idl_types.float64: "double",
    idl_types.char: "char",
    bool: "boolean",
    str: "string",
}
_FIELD_TYPE = re.compile(r"^(?P<type>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<length>[1-9][0-9]*)\])?$")


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # IDL spelling, or the short name of a struct/enum
    length: int | None = None  # fixed array length; None for a single value

    def __str__(self) -> str:
        suffix = "" if self.length is None else f"[{self.length}]"
        return f"{self.name}: {self.type}{suffix}"


@dataclass(frozen=True)
class Layout:
    """A struct's fields in order, or an enum's enumerators in order (values 0, 1, ...)."""

    kind: str  # "struct" | "enum"
    members: tuple[Any, ...]  # Field for a struct, str for an enum

    def as_python_sees_it(self) -> Layout:
        if self.kind == "enum":
            return self
        return Layout(
            "struct",
            tuple(
                Field(f.name, PYTHON_SPELLING.get(f.type, f.type), f.length) for f in self.members
            ),
        )


def parse_field(name: str, spec: str) -> Field:
    m = _FIELD_TYPE.match(spec.replace(" ", ""))
    if m is None:
        raise ValueError(f"golden field {name!r}: cannot parse type {spec!r}")
    length = m.group("length")
    return Field(name, m.group("type"), None if length is None else int(length))


def _parse_layout(name: str, entry: Mapping[str, Any]) -> Layout:
    if "struct" in entry:
        fields: list[Field] = []
        for item in entry["struct"]:
            ((fname, spec),) = item.items()
            fields.append(parse_field(fname, spec))
        return Layout("struct", tuple(fields))
    if "enum" in entry:
        return Layout("enum", tuple(entry["enum"]))
    raise ValueError(f"golden type {name!r} is neither struct nor enum")


@dataclass(frozen=True)
class Golden:
    base: dict[str, Layout]
    alternatives: dict[str, dict[str, dict[str, Layout]]]  # axis -> choice -> replaced types
    presets: dict[str, dict[str, str]]

    def resolve(self, choices: Mapping[str, str]) -> dict[str, Layout]:
        """The full set of layouts for one combination of axis choices."""
        out = dict(self.base)
        for axis, choice in choices.items():
            out.update(self.alternatives[axis][choice])
        return out


def load_golden(path: Path = GOLDEN_PATH) -> Golden:
    raw = yaml.safe_load(path.read_text())
    base = {n: _parse_layout(n, e) for n, e in raw["base"].items()}
    alternatives: dict[str, dict[str, dict[str, Layout]]] = {}
    for axis, choices in raw["alternatives"].items():
        alternatives[axis] = {}
        for choice, types in choices.items():
            alternatives[axis][choice] = (
                {} if types == "base" else {n: _parse_layout(n, e) for n, e in types.items()}
            )
    return Golden(base, alternatives, {p: dict(c) for p, c in raw["presets"].items()})


# --- introspection of generated classes -------------------------------------------------------


def _resolve(ref: Any) -> Any:
    """cyclonedds keeps not-yet-imported struct references as dotted strings."""
    if isinstance(ref, str):
        module, _, attr = ref.rpartition(".")
        return getattr(importlib.import_module(module), attr)
    return ref


def _short_name(cls: type) -> str:
    typename: str = getattr(cls, "__idl_typename__", "")
    return typename.removeprefix(TYPENAME_PREFIX)


def field_type(annotation: Any) -> tuple[str, int | None, list[type]]:
    """(IDL spelling, array length, referenced classes) of one field annotation."""
    length = None
    if typing.get_origin(annotation) is typing.Annotated:
        holder = typing.get_args(annotation)[1]
        if isinstance(holder, idl_types.array):
            length = holder.length
            annotation = _resolve(holder.subtype)
        elif isinstance(holder, idl_types.sequence | idl_types.typedef):
            return (repr(holder), None, [])  # never in the Atom types: shows up as a mismatch
    if annotation in _PRIMITIVES:
        return (_PRIMITIVES[annotation], length, [])
    annotation = _resolve(annotation)
    if isinstance(annotation, type) and issubclass(annotation, IdlStruct | IdlEnum):
        return (_short_name(annotation), length, [annotation])
    return (repr(annotation), length, [])


def describe(cls: type) -> tuple[Layout, list[str], list[type]]:
    """The layout of a generated class, problems with its IDL metadata, and the classes it uses.

    Metadata problems: the IDL type name (which is what DDS matches on) must be
    ``dobot_atom.msg.dds_.<Name>``, structs must be FINAL (the firmware's types are; an
    appendable or mutable struct would be encoded differently) and keyless.
    """
    name = cls.__name__
    problems: list[str] = []
    typename = getattr(cls, "__idl_typename__", None)
    if typename != TYPENAME_PREFIX + name:
        problems.append(f"{name}: IDL type name {typename!r}, expected {TYPENAME_PREFIX + name!r}")
    if issubclass(cls, IdlEnum):
        annotations = getattr(cls, "__idl_annotations__", {})
        if annotations.get("bit_bound", 32) != 32:
            problems.append(f"{name}: enum bit_bound {annotations['bit_bound']}, expected 32")
        members: list[Enum] = list(cls)
        values = [m.value for m in members]
        if values != list(range(len(members))):
            problems.append(f"{name}: enumerator values {values}, expected 0..{len(members) - 1}")
        return Layout("enum", tuple(m.name for m in members)), problems, []
    annotations = getattr(cls, "__idl_annotations__", {})
    if annotations.get("extensibility") != "final":
        problems.append(
            f"{name}: extensibility {annotations.get('extensibility')!r}, expected 'final'"
        )
    field_annotations = {
        f: a for f, a in getattr(cls, "__idl_field_annotations__", {}).items() if a
    }
    if field_annotations:
        problems.append(f"{name}: field annotations {field_annotations}, expected none")
    idl = cls.__idl__  # type: ignore[attr-defined]
    idl.populate()
    if not idl.keyless:
        problems.append(f"{name}: has a key; the firmware's types are keyless")
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = []
    used: list[type] = []
    for fname, annotation in hints.items():
        spelling, length, refs = field_type(annotation)
        fields.append(Field(fname, spelling, length))
        used.extend(refs)
    return Layout("struct", tuple(fields)), problems, used


def reachable(roots: Iterable[type]) -> list[type]:
    """Every class reachable from ``roots`` through field types, each once, roots first."""
    seen: dict[type, None] = {}
    stack = list(roots)[::-1]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen[cls] = None
        _, _, used = describe(cls)
        stack.extend(reversed(used))
    return list(seen)


def compare(roots: Iterable[type], golden: Mapping[str, Layout], *, complete: bool) -> list[str]:
    """Problems found comparing every class reachable from ``roots`` to ``golden``.

    With ``complete``, the reachable names must be exactly the golden names (no type missing,
    none extra); otherwise only the classes present are checked (a variant package holds just
    the types it replaces and what they include).
    """
    problems: list[str] = []
    classes = reachable(roots)
    names = {c.__name__ for c in classes}
    if complete:
        if missing := sorted(set(golden) - names):
            problems.append(f"types missing from the generated code: {missing}")
        if extra := sorted(names - set(golden)):
            problems.append(f"generated types not in the golden data: {extra}")
    for cls in classes:
        name = cls.__name__
        layout, meta, _ = describe(cls)
        problems.extend(meta)
        if name not in golden:
            if not complete:
                problems.append(f"{name}: not in the golden data")
            continue
        want = golden[name].as_python_sees_it()
        if layout != want:
            problems.append(f"{name} ({cls.__module__}): {_diff(want, layout)}")
    return problems


def _diff(want: Layout, got: Layout) -> str:
    if want.kind != got.kind:
        return f"is a {got.kind}, golden says {want.kind}"
    w = [str(m) for m in want.members]
    g = [str(m) for m in got.members]
    lines = [
        f"#{i}: golden {a!r}, generated {b!r}"
        for i, (a, b) in enumerate(zip(w, g, strict=False))
        if a != b
    ]
    if len(w) != len(g):
        lines.append(f"golden has {len(w)} members, generated {len(g)}")
    return "; ".join(lines)
