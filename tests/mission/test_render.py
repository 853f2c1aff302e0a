"""Rendering a mission's tree as ASCII and Graphviz dot (and svg when Graphviz is there)."""

from __future__ import annotations

import shutil
from pathlib import Path

import py_trees
import pytest

from executive.mission.build import build, placeholder_builders
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
