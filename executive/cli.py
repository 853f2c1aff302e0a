"""``atom-executive``: one console script, one subcommand per job.

The parser is built apart from ``main()`` (as cyclonedds-python's own CLI does) so tests
can exercise argument handling without running anything. Each subcommand lives in the
module that does the work and registers itself through ``add_parser``.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import importlib.util
import io
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from executive import __version__
from executive.text import printable

Handler = Callable[[argparse.Namespace], int]


def _variants_cmd(args: argparse.Namespace) -> int:
    from executive.robots.atom.interface import PRESETS, Interface, Variant

    for preset in PRESETS:
        iface = Interface(Variant(preset))
        print(f"{preset}: {iface.variant.choices}")  # noqa: T201 - CLI output
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with its error messages one printable line: they quote the arguments as
    typed ("unrecognized arguments: ..."), escapes and newlines included."""

    def error(self, message: str) -> NoReturn:
        super().error(printable(message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="atom-executive", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("variants", help="list the interface variant presets")
    p.set_defaults(handler=_variants_cmd)

    from executive.mission import cli as mission_cli
    from executive.mission import diff as mission_diff
    from executive.operator import authoring, posepreview, timeline
    from executive.operator import commands as operator
    from executive.robots.atom.sim import cli as sim_cli
    from executive.service import run as service

    service.add_parser(sub)
    operator.add_parsers(sub)
    sim_cli.add_parser(sub)
    mission_cli.add_parsers(sub)
    mission_diff.add_parser(sub)
    timeline.add_parser(sub)
    posepreview.add_parser(sub)
    authoring.add_parsers(sub)  # poses, gestures, keygen
    return parser


def _stdout_escapes_what_it_cannot_encode() -> None:
    """Print what the terminal's encoding cannot hold as ``\\udcff``, as stderr does.

    Arguments are decoded with surrogateescape: a file name that is not UTF-8 holds lone
    surrogates, and echoing it (``validate $'\\xff'``) raised UnicodeEncodeError out of
    ``print`` under a UTF-8 locale (a traceback), or wrote the raw byte back under C.
    """
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")


PARENT_ENV = "ATOM_EXECUTIVE_PARENT_PID"  # set by executive.harness.stack: die with that process
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Under a harness (``PARENT_ENV`` set: tests, the demo, benchmarks), SIGTERM this
    process when the harness dies, and leave now if it already has: its processes must not
    outlive a crashed run. A service under systemd never has it set."""
    parent = os.environ.get(PARENT_ENV)
    if not parent or not parent.isdigit() or sys.platform != "linux":
        return
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(parent):
        sys.exit(0)  # the harness died before the death signal was armed


def _robot_sim(argv: Sequence[str]) -> int | None:
    """``sim --profile P`` for a robot other than the Atom: that robot's simulator (each
    robot's sim has its own options; ``executive/robots/<robot>/sim``). None: the Atom's."""
    if not argv or argv[0] != "sim":
        return None
    rest = list(argv[1:])
    name = next(
        (
            rest[i + 1] if a == "--profile" else a.split("=", 1)[1]
            for i, a in enumerate(rest)
            if (a == "--profile" and i + 1 < len(rest)) or a.startswith("--profile=")
        ),
        None,
    )
    if name is None:
        return None
    from executive.robots.profile import ProfileError, load_profile

    try:
        robot = load_profile(name).robot
    except ProfileError:
        return None  # the Atom's sim reports it, naming the key
    if robot == "atom":
        return None
    # a robot's simulator package has main(argv), in its cli module where it has one
    package = f"executive.robots.{robot}.sim"
    has_cli = importlib.util.find_spec(f"{package}.cli") is not None
    module = importlib.import_module(f"{package}.cli" if has_cli else package)
    result: int = module.main(rest)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    _stdout_escapes_what_it_cannot_encode()
    _die_with_parent()
    argv = sys.argv[1:] if argv is None else list(argv)
    if (code := _robot_sim(argv)) is not None:
        return code
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except BrokenPipeError:  # `atom-executive render ... | head`: the reader left, not an error
        return 0


if __name__ == "__main__":
    sys.exit(main())
