"""The JSON Schema (draft 2020-12) of mission and library files, derived from the registry.

Editors with YAML language support (for example VS Code's YAML extension, via a
``# yaml-language-server: $schema=...`` line or a settings mapping) use it to complete
node kinds, field names, joint names, FSM states and buttons, and to flag unknown keys,
wrong types and values outside joint limits as you type.

The schema is a convenience, not the authority: the loader checks everything the schema
says and more (parameter types after substitution, includes and cycles, nesting depth,
speed caps, reactive composites). It is generated, so it cannot drift from the language.
Given a robot profile it enumerates joints (with their limits), joint sets and FSM
states; given a library it enumerates pose and gesture names.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from executive.language.kinds import PLACE_NAME
from executive.mission.params import IDENT
from executive.mission.registry import (
    BUTTONS,
    KINDS,
    MAX_FSM_ID,
    MAX_TAG,
    PARAM_TYPES,
    Category,
    Field,
    FieldType,
    NodeKind,
)
from executive.seam.body import BodySpec
from executive.seam.profile import GROUPS, RobotProfile

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:atom-executive:schema:mission:1"
REF = {"$ref": "#/$defs/param_ref"}
# a point: [x, y, z] in m, the robot's base frame (values.point)
_POINT = {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "number"}}
NAME_PATTERN = "^[a-z][a-z0-9_]{0,63}$"
Schema = dict[str, Any]


def mission_schema(
    profile: RobotProfile,
    poses: Collection[str] = (),
    gestures: Collection[str] = (),
) -> Schema:
    """The schema of a mission or subtree file."""
    defs: dict[str, Schema] = {
        "param_ref": {
            "description": "A parameter reference: ${name}",
            "type": "string",
            "pattern": r"^\$\{" + IDENT + r"\}$",
        },
        "param": _param_decl(),
        "node": _node_union(),
    }
    gen = _Generator(profile, poses, gestures)
    for kind in KINDS.values():
        defs[f"kind_{kind.name}"] = gen.kind(kind)
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "Atom mission",
        "description": "A mission (startable) or subtree (included) of the Atom mission executive.",
        "type": "object",
        "properties": {
            "mission": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
            "subtree": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"},
            "description": {"type": "string"},
            "params": {
                "type": ["object", "null"],  # "params:" with nothing under it: no parameters
                "propertyNames": {"pattern": f"^{IDENT}$"},
                "additionalProperties": {"$ref": "#/$defs/param"},
            },
            "scene": _scene(),
            "tree": {"$ref": "#/$defs/node"},
        },
        "required": ["tree"],
        "oneOf": [{"required": ["mission"]}, {"required": ["subtree"]}],
        "additionalProperties": False,
        "$defs": defs,
    }


def library_schema(section: str, profile: RobotProfile) -> Schema:
    """The schema of a file in ``poses/`` or ``gestures/``."""
    fingers = section == "gestures"
    field = "fingers" if fingers else "joints"
    gen = _Generator(profile, (), ())
    entry = {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            field: gen.targets(fingers=fingers, refs=False),
            **(
                {}
                if fingers
                else {
                    "intent": _intent(profile),
                    "solve": {
                        "description": "Solve this joint group or set for the intent "
                        "(joints, if given, are the seed).",
                        "enum": gen._selectable(),
                    },
                }
            ),
        },
        "additionalProperties": False,
    }
    if fingers:
        entry["required"] = [field]
    else:  # a pose gives its joints, or solves them for its intent
        entry["anyOf"] = [{"required": [field]}, {"required": ["solve", "intent"]}]
    return {
        "$schema": DRAFT,
        "$id": f"urn:atom-executive:schema:{section}:1",
        "title": f"Atom {section[:-1]} library",
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            section: {
                "type": "object",
                "propertyNames": {"pattern": NAME_PATTERN},
                "additionalProperties": entry,
            },
        },
        "required": [section],
        "additionalProperties": False,
    }


_XYZ: Schema = {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}


def _scene() -> Schema:
    """A mission's ``scene:`` (executive/seam/body.py parse_scene)."""
    box = {
        "type": "object",
        "properties": {"center": _XYZ, "size": _XYZ},
        "required": ["center", "size"],
        "additionalProperties": False,
    }
    plane = {
        "type": "object",
        "properties": {"z": {"type": "number"}},
        "required": ["z"],
        "additionalProperties": False,
    }
    obstacle = {
        "type": "object",
        "properties": {"box": box, "plane": plane},
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
    }
    return {
        "description": "Obstacles every move is checked against (m, the robot's base frame).",
        "type": "object",
        "additionalProperties": obstacle,
    }


def _intent(profile: RobotProfile) -> Schema:
    """A pose's ``intent:``: where points of the body should be (library.Intent)."""
    body = profile.body
    points = sorted(body.points) if isinstance(body, BodySpec) else []
    return {
        "description": "Where the pose puts points of the body (m, the robot's base frame).",
        "type": "object",
        **({"propertyNames": {"enum": points}} if points else {}),
        "additionalProperties": {
            "type": "object",
            "properties": {
                "at": {**_XYZ, "items": {"type": ["number", "null"]}},
                "within": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
            },
            "required": ["at", "within"],
            "additionalProperties": False,
        },
    }


