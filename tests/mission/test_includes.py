"""Subtrees: includes with parameters, missing files, cycles, escapes, limits across files."""

from __future__ import annotations

from executive.language.model import Composite, Leaf, Subtree
from executive.mission.loader import MissionLoader
from executive.mission.registry import MAX_DEPTH
from tests.mission.conftest import PROFILE, Workspace, errors, one_error

SUB = """
subtree: greet
params:
  who: {type: string}
  times: {type: integer, default: 1, min: 1, max: 3}
tree:
  repeat:
    times: ${times}
    child:
      log: {message: 'hello ${who}'}
"""


def test_include_with_parameters(ws: Workspace) -> None:
    ws.write("subtrees/greet.yaml", SUB)
    r = ws.check(
        """
        mission: m
        tree:
          sequence:
            - include: {file: subtrees/greet.yaml, with: {who: Ada, times: 2}}
            - include: {file: subtrees/greet.yaml, name: Greet Bob, with: {who: Bob}}
        """
    )
    assert r.ok, errors(r)
    assert r.mission is not None
    root = r.mission.root
    assert isinstance(root, Composite)
    first, second = root.nodes
    assert isinstance(first, Subtree) and isinstance(second, Subtree)
    assert first.args == {"who": "Ada", "times": 2}
    assert second.name == "Greet Bob" and second.args == {"who": "Bob", "times": 1}
    messages = [leaf.args["message"] for leaf in r.mission.leaves()]
    assert messages == ["hello Ada", "hello Bob"]
    (included,) = r.mission.includes
    assert included.endswith("subtrees/greet.yaml")


def test_include_shorthand(ws: Workspace) -> None:
    ws.write("subtrees/one.yaml", "subtree: one\ntree: clear_errors\n")
    assert ws.check("mission: m\ntree:\n  include: subtrees/one.yaml\n").ok


def test_include_paths_are_relative_to_the_including_file(ws: Workspace) -> None:
    ws.write("subtrees/outer.yaml", "subtree: outer\ntree:\n  include: inner.yaml\n")
    ws.write("subtrees/inner.yaml", "subtree: inner\ntree: clear_errors\n")
    r = ws.check("mission: m\ntree:\n  include: subtrees/outer.yaml\n")
    assert r.ok, errors(r)


def test_missing_include(ws: Workspace) -> None:
    r = ws.check("mission: m\ntree:\n  include: subtrees/nope.yaml\n")
    assert one_error(r) == (
        3,
        12,
        "tree.include.file",
        "cannot include subtrees/nope.yaml: No such file or directory",
    )


def test_include_must_stay_inside_the_mission_directory(ws: Workspace) -> None:
    (ws.root.parent / "outside.yaml").write_text("subtree: x\ntree: clear_errors\n")
    r = ws.check("mission: m\ntree:\n  include: ../outside.yaml\n")
    assert "include leaves the mission directory" in one_error(r)[3]
    r = ws.check("mission: m\ntree:\n  include: /etc/passwd.yaml\n")
    assert one_error(r)[3] == "include paths are relative to the including file"
    r = ws.check("mission: m\ntree:\n  include: subtrees/x.txt\n")
    assert one_error(r)[3] == "include a .yaml file"


def test_include_cycle_is_reported_where_it_closes(ws: Workspace) -> None:
    ws.write(
        "subtrees/a.yaml",
        "subtree: a\ntree:\n  sequence:\n    - clear_errors\n    - include: b.yaml\n",
    )
    ws.write("subtrees/b.yaml", "subtree: b\ntree:\n  include: a.yaml\n")
    r = ws.check("mission: m\ntree:\n  include: subtrees/a.yaml\n")
    (d,) = r.errors
    assert d.where.file.endswith("subtrees/b.yaml")
    assert (d.where.line, d.where.col, d.path) == (3, 12, "tree.include.file")
    assert d.message == "include cycle: a.yaml -> b.yaml -> a.yaml"


def test_a_file_including_itself(ws: Workspace) -> None:
    r = ws.check("mission: m\ntree:\n  sequence:\n    - clear_errors\n    - include: m.yaml\n")
    assert one_error(r)[2:] == ("tree.sequence[1].include.file", "include cycle: m.yaml -> m.yaml")


def test_the_same_subtree_twice_is_not_a_cycle(ws: Workspace) -> None:
    ws.write("subtrees/one.yaml", "subtree: one\ntree: clear_errors\n")
    r = ws.check(
        "mission: m\ntree:\n  sequence: [{include: subtrees/one.yaml}, {include: subtrees/one.yaml}]\n"
    )
    assert r.ok


