"""``atom-executive diff A.yaml B.yaml``: what changed between two missions, as trees.

Both files are loaded as the service would start them (includes expanded, parameters
resolved to their defaults or ``--param`` values), so a review sees what the robot would
run, not how the YAML happens to be spelled: a changed default in a subtree shows up at
every node it reaches, a renamed include file with the same content shows nothing.

Nodes are named by their *node path*: the names from the root down, joined with ``/``
(a name shared by siblings gets ``[n]``, its 1-based occurrence). Children of two matched
nodes are aligned by (kind, name) as ``difflib`` aligns lines; in a replaced run, nodes
of the same kind at the same offset are the same node with changed fields (a default
name follows its parameters: "Navigate to tag 3" -> "Navigate to tag 4" is a changed
``tag``, not a removal and an addition). A node removed in one place and added with the
same content in another is reported once, as moved.

The parameters a mission declares are its interface (``start --param NAME=VALUE``), so they
are compared too, by name, before the tree: a parameter added, removed (a renamed one is
both: the old name is refused by a start that passed it) or with another type, default or
range, as ``params.NAME`` (kind ``param``). A rename that changes nothing the robot does
was said as no difference at all (issue 35, 6).

Exit status: 0 the same, 1 they differ, 2 a file is invalid or the usage is wrong (as
``diff(1)``).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from executive.language.model import (
    Composite,
    Decorator,
    Guard,
    Leaf,
    Mission,
    Node,
    ParamDecl,
    Subtree,
    Unresolved,
)
from executive.text import printable

EXIT_SAME, EXIT_DIFFERENT, EXIT_TROUBLE = 0, 1, 2

ADDED, REMOVED, MOVED, CHANGED = "added", "removed", "moved", "changed"


@dataclass(frozen=True)
class Change:
    """One difference. ``path`` is the node path in B (in A for a removal); ``field`` and
    ``before``/``after`` are set for CHANGED; ``before`` holds A's path for MOVED."""

    what: str
    path: str
    kind: str
    field: str = ""
    before: str = ""
    after: str = ""


def node_kind(node: Node) -> str:
    """The key the node has in the file (``include`` for a subtree, ``guard`` for a guard)."""
    if isinstance(node, Leaf | Composite | Decorator):
        return node.kind
    if isinstance(node, Subtree):
        return "include"
    if isinstance(node, Guard):
        return "guard"
    return type(node).__name__.lower()


def _flat(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, Mapping):
        for k in sorted(value, key=str):
            _flat(f"{prefix}.{k}" if prefix else str(k), value[k], out)
        return
    out[prefix] = format_value(value)


def format_value(value: Any) -> str:
    """A field's value as one printable line (floats as Python writes them, exactly)."""
    if isinstance(value, Unresolved):
        return str(value)
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, tuple | list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return printable(str(value) if not isinstance(value, str) else repr(value))


def kids(node: Node) -> tuple[Node, ...]:
    """A node's children as the diff walks them: a leaf's subtrees (a checkpoint's
    ``recover``) count as its children, so a change in one is said by node path."""
    if isinstance(node, Leaf):
        return tuple(v for v in node.args.values() if isinstance(v, Node))
    return node.children()


def node_fields(node: Node) -> dict[str, str]:
    """The fields of a node that decide what it does, flattened to dotted keys."""
    out: dict[str, str] = {}
    if isinstance(node, Leaf):
        _flat("", {k: v for k, v in node.args.items() if not isinstance(v, Node)}, out)
    elif isinstance(node, Composite):
        out["memory"] = format_value(node.memory)
        if node.policy is not None:
            out["policy"] = format_value(node.policy)
    elif isinstance(node, Decorator):
        _flat("", node.args, out)
    elif isinstance(node, Subtree):
        out["file"] = format_value(node.file)
        _flat("with", node.args, out)
    return out


def _fingerprint(node: Node) -> tuple[Any, ...]:
    """Everything about a subtree (kind, name, fields, children): equal means the same."""
    return (
        node_kind(node),
        node.name,
        tuple(sorted(node_fields(node).items())),
        tuple(_fingerprint(c) for c in kids(node)),
    )


