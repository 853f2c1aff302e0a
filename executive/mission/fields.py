"""Reading one field's value: its type and range checked, parameters substituted.

A ``FieldReader`` serves one file instance: it knows that file's parameter scope, so
``${name}`` resolves to the value the file was included (or started) with. Scalars go
through ``values.check_value``, whatever their origin; joint-target maps and joint
selections keep the location of every entry for the semantic checks that follow.
"""

from __future__ import annotations

from executive.language.diagnostics import Diagnostics, Location
from executive.language.kinds import Field, FieldType
from executive.language.model import Unresolved
from executive.language.values import EXPECTED, Names, Val, check_value
from executive.language.yaml_source import YMap, YNode, YScalar, YSeq, describe, plain
from executive.mission.params import WHOLE_REF, Scope, as_text, interpolate, resolve_ref


def expected(f: Field) -> str:
    """What a field takes, for messages."""
    if f.type is FieldType.CHOICE:
        return "one of " + ", ".join(f.choices)
    return EXPECTED[f.type]


class FieldReader:
    """Reads field values of one file instance; problems go to ``diags``."""

    def __init__(self, names: Names, diags: Diagnostics, scope: Scope) -> None:
        self.names = names
        self.diags = diags
        self.scope = scope

    def value(self, y: YNode, f: Field, path: str) -> Val | None:
        """A field's value checked, with parameters substituted; None if reported."""
        if f.type is FieldType.JOINT_TARGETS:
            return self._targets(y, path)
        if f.type is FieldType.SELECTION:
            return self._selection(y, path)
        if f.type in (FieldType.POINT, FieldType.PLACE) and isinstance(y, YSeq):
            return self._point(y, f, path)
        if not isinstance(y, YScalar):
            self.diags.error(y.where, path, f"expected {expected(f)}, got {describe(y)}")
            return None
        if y.bad:
            return None
        raw = y.value
        if isinstance(raw, str) and "${" in raw:
            return self._reference(raw, y, f, path)
        v, problem = check_value(raw, f, self.names)
        if problem is not None:
            self.diags.error(y.where, path, problem)
            return None
        return Val(v, y.where)

    def _reference(self, raw: str, y: YScalar, f: Field, path: str) -> Val | None:
        if not f.refs:
            self.diags.error(y.where, path, "parameters cannot be used here")
            return None
        m = WHOLE_REF.match(raw)
        if f.type is FieldType.STRING and m is None:
            text = interpolate(raw, y.where, path, self.scope, self.diags)
            if text is None:
                return None
            v, problem = check_value(text, f, self.names)
            if problem is not None:
                self.diags.error(y.where, path, problem)
                return None
            return Val(v, y.where, written=raw)
        if m is None:
            self.diags.error(
                y.where, path, "a parameter reference must be the whole value, as in ${name}"
            )
            return None
        binding = resolve_ref(m.group(1), y.where, path, f.type, self.scope, self.diags)
        if binding is None:
            return None
        if isinstance(binding.value, Unresolved):
            return Val(binding.value, y.where, written=raw)
        note = self.scope.note(binding)
        value = binding.value
        if f.type is FieldType.STRING:
            value = as_text(value)
        v, problem = check_value(value, f, self.names)
        if problem is not None:
            self.diags.error(y.where, path, problem + note)
            return None
        return Val(v, y.where, note, raw)

    def _point(self, y: YSeq, f: Field, path: str) -> Val | None:
        """``[x, y, z]`` written in the file (parameters are whole values: ``${cup}``)."""
        if any(
            isinstance(i, YScalar) and isinstance(i.value, str) and "${" in i.value for i in y.items
        ):
            self.diags.error(
                y.where,
                path,
                "a point's coordinates are numbers; a parameter is the whole point: ${name}",
            )
            return None
        v, problem = check_value(plain(y), f, self.names)
        if problem is not None:
            self.diags.error(y.where, path, problem)
            return None
        return Val(v, y.where)

    def _targets(self, y: YNode, path: str) -> Val | None:
        if not isinstance(y, YMap) or not y.entries:
            self.diags.error(
                y.where, path, f"expected a mapping of joint name to rad, got {describe(y)}"
            )
            return None
        out: dict[str, tuple[Location, Val]] = {}
        number = Field("joint", FieldType.NUMBER, "")
        ok = True
        for name, entry in y.entries.items():
            v = self.value(entry.value, number, f"{path}.{name}")
            if v is None:
                ok = False
            else:
                out[name] = (entry.key_where, v)
        return Val(out, y.where) if ok else None

    def _selection(self, y: YNode, path: str) -> Val | None:
        items = y.items if isinstance(y, YSeq) else (y,)
        if not items:
            self.diags.error(y.where, path, "select at least one joint, joint set or group")
            return None
        out: list[Val] = []
        for i, item in enumerate(items):
            ipath = f"{path}[{i}]" if isinstance(y, YSeq) else path
            if (
                not isinstance(item, YScalar)
                or not isinstance(item.value, str)
                or "${" in item.value
            ):
                self.diags.error(
                    item.where,
                    ipath,
                    f"expected a joint, joint set or group name, got {describe(item)}",
                )
                return None
            out.append(Val(item.value, item.where))
        return Val(tuple(out), y.where)
