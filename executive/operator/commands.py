"""Operator commands: ``status``, ``watch``, ``missions``, ``start``, ``stop``, ``reset``, ``reload``.

They talk DDS like any client (executive/service/client.py). Exit codes: 0 done, 1 refused by the
executive (the reply's message says why), 2 bad command-line input (one line, before any
DDS traffic), 3 no executive answered in time.

Every string that comes from the service (mission, node and client names, feedback,
reasons, reply messages) passes ``executive.text.printable`` before it is printed: they
come from mission files and from anyone on the domain, and a ``\x1b[2J`` in a log
message must show as text, not clear the screen and draw a fake state over the real one.
``--json`` output is JSON (``json.dumps`` escapes every control character).

What a command needs is imported inside the function that needs it: ``atom-executive``
imports this module to parse any of these commands, and ``status`` then needs only the
DDS client, the status type and its rendering (not the key files, the mission library,
YAML or the live view's terminal machinery): it answers in about the time Python takes
to import cyclonedds (issue 22, 3; tests/test_cli_imports.py holds it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from executive.operator.lines import render_tree, robot_lines, status_document, summary
from executive.text import printable, printable_lines

if TYPE_CHECKING:
    from executive.service.client import ExecutiveClient

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_NO_EXECUTIVE = 3


class UsageError(ValueError):
    """Bad command-line input: said in one line, exit code 2, before any DDS traffic."""


def _key(args: argparse.Namespace) -> bytes | None:
    """This client's HMAC key from ``--key-file``, or None for read-only commands."""
    if not getattr(args, "key_file", None):
        return None
    from executive.service.auth import KeyFileError, load_keys

    try:
        keys = load_keys(args.key_file)
    except KeyFileError as e:
        raise UsageError(str(e)) from None
    key = keys.get(args.client_id)
    if key is None:  # keygen's file holds one client, rarely the default 'operator': say it
        held = sorted(keys)
        hint = (
            f"; it holds {held[0]!r}: add --client-id {held[0]}"
            if len(held) == 1
            else f"; it holds {', '.join(map(repr, held))}: choose one with --client-id"
        )
        raise UsageError(
            printable(f"no key for client {args.client_id!r} in {args.key_file}{hint}")
        )
    return key


def _param_value(text: str) -> Any:
    """A ``--param`` value: what YAML reads it as (3 -> int, 1.5 -> float, true -> bool,
    [1, 2] -> list) when JSON can carry that to the service, else the text as typed
    (``[oops``, a date, ``.nan``: the mission's own validation then says what it expects)."""
    import yaml  # start's parameters only

    try:
        value = yaml.safe_load(text)
        json.dumps(value, allow_nan=False)
    except (yaml.YAMLError, RecursionError, TypeError, ValueError):
        return text
    return value