def _child_paths(parent: str, children: Sequence[Node]) -> list[str]:
    counts: dict[str, int] = {}
    for c in children:
        counts[c.name] = counts.get(c.name, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for c in children:
        seen[c.name] = seen.get(c.name, 0) + 1
        name = printable(c.name).replace("/", "\\/")
        if counts[c.name] > 1:
            name += f"[{seen[c.name]}]"
        out.append(f"{parent}/{name}")
    return out


def _root_path(node: Node) -> str:
    return printable(node.name).replace("/", "\\/")


class _Differ:
    def __init__(self) -> None:
        self.changes: list[Change] = []
        self.added: list[tuple[str, Node]] = []
        self.removed: list[tuple[str, Node]] = []

    def node(self, a: Node, b: Node, path_a: str, path_b: str) -> None:
        kind = node_kind(b)
        if a.name != b.name:
            self.changes.append(Change(CHANGED, path_b, kind, "name", repr(a.name), repr(b.name)))
        fa, fb = node_fields(a), node_fields(b)
        for key in sorted(fa.keys() | fb.keys()):
            before, after = fa.get(key, "(absent)"), fb.get(key, "(absent)")
            if before != after:
                self.changes.append(Change(CHANGED, path_b, kind, key, before, after))
        self.children(kids(a), kids(b), path_a, path_b)

    def children(self, ca: Sequence[Node], cb: Sequence[Node], path_a: str, path_b: str) -> None:
        pa, pb = _child_paths(path_a, ca), _child_paths(path_b, cb)
        keys_a = [(node_kind(n), n.name) for n in ca]
        keys_b = [(node_kind(n), n.name) for n in cb]
        matcher = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    self.node(ca[i], cb[j], pa[i], pb[j])
                continue
            i, j = i1, j1
            while i < i2 and j < j2 and keys_a[i][0] == keys_b[j][0]:
                self.node(ca[i], cb[j], pa[i], pb[j])
                i, j = i + 1, j + 1
            self.removed.extend((pa[k], ca[k]) for k in range(i, i2))
            self.added.extend((pb[k], cb[k]) for k in range(j, j2))

    def finish(self) -> list[Change]:
        """Pair removals with additions of the same content as moves; order by path."""
        removed = list(self.removed)
        out = list(self.changes)
        for path_b, node in self.added:
            fp = _fingerprint(node)
            match = next((k for k, (_, n) in enumerate(removed) if _fingerprint(n) == fp), None)
            if match is None:
                out.append(Change(ADDED, path_b, node_kind(node)))
            else:
                path_a, _ = removed.pop(match)
                out.append(Change(MOVED, path_b, node_kind(node), before=path_a))
        out.extend(Change(REMOVED, p, node_kind(n)) for p, n in removed)
        return out


def param_fields(decl: ParamDecl) -> dict[str, str]:
    """What a declared parameter accepts and defaults to (its description is prose)."""
    return {
        "type": decl.type.value,
        "default": "(none: required)" if decl.required else format_value(decl.default),
        "min": format_value(decl.minimum),
        "max": format_value(decl.maximum),
    }


def diff_params(a: Mission, b: Mission) -> list[Change]:
    """The declared parameters of two missions compared by name, in B's order then A's."""
    out = []
    for name in [*b.params, *(n for n in a.params if n not in b.params)]:
        path = f"params.{printable(name)}"
        if name not in a.params:
            out.append(Change(ADDED, path, "param"))
        elif name not in b.params:
            out.append(Change(REMOVED, path, "param"))
        else:
            fa, fb = param_fields(a.params[name]), param_fields(b.params[name])
            out.extend(
                Change(CHANGED, path, "param", key, fa[key], fb[key])
                for key in fa
                if fa[key] != fb[key]
            )
    return out


def diff_missions(a: Mission, b: Mission) -> list[Change]:
    """Every difference between two loaded missions: their parameters, then their trees
    by node path."""
    differ = _Differ()
    if a.name != b.name:
        differ.changes.append(Change(CHANGED, "", "mission", "mission", repr(a.name), repr(b.name)))
    differ.changes.extend(diff_params(a, b))
    root_a, root_b = _root_path(a.root), _root_path(b.root)
    if node_kind(a.root) == node_kind(b.root):
        differ.node(a.root, b.root, root_a, root_b)
    else:
        differ.removed.append((root_a, a.root))
        differ.added.append((root_b, b.root))
    return differ.finish()


_SIGN = {ADDED: "+", REMOVED: "-", MOVED: ">", CHANGED: "~"}


def format_text(changes: Sequence[Change], name_a: str, name_b: str) -> str:
    """One line a change: ``~ path (kind): field: before -> after``."""
    lines = [f"--- {printable(name_a)}", f"+++ {printable(name_b)}"]
    for c in changes:
        where = c.path or "(mission)"
        if c.what == CHANGED:
            lines.append(f"~ {where} ({c.kind}): {c.field}: {c.before} -> {c.after}")
        elif c.what == MOVED:
            lines.append(f"> {where} ({c.kind}): moved from {c.before}")
        else:
            lines.append(f"{_SIGN[c.what]} {where} ({c.kind}): {c.what}")
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def format_md(changes: Sequence[Change], name_a: str, name_b: str) -> str:
    """A Markdown table for a pull request."""
    lines = [
        f"**Mission diff** `{_md(printable(name_a))}` → `{_md(printable(name_b))}`: "
        f"{len(changes)} change(s)",
        "",
        "| change | node | kind | field | before | after |",
        "|---|---|---|---|---|---|",
    ]
    for c in changes:
        before = c.before if c.what != MOVED else f"at {c.before}"
        lines.append(
            f"| {c.what} | {_md(c.path or '(mission)')} | {c.kind} | {_md(c.field)} "
            f"| {_md(before)} | {_md(c.after)} |"
        )
    return "\n".join(lines)


def walk_paths(node: Node, path: str) -> Iterator[tuple[str, Node]]:
    """Every node with its node path, parents first (what the diff names nodes by)."""
    yield path, node
    children = kids(node)
    for child_path, child in zip(_child_paths(path, children), children, strict=True):
        yield from walk_paths(child, child_path)


# -- the command ---------------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    """Register ``diff`` on an argparse subparsers object."""
    p = sub.add_parser(
        "diff",
        description=(
            "Compare two missions' declared parameters and the trees they run (includes "
            "expanded, parameters resolved): parameters added, removed or changed, nodes "
            "added, removed, moved, and fields changed, by node path. "
            "Exit status 0 the same, 1 different, 2 trouble."
        ),
    )
    p.add_argument("a", metavar="A.yaml", type=Path)
    p.add_argument("b", metavar="B.yaml", type=Path)
    p.add_argument("--format", choices=("text", "md"), default="text")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="resolve both missions with this parameter value (as `start --param`)",
    )
    p.add_argument("--profile", default=None, help="robot profile name or path")
    p.add_argument("--root", type=Path, help="mission directory; default: found from each file")
    p.set_defaults(handler=diff_cmd)


