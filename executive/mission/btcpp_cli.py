"""``atom-executive export`` and ``import``: missions to and from BehaviorTree.CPP XML.

::

    atom-executive export missions/deliver_drink.yaml --format btcpp -o deliver_drink.xml
    atom-executive import deliver_drink.xml -o missions/deliver_drink_edited.yaml

Export writes the mission as its file states it: a field that is a parameter is a port
reference ``{param}`` (BehaviorTree.CPP's blackboard entry; text with a parameter keeps its
``${param}``), and the parameters are the main tree's ports, declared in its ``<SubTree>``
model (``executive.mission.btcpp``). ``--resolved`` writes the tree the robot would run
instead, every field its value (``--param`` as ``start --param``). Import writes the YAML
only once it loads as a mission (``executive.mission.btcpp_import``). Exit status: 0 done, 1 refused (what cannot be
translated, or does not validate: each problem as ``file:line: ...``), 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from executive.mission import btcpp
from executive.mission.btcpp_export import export_xml
from executive.text import printable

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2


def add_parsers(sub: Any) -> None:
    """Register ``export`` and ``import`` on an argparse subparsers object."""
    p = sub.add_parser(
        "export",
        description=(
            "Write a mission as BehaviorTree.CPP XML (BTCPP_format 4) with a TreeNodesModel "
            "of our leaf kinds, for Groot2: includes expanded, the parameters the main "
            "tree's ports ({param} where a field is one)."
        ),
    )
    p.add_argument("file", metavar="FILE", type=Path)
    p.add_argument("--format", choices=("btcpp",), default="btcpp")
    p.add_argument("-o", "--output", type=Path, help="the XML file (default: stdout)")
    p.add_argument(
        "--resolved",
        action="store_true",
        help="every field its value (the tree the robot would run), no ports",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter's value, as start --param (with --resolved)",
    )
    p.add_argument("--profile", default=None, help="robot profile name or path")
    p.add_argument("--root", type=Path, help="mission directory; default: found from the file")
    p.set_defaults(handler=export_cmd)

    q = sub.add_parser(
        "import",
        description=(
            "Turn BehaviorTree.CPP XML (as Groot2 saves it) into a mission file, written "
            "only once it validates; a node or port we do not know is named by its line."
        ),
    )
    q.add_argument("file", metavar="FILE.xml", type=Path)
    q.add_argument("-o", "--output", type=Path, required=True, help="the mission YAML to write")
    q.add_argument("--profile", default=None, help="robot profile name or path")
    q.add_argument("--root", type=Path, help="mission directory; default: found from -o")
    q.set_defaults(handler=import_cmd)


def _say(message: str) -> None:
    print(printable(message), file=sys.stderr)  # noqa: T201 - CLI output


def export_cmd(args: argparse.Namespace) -> int:
    from executive.mission.cli import _profile, _start_args
    from executive.mission.loader import MissionLoader
    from executive.seam.profile import DEFAULT_PROFILE

    if args.param and not args.resolved:
        _say(
            "error: --param gives a value to resolve the tree with: add --resolved (without "
            "it the parameters are the tree's ports, with their defaults)"
        )
        return EXIT_USAGE
    profile = _profile(args.profile or DEFAULT_PROFILE)
    if profile is None:
        return EXIT_USAGE
    start_args = _start_args(args.param, [args.file])
    if start_args is None:
        return EXIT_USAGE
    result = MissionLoader(profile, args.root).check(args.file, start_args or None)
    for d in result.errors:
        _say(str(d))
    if result.mission is None:
        _say(f"error: {args.file} is invalid")
        return EXIT_REFUSED
    try:
        text = export_xml(result.mission, params=not args.resolved)
    except btcpp.TranslationError as e:
        _say(f"{args.file}: {e}")
        return EXIT_REFUSED
    if btcpp.tree_id(result.mission.name) != result.mission.name:
        _say(
            f"note: the tree's ID is {btcpp.tree_id(result.mission.name)!r} (BehaviorTree.CPP IDs have no '.')"
        )
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return EXIT_OK


def import_cmd(args: argparse.Namespace) -> int:
    from executive.mission.btcpp_import import ImportError_, import_xml
    from executive.mission.cli import _profile
    from executive.mission.loader import MissionLoader
    from executive.seam.profile import DEFAULT_PROFILE

    profile = _profile(args.profile or DEFAULT_PROFILE)
    if profile is None:
        return EXIT_USAGE
    try:
        data = args.file.read_bytes()
    except OSError as e:
        _say(f"{args.file}: cannot read: {e.strerror}")
        return EXIT_USAGE
    loader = MissionLoader(profile, args.root)
    try:
        text, _ = import_xml(data, str(args.file), args.output, loader)
    except ImportError_ as e:
        _say(str(e))
        return EXIT_REFUSED
    args.output.write_text(text, encoding="utf-8")
    return EXIT_OK