def _params(items: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--param {item!r} must be name=value")
        params[name] = _point(value, f"--param {name}") if _is_list(value) else _param_value(value)
    return params


def _is_list(text: str) -> bool:
    return text.strip().startswith("[")


def _point(text: str, display: str) -> list[float]:
    """``[x, y, z]`` (a point parameter, a place): three finite numbers, or usage in one line."""
    from executive.mission.params import StartArgError, parse_point

    try:
        return parse_point(text, display)
    except StartArgError as e:
        raise UsageError(str(e)) from None


def _domain(args: argparse.Namespace) -> int:
    """The DDS domain: ``--domain``, else ``$ATOM_DDS_DOMAIN``, else 0; a bad one is usage."""
    from executive.wire import dds

    if args.domain is None:
        try:
            return dds.domain_id_from_env()
        except ValueError as e:
            raise UsageError(str(e)) from None
    if not 0 <= args.domain <= dds.MAX_DOMAIN_ID:
        raise UsageError(f"--domain {args.domain} is outside 0..{dds.MAX_DOMAIN_ID}")
    return int(args.domain)


def _fail(message: object) -> None:
    print(f"atom-executive: {printable(message)}", file=sys.stderr)


def _local_missions(args: argparse.Namespace) -> int:
    """``missions --dir DIR``: the mission files of a directory, described, no service."""
    from executive.mission.catalogue import describe_missions
    from executive.operator.authoring import format_missions
    from executive.seam.profile import DEFAULT_PROFILE, ProfileError, load_profile

    directory = Path(args.dir)
    try:
        profile = load_profile(args.profile or DEFAULT_PROFILE)
    except ProfileError as e:
        _fail(f"robot profile: {e}")
        return EXIT_USAGE
    if not directory.is_dir():
        _fail(f"{directory}: not a directory")
        return EXIT_USAGE
    names = sorted(p.stem for p in directory.glob("*.yaml"))
    entries = describe_missions(directory, profile, names)
    print(format_missions([e["name"] for e in entries] if args.names else entries))
    return EXIT_REFUSED if any("problem" in e for e in entries) else 0


# the commands that only read: over DDS they log nothing, so they configure no logging
# (structlog and its dependencies are a fifth of their start-up)
READS = frozenset({"status", "watch", "missions"})


def run(args: argparse.Namespace) -> int:
    local = args.command == "missions" and args.dir is not None  # loads missions: may log
    if local or args.command not in READS:
        from executive import logs

        logs.configure(console=True)  # anything logged here is for the person at the terminal
    if local:
        return _local_missions(args)
    from executive.service.client import ExecutiveClient, NoExecutiveError
    from executive.wire import dds

    try:  # everything from the command line first: a mistake there sends nothing
        request_args: dict[str, Any] = {}
        if args.command == "start":
            request_args = {"mission": args.mission, "params": _params(args.param)}
        elif args.command == "set":
            request_args = {"name": args.name, "at": _point(args.value, f"set {args.name}")}
        elif args.command == "recover" and args.run_id is not None:
            request_args = {"run_id": args.run_id}
        elif args.command == "missions" and not args.names:
            request_args = {"detail": True}  # an older service ignores it: names only
        domain = _domain(args)
        key = _key(args)
    except UsageError as e:
        _fail(e)
        return EXIT_USAGE
    with dds.open_participant(domain) as participant:
        client = ExecutiveClient(participant, client_id=args.client_id, key=key)
        try:
            return _dispatch(args, client, request_args)
        except NoExecutiveError as e:
            _fail(e)
            return EXIT_NO_EXECUTIVE
        finally:
            client.close()  # listeners off before the participant goes (executive/service/client.py)


def _dispatch(
    args: argparse.Namespace, client: ExecutiveClient, request_args: dict[str, Any]
) -> int:
    if args.command == "status":
        status = client.status(args.timeout)
        if args.json:
            document = status_document(status)
            if document is None:
                print(
                    "the executive's status carries no status document (an older executive?)",
                    file=sys.stderr,
                )
                return EXIT_REFUSED
            print(json.dumps(document, indent=2))
        else:
            print(summary(status) + robot_lines(status) + "\n\n" + render_tree(status))
        return 0
    if args.command == "watch":
        return _watch(client, args)
    verb = {"missions": "list_missions"}.get(args.command, args.command)
    if args.command == "recover" and args.run_id is None:
        verb = "recoverable"  # the list: a read, unsigned (executive/service/recover.py)
    reply = client.request(verb, request_args, timeout=args.timeout)
    names = _names(reply.payload) if args.command == "missions" and reply.code == 0 else None
    if names is not None:
        from executive.operator.authoring import format_missions

        print(format_missions(names))
    elif verb == "recoverable":  # a run a line (executive/service/recover.py): the breaks kept
        print(printable_lines(reply.message))
    else:
        print(printable(reply.message))
    return 0 if reply.code == 0 else EXIT_REFUSED


def _names(payload: str) -> list[Any] | None:
    """The mission names of a ``list_missions`` reply, or None if it holds no list (a
    reply is anyone's to write on the domain: it is read, never trusted)."""
    try:
        names = json.loads(payload)
    except ValueError:
        return None
    return names if isinstance(names, list) else None


def _seconds(text: str) -> float:
    """A ``--timeout``/``--duration``: a finite number of seconds, zero or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0")
    return value


def _watch(client: ExecutiveClient, args: argparse.Namespace) -> int:
    """The live view (executive/operator/watch.py), from the status the executive has now."""
    from executive.operator import watch

    first = client.status(args.timeout)  # none at all: NoExecutiveError, exit 3
    return watch.run(
        lambda last, timeout: client.wait_status(lambda s: s is not last, timeout),
        first,
        duration=args.duration,
        stale_after=args.stale,
        live=False if args.plain else None,
    )


def add_parsers(sub: Any) -> None:
    """Register the operator commands (their one-line summaries are ``executive.cli.COMMANDS``'s)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--domain", type=int, default=None, help="DDS domain (default: $ATOM_DDS_DOMAIN or 0)"
    )
    common.add_argument(
        "--timeout", type=_seconds, default=5.0, help="seconds to wait for the executive"
    )
    common.add_argument("--client-id", default="operator", help="client id (names the key)")
    common.add_argument(
        "--key-file", type=Path, help="HMAC key file for commands that change anything"
    )
    p = sub.add_parser("status", parents=[common])
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("watch", parents=[common])
    p.add_argument(
        "--duration", type=_seconds, default=0.0, help="stop after this many seconds (0: never)"
    )
    p.add_argument(
        "--stale",
        type=_seconds,
        default=3.0,
        help="seconds without status before it says 'no executive' (default 3)",
    )
    p.add_argument("--plain", action="store_true", help="plain text frames, even on a terminal")
    p = sub.add_parser("missions", parents=[common])
    p.add_argument("--names", action="store_true", help="names only, one a line")
    p.add_argument(
        "--dir",
        type=Path,
        help="describe the missions of this directory instead (no executive needed)",
    )
    p.add_argument("--profile", help="robot profile, with --dir (default: the default profile)")
    p = sub.add_parser("start", parents=[common])
    p.add_argument("mission")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    for name in ("stop", "pause", "resume", "reset", "reload"):
        sub.add_parser(name, parents=[common])
    p = sub.add_parser("recover", parents=[common])
    p.add_argument("run_id", nargs="?", metavar="RUN_ID")
    p = sub.add_parser("set", parents=[common])
    p.add_argument("name", metavar="NAME", help="the place's name (a reach's at: NAME)")
    p.add_argument("value", metavar="[X,Y,Z]", help="m, the robot's base frame")
    for name in (
        "status",
        "watch",
        "missions",
        "start",
        "stop",
        "pause",
        "resume",
        "reset",
        "reload",
        "recover",
        "set",
    ):
        sub.choices[name].set_defaults(handler=run)
