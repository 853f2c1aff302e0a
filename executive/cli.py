"""``atom-executive``: one console script, one subcommand per job.

The parser is built apart from ``main()`` (as cyclonedds-python's own CLI does) so tests
can exercise argument handling without running anything. Each subcommand's arguments
and handler live in the module that does the work (its ``add_parser(sub)``); this file
holds only the table of subcommands (``COMMANDS``: the name, that module's registration
function, the one line ``--help`` lists), and imports a command's module only once that
command is chosen. So ``--help`` imports no command at all, and ``status`` only the
operator commands (the DDS client and the rendering), never the mission compiler, the
behaviours or MuJoCo: a command answers in about the time Python takes to import
cyclonedds (issue 22; ``bench/cli.py`` measures it, ``tests/test_cli_imports.py`` holds it).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from executive import __version__
from executive.text import printable

Handler = Callable[[argparse.Namespace], int]

_OPERATOR = "executive.operator.commands:add_parsers"
_MISSION = "executive.mission.cli:add_parsers"
_AUTHORING = "executive.operator.authoring:add_parsers"
_BTCPP = "executive.mission.btcpp_cli:add_parsers"

# Every subcommand, in the order ``--help`` lists them: its name, ``module:function`` that
# registers it on a subparsers object (``sub.add_parser(name, ...)``: arguments, description,
# handler; a function may register several), and its one-line summary (its only home: a
# module's ``add_parser`` call gives none). A new subcommand is a row here and its
# registration beside its code; tests/test_cli_imports.py checks that the two agree.
COMMANDS: dict[str, tuple[str | None, str]] = {
    "variants": (None, "list the interface variant presets"),  # defined below
    "run": ("executive.service.run:add_parser", "run the executive service"),
    "status": (_OPERATOR, "print the executive's status"),
    "watch": (
        _OPERATOR,
        "the live status: tree, elapsed times, progress; red when the executive is gone",
    ),
    "missions": (
        _OPERATOR,
        "list the executive's missions: description, parameters (types, defaults)",
    ),
    "start": (_OPERATOR, "start a mission"),
    "stop": (_OPERATOR, "stop the running mission"),
    "pause": (
        _OPERATOR,
        "hold the running mission where it is (joints, base, timeouts); resume goes on",
    ),
    "resume": (
        _OPERATOR,
        "go on with a paused mission (moves re-planned from where the joints are)",
    ),
    "reset": (_OPERATOR, "reset a SAFE_STOP (refused while its cause is present)"),
    "reload": (_OPERATOR, "reload the mission files (only while idle)"),
    "recover": (
        _OPERATOR,
        "list the runs a crash interrupted and their last checkpoint; with RUN_ID "
        "(signed), go on with that run from its checkpoint",
    ),
    "set": (
        _OPERATOR,
        "set a place for the running mission's reach: set NAME [X,Y,Z] (m, base frame; signed)",
    ),
    "router": (
        "executive.service.router:add_parser",
        "run zenoh's router for the fleet plane (the site's; loopback by default)",
    ),
    "fleet": (
        "executive.operator.fleet:add_parser",
        "every robot on the fleet plane, live (--json for programs); --robot ID ACTION "
        "commands one",
    ),
    "fleet-site": (
        "executive.service.fleet_site:add_parser",
        "make a site's secure fleet layout from its roster: a CA, certificates, the router's "
        "config (TLS, access control) and each member's",
    ),
    "sim": (
        "executive.robots.atom.sim.cli:add_parser",
        "run the simulated Atom on DDS (or inject faults into one)",
    ),
    "validate": (_MISSION, "check mission files; every problem as file:line:col: path: message"),
    "test": (
        "executive.scenario.cli:add_parser",
        "run missions' scenarios (*.test.yaml) in simulated time (--realtime: the real "
        "processes); exit 1 if one fails",
    ),
    "schema": (_MISSION, "print the JSON Schema (draft 2020-12) of mission files"),
    "render": (_MISSION, "draw a mission's tree (ascii, dot or svg)"),
    "diff": (
        "executive.mission.diff:add_parser",
        "what changed between two missions: parameters, then nodes by path (exit 1 if they differ)",
    ),
    "export": (_BTCPP, "write a mission as BehaviorTree.CPP XML (BTCPP_format 4), for Groot2"),
    "import": (_BTCPP, "turn BehaviorTree.CPP XML (Groot2's) into a mission file that validates"),
    "timeline": (
        "executive.operator.timeline:add_parser",
        "draw a run (its MCAP file or JSON-lines record) as a PNG",
    ),
    "pose": (
        "executive.operator.posepreview:add_parser",
        "poses of the library: preview, solve, teach (from the robot's measured joints)",
    ),
    "poses": (_AUTHORING, "list the pose library of a mission directory (name, joints, file)"),
    "gestures": (
        _AUTHORING,
        "list the gesture library of a mission directory (name, joints, file)",
    ),
    "keygen": (
        _AUTHORING,
        "write a new HMAC key file for a client; print the service's keys-file line",
    ),
}


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


class _Subcommands:
    """What a command module's ``add_parser(sub)`` is given in place of argparse's
    subparsers object when one of its commands was chosen: ``add_parser`` and ``choices``,
    as argparse's. Every parser it asks for is made (cheap); ``_LazyParser`` takes the
    chosen one from ``choices`` and the others are dropped."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.choices: dict[str, argparse.ArgumentParser] = {}

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.pop("help", None)  # the summary's home is COMMANDS
        kwargs.setdefault("prog", f"{self.prefix} {name}")
        parser = _Parser(**kwargs)
        self.choices[name] = parser
        return parser


