"""Checkpoints in the language: where they may sit, and the mission recovery runs from one."""

from __future__ import annotations

from pathlib import Path

import py_trees
import pytest

from behaviours.actions.checkpoint import Checkpoint
from executive.language.model import Composite, Leaf, Mission, Subtree, walk
from executive.mission.build import build
from executive.mission.builders import BUILDERS
from executive.mission.checkpoints import find, names, resume_at
from executive.mission.loader import MissionLoader
from tests.mission.conftest import MISSIONS, PROFILE, Workspace, one_error

RECOVER = """
mission: m
tree:
  sequence:
    name: Top
    children:
      - log: {message: one}
      - sequence:
          name: Inner
          children:
            - log: {message: two}
            - checkpoint:
                name: Here
                recover:
                  sequence:
                    name: Take back
                    children:
                      - acquire_control: {timeout: 5}
                      - log: {message: recovering}
            - log: {message: three}
      - log: {message: four}
"""


def loaded(ws: Workspace, text: str) -> Mission:
    result = ws.check(text)
    assert result.mission is not None, "\n".join(map(str, result.diagnostics))
    return result.mission


def labels(node: py_trees.behaviour.Behaviour) -> list[str]:
    return [n.name for n in node.iterate() if not n.children]


def test_a_checkpoint_in_a_retry_is_refused_naming_file_line_and_the_ancestor(
    ws: Workspace,
) -> None:
    line, col, path, message = one_error(
        ws.check(
            """
            mission: m
            tree:
              sequence:
                - retry:
                    attempts: 2
                    child:
                      sequence:
                        - log: {message: a}
                        - checkpoint: {name: Here}
            """
        )
    )
    assert (line, col) == (9, 15)
    assert path == "tree.sequence[0].retry.child.sequence[1].checkpoint"
    assert "sequences with memory: true all the way up to the root" in message
    assert "inside a retry ('Retry x2', line 4)" in message


@pytest.mark.parametrize(
    ("composite", "said"),
    [
        ("sequence:\n    memory: false\n    children:", "a sequence with memory: false"),
        ("fallback:\n    children:", "a fallback"),
        ("parallel:\n    children:", "a parallel"),
    ],
)
def test_a_checkpoint_outside_a_memory_sequence_is_refused(
    ws: Workspace, composite: str, said: str
) -> None:
    text = (
        f"mission: m\ntree:\n  {composite}\n      - check_battery: {{min_level: 10}}\n"
        "      - checkpoint: {name: Here}\n"
    )
    line, _, path, message = one_error(ws.check(text))
    expected = 1 + next(i for i, t in enumerate(text.splitlines()) if "checkpoint" in t)
    assert line == expected and path.endswith(".checkpoint"), (line, path)
    assert f"inside {said}" in message


def test_checkpoint_names_are_unique(ws: Workspace) -> None:
    line, _, path, message = one_error(
        ws.check(
            """
            mission: m
            tree:
              sequence:
                - checkpoint: {name: Here}
                - log: {message: x}
                - checkpoint: {name: Here}
            """
        )
    )
    assert line == 6 and path == "tree.sequence[2].checkpoint.name"
    assert "declared twice (first on line 4)" in message


def test_a_checkpoint_needs_a_name(ws: Workspace) -> None:
    result = ws.check("mission: m\ntree:\n  sequence:\n    - checkpoint: {}\n")
    assert not result.ok
    assert any("name" in str(d) for d in result.diagnostics)


def test_the_recover_subtree_is_checked_as_a_start_from_anywhere(ws: Workspace) -> None:
    """A timed move in recover: the joints may be anywhere after a restart."""
    _, _, path, message = one_error(
        ws.check(
            """
            mission: m
            tree:
              sequence:
                - acquire_control: {timeout: 5}
                - move_joints: {pose: home, timeout: 12}
                - checkpoint:
                    name: Here
                    recover:
                      sequence:
                        - acquire_control: {timeout: 5}
                        - move_joints: {pose: right_carry, duration: 0.5, timeout: 8}
            """
        )
    )
    assert path.endswith("recover.sequence[1].move_joints.duration"), path
    assert message.startswith("recovered from checkpoint 'Here': duration 0.500 s is too short")


