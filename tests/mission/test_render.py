"""Rendering a mission's tree as ASCII and Graphviz dot (and svg when Graphviz is there)."""

from __future__ import annotations

import shutil
from pathlib import Path

import py_trees
import pytest

from executive.mission.build import build, placeholder_builders
from executive.mission.cli import main, with_fields
from executive.mission.loader import MissionLoader
from executive.mission.render import RenderError, render
from tests.mission.conftest import MISSIONS, PROFILE


@pytest.fixture(scope="module")
def tree() -> py_trees.behaviour.Behaviour:
    mission = MissionLoader(PROFILE).load(MISSIONS / "head_scan.yaml")
    return build(mission, placeholder_builders())


def test_ascii(tree: py_trees.behaviour.Behaviour) -> None:
    text = render(tree, "ascii")
    lines = text.splitlines()
    assert lines[0] == "{-} Head scan"
    assert "    [-] While the battery holds" in lines  # the guard: a sequence without memory
    assert "        --> Battery >= 20 %" in lines
    assert "        -^- Repeat x2" in lines
    assert "                --> Look down at the table" in lines


def test_dot(tree: py_trees.behaviour.Behaviour) -> None:
    text = render(tree, "dot")
    assert text.startswith("digraph")
    for name in ("Head scan", "While the battery holds", "Repeat x2", "Look down at the table"):
        assert name in text


def test_svg_needs_graphviz(tree: py_trees.behaviour.Behaviour) -> None:
    if shutil.which("dot") is None:
        with pytest.raises(RenderError, match="Debian package graphviz"):
            render(tree, "svg")
    else:
        assert "<svg" in render(tree, "svg")


def test_unknown_format(tree: py_trees.behaviour.Behaviour) -> None:
    with pytest.raises(RenderError, match="unknown format"):
        render(tree, "png")


@pytest.mark.parametrize("path", sorted(MISSIONS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_mission_renders(path: Path) -> None:
    root = build(MissionLoader(PROFILE).load(path), placeholder_builders())
    assert render(root, "ascii").startswith(("{-}", "[-]", "{o}", "[o]", "/_/"))
    assert render(root, "dot").startswith("digraph")


def test_render_shows_each_nodes_key_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(MISSIONS / "pick_and_place.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()

    def fields(name: str) -> str:
        line = next(x for x in lines if name in x)
        return line.split(name, 1)[1].strip()

    assert fields("Move to pose shelf_a_grasp") == (
        "pose shelf_a_grasp, speed 0.3 rad/s, tolerance 0.03 rad, timeout 6 s"
    )
    assert fields("Gesture right_pinch") == (
        "gesture right_pinch, duration 1.7 s, tolerance 0.05 rad, timeout 4 s"
    )
    assert fields("Pick at A") == "attempts 3"
    assert fields("Pick within 90 s") == "timeout 90 s"
    assert fields("Set FSM joint_control") == "state joint_control, timeout 5 s"
    assert fields("{o} Spot A, else spot B") == ""  # a composite: nothing beside it
    # the fields start in one column
    assert len({x.rindex(" pose ") for x in lines if "--> Move to pose" in x}) == 1


EVIL = r"""
mission: evil
description: names and a message that try to drive the terminal
tree:
  sequence:
    name: "Evil\e[31m\rstate: IDLE"
    children:
      - log:
          message: "\e[2J\e[Hsafety: CLEAR\a"
      - wait:
          name: "\u202eWait"
          seconds: 1
"""


@pytest.mark.parametrize("fmt", ["ascii", "dot"])
def test_render_shows_mission_text_as_text(
    tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "evil.yaml").write_text(EVIL)
    assert main(["render", str(tmp_path / "evil.yaml"), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert not set(out) & {"\x1b", "\x07", "\r", "\u202e"}, repr(out)
    assert "Evil\\x1b[31m\\rstate: IDLE" in out and "\\u202eWait" in out
    if fmt == "ascii":
        assert "message '\\x1b[2J\\x1b[Hsafety: CLEAR\\x07'" in out, out
        assert "seconds 1 s" in out


def test_fields_are_left_off_rather_than_misplaced(tree: py_trees.behaviour.Behaviour) -> None:
    """If py_trees ever drew a node on two lines, fields would go beside the wrong
    nodes: the tree is then shown as py_trees drew it."""
    text = render(tree, "ascii")
    fields = ["x"] * (len(text.splitlines()) + 1)
    assert with_fields(text, tree, fields) == text