def _param_decl() -> Schema:
    return {
        "type": "object",
        "properties": {
            "type": {"enum": [t.value for t in PARAM_TYPES]},
            "default": {"anyOf": [{"type": ["number", "string", "boolean"]}, _POINT]},
            "description": {"type": "string"},
            "min": {"type": "number"},
            "max": {"type": "number"},
        },
        "required": ["type"],
        "additionalProperties": False,
    }


def _node_union() -> Schema:
    alternatives: list[Schema] = [{"$ref": f"#/$defs/kind_{k}"} for k in KINDS]
    bare = [k.name for k in KINDS.values() if not k.required]
    alternatives.append({"enum": bare, "description": "A node kind without fields."})
    return {
        "description": "A node: a mapping with one key, the node kind.",
        "oneOf": alternatives,
    }


class _Generator:
    def __init__(
        self, profile: RobotProfile, poses: Collection[str], gestures: Collection[str]
    ) -> None:
        self.profile = profile
        self.poses = sorted(poses)
        self.gestures = sorted(gestures)

    def kind(self, kind: NodeKind) -> Schema:
        body: Schema = {
            "type": "object",
            "properties": {f.name: self.field(f) for f in kind.fields},
            "additionalProperties": False,
        }
        if kind.required:
            body["required"] = list(kind.required)
        if kind.one_of:
            body["oneOf"] = [{"required": [n]} for n in kind.one_of]
        if kind.exclusive:
            body["not"] = {"required": list(kind.exclusive)}
        forms: list[Schema] = [body]
        short = {Category.COMPOSITE: "children", Category.INCLUDE: "file"}.get(kind.category)
        short_field = kind.field(short) if short is not None else None
        if short_field is not None:  # sequence: [...] and include: file.yaml
            forms.append(self.field(short_field))
        if not kind.required:
            forms.append({"type": "null"})
        return {
            "description": kind.doc,
            "type": "object",
            "properties": {kind.name: forms[0] if len(forms) == 1 else {"anyOf": forms}},
            "required": [kind.name],
            "additionalProperties": False,
        }

    def field(self, f: Field) -> Schema:
        schema = self._plain(f)
        if f.refs and f.type in PARAM_TYPES and f.type is not FieldType.STRING:
            schema = {"anyOf": [schema, REF]}  # ${param} (text params interpolate anyway)
        return {"description": f.doc, **schema} if f.doc else schema

    def _plain(self, f: Field) -> Schema:
        t = f.type
        if t in (FieldType.NUMBER, FieldType.INTEGER, FieldType.TAG):
            return self._number(f)
        if t is FieldType.STRING:
            out: Schema = {"type": "string", "minLength": f.min_length}
            if f.max_length is not None:
                out["maxLength"] = f.max_length
            return out
        if t is FieldType.POSE:
            return self._names(self.poses)
        if t is FieldType.GESTURE:
            return self._names(self.gestures)
        if t is FieldType.CHOICE:
            return {"enum": list(f.choices)}
        if t is FieldType.JOINT_TARGETS:
            return self.targets(fingers=f.name == "fingers", refs=True)
        fixed: dict[FieldType, Schema] = {
            FieldType.BOOLEAN: {"type": "boolean"},
            FieldType.FSM_STATE: {
                "anyOf": [
                    {"enum": sorted(self.profile.fsm)},
                    {"type": "integer", "minimum": 0, "maximum": MAX_FSM_ID},
                ]
            },
            FieldType.BUTTON: {"enum": list(BUTTONS)},
            FieldType.POINT: _POINT,
            FieldType.PLACE: {"anyOf": [_POINT, {"type": "string", "pattern": PLACE_NAME}, REF]},
            FieldType.SELECTION: {
                "anyOf": [
                    {"enum": self._selectable()},
                    {"type": "array", "minItems": 1, "items": {"enum": self._selectable()}},
                ]
            },
            FieldType.NODE: {"$ref": "#/$defs/node"},
            FieldType.NODES: {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/node"}},
            FieldType.FILE: {"type": "string", "pattern": r"\.ya?ml$"},
            FieldType.ARGS: {
                "type": ["object", "null"],  # "with:" with nothing under it: no values
                "propertyNames": {"pattern": f"^{IDENT}$"},
                "additionalProperties": {"type": ["number", "string", "boolean"]},
            },
        }
        return fixed[t]

    @staticmethod
    def _number(f: Field) -> Schema:
        out: Schema = {"type": "number" if f.type is FieldType.NUMBER else "integer"}
        if f.gt is not None:
            out["exclusiveMinimum"] = f.gt
        if f.ge is not None:
            out["minimum"] = f.ge
        if f.le is not None:
            out["maximum"] = f.le
        if f.type is FieldType.TAG:
            out.update(minimum=0, maximum=MAX_TAG)
        return out

    @staticmethod
    def _names(known: list[str]) -> Schema:
        return {"enum": known} if known else {"type": "string", "pattern": NAME_PATTERN}

    def targets(self, *, fingers: bool, refs: bool) -> Schema:
        props: dict[str, Schema] = {}
        for joint in self.profile.joints.values():
            if fingers and joint.group != "hands":
                continue
            number = {"type": "number", "minimum": joint.lower, "maximum": joint.upper}
            props[joint.name] = {"anyOf": [number, REF]} if refs else number
        return {
            "type": "object",
            "minProperties": 1,
            "properties": props,
            "additionalProperties": False,
        }

    def _selectable(self) -> list[str]:
        return [*self.profile.joints, *self.profile.joint_sets, *GROUPS, "all"]
