"""The JSON Schema (draft 2020-12) of scenario files (``*.test.yaml``), for editors.

As the missions' (``executive.mission.schema``): a convenience, not the authority. An
editor completes keys, results, requests and (given a robot's part) world keys and
buttons; ``executive.scenario.load`` checks all that and everything a schema cannot (the
mission's nodes, its parameters, the simulator's fault specs, the library's poses).
``atom-executive test --schema`` prints it.
"""

from __future__ import annotations

from typing import Any

from executive.scenario.load import EXPECT, TOP
from executive.scenario.model import ACTIONS, REQUESTS, RESULTS
from executive.seam.lockstep import LockstepPart

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "urn:atom-executive:schema:scenario:1"
Schema = dict[str, Any]

_NODE = {"type": "string", "minLength": 1, "description": "a node's name, or its path"}
_NODES = {"oneOf": [_NODE, {"type": "array", "items": _NODE}]}
_SECONDS = {"type": "number", "minimum": 0}
_POINT = {
    "type": "object",
    "properties": {
        "point": {"type": "string", "description": "a point of the profile's body (right_hand)"},
        "at": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3},
        "within": {"type": "number", "exclusiveMinimum": 0, "description": "m"},
    },
    "required": ["point", "at"],
    "additionalProperties": False,
}
_BASE = {
    "type": "object",
    "description": "the base's pose as the robot reports it (its map frame): a robot with "
    "navigation",
    "properties": {
        "at": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
        "within": {"type": "number", "exclusiveMinimum": 0, "description": "m"},
        "heading": {"type": "number", "description": "rad"},
        "heading_within": {"type": "number", "exclusiveMinimum": 0, "description": "rad"},
    },
    "required": ["at"],
    "additionalProperties": False,
}
_WHERE = {
    "pose": {
        "type": "string",
        "description": "a pose (or a gesture) of the mission directory's library",
    },
    "within": {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": "rad, each joint (a finger: the profile's units)",
    },
    "hand": _POINT,
    "base": _BASE,
}


def scenario_schema(robot: LockstepPart | None = None) -> Schema:
    """The schema of a scenario file; with a robot's part, its world keys and buttons."""
    world: Schema = {"type": "object", "description": TOP["world"]}
    press: Schema = {"type": "string", "description": "an operator button"}
    if robot is not None:
        world["properties"] = {k: {"description": v} for k, v in robot.world_keys.items()}
        world["additionalProperties"] = False
        press["enum"] = list(robot.buttons)
    event: Schema = {
        "type": "object",
        "properties": {
            "at": {**_SECONDS, "description": "seconds from the run's start"},
            "on_start": _NODE,
            "on_end": _NODE,
            "after": {**_SECONDS, "description": "seconds after the node started or ended"},
            "fault": {"type": "string", "description": "a fault spec of the robot's simulator"},
            "clear": {"type": "string", "description": "a fault to clear: KIND[:TARGET]"},
            "press": press,
            "request": {"enum": list(REQUESTS)},
        },
        "oneOf": [{"required": [w]} for w in ("at", "on_start", "on_end")],
        "anyOf": [{"required": [a]} for a in ACTIONS],
        "additionalProperties": False,
    }
    still = {
        "oneOf": [
            {"type": "integer", "minimum": 0},
            {
                "type": "object",
                "properties": {
                    "event": {"type": "integer", "minimum": 0},
                    "within": {"type": "number", "exclusiveMinimum": 0},
                    "until": {"type": "integer", "minimum": 0},
                },
                "required": ["event"],
                "additionalProperties": False,
            },
        ]
    }
    body = {
        "type": "object",
        "properties": {"on_start": _NODE, "on_end": _NODE, **_WHERE},
        "oneOf": [{"required": ["on_start"]}, {"required": ["on_end"]}],
        "additionalProperties": False,
    }
    expect = {
        "type": "object",
        "properties": {
            "result": {"enum": list(RESULTS)},
            "causes": {"type": "array", "items": {"type": "string"}},
            "ran": _NODES,
            "never_ran": _NODES,
            "failed_at": _NODE,
            "no_motion_after": still,
            "end": {"type": "object", "properties": _WHERE, "additionalProperties": False},
            "body": {"type": "array", "items": body},
        },
        "additionalProperties": False,
    }
    for key, what in EXPECT.items():  # (copies: the pieces above are shared)
        expect["properties"][key] = {**expect["properties"][key], "description": what}  # type: ignore[index]
    properties: Schema = {
        "test": {"type": "string", "minLength": 1},
        "mission": {"type": "string"},
        "file": {"type": "string"},
        "missions": {"type": "string"},
        "profile": {"type": "string"},
        "params": {"type": ["object", "null"]},
        "world": world,
        "events": {"type": "array", "items": event},
        "expect": expect,
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "tail": _SECONDS,
    }
    for key, what in TOP.items():
        properties[key] = {"description": what, **properties[key]}
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "Mission scenario",
        "description": "A mission's test (atom-executive test): what to run, what happens, what must come of it.",
        "type": "object",
        "properties": properties,
        "required": ["test", "expect"],
        "oneOf": [{"required": ["mission"]}, {"required": ["file"]}],
        "additionalProperties": False,
    }
