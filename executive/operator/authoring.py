"""Help for mission authors: ``missions --dir``, ``poses``, ``gestures``, ``keygen``, and
the "did you mean" every name lookup gives.

``describe_mission`` is what ``missions`` shows of a mission (its description and its
parameters with types and defaults); the service's ``list_missions`` reply carries it
when asked (``{"detail": true}``), and ``missions --dir DIR`` reads it from the files
without a service. ``poses`` and ``gestures`` list a mission directory's library: name,
joints and the file (and line) each is written in. ``keygen CLIENT`` writes a new key
file for one client (mode 600, never over an existing file unless ``--force``) and
prints, alone on standard output, the line the service's keys file needs (the format is
in docs/operating.md, "Command keys", and executive/service/auth.py).

Everything printed that comes from a file passes ``printable`` (a description or a
name may hold anything).
"""

from __future__ import annotations

import argparse
import secrets
import sys
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from executive.suggest import not_found
from executive.text import printable

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
KEY_BYTES = 32  # HMAC-SHA256 keys: as long as the hash
MAX_CLIENT_ID = 256
SHOWN_JOINTS = 3  # joint names a listing line shows before "(+N)"
DEFAULT_KEYS_FILE = "/etc/atom-executive/keys.yaml"  # deploy/config.example.yaml


def _say(text: object = "", *, file: Any = None) -> None:
    """A line for the person at the terminal (stdout, or ``file``)."""
    print(text, file=file or sys.stdout)


# -- missions ---------------------------------------------------------------------------------


def format_missions(entries: Iterable[Any], width: int = 88) -> str:
    """The ``missions`` listing: a name per entry, then (when the entry says) its
    description and parameters, indented. Entries are names (an older service) or
    ``describe_mission`` dicts; anything else is shown as text (a reply is read, not
    trusted)."""
    blocks = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            blocks.append(printable(entry))
            continue
        lines = [printable(entry.get("name", "?"))]
        wrap = textwrap.TextWrapper(width=width, initial_indent="    ", subsequent_indent="    ")
        description = " ".join(str(entry.get("description") or "").split())
        if description:
            lines += wrap.wrap(printable(description))
        if entry.get("problem"):
            lines.append(f"    problem: {printable(entry['problem'])}")
        params = entry.get("params")
        if isinstance(params, list) and params:
            lines.append("    parameters:")
            lines += [_param_line(p) for p in params if isinstance(p, Mapping)]
        blocks.append("\n".join(lines))
    separator = "\n\n" if any("\n" in b for b in blocks) else "\n"
    return separator.join(blocks)


def _param_line(p: Mapping[str, Any]) -> str:
    kind = str(p.get("type", "?"))
    low, high = (
        p.get(b) if isinstance(p.get(b), int | float) and not isinstance(p.get(b), bool) else None
        for b in ("minimum", "maximum")
    )
    if low is not None and high is not None:
        kind += f", {low:g}..{high:g}"
    elif low is not None or high is not None:
        kind += f", >= {low:g}" if low is not None else f", <= {high:g}"
    value = "required" if p.get("required") or "default" not in p else f"default {p['default']!r}"
    text = f"      {p.get('name', '?')} ({kind}): {value}"
    if p.get("description"):
        text += " — " + " ".join(str(p["description"]).split())
    return printable(text)


# -- poses and gestures -----------------------------------------------------------------------


def format_targets(
    targets: Mapping[str, Any], root: Path, *, verbose: bool = False, name: str | None = None
) -> str:
    """``poses``/``gestures``: one line per entry (name, joints, file:line), or with
    ``verbose`` (and for one ``name``) every joint's value and the description."""
    keys = sorted(targets) if name is None else [name]
    if verbose or name is not None:
        return "\n\n".join(_target_block(k, targets[k], root) for k in keys)
    table = [("NAME", "JOINTS", "FILE")]
    for key in keys:
        joints = list(targets[key].joints)
        shown = ", ".join(joints[:SHOWN_JOINTS]) + (
            f" (+{len(joints) - SHOWN_JOINTS})" if len(joints) > SHOWN_JOINTS else ""
        )
        table.append((printable(key), f"{len(joints)}: {shown}", _where(targets[key], root)))
    widths = [max(len(row[i]) for row in table) for i in range(2)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]}".rstrip() for r in table)


def _target_block(key: str, target: Any, root: Path) -> str:
    lines = [f"{key}  ({_where(target, root)})"]
    description = " ".join(str(target.description or "").split())
    if description:
        lines.append(f"    {description}")
    lines += [f"    {j}: {q:+.3f} rad" for j, q in target.joints.items()]
    return "\n".join(printable(line) for line in lines)


def _where(target: Any, root: Path) -> str:
    return printable(f"{_relative(target.where.file, root)}:{target.where.line}")


def _relative(file: str, root: Path) -> str:
    """A library file as the loader names it (already relative), or relative to ``root``."""
    path = Path(file)
    try:
        return str(path.relative_to(root)) if path.is_absolute() else file
    except ValueError:
        return file


