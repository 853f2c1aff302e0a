"""The shape of a mission: documents, node syntax, fields, nesting and size limits."""

from __future__ import annotations

from executive.language.model import Composite, Decorator, Leaf
from executive.mission.registry import MAX_DEPTH, MAX_NODES
from tests.mission.conftest import LEAF_LINE, Workspace, errors, leaf_mission, one_error


def test_minimal_mission_loads(ws: Workspace) -> None:
    result = ws.check(
        """
        mission: hello
        description: Say hello.
        tree:
          log: {message: hello}
        """
    )
    assert result.ok and result.mission is not None
    assert result.mission.name == "hello"
    root = result.mission.root
    assert isinstance(root, Leaf) and root.kind == "log" and root.args == {"message": "hello"}
    assert root.name == "Log: hello"


def test_document_must_be_mission_or_subtree(ws: Workspace) -> None:
    assert "exactly one" in one_error(ws.check("tree: {log: {message: x}}\n"))[3]
    r = ws.check("mission: a\nsubtree: b\ntree: {log: {message: x}}\n")
    assert one_error(r)[:2] == (2, 1)


def test_unknown_top_level_key_and_missing_tree(ws: Workspace) -> None:
    r = ws.check("mission: a\ntre: {log: {message: x}}\n")
    assert errors(r) == [
        "2:1: tre: unknown key (did you mean 'tree'?)",
        "1:1: missing 'tree:' (the mission's root node)",
    ]


def test_top_level_must_be_a_mapping(ws: Workspace) -> None:
    assert "expected a mapping" in one_error(ws.check("- just\n- a list\n"))[3]


def test_bad_mission_name(ws: Workspace) -> None:
    line, col, path, message = one_error(ws.check("mission: 'two words'\ntree: clear_errors\n"))
    assert (line, col, path) == (1, 10, "mission")


def test_unknown_kind_suggests(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- wiat: {seconds: 1}"))
    assert one_error(r) == (
        LEAF_LINE,
        9,
        "tree.sequence.children[1]",
        "unknown node kind 'wiat' (did you mean 'wait'?)",
    )


def test_other_dialect_names_get_a_hint(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- selector: [clear_errors]"))
    assert "this language calls it 'fallback'" in one_error(r)[3]


def test_unknown_field_suggests(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- wait: {secnds: 1}"))
    assert errors(r)[0] == (
        f"{LEAF_LINE}:16: tree.sequence.children[1].wait.secnds: unknown field of wait "
        "(did you mean 'seconds'?)"
    )


def test_missing_required_field(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- wait: {}"))
    assert one_error(r) == (
        LEAF_LINE,
        9,
        "tree.sequence.children[1].wait",
        "missing seconds (a number)",
    )


def test_node_with_two_keys_mentions_indentation(ws: Workspace) -> None:
    r = ws.check(
        leaf_mission(
            """
            - move_joints:
              pose: home
              timeout: 5
            """
        )
    )
    line, col, path, message = one_error(r)
    assert (line, col, path) == (LEAF_LINE, 9, "tree.sequence.children[1]")
    assert "pose, timeout should be indented under move_joints:" in message


def test_wrong_types_are_named(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- wait: {seconds: [1]}"))
    assert one_error(r)[3] == "expected a number, got a list"
    r = ws.check(leaf_mission("- log: {message: yes}"))
    assert "quote it" in one_error(r)[3]
    r = ws.check(leaf_mission("- wait: 3"))
    assert one_error(r)[3] == "expected the fields of wait as a mapping, got number 3"


def test_bare_kind_name_for_field_less_leaves(ws: Workspace) -> None:
    r = ws.check(leaf_mission("- clear_errors"))
    assert r.ok
    r = ws.check(leaf_mission("- wait"))
    assert "wait needs seconds" in one_error(r)[3]


def test_composite_shorthand_and_full_form_are_equal(ws: Workspace) -> None:
    short = ws.check("mission: a\ntree:\n  fallback: [clear_errors, clear_errors]\n")
    full = ws.check(
        "mission: a\ntree:\n  fallback:\n    memory: true\n    children: [clear_errors, clear_errors]\n"
    )
    assert short.mission is not None and full.mission is not None
    a, b = short.mission.root, full.mission.root
    assert isinstance(a, Composite) and isinstance(b, Composite)
    assert (
        (a.kind, a.memory, len(a.nodes))
        == (b.kind, b.memory, len(b.nodes))
        == ("fallback", True, 2)
    )
    assert a.nodes[1].path == "tree.fallback[1].clear_errors"
    assert b.nodes[1].path == "tree.fallback.children[1].clear_errors"


def test_memory_defaults_to_true_and_can_be_set(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          sequence:
            memory: false
            children:
              - check_battery: {min_level: 10}
              - wait: {seconds: 1}
        """
    )
    assert r.mission is not None
    root = r.mission.root
    assert isinstance(root, Composite) and root.memory is False


def test_empty_children_are_an_error(ws: Workspace) -> None:
    r = ws.check("mission: a\ntree:\n  sequence: []\n")
    assert one_error(r)[3] == "expected a list of at least one node, got a list"


def test_parallel_policy_is_checked(ws: Workspace) -> None:
    r = ws.check("mission: a\ntree:\n  parallel: {policy: any, children: [clear_errors]}\n")
    assert "unknown choice 'any'" in one_error(r)[3]


def test_decorators_take_their_fields(ws: Workspace) -> None:
    r = ws.check(
        """
        mission: a
        tree:
          retry:
            attempts: 3
            child:
              timeout:
                seconds: 2.5
                child:
                  inverter: {child: {check_battery: {min_level: 10}}}
        """
    )
    assert r.ok and r.mission is not None
    retry = r.mission.root
    assert isinstance(retry, Decorator) and retry.args == {"attempts": 3}
    assert retry.name == "Retry x3"
    timeout = retry.child
    assert isinstance(timeout, Decorator) and timeout.args == {"seconds": 2.5}


def test_retry_attempts_must_be_whole(ws: Workspace) -> None:
    r = ws.check("mission: a\ntree:\n  retry: {attempts: 2.5, child: clear_errors}\n")
    assert one_error(r)[3] == "expected a whole number, got number 2.5"


def _nested(depth: int) -> str:
    """A mission ``depth`` nodes deep: inverters down to one condition."""
    out = ["mission: deep", "tree:"]
    indent = 2
    for _ in range(depth - 1):
        out.append(" " * indent + "inverter:")
        out.append(" " * (indent + 2) + "child:")
        indent += 4
    out.append(" " * indent + "check_battery: {min_level: 10}")
    return "\n".join(out) + "\n"


def test_nesting_limit(ws: Workspace) -> None:
    assert ws.check(_nested(MAX_DEPTH)).ok
    r = ws.check(_nested(MAX_DEPTH + 1))
    line, col, path, message = one_error(r)
    assert message == f"nested deeper than {MAX_DEPTH} levels (counted across includes)"
    assert line == 2 + 2 * MAX_DEPTH + 1


def test_node_budget(ws: Workspace) -> None:
    items = "\n".join("    - clear_errors" for _ in range(MAX_NODES + 10))
    r = ws.check(f"mission: big\ntree:\n  sequence:\n{items}\n")
    assert one_error(r)[3] == f"more than {MAX_NODES} nodes (counted across includes)"