def test_resume_at_skips_up_to_the_checkpoint_in_every_ancestor(ws: Workspace) -> None:
    mission = loaded(ws, RECOVER)
    assert names(mission) == ["Here"]
    resumed = resume_at(mission, "Here")
    root = resumed.root
    assert isinstance(root, Composite) and root.name == "Top"
    inner = root.nodes[0]
    assert isinstance(inner, Composite) and inner.name == "Inner"
    assert [n.name for n in root.nodes[1:]] == ["Log: four"]
    first = inner.nodes[0]
    assert isinstance(first, Composite) and first.memory and first.name == "Recover from Here"
    recover, leaf = first.nodes
    assert recover.name == "Take back" and isinstance(leaf, Leaf) and leaf.kind == "checkpoint"
    assert [n.name for n in inner.nodes[1:]] == ["Log: three"]
    tree = build(resumed, BUILDERS)
    assert labels(tree) == [
        "Acquire control",
        "Log: recovering",
        "Here",
        "Log: three",
        "Log: four",
    ]
    assert isinstance(next(n for n in tree.iterate() if n.name == "Here"), Checkpoint)
    # the mission as it is runs the checkpoint, never its recover subtree
    assert "Log: recovering" not in labels(build(mission, BUILDERS))


def test_resume_at_through_includes_and_unknown_names(ws: Workspace) -> None:
    ws.write(
        "subtrees/part.yaml",
        """
        subtree: part
        tree:
          sequence:
            - log: {message: a}
            - checkpoint: {name: In the part}
            - log: {message: b}
        """,
    )
    mission = loaded(
        ws,
        """
        mission: m
        tree:
          sequence:
            - log: {message: before}
            - include: subtrees/part.yaml
            - log: {message: after}
        """,
    )
    resumed = resume_at(mission, "In the part")
    assert isinstance(resumed.root, Composite)
    sub = resumed.root.nodes[0]
    assert isinstance(sub, Subtree)
    assert [n.name for n in walk(resumed.root) if isinstance(n, Leaf)] == [
        "In the part",
        "Log: b",
        "Log: after",
    ]
    with pytest.raises(KeyError):
        resume_at(mission, "Nowhere")


@pytest.mark.parametrize(
    ("mission", "checkpoint", "first_leaves"),
    [
        (
            "deliver_drink",
            "Cup in hand",
            ["Acquire control", "Set FSM joint_control", "The rest at home"],
        ),
        ("serve_two_tables", "First table served", ["Acquire control", "Set FSM joint_control"]),
        ("serve_two_tables", "Second cup in hand", ["Acquire control", "Set FSM joint_control"]),
    ],
)
def test_the_shipped_missions_go_on_from_their_checkpoints(
    mission: str, checkpoint: str, first_leaves: list[str]
) -> None:
    """deliver_drink from the cup in hand drives to the table, never to the bar."""
    loaded_ = MissionLoader(PROFILE, MISSIONS).load(Path(MISSIONS / f"{mission}.yaml"))
    assert find(loaded_, checkpoint) is not None
    tree = build(resume_at(loaded_, checkpoint), BUILDERS)
    leaves = labels(tree)
    assert leaves[: len(first_leaves)] == first_leaves
    after = leaves[leaves.index(checkpoint) + 1 :]
    if mission == "deliver_drink":
        assert after[0] == "Drive to the table"
        assert "Drive to the bar" not in leaves
    elif checkpoint == "Second cup in hand":
        assert after[0] == "Navigate to tag 2"  # the second table, not the bar (tag 3)
        assert "Navigate to tag 3" not in leaves


def test_diff_names_a_change_in_a_recover_subtree_by_node_path(ws: Workspace) -> None:
    from executive.mission.diff import diff_missions, format_text

    a = loaded(ws, RECOVER)
    b = loaded(ws, RECOVER.replace("message: recovering", "message: taking back"))
    text = format_text(diff_missions(a, b), "a", "b")
    assert "~ Top/Inner/Here/Take back/Log: taking back (log): name:" in text, text
    assert "message: 'recovering' -> 'taking back'" in text
    assert "Composite(" not in text  # the subtree is walked, never printed as a value
    assert diff_missions(a, loaded(ws, RECOVER)) == []


def test_render_names_the_recover_subtree(ws: Workspace) -> None:
    from executive.mission.build import placeholder_builders
    from executive.mission.cli import key_fields

    tree = build(loaded(ws, RECOVER), placeholder_builders())
    here = next(n for n in tree.iterate() if n.name == "Here")
    assert key_fields(here) == "recover 'Take back'"
