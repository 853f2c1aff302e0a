"""``atom-executive validate | schema | render``: the mission language from the shell.

``validate FILE...`` prints every problem of every file as
``file:line:col: path.to.field: message`` (warnings say ``warning:``) and exits 1 if
any is an error, 0 otherwise; a file that cannot even be read is just another problem.
``validate FILE --param NAME=VALUE`` checks one mission as started with those values;
a value that is no value at all (broken YAML, a tag, a date, NaN) is a usage error: one
line naming the parameter, exit 2.
``schema`` prints the JSON Schema of mission (or library) files; ``render`` draws a
mission's tree as ASCII, Graphviz dot or SVG. The ASCII tree shows each node's key fields
beside its name (pose, gesture, duration, speed, timeout, tag, button...; a decorator's
count or seconds), and every name and value from the file passes ``printable`` first:
a mission may hold anything, and ``render`` prints it to a terminal.

``add_parsers(sub)`` registers the three on the main CLI; ``python -m
executive.mission.cli`` runs them on their own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import py_trees

from executive.language.diagnostics import Diagnostic
from executive.language.model import Node
from executive.mission.build import BuildError, build, placeholder_builders
from executive.mission.loader import MissionLoader
from executive.mission.params import StartArgError, parse_start_arg
from executive.mission.render import FORMATS, RenderError, render
from executive.mission.schema import library_schema, mission_schema
from executive.seam.profile import DEFAULT_PROFILE, ProfileError, RobotProfile, load_profile
from executive.text import printable

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def add_parsers(sub: Any) -> None:
    """Register ``validate``, ``schema`` and ``render`` on an argparse subparsers object
    (their one-line summaries are ``executive.cli.COMMANDS``'s)."""
    p = sub.add_parser(
        "validate",
        description=(
            "Check mission, subtree and pose/gesture library files against the mission "
            "language and the robot profile. Exit status 1 if any file has an error."
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", type=Path)
    _common(p)
    p.add_argument("-q", "--quiet", action="store_true", help="print problems only")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="check one mission as started with this parameter value (as `start --param`)",
    )
    p.set_defaults(handler=validate_cmd)

    s = sub.add_parser(
        "schema",
        description="Print the JSON Schema editors use to complete and check mission files.",
    )
    s.add_argument(
        "--document",
        choices=("mission", "poses", "gestures"),
        default="mission",
        help="which kind of file (default: mission)",
    )
    s.add_argument(
        "--root",
        type=Path,
        help="a mission directory whose pose and gesture names the schema should list",
    )
    s.add_argument("--profile", default=DEFAULT_PROFILE, help="robot profile name or path")
    s.set_defaults(handler=schema_cmd)

    r = sub.add_parser(
        "render",
        description="Draw the behaviour tree a mission file builds.",
    )
    r.add_argument("file", metavar="FILE", type=Path)
    r.add_argument("--format", choices=FORMATS, default="ascii")
    r.add_argument("-o", "--output", type=Path, help="write here instead of standard output")
    _common(r)
    r.set_defaults(handler=render_cmd)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="robot profile name or path")
    p.add_argument(
        "--root",
        type=Path,
        help="mission directory (poses/, gestures/); default: found from each file",
    )


def _profile(name: str) -> RobotProfile | None:
    try:
        return load_profile(name)
    except ProfileError as e:
        print(f"error: robot profile: {e}", file=sys.stderr)  # noqa: T201 - CLI output
        return None


def _start_args(items: Sequence[str], files: Sequence[Path]) -> dict[str, Any] | None:
    """``--param`` values as start arguments; None (said on stderr) if any is no value."""
    if items and len(files) != 1:
        print("error: --param checks one mission: give exactly one FILE", file=sys.stderr)  # noqa: T201
        return None
    out: dict[str, Any] = {}
    for item in items:
        try:
            name, value = parse_start_arg(item)
        except StartArgError as e:
            print(f"error: {e}", file=sys.stderr)  # noqa: T201 - CLI output
            return None
        out[name] = value
    return out


def validate_cmd(args: argparse.Namespace) -> int:
    profile = _profile(args.profile)
    if profile is None:
        return EXIT_USAGE
    start_args = _start_args(args.param, args.files)
    if start_args is None:
        return EXIT_USAGE
    loader = MissionLoader(profile, args.root)
    seen: set[Diagnostic] = set()
    errors = warnings = 0
    bad_files = 0
    for path in args.files:
        result = loader.check(path, start_args or None)
        for d in result.diagnostics:
            if d in seen:  # a library problem shows up once, not once per mission
                continue
            seen.add(d)
            print(d)  # noqa: T201 - CLI output
            errors += d.is_error
            warnings += not d.is_error
        for line in result.planned:
            print(line)  # noqa: T201 - CLI output
        bad_files += not result.ok
        if result.ok and not args.quiet:
            what = (
                f"{result.mission.kind} {result.mission.name}, {result.mission.node_count()} nodes"
                if result.mission is not None
                else "library"
            )
            print(f"{path}: ok ({what})", file=sys.stderr)  # noqa: T201 - CLI output
    if not args.quiet:
        print(  # noqa: T201 - CLI output
            f"{len(args.files)} file(s): {bad_files} invalid, {errors} error(s), {warnings} warning(s)",
            file=sys.stderr,
        )
    return EXIT_INVALID if errors else EXIT_OK


def schema_cmd(args: argparse.Namespace) -> int:
    profile = _profile(args.profile)
    if profile is None:
        return EXIT_USAGE
    if args.document == "mission":
        poses: Sequence[str] = ()
        gestures: Sequence[str] = ()
        if args.root is not None:
            library = MissionLoader(profile, args.root).library(args.root.resolve())
            poses, gestures = list(library.poses), list(library.gestures)
        schema = mission_schema(profile, poses, gestures)
    else:
        schema = library_schema(args.document, profile)
    print(json.dumps(schema, indent=2))  # noqa: T201 - CLI output
    return EXIT_OK


def render_cmd(args: argparse.Namespace) -> int:
    profile = _profile(args.profile)
    if profile is None:
        return EXIT_USAGE
    loader = MissionLoader(profile, args.root)
    result = loader.check(args.file)
    for d in result.diagnostics:
        print(d, file=sys.stderr)  # noqa: T201 - CLI output
    if result.mission is None:
        if result.ok:
            print(f"error: {args.file} is a library file, not a mission", file=sys.stderr)  # noqa: T201
        return EXIT_INVALID
    try:
        tree = build(result.mission, placeholder_builders(), for_display=True)
        fields = _printable_names(tree)
        text = render(tree, args.format)
        if args.format == "ascii":
            text = with_fields(text, tree, fields)
    except (BuildError, RenderError) as e:
        print(f"error: {e}", file=sys.stderr)  # noqa: T201 - CLI output
        return EXIT_INVALID
    if args.output is not None:
        args.output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        print(text)  # noqa: T201 - CLI output
    return EXIT_OK


# -- the key fields render shows -------------------------------------------------------------

# a leaf's fields in the order shown; any other plain value follows (the targets' joint
# maps and the FSM's numeric id do not: the pose or gesture and the state name say them)
KEY_FIELDS = (
    "pose",
    "gesture",
    "tag",
    "theta",
    "state",
    "button",
    "min_level",
    "seconds",
    "duration",
    "speed",
    "tolerance",
    "timeout",
    "message",
)
HIDDEN_FIELDS = frozenset({"targets", "fsm_id", "joints", "scene"})
UNITS = {
    "seconds": " s",
    "duration": " s",
    "timeout": " s",
    "plan_timeout": " s",
    "speed": " rad/s",
    "tolerance": " rad",
    "theta": " rad",
    "min_level": " %",
}
SHOWN_MESSAGE = 40  # characters of a log message shown


def _preorder(node: py_trees.behaviour.Behaviour) -> Iterator[py_trees.behaviour.Behaviour]:
    """The nodes as the ASCII tree lists them: parents first, children in order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _printable_names(tree: py_trees.behaviour.Behaviour) -> list[str]:
    """Make every name in ``tree`` printable (in place: the tree is for display only) and
    return each node's key fields, in the order the ASCII tree lists the nodes."""
    out = []
    for node in _preorder(tree):
        node.name = printable(node.name)
        out.append(key_fields(node))
    return out


def _value(name: str, value: Any) -> str:
    if isinstance(value, float):
        text = f"{value:g}"
    elif name == "message":
        text = str(value)
        text = repr(text if len(text) <= SHOWN_MESSAGE else text[: SHOWN_MESSAGE - 3] + "...")
    else:
        text = str(value)  # an unset subtree parameter shows as ${name}
    return printable(text + UNITS.get(name, ""))


def key_fields(node: py_trees.behaviour.Behaviour) -> str:
    """``pose home, duration 2.5 s, timeout 6 s``: what a node does, beyond its name.
    Leaves (``Placeholder``: kind and validated args) show their plain fields; retry,
    repeat and timeout their count or seconds; composites nothing."""
    args = getattr(node, "args", None)
    parts: list[str] = []
    if isinstance(args, Mapping):
        names = [*KEY_FIELDS, *sorted(set(args) - set(KEY_FIELDS))]
        for name in names:
            value = args.get(name)
            if name in HIDDEN_FIELDS or value is None or isinstance(value, Mapping | list | tuple):
                continue
            if name in ("path", "plan_timeout") and args.get("path") != "plan":
                continue  # a straight move, as every move was before path: plan
            if isinstance(value, Node):  # a leaf's subtree (a checkpoint's recover): its name
                parts.append(f"{name} {printable(repr(value.name))}")
                continue
            parts.append(f"{name} {_value(name, value)}")
        targets = args.get("targets")
        if isinstance(targets, Mapping) and "pose" not in args and "gesture" not in args:
            parts.insert(0, f"{len(targets)} joints")
    elif isinstance(node, py_trees.decorators.Retry):
        parts.append(f"attempts {node.num_failures}")
    elif isinstance(node, py_trees.decorators.Repeat):
        parts.append(f"times {node.num_success}")
    elif isinstance(node, py_trees.decorators.Timeout):
        parts.append(f"timeout {node.duration:g} s")
    return ", ".join(parts)


def with_fields(text: str, tree: py_trees.behaviour.Behaviour, fields: Sequence[str]) -> str:
    """py_trees' ASCII tree with each node's key fields after its name, aligned. The
    ASCII tree lists one node a line, depth first: if it ever does not (a py_trees
    change), the tree is shown as drawn, never with fields beside the wrong nodes."""
    lines = text.splitlines()
    nodes = list(_preorder(tree))
    if (
        len(lines) != len(nodes)
        or len(fields) != len(nodes)
        or not all(line.endswith(n.name) for line, n in zip(lines, nodes, strict=True))
    ):
        return text
    width = max(len(line) for line in lines)
    return "\n".join(
        f"{line:<{width}}   {field}" if field else line
        for line, field in zip(lines, fields, strict=True)
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m executive.mission.cli", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)  # usage names the three
    add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except BrokenPipeError:  # output piped into head & co: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_INVALID
    return code


if __name__ == "__main__":
    sys.exit(main())
