"""Pictures of a mission's tree: ASCII for terminals, Graphviz dot and SVG for documents.

Rendering uses py_trees' own display module on the tree ``build`` makes (with
placeholder leaves when no behaviours are plugged in), so what you see is the structure
that will run: composite types, memory flags, decorators, guards.
"""

from __future__ import annotations

import shutil

import py_trees

FORMATS = ("ascii", "dot", "svg")


class RenderError(RuntimeError):
    """A format that cannot be produced here (svg without Graphviz)."""


def render(root: py_trees.behaviour.Behaviour, fmt: str) -> str:
    """The tree under ``root`` as ``ascii``, ``dot`` or ``svg`` text."""
    if fmt == "ascii":
        return str(py_trees.display.ascii_tree(root))
    graph = py_trees.display.dot_tree(root)
    if fmt == "dot":
        return str(graph.to_string())
    if fmt == "svg":
        if shutil.which("dot") is None:
            raise RenderError(
                "svg needs Graphviz's 'dot' program: install the Debian package graphviz "
                "(apt-get install graphviz), or render --format dot and convert elsewhere"
            )
        data = graph.create(format="svg")  # bytes (pydot's annotation says str)
        return data.decode("utf-8") if isinstance(data, bytes) else str(data)
    raise RenderError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
