"""Mission parameters: typed declarations, bindings, and ``${name}`` substitution.

A file declares its parameters with a type and usually a default:

    params:
      table_tag: {type: tag, default: 7, description: Tag in front of the table}
      speed: {type: number, default: 0.8, min: 0.1, max: 1.5}

and uses them as ``${table_tag}`` — as the whole value of a field (typed: the
parameter's type must suit the field, and the value then meets the field's own checks),
or inside text fields (``log.message``, ``name``) where the value is written as text.
``$${`` writes a literal ``${``. There are no expressions: a reference names a
parameter, nothing else, so nothing in a file is ever evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from executive.language.diagnostics import Diagnostics, Location
from executive.language.kinds import (
    ACCEPTS,
    MAX_TAG,
    PARAM_TYPES,
    Field,
    FieldType,
)
from executive.language.model import NO_DEFAULT, ParamDecl, Unresolved
from executive.language.values import Names, check_value, suggest
from executive.language.values import point as point_value
from executive.language.yaml_source import (
    Scalar,
    SourceError,
    YMap,
    YNode,
    YScalar,
    YSeq,
    describe,
    parse,
    parse_scalar,
    plain,
)

IDENT = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
WHOLE_REF = re.compile(r"^\$\{(" + IDENT + r")\}$")
TOKEN = re.compile(r"\$\$\{|\$\{(" + IDENT + r")\}|\$\{")
NAME_RE = re.compile(r"^" + IDENT + r"$")
_DECL_KEYS = ("type", "default", "description", "min", "max")
_TYPE_NAMES = {t.value: t for t in PARAM_TYPES}


@dataclass(frozen=True, slots=True)
class Binding:
    """A parameter and its value in force; ``origin`` is where the value was written."""

    decl: ParamDecl
    value: Any  # Unresolved when nobody gave one
    origin: Location | None


@dataclass
class Scope:
    """The parameters one file instance sees, and which of them it used."""

    file: str
    bindings: Mapping[str, Binding]
    used: set[str] = field(default_factory=set)

    def note(self, binding: Binding) -> str:
        origin = f" at {binding.origin}" if binding.origin is not None else ""
        return f" (${{{binding.decl.name}}} = {binding.value!r}{origin})"


def decl_field(decl: ParamDecl) -> Field:
    """The Field a value of ``decl`` must satisfy (its type and declared range)."""
    if decl.type is FieldType.TAG:
        return Field(decl.name, decl.type, "", ge=0, le=MAX_TAG)
    return Field(decl.name, decl.type, "", ge=decl.minimum, le=decl.maximum)


def parse_decls(node: YNode, path: str, names: Names, diags: Diagnostics) -> dict[str, ParamDecl]:
    """The ``params:`` mapping of a file, every declaration checked (defaults included)."""
    if isinstance(node, YScalar) and node.value is None:  # "params:" with nothing under it
        return {}
    if not isinstance(node, YMap):
        diags.error(
            node.where, path, f"expected a mapping of parameter declarations, got {describe(node)}"
        )
        return {}
    decls: dict[str, ParamDecl] = {}
    for name, entry in node.entries.items():
        ppath = f"{path}.{name}"
        if not NAME_RE.match(name):
            diags.error(
                entry.key_where,
                ppath,
                "parameter names are letters, digits and _, not starting with a digit",
            )
            continue
        decl = _decl(name, entry.key_where, entry.value, ppath, names, diags)
        if decl is not None:
            decls[name] = decl
    return decls


def _decl(
    name: str, key_where: Location, node: YNode, path: str, names: Names, diags: Diagnostics
) -> ParamDecl | None:
    if not isinstance(node, YMap):
        diags.error(
            node.where,
            path,
            f"expected a mapping with 'type' (and 'default'), got {describe(node)}",
        )
        return None
    values = _decl_values(node, path, diags)
    ptype = _decl_type(values, node, key_where, path, diags)
    if ptype is None:
        return None
    lo, hi = _decl_bounds(values, ptype, path, names, diags)
    description = ""
    if "description" in values:
        d = values["description"].value
        if isinstance(d, str):
            description = d
        else:
            diags.error(values["description"].where, f"{path}.description", "expected text")
    decl = ParamDecl(name, ptype, key_where, NO_DEFAULT, description, lo, hi)
    dnode = values.get("default")
    if dnode is None:
        return decl
    default: Any = Unresolved(name)  # an invalid default: reported here, quiet where used
    if isinstance(dnode.value, str) and "${" in dnode.value:
        diags.error(
            dnode.where, f"{path}.default", "a default is a value, not a parameter reference"
        )
    else:
        v, problem = check_value(dnode.value, decl_field(decl), names)
        if problem is not None:
            diags.error(dnode.where, f"{path}.default", problem)
        else:
            default = v
    return replace(decl, default=default, default_where=dnode.where)


def _decl_values(node: YMap, path: str, diags: Diagnostics) -> dict[str, YScalar]:
    values: dict[str, YScalar] = {}
    for key, entry in node.entries.items():
        if key not in _DECL_KEYS:
            diags.error(
                entry.key_where, f"{path}.{key}", f"unknown key{suggest(key, _DECL_KEYS, 'keys')}"
            )
        elif key == "default" and isinstance(entry.value, YSeq):  # a point: [x, y, z]
            values[key] = YScalar(cast(Scalar, plain(entry.value)), entry.value.where)
        elif not isinstance(entry.value, YScalar):
            diags.error(
                entry.value.where,
                f"{path}.{key}",
                f"expected a single value, got {describe(entry.value)}",
            )
        elif not entry.value.bad:
            values[key] = entry.value
    return values


def _decl_type(
    values: Mapping[str, YScalar], node: YMap, key_where: Location, path: str, diags: Diagnostics
) -> FieldType | None:
    type_node = values.get("type")
    if type_node is None:
        if "type" not in node.entries:
            diags.error(key_where, path, "missing type (one of " + ", ".join(_TYPE_NAMES) + ")")
        return None
    ptype = _TYPE_NAMES.get(type_node.value) if isinstance(type_node.value, str) else None
    if ptype is None:
        hint = suggest(str(type_node.value), _TYPE_NAMES, "types")
        diags.error(
            type_node.where, f"{path}.type", f"unknown parameter type {type_node.value!r}{hint}"
        )
    return ptype


def _decl_bounds(
    values: Mapping[str, YScalar], ptype: FieldType, path: str, names: Names, diags: Diagnostics
) -> tuple[float | None, float | None]:
    bounds: dict[str, float | None] = {"min": None, "max": None}
    for key in bounds:
        if key not in values:
            continue
        bound = values[key]
        if ptype not in (FieldType.NUMBER, FieldType.INTEGER):
            diags.error(
                bound.where, f"{path}.{key}", f"only number and integer parameters have a {key}"
            )
            continue
        v, problem = check_value(bound.value, Field(key, ptype, ""), names)
        if problem is not None:
            diags.error(bound.where, f"{path}.{key}", problem)
        else:
            bounds[key] = v
    lo, hi = bounds["min"], bounds["max"]
    if lo is not None and hi is not None and lo > hi:
        diags.error(values["max"].where, f"{path}.max", f"max {hi:g} is below min {lo:g}")
        return None, None
    return lo, hi


def resolve_ref(
    ref: str, where: Location, path: str, ftype: FieldType, scope: Scope, diags: Diagnostics
) -> Binding | None:
    """The binding ``${ref}`` names, if declared and its type suits ``ftype``."""
    binding = scope.bindings.get(ref)
    if binding is None:
        diags.error(
            where,
            path,
            f"unknown parameter ${{{ref}}}{suggest(ref, scope.bindings, 'parameters declared')}",
        )
        return None
    scope.used.add(ref)
    accepted = ACCEPTS.get(ftype, frozenset())
    if binding.decl.type not in accepted:
        diags.error(
            where,
            path,
            f"parameter ${{{ref}}} is a {binding.decl.type.value}, this field needs a {ftype.value}",
        )
        return None
    return binding


def interpolate(
    text: str, where: Location, path: str, scope: Scope, diags: Diagnostics
) -> str | None:
    """``text`` with every ``${name}`` replaced by its value as text (unresolved ones kept)."""
    out: list[str] = []
    pos = 0
    ok = True
    for m in TOKEN.finditer(text):
        out.append(text[pos : m.start()])
        pos = m.end()
        token = m.group(0)
        if token == "$${":  # noqa: S105 - an escape, not a password
            out.append("${")
        elif m.group(1) is None:
            diags.error(
                where,
                path,
                "malformed parameter reference: write ${name} (or $${ for a literal ${)",
            )
            ok = False
        else:
            binding = resolve_ref(m.group(1), where, path, FieldType.STRING, scope, diags)
            if binding is None:
                ok = False
            elif isinstance(binding.value, Unresolved):
                out.append(token)
            else:
                out.append(as_text(binding.value))
    out.append(text[pos:])
    return "".join(out) if ok else None


def as_text(value: object) -> str:
    if isinstance(value, tuple | list):  # a point
        return "[" + ", ".join(as_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class StartArgError(ValueError):
    """A ``--param NAME=VALUE`` that cannot even be sent as a start argument; the message
    is one line that names the parameter."""


def parse_start_arg(item: str) -> tuple[str, Scalar | list[float]]:
    """``NAME=VALUE`` from the command line as (name, value), the value read as YAML by the
    mission files' own rules (``3`` a number, ``true`` a boolean, ``'3'`` and ``home``
    text, ``[0.45, -0.2, 0.1]`` a point). Whether the value suits the parameter is the
    mission's check, which says where the parameter is declared; this only refuses what
    is no value at all — broken YAML, tags (``!!python/object``), dates, a list that is
    not a point, NaN, numbers of more than 30 digits — in one line, so the CLI exits 2
    instead of sending it (or printing a traceback)."""
    name, sep, text = item.partition("=")
    if not sep or not NAME_RE.match(name):
        raise StartArgError(
            f"--param {item!r}: write NAME=VALUE (NAME: letters, digits and _, "
            "not starting with a digit)"
        )
    display = f"--param {name}"
    if text.strip().startswith("["):
        return name, parse_point(text, display)
    try:
        return name, parse_scalar(text, display)
    except SourceError as e:
        d = e.diagnostic
        at = "" if d.where.line == 1 and d.where.col == 1 else f" (at {_at(d.where)} of the value)"
        message = " ".join(d.message.split())  # one line, whatever the parser said
        raise StartArgError(f"{display}: {message}{at}") from None


def parse_point(text: str, display: str) -> list[float]:
    """``[x, y, z]`` from the command line (``--param``, ``set``): three finite numbers,
    or a StartArgError in one line saying what it got."""
    try:
        tree, problems = parse(text.encode("utf-8", errors="surrogateescape"), display)
    except SourceError as e:
        problems, tree = [e.diagnostic], None
    if problems or tree is None:
        message = " ".join(problems[0].message.split()) if problems else "no value"
        raise StartArgError(f"{display}: {message}") from None
    if isinstance(tree, YSeq) and any(not isinstance(i, YScalar) for i in tree.items):
        raise StartArgError(f"{display}: a point is three numbers [x, y, z], not a nested list")
    value, problem = point_value(plain(tree))
    if problem is not None or value is None:
        raise StartArgError(f"{display}: {problem}")
    return list(value)


def _at(where: Location) -> str:
    if where.line == 1:
        return f"character {where.col}"
    return f"line {where.line}, character {where.col}"