def diff_cmd(args: argparse.Namespace) -> int:
    # the loader and the CLI helpers sit above this module's model-only code
    from executive.mission.cli import _profile, _start_args
    from executive.mission.loader import MissionLoader
    from executive.seam.profile import DEFAULT_PROFILE

    profile = _profile(args.profile or DEFAULT_PROFILE)
    if profile is None:
        return EXIT_TROUBLE
    start_args = _start_args(args.param, [args.a])
    if start_args is None:
        return EXIT_TROUBLE
    loader = MissionLoader(profile, args.root)
    missions: list[Mission] = []
    for path in (args.a, args.b):
        result = loader.check(path, start_args or None)
        for d in result.diagnostics:
            if d.is_error:
                print(d, file=sys.stderr)  # noqa: T201 - CLI output
        if result.mission is None or result.mission.kind != "mission":
            what = "is invalid" if not result.ok else "is not a mission"
            print(f"error: {printable(str(path))} {what}", file=sys.stderr)  # noqa: T201
            return EXIT_TROUBLE
        missions.append(result.mission)
    changes = diff_missions(missions[0], missions[1])
    if not changes:
        return EXIT_SAME
    fmt = format_md if args.format == "md" else format_text
    print(fmt(changes, str(args.a), str(args.b)))  # noqa: T201 - CLI output
    return EXIT_DIFFERENT