def library_cmd(args: argparse.Namespace) -> int:
    """``poses`` / ``gestures`` [NAME]: the library of a mission directory."""
    from executive.mission.loader import MissionLoader
    from executive.seam.profile import ProfileError, load_profile

    try:
        profile = load_profile(args.profile)
    except ProfileError as e:
        _say(f"atom-executive: robot profile: {printable(e)}", file=sys.stderr)
        return EXIT_USAGE
    root = args.missions.resolve()
    if not ((root / "poses").is_dir() or (root / "gestures").is_dir()):
        what = "not a directory" if not root.is_dir() else "has no poses/ or gestures/"
        _say(
            f"atom-executive: {printable(args.missions)}: {what}: give the mission directory "
            "with --missions DIR (default: ./missions)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    library = MissionLoader(profile, root).library(root)
    errors = [d for d in library.diagnostics if d.is_error]
    for d in errors:
        _say(printable(d), file=sys.stderr)
    targets = library.poses if args.command == "poses" else library.gestures
    what = "pose" if args.command == "poses" else "gesture"
    if args.name is not None and args.name not in targets:
        _say(f"atom-executive: {printable(not_found(what, args.name, targets))}", file=sys.stderr)
        return EXIT_PROBLEMS
    if not targets:
        _say(f"no {args.command} in {printable(args.missions)}", file=sys.stderr)
    else:
        _say(format_targets(targets, root, verbose=args.verbose, name=args.name))
    return EXIT_PROBLEMS if errors else EXIT_OK


# -- keys -------------------------------------------------------------------------------------


def client_id_problem(client: str) -> str | None:
    """Why ``client`` cannot name a key, or None: it must be a printable word a keys file
    and a ``--client-id`` carry as typed."""
    if not client or len(client) > MAX_CLIENT_ID:
        return f"a client id is 1 to {MAX_CLIENT_ID} characters"
    if not client.isprintable() or any(c.isspace() for c in client):
        return "a client id holds no spaces or control characters"
    return None


def key_line(client: str, key: bytes) -> str:
    """The keys-file line for ``client``: YAML ``client: hexkey`` (quoted if need be)."""
    return yaml.safe_dump({client: key.hex()}, width=10_000).strip()


def keygen_cmd(args: argparse.Namespace) -> int:
    client: str = args.client
    why = client_id_problem(client)
    if why is not None:
        _say(f"atom-executive: {printable(client)!r}: {why}", file=sys.stderr)
        return EXIT_USAGE
    path: Path = args.output if args.output is not None else Path(f"{client}.keys.yaml")
    if path.exists() and not args.force:
        _say(
            f"atom-executive: {printable(path)} exists; it is not overwritten (--force to replace it)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    from executive.service.auth import write_key_file

    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # ~/.config/atom-executive
        write_key_file(path, {client: key})
    except OSError as e:
        _say(f"atom-executive: {printable(path)}: {printable(e.strerror)}", file=sys.stderr)
        return EXIT_USAGE
    shown = printable(path.resolve())
    _say(
        f"wrote {shown} (mode 600): the key of client {printable(client)!r}.\n"
        f"Add the line below to the service's keys file (keys_file in its config, e.g.\n"
        f"{DEFAULT_KEYS_FILE}, mode 600) and reload the service (systemctl reload\n"
        f"atom-executive, kill -HUP, or `atom-executive reload`); then sign commands with\n"
        f"  atom-executive stop --client-id {printable(client)} --key-file {shown}\n",
        file=sys.stderr,
    )
    _say(key_line(client, key))  # alone on stdout: `keygen alice >> keys.yaml` works
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Register ``poses``, ``gestures`` and ``keygen`` on the main CLI."""
    from executive.seam.profile import DEFAULT_PROFILE

    for name, what in (("poses", "pose"), ("gestures", "gesture")):
        p = sub.add_parser(
            name,
            description=f"List the {name} of a mission directory's library ({name}/*.yaml).",
        )
        p.add_argument("name", nargs="?", metavar="NAME", help=f"show one {what}, every joint")
        p.add_argument(
            "--missions",
            type=Path,
            default=Path("missions"),
            help=f"mission directory, its {name}/ (default: ./missions)",
        )
        p.add_argument("--profile", default=DEFAULT_PROFILE, help="robot profile name or path")
        p.add_argument(
            "-v", "--verbose", action="store_true", help="every joint value and description"
        )
        p.set_defaults(handler=library_cmd)
    k = sub.add_parser(
        "keygen",
        description=(
            "Write a random 256-bit key for CLIENT to a key file (mode 600) for "
            "--key-file, and print the line to add to the service's keys file."
        ),
    )
    k.add_argument("client", metavar="CLIENT", help="the client id the key signs for")
    k.add_argument(
        "-o", "--output", type=Path, help="the key file to write (default: CLIENT.keys.yaml)"
    )
    k.add_argument("--force", action="store_true", help="replace an existing file")
    k.set_defaults(handler=keygen_cmd)
