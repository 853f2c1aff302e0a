"""Operator commands: ``status``, ``watch``, ``missions``, ``start``, ``stop``, ``reset``, ``reload``.

They talk DDS like any client (executive/client.py). Exit codes: 0 done, 1 refused by the
executive (the reply's message says why), 3 no executive answered in time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, cast

import yaml

from executive import dds
from executive.auth import KeyFileError, load_keys
from executive.client import ExecutiveClient, NoExecutiveError
from executive.wire.gen.own.atom_executive.msg import Status_

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_NO_EXECUTIVE = 3


class UsageError(ValueError):
    """Bad command-line input: said in one line, exit code 2, before any DDS traffic."""


def render_tree(status: Status_) -> str:
    """The tree of a status sample as indented text, one node a line."""
    marks = {"RUNNING": "*", "SUCCESS": "✓", "FAILURE": "✗", "INVALID": "-"}
    lines = []
    for node in cast(list[Any], status.tree):
        name = node.path.rsplit("/", 1)[-1]
        tail = f"  [{node.feedback}]" if node.feedback and node.status != "INVALID" else ""
        lines.append(f"{'    ' * node.depth}{marks.get(node.status, '?')} {name}{tail}")
    return "\n".join(lines)


def summary(status: Status_) -> str:
    parts = [f"state: {status.state}"]
    if status.mission:
        parts.append(f"mission: {status.mission} ({status.run_id})")
    if status.active_node:
        parts.append(f"active: {status.active_node}")
    parts.append(
        f"safety: {status.safety}" + (f" ({status.safety_reason})" if status.safety_reason else "")
    )
    if status.last_result:
        parts.append(
            f"last: {status.last_result}"
            + (f" ({status.last_reason})" if status.last_reason else "")
        )
    return "\n".join(parts)


def _key(args: argparse.Namespace) -> bytes | None:
    """This client's HMAC key from ``--key-file``, or None for read-only commands."""
    if not getattr(args, "key_file", None):
        return None
    try:
        key = load_keys(args.key_file).get(args.client_id)
    except KeyFileError as e:
        raise UsageError(str(e)) from None
    if key is None:
        raise UsageError(f"no key for client {args.client_id!r} in {args.key_file}")
    return key


def _params(items: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--param {item!r} must be name=value")
        params[name] = yaml.safe_load(value)  # 3 -> int, 1.5 -> float, true -> bool, else text
    return params


def run(args: argparse.Namespace) -> int:
    try:
        key = _key(args)
        request_args = (
            {"mission": args.mission, "params": _params(args.param)}
            if args.command == "start"
            else {}
        )
    except UsageError as e:
        print(f"atom-executive: {e}", file=sys.stderr)
        return EXIT_USAGE
    with dds.open_participant(args.domain) as participant:
        client = ExecutiveClient(participant, client_id=args.client_id, key=key)
        try:
            return _dispatch(args, client, request_args)
        except NoExecutiveError as e:
            print(f"atom-executive: {e}", file=sys.stderr)
            return EXIT_NO_EXECUTIVE


def _dispatch(
    args: argparse.Namespace, client: ExecutiveClient, request_args: dict[str, Any]
) -> int:
    if args.command == "status":
        status = client.status(args.timeout)
        if args.json:
            print(
                json.dumps(
                    {
                        "summary": summary(status).splitlines(),
                        "tree": [vars(n) for n in cast(list[Any], status.tree)],
                    },
                    indent=2,
                    default=str,
                )
            )
        else:
            print(summary(status) + "\n\n" + render_tree(status))
        return 0
    if args.command == "watch":
        return _watch(client, args)
    verb = {"missions": "list_missions"}.get(args.command, args.command)
    reply = client.request(verb, request_args, timeout=args.timeout)
    if args.command == "missions" and reply.code == 0:
        print("\n".join(json.loads(reply.payload)))
    else:
        print(reply.message)
    return 0 if reply.code == 0 else EXIT_REFUSED


def _watch(client: ExecutiveClient, args: argparse.Namespace) -> int:
    last = None
    deadline = time.monotonic() + args.duration if args.duration else None
    client.status(args.timeout)
    while deadline is None or time.monotonic() < deadline:
        seen = last.seq if last else -1
        status = client.wait_status(lambda s, seen=seen: s.seq != seen, 1.0)
        if status is None or (last is not None and status.seq == last.seq):
            continue
        text = summary(status) + "\n\n" + render_tree(status)
        if last is None or text != summary(last) + "\n\n" + render_tree(last):
            if sys.stdout.isatty():
                print("\x1b[2J\x1b[H", end="")
            print(text + "\n", flush=True)
        last = status
    return 0


def add_parsers(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--domain", type=int, default=None, help="DDS domain (default: $ATOM_DDS_DOMAIN or 0)"
    )
    common.add_argument(
        "--timeout", type=float, default=5.0, help="seconds to wait for the executive"
    )
    common.add_argument("--client-id", default="operator", help="client id (names the key)")
    common.add_argument(
        "--key-file", type=Path, help="HMAC key file for commands that change anything"
    )
    p = sub.add_parser("status", parents=[common], help="print the executive's status")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("watch", parents=[common], help="show the live tree as status arrives")
    p.add_argument(
        "--duration", type=float, default=0.0, help="stop after this many seconds (0: never)"
    )
    sub.add_parser("missions", parents=[common], help="list the missions the executive has loaded")
    p = sub.add_parser("start", parents=[common], help="start a mission")
    p.add_argument("mission")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    sub.add_parser("stop", parents=[common], help="stop the running mission")
    sub.add_parser(
        "reset", parents=[common], help="reset a SAFE_STOP (refused while its cause is present)"
    )
    sub.add_parser("reload", parents=[common], help="reload the mission files (only while idle)")
    for name in ("status", "watch", "missions", "start", "stop", "reset", "reload"):
        sub.choices[name].set_defaults(handler=run)
