"""``atom-executive router``: zenoh's own router for the fleet plane (issue 24).

No relay of ours: this opens a zenoh session in router mode (eclipse-zenoh, the router
zenohd runs) from a standard zenoh JSON5 config and keeps it open until SIGTERM or SIGINT.
Every executive of a site connects to its site router as a zenoh client
(``fleet.zenoh_config``); site routers connect to each other (``connect.endpoints``); the
operator's ``atom-executive fleet`` connects to any of them (docs/fleet.md). ``zenohd -c
FILE`` on the same file works the same where zenohd is installed.

The default config, ``executive/resources/zenoh-router-loopback.json5``, listens on
tcp/127.0.0.1:7448 only and scouts nothing; ``--listen ENDPOINT`` (repeatable) replaces its
listen endpoints (tests and the demo pick free ports), ``--connect ENDPOINT`` adds a router
to connect to. The mode is always router, whatever the file says.

The router also keeps the site's **membership store** (executive/service/fleet_store.py):
every robot under ``--prefix`` it has seen, live, lost or left, with its last status,
for a fleet view opened later; ``--roster FILE`` (executive/service/fleet_site.py) names
the robots the site expects, listed as missing until they come, and gives the prefix.
A secure site's router config (TLS, mutual authentication, access control) is made by
``atom-executive fleet-site`` (docs/fleet.md).
"""

from __future__ import annotations

import argparse
import json
import signal
from pathlib import Path
from typing import Any

from executive.service.signalflag import SignalFlag
from executive.text import printable

LOOPBACK_ROUTER = Path(__file__).resolve().parents[1] / "resources" / "zenoh-router-loopback.json5"


def run(args: argparse.Namespace) -> int:
    from executive.wire.zenoh_session import ConfigError, close_session, load_config, open_session

    overrides = [("mode", '"router"')]
    if args.listen:
        overrides.append(("listen/endpoints", json.dumps(args.listen)))
    if args.connect:
        overrides.append(("connect/endpoints", json.dumps(args.connect)))
    stop = SignalFlag()  # not threading.Event: its set in a handler may deadlock the wait
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    from executive.service.fleet_site import SiteError, load_roster
    from executive.service.fleet_store import MemberStore

    try:
        roster = load_roster(args.roster) if args.roster else None
        config = load_config(args.zenoh_config or LOOPBACK_ROUTER, dict(overrides))
        session = open_session(config)
    except (ConfigError, SiteError) as e:
        print(printable(f"atom-executive router: {e}"), flush=True)  # noqa: T201
        return 2
    prefix = args.prefix or (roster.prefix if roster else "fleet")
    store = MemberStore(session, prefix, roster.robots if roster else ())
    listening = ", ".join(json.loads(config.get_json("listen/endpoints")))
    zid = session.info.zid()
    # the operator's (and the harness's) sign that it is up
    print(printable(f"router {zid} up; listening on {listening}"), flush=True)  # noqa: T201
    stop.wait()
    store.close()
    close_session(session)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("router")  # its summary: executive.cli.COMMANDS
    p.add_argument(
        "--zenoh-config",
        type=Path,
        help=f"zenoh JSON5 router config (default: {LOOPBACK_ROUTER.name}, loopback only)",
    )
    p.add_argument(
        "--listen",
        action="append",
        default=[],
        metavar="ENDPOINT",
        help="listen on this endpoint instead of the file's (e.g. tcp/127.0.0.1:7448)",
    )
    p.add_argument(
        "--connect",
        action="append",
        default=[],
        metavar="ENDPOINT",
        help="connect to this router too (another site's)",
    )
    p.add_argument(
        "--prefix", help="the fleet's key prefix the membership store follows (default: fleet)"
    )
    p.add_argument(
        "--roster",
        type=Path,
        metavar="FILE",
        help="the site's roster (YAML): the robots it expects are listed until they come",
    )
    p.set_defaults(handler=run)