class _LazyParser(_Parser):
    """A subcommand's parser that is a name and a summary until argparse hands it the
    command line: then it imports the command's module, has it register its parser and
    parses with that (``atom-executive status --help`` included)."""

    def __init__(self, *, command: str = "", registrar: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.command = command
        self.registrar = registrar  # COMMANDS' module:function (``register`` is argparse's)
        self._loaded: argparse.ArgumentParser | None = None

    def loaded(self) -> argparse.ArgumentParser:
        """The command's own parser, from its module (imported now); itself when the
        command is defined in this file."""
        if self.registrar is None:
            return self
        if self._loaded is None:
            module, _, function = self.registrar.partition(":")
            sub = _Subcommands(self.prog.rsplit(" ", 1)[0])
            getattr(importlib.import_module(module), function)(sub)
            if self.command not in sub.choices:  # the table and the module disagree: ours
                raise LookupError(f"{self.registrar} registers no {self.command!r} command")
            self._loaded = sub.choices[self.command]
        return self._loaded

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.registrar is None:
            return super().parse_known_args(args, namespace)
        return self.loaded().parse_known_args(args, namespace)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, without importing any command's module (``COMMANDS``)."""
    parser = _Parser(prog="atom-executive", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_LazyParser
    )
    for name, (register, summary) in COMMANDS.items():
        p = sub.add_parser(name, help=summary, command=name, registrar=register)
        if name == "variants":
            p.set_defaults(handler=_variants_cmd)
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
    import ctypes  # only under a harness

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(parent):
        sys.exit(0)  # the harness died before the death signal was armed


def _robot_sim(argv: Sequence[str]) -> int | None:
    """``sim --profile P`` for a robot other than the Atom: that robot's simulator (its
    spec's ``sim``: each robot's sim has its own options). None: the Atom's."""
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
    from executive.seam.profile import ProfileError, load_profile
    from executive.seam.registry import part

    try:
        robot = load_profile(name).robot
    except ProfileError:
        return None  # the Atom's sim reports it, naming the key
    if robot == "atom":
        return None
    main = part(robot, "sim")
    if main is None:
        print(  # noqa: T201 - CLI output
            f"atom-executive: robot {robot!r} has no simulator to run here "
            "(docs/robots.md says how to run it)",
            file=sys.stderr,
        )
        return 2
    result: int = main(rest)
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
