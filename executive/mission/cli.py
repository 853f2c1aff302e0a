"""``atom-executive validate | schema | render``: the mission language from the shell.

``validate FILE...`` prints every problem of every file as
``file:line:col: path.to.field: message`` (warnings say ``warning:``) and exits 1 if
any is an error, 0 otherwise; a file that cannot even be read is just another problem.
``validate FILE --param NAME=VALUE`` checks one mission as started with those values;
a value that is no value at all (broken YAML, a tag, a date, NaN) is a usage error: one
line naming the parameter, exit 2.
``schema`` prints the JSON Schema of mission (or library) files; ``render`` draws a
mission's tree as ASCII, Graphviz dot or SVG.

``add_parsers(sub)`` registers the three on the main CLI; ``python -m
executive.mission.cli`` runs them on their own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from executive.mission.build import BuildError, build, placeholder_builders
from executive.mission.diagnostics import Diagnostic
from executive.mission.loader import MissionLoader
from executive.mission.params import StartArgError, parse_start_arg
from executive.mission.render import FORMATS, RenderError, render
from executive.mission.schema import library_schema, mission_schema
from executive.profile import DEFAULT_PROFILE, ProfileError, RobotProfile, load_profile

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def add_parsers(sub: Any) -> None:
    """Register ``validate``, ``schema`` and ``render`` on an argparse subparsers object."""
    p = sub.add_parser(
        "validate",
        help="check mission files; every problem as file:line:col: path: message",
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
        help="print the JSON Schema (draft 2020-12) of mission files",
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
        help="draw a mission's tree (ascii, dot or svg)",
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
        text = render(tree, args.format)
    except (BuildError, RenderError) as e:
        print(f"error: {e}", file=sys.stderr)  # noqa: T201 - CLI output
        return EXIT_INVALID
    if args.output is not None:
        args.output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        print(text)  # noqa: T201 - CLI output
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m executive.mission.cli", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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
