"""Mission parameters: declarations, typed substitution, interpolation, start arguments."""

from __future__ import annotations

import pytest

from executive.language.model import Leaf
from executive.mission.loader import MissionLoader
from tests.mission.conftest import PROFILE, Workspace, errors, one_error


def _mission(params: str, leaf: str) -> str:
    return f"mission: p\nparams:\n{params}\ntree:\n  {leaf}\n"


def test_parameter_fills_a_typed_field(ws: Workspace) -> None:
    r = ws.check(
        _mission("  t: {type: tag, default: 12}", "navigate_to_tag: {tag: '${t}', timeout: 60}")
    )
    assert r.ok and r.mission is not None
    (leaf,) = r.mission.leaves()
    assert leaf.args["tag"] == 12
    assert leaf.name == "Navigate to tag 12"
    assert r.mission.args == {"t": 12}


def test_unquoted_reference_works_in_block_style(ws: Workspace) -> None:
    # In flow style ({...}) YAML reads "${" as the start of a mapping: quote it there.
    r = ws.check(_mission("  s: {type: number, default: 2}", "wait:\n    seconds: ${s}"))
    assert r.ok, errors(r)
    r = ws.check(_mission("  s: {type: number, default: 2}", "wait: {seconds: ${s}}"))
    assert "not valid YAML" in one_error(r)[3]


def test_reference_to_an_undeclared_parameter(ws: Workspace) -> None:
    r = ws.check(_mission("  seconds: {type: number, default: 2}", "wait: {seconds: '${secnds}'}"))
    line, col, path, message = one_error(r)
    assert (line, col, path) == (5, 19, "tree.wait.seconds")
    assert message == "unknown parameter ${secnds} (did you mean 'seconds'?)"


def test_parameter_type_must_suit_the_field(ws: Workspace) -> None:
    r = ws.check(_mission("  p: {type: pose, default: home}", "wait: {seconds: '${p}'}"))
    assert one_error(r)[3] == "parameter ${p} is a pose, this field needs a number"


def test_integer_parameter_fills_a_number_field(ws: Workspace) -> None:
    assert ws.check(_mission("  n: {type: integer, default: 2}", "wait: {seconds: '${n}'}")).ok


def test_substituted_value_meets_the_field_range(ws: Workspace) -> None:
    r = ws.check(_mission("  n: {type: number, default: 0}", "wait: {seconds: '${n}'}"))
    line, col, path, message = one_error(r)
    assert (line, path) == (5, "tree.wait.seconds")
    assert message.startswith("must be > 0, got 0 (${n} = 0.0 at ")
    assert message.endswith("m.yaml:3:30)")  # where the default was written


def test_default_is_checked_against_its_type(ws: Workspace) -> None:
    r = ws.check(_mission("  n: {type: integer, default: 1.5}", "wait: {seconds: '${n}'}"))
    assert one_error(r)[:3] == (3, 31, "params.n.default")


def test_default_is_checked_against_min_and_max(ws: Workspace) -> None:
    r = ws.check(
        _mission("  n: {type: number, default: 9, min: 1, max: 5}", "wait: {seconds: '${n}'}")
    )
    assert one_error(r)[2:] == ("params.n.default", "must be <= 5, got 9")


def test_pose_parameter_must_name_a_pose(ws: Workspace) -> None:
    r = ws.check(
        _mission("  p: {type: pose, default: hoem}", "move_joints: {pose: '${p}', timeout: 5}")
    )
    assert one_error(r)[2:] == ("params.p.default", "unknown pose 'hoem' (did you mean 'home'?)")


@pytest.mark.parametrize(
    ("decl", "path", "needle"),
    [
        ("  x: {type: float, default: 1}", "params.x.type", "unknown parameter type 'float'"),
        ("  x: {default: 1}", "params.x", "missing type"),
        ("  x: {type: number, defualt: 1}", "params.x.defualt", "did you mean 'default'"),
        ("  x: {type: string, min: 1, default: a}", "params.x.min", "only number and integer"),
        ("  x: {type: number, min: 5, max: 1, default: 3}", "params.x.max", "below min"),
        ("  1x: {type: number, default: 1}", "params.1x", "parameter names"),
        ("  x: {type: number, default: '${y}'}", "params.x.default", "not a parameter reference"),
        ("  x: 3", "params.x", "expected a mapping with 'type'"),
    ],
)
def test_bad_declarations(ws: Workspace, decl: str, path: str, needle: str) -> None:
    r = ws.check(_mission(decl, "clear_errors"))
    matching = [d for d in r.diagnostics if d.is_error and d.path == path]
    assert matching and needle in matching[0].message, errors(r)