def test_include_arguments_are_checked(ws: Workspace) -> None:
    ws.write("subtrees/greet.yaml", SUB)
    r = ws.check(
        """
        mission: m
        tree:
          include:
            file: subtrees/greet.yaml
            with: {who: Ada, times: 5, extra: 1}
        """
    )
    assert [(d.where.line, d.path, d.message) for d in r.errors] == [
        (5, "tree.include.with.times", "must be <= 3, got 5"),
        (
            5,
            "tree.include.with.extra",
            "the included file has no parameter 'extra' (known: times, who)",
        ),
    ]


def test_required_include_argument(ws: Workspace) -> None:
    ws.write("subtrees/greet.yaml", SUB)
    r = ws.check("mission: m\ntree:\n  include: subtrees/greet.yaml\n")
    assert one_error(r) == (
        3,
        3,
        "tree.include",
        "missing with.who: the included file requires it (string)",
    )


def test_include_arguments_may_pass_parameters_on(ws: Workspace) -> None:
    ws.write("subtrees/greet.yaml", SUB)
    r = ws.check(
        """
        mission: m
        params:
          name: {type: string, default: Grace}
          count: {type: integer, default: 3}
        tree:
          include: {file: subtrees/greet.yaml, with: {who: '${name}', times: '${count}'}}
        """
    )
    assert r.ok, errors(r)
    assert r.mission is not None
    (leaf,) = r.mission.leaves()
    assert isinstance(leaf, Leaf) and leaf.args["message"] == "hello Grace"


def test_errors_in_an_included_file_point_into_it(ws: Workspace) -> None:
    ws.write("subtrees/bad.yaml", "subtree: bad\ntree:\n  wait: {seconds: -2}\n")
    r = ws.check("mission: m\ntree:\n  include: subtrees/bad.yaml\n")
    (d,) = r.errors
    assert d.where.file.endswith("subtrees/bad.yaml") and (d.where.line, d.path) == (
        3,
        "tree.wait.seconds",
    )


def test_include_argument_errors_show_where_the_value_came_from(ws: Workspace) -> None:
    ws.write(
        "subtrees/nav.yaml",
        "subtree: nav\nparams:\n  s: {type: number}\ntree:\n  wait: {seconds: '${s}'}\n",
    )
    r = ws.check("mission: m\ntree:\n  include: {file: subtrees/nav.yaml, with: {s: 0}}\n")
    (d,) = r.errors
    assert d.where.file.endswith("subtrees/nav.yaml")
    assert d.message.startswith("must be > 0, got 0 (${s} = 0.0 at ") and "m.yaml:3:" in d.message


def test_standalone_subtree_is_checked_with_unset_parameters(ws: Workspace) -> None:
    path = ws.write("subtrees/greet.yaml", SUB)
    r = MissionLoader(PROFILE, ws.root).check(path)
    assert r.ok and r.mission is not None
    assert r.mission.kind == "subtree" and not r.mission.complete
    (leaf,) = r.mission.leaves()
    assert leaf.args["message"] == "hello ${who}"


def test_subtree_cannot_be_started(ws: Workspace) -> None:
    path = ws.write("subtrees/greet.yaml", SUB)
    loader = MissionLoader(PROFILE, ws.root)
    try:
        loader.load(path)
    except ValueError as e:
        assert "a subtree is included by missions, not started" in str(e)
    else:
        raise AssertionError("load() accepted a subtree")


def test_nesting_limit_counts_across_includes(ws: Workspace) -> None:
    # each file adds one inverter, so a chain of files crosses the limit
    for i in range(MAX_DEPTH + 1):
        nxt = (
            f"  inverter: {{child: {{include: s{i + 1}.yaml}}}}\n"
            if i < MAX_DEPTH
            else "  clear_errors\n"
        )
        ws.write(f"subtrees/s{i}.yaml", f"subtree: s{i}\ntree:\n{nxt}")
    r = ws.check("mission: m\ntree:\n  include: subtrees/s0.yaml\n")
    assert any("nested deeper than" in d.message for d in r.errors)


def test_include_fan_out_is_bounded(ws: Workspace) -> None:
    # 10 levels of a file including the next one ten times: 10**10 nodes if unbounded
    for i in range(10):
        body = ", ".join([f"{{include: f{i + 1}.yaml}}"] * 10) if i < 9 else "clear_errors"
        ws.write(f"subtrees/f{i}.yaml", f"subtree: f{i}\ntree:\n  sequence: [{body}]\n")
    r = ws.check("mission: m\ntree:\n  include: subtrees/f0.yaml\n")
    assert any("more than" in d.message and "nodes" in d.message for d in r.errors)
