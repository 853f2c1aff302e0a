"""The exported JSON Schema: well-formed, complete for its subset, and true to the language.

The shipped missions and libraries must satisfy the exported schema (checked with
``jsonschema_subset``, which implements every keyword the schema uses), and typical
mistakes must violate it — so the schema is neither vacuous nor stricter than the loader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from executive.mission.registry import KINDS
from executive.mission.schema import DRAFT, library_schema, mission_schema
from tests.mission.conftest import MISSIONS, PROFILE, Workspace
from tests.mission.jsonschema_subset import Validator, unknown_keywords

MISSION_SCHEMA = mission_schema(PROFILE)
FILES = sorted(MISSIONS.glob("*.yaml")) + sorted((MISSIONS / "subtrees").glob("*.yaml"))


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_schema_is_draft_2020_12_and_json() -> None:
    assert MISSION_SCHEMA["$schema"] == DRAFT
    assert json.loads(json.dumps(MISSION_SCHEMA)) == MISSION_SCHEMA


@pytest.mark.parametrize(
    "schema",
    [MISSION_SCHEMA, library_schema("poses", PROFILE), library_schema("gestures", PROFILE)],
    ids=["mission", "poses", "gestures"],
)
def test_the_checker_implements_every_keyword_the_schema_uses(schema: dict[str, Any]) -> None:
    assert list(unknown_keywords(schema)) == []


def test_every_kind_is_in_the_schema() -> None:
    defs = MISSION_SCHEMA["$defs"]
    for name, kind in KINDS.items():
        body = defs[f"kind_{name}"]["properties"][name]
        forms = body.get("anyOf", [body])
        obj = next(f for f in forms if f.get("type") == "object")
        assert set(obj["properties"]) == {f.name for f in kind.fields}
        assert set(obj.get("required", [])) == set(kind.required)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(MISSIONS)))
def test_shipped_missions_satisfy_the_schema(path: Path) -> None:
    assert Validator(MISSION_SCHEMA).errors(_load(path)) == []


def test_schema_with_library_names_lists_them() -> None:
    schema = mission_schema(PROFILE, poses=["home", "wave"], gestures=["open"])
    pose = schema["$defs"]["kind_move_joints"]["properties"]["move_joints"]["properties"]["pose"]
    assert {"enum": ["home", "wave"]} in pose["anyOf"]


@pytest.mark.parametrize("section", ["poses", "gestures"])
def test_shipped_libraries_satisfy_their_schema(section: str) -> None:
    validator = Validator(library_schema(section, PROFILE))
    for path in sorted((MISSIONS / section).glob("*.yaml")):
        assert validator.errors(_load(path)) == [], path


BROKEN = {
    "unknown top key": {"mission": "m", "tree": "clear_errors", "extra": 1},
    "no tree": {"mission": "m"},
    "unknown kind": {"mission": "m", "tree": {"teleport": {}}},
    "unknown field": {"mission": "m", "tree": {"wait": {"seconds": 1, "minutes": 2}}},
    "missing timeout": {"mission": "m", "tree": {"acquire_control": {}}},
    "zero timeout": {"mission": "m", "tree": {"acquire_control": {"timeout": 0}}},
    "unknown joint": {
        "mission": "m",
        "tree": {"move_joints": {"joints": {"elbow": 1}, "timeout": 1}},
    },
    "joint out of limits": {
        "mission": "m",
        "tree": {"move_joints": {"joints": {"head_pitch": 1.2}, "timeout": 1}},
    },
    "pose and joints": {
        "mission": "m",
        "tree": {"move_joints": {"pose": "home", "joints": {"head_yaw": 0}, "timeout": 1}},
    },
    "duration and speed": {
        "mission": "m",
        "tree": {"move_joints": {"pose": "home", "duration": 1, "speed": 1, "timeout": 1}},
    },
    "finger in move... not a finger": {
        "mission": "m",
        "tree": {"hand_gesture": {"fingers": {"head_yaw": 0}, "timeout": 1}},
    },
    "unknown FSM": {"mission": "m", "tree": {"set_fsm": {"state": "fly", "timeout": 1}}},
    "unknown button": {"mission": "m", "tree": {"wait_for_button": {"button": "Z", "timeout": 1}}},
    "two kinds in a node": {
        "mission": "m",
        "tree": {"wait": {"seconds": 1}, "log": {"message": "x"}},
    },
    "empty children": {"mission": "m", "tree": {"sequence": []}},
    "bad param type": {"mission": "m", "params": {"x": {"type": "float"}}, "tree": "clear_errors"},
    "mission and subtree": {"mission": "m", "subtree": "s", "tree": "clear_errors"},
}


@pytest.mark.parametrize("doc", list(BROKEN.values()), ids=list(BROKEN))
def test_typical_mistakes_violate_the_schema(doc: dict[str, Any]) -> None:
    assert Validator(MISSION_SCHEMA).errors(doc) != []


def test_parameter_references_are_accepted_where_typed_values_go() -> None:
    doc = {
        "mission": "m",
        "params": {"t": {"type": "tag", "default": 3}},
        "tree": {"navigate_to_tag": {"tag": "${t}", "theta": "${h}", "timeout": "${s}"}},
    }
    assert Validator(MISSION_SCHEMA).errors(doc) == []
    doc["tree"]["navigate_to_tag"]["tag"] = "t"
    assert Validator(MISSION_SCHEMA).errors(doc) != []


def test_empty_params_and_with_are_valid_to_the_schema_as_to_the_loader(ws: Workspace) -> None:
    """``params:`` and ``with:`` with nothing under them load (no parameters, no values);
    the schema said "not an object", so editors flagged valid files (found by tests/fuzz)."""
    text = (
        "mission: m\nparams:\ntree:\n  include:\n    file: subtrees/fetch_drink.yaml\n    with:\n"
    )
    ws.write("subtrees/fetch_drink.yaml", "subtree: s\ntree: clear_errors\n")
    assert ws.check(text).ok
    assert Validator(MISSION_SCHEMA).errors(yaml.safe_load(text)) == []


def test_a_scene_and_an_intent_are_in_the_schemas_as_the_loader_reads_them() -> None:
    mission = {
        "mission": "m",
        "scene": {"table": {"box": {"center": [0.5, 0, -0.1], "size": [0.6, 1, 0.05]}}},
        "tree": {"wait": {"seconds": 1}},
    }
    assert Validator(MISSION_SCHEMA).errors(mission) == []
    mission["scene"] = {"table": {"box": {"center": [0.5, 0]}}}
    assert Validator(MISSION_SCHEMA).errors(mission) != []
    poses = Validator(library_schema("poses", PROFILE))
    pose = {"joints": {"head_yaw": 0.0}, "intent": {"gaze": {"at": [0.5, 0, 0.4], "within": 0.05}}}
    assert poses.errors({"poses": {"p": pose}}) == []
    pose["intent"] = {"nose": {"at": [0.5, 0, 0.4], "within": 0.05}}
    assert poses.errors({"poses": {"p": pose}}) != []