def test_a_mission_parameter_needs_a_default(ws: Workspace) -> None:
    r = ws.check(_mission("  t: {type: tag}", "navigate_to_tag: {tag: '${t}', timeout: 60}"))
    assert one_error(r)[2:] == (
        "params.t",
        "a mission's parameters need a default (only a subtree may require them)",
    )


def test_text_fields_interpolate(ws: Workspace) -> None:
    r = ws.check(
        _mission(
            "  t: {type: tag, default: 7}\n  ok: {type: boolean, default: true}",
            "log: {message: 'table ${t}, ready ${ok}, literal $${t}', name: 'Report ${t}'}",
        )
    )
    assert r.mission is not None
    (leaf,) = r.mission.leaves()
    assert leaf.args["message"] == "table 7, ready true, literal ${t}"
    assert leaf.name == "Report 7"


def test_malformed_reference_in_text(ws: Workspace) -> None:
    r = ws.check(_mission("  t: {type: tag, default: 7}", "log: {message: 'table ${t'}"))
    assert "malformed parameter reference" in one_error(r)[3]


def test_reference_must_be_the_whole_value_outside_text(ws: Workspace) -> None:
    r = ws.check(_mission("  s: {type: number, default: 2}", "wait: {seconds: '1${s}'}"))
    assert one_error(r)[3] == "a parameter reference must be the whole value, as in ${name}"


def test_structural_fields_take_no_parameters(ws: Workspace) -> None:
    r = ws.check(
        _mission(
            "  m: {type: boolean, default: true}",
            "sequence: {memory: '${m}', children: [clear_errors]}",
        )
    )
    assert one_error(r)[3] == "parameters cannot be used here"


def test_parameters_in_joint_targets(ws: Workspace) -> None:
    r = ws.check(
        _mission(
            "  yaw: {type: number, default: 2.0}",
            "move_joints: {joints: {head_yaw: '${yaw}'}, timeout: 5}",
        )
    )
    line, col, path, message = one_error(r)
    assert path == "tree.move_joints.joints.head_yaw"
    assert message.startswith("2 rad is outside head_yaw's limits [-1.57, 1.57] (${yaw} = 2.0 at")


def test_unused_parameter_is_a_warning(ws: Workspace) -> None:
    r = ws.check(_mission("  spare: {type: number, default: 1}", "clear_errors"))
    assert r.ok
    (d,) = r.diagnostics
    assert (d.is_error, d.path, d.message) == (False, "params.spare", "declared but never used")


def test_start_arguments_override_defaults(ws: Workspace) -> None:
    path = ws.write(
        "m.yaml",
        _mission("  t: {type: tag, default: 12}", "navigate_to_tag: {tag: '${t}', timeout: 60}"),
    )
    loader = MissionLoader(PROFILE, ws.root)
    mission = loader.load(path, {"t": 44})
    (leaf,) = mission.leaves()
    assert isinstance(leaf, Leaf) and leaf.args["tag"] == 44


def test_start_arguments_are_checked(ws: Workspace) -> None:
    text = _mission("  t: {type: tag, default: 12}", "navigate_to_tag: {tag: '${t}', timeout: 60}")
    r = ws.check(text, args={"t": "twelve", "x": 1})
    assert [(d.path, d.message) for d in r.errors] == [
        ("params.t", "start argument: expected a tag id (0..4294967295), got text 'twelve'"),
        ("params", "start argument 'x' is not a parameter (known: t)"),
    ]


def test_empty_params_section(ws: Workspace) -> None:
    assert ws.check("mission: p\nparams:\ntree: clear_errors\n").ok
