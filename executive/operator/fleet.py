"""``atom-executive fleet``: every robot on the fleet plane, live, and commands to one of them.

A zenoh client (``--zenoh-config``, default the loopback client config
``executive/resources/zenoh-fleet-loopback.json5``) subscribes to ``<prefix>/*/status`` and
``<prefix>/*/events`` through the router: each robot's status document (the JSON ``status
--json`` prints; executive/service/fleet.py publishes it on change and at 5 Hz) and its
events. The view shows per robot: id and kind, state, mission and active node, safety and
its causes, battery, and the status' age, counted here from its arrival; a robot silent
for ``STALE_S`` (1.5 s) is marked stale (a killed executive, a lost link, a router between
that went away).

``--json`` prints the view once as a JSON document (``{"schema": "atom-executive/fleet",
"robots": [...]}``) after ``--wait`` seconds of listening, for programs.

Who answers for a robot id is the executive holding its liveliness token
(``<prefix>/ID/holder/<instance>``, executive/service/fleet_claim.py). The view follows
the tokens too: a second executive claiming an id (refused, or two that claimed at once
and both left) shows as DUPLICATE on that id's row, whatever the status puts say.
A row also says when its executive is not ready (``not_ready``: what keeps a mission from
starting, e.g. a robot never heard): NOT READY, and safety UNKNOWN while a safety source
is silent, never IDLE and CLEAR.

``--robot ID ACTION`` (start MISSION [--param N=V], stop, pause, resume, reset) sends a
signed request to that robot as a zenoh query on ``<prefix>/ID/request/<instance>``: the
holder's instance, asked of the routers first (``liveliness().get``), so the request
reaches that executive or none; no holder, or two, is an answer at once, nothing sent.
The same ``Request_`` fields, keys and signing as the DDS client (``--client-id``,
``--key-file``): bound to that instance (executive/service/auth.py), which no other
executive accepts.

``--record FILE.mcap`` writes the fleet's events (JSON, one channel ``/fleet/events``) to
an MCAP file for Foxglove while the view runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zenoh

from executive.service.fleet_claim import (
    HOLDER,
    REFUSED,
    SHOWN,
    holders_of,
    parse_token,
    request_key,
    token_key,
    tokens,
)
from executive.text import printable
from executive.wire.zenoh_session import ConfigError, close_session, load_config, open_session

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK_CLIENT = ROOT / "resources" / "zenoh-fleet-loopback.json5"
STALE_S = 1.5  # s without a status before a robot is stale: 7 puts missed at 5 Hz, so a
# dead robot is marked within 2 s of its last put
REFRESH = 0.25  # s between redraws
SCHEMA = "atom-executive/fleet"
ACTIONS = ("start", "stop", "pause", "resume", "reset")
SETTLED = ("RUNNING", "SAFE_STOP")  # states a robot that is not ready still shows as such


class FleetError(RuntimeError):
    """No reply, or no robot by that name, in time (the message says which)."""


@dataclass
class Claims:
    """The claim tokens of one robot id: its holder (one, or two that claimed at once)
    and the executives refused it (a duplicate)."""

    holders: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)

    @property
    def duplicate(self) -> bool:
        return len(self.holders) > 1 or bool(self.refused)


@dataclass
class Robot:
    """What the view knows of one robot: its latest document and when it arrived."""

    robot_id: str
    document: dict[str, Any] = field(default_factory=dict)
    received: float | None = None  # time.monotonic() of the latest status (None: none yet)
    instance: str | None = None  # its service's instance id (the status put's attachment)

    def row(
        self, now: float, stale_s: float = STALE_S, claims: Claims | None = None
    ) -> dict[str, Any]:
        """The view's line of this robot, as data (``--json``'s rows); ``claims``: the
        tokens of its id."""
        claims = claims or Claims()
        doc = self.document
        safety = doc.get("safety") or {}
        telemetry = doc.get("telemetry") or {}
        battery = telemetry.get("battery") or {}
        age = None if self.received is None else now - self.received
        not_ready = [str(x) for x in doc.get("not_ready") or []]
        return {
            "robot_id": self.robot_id,
            "kind": doc.get("robot"),
            "profile": doc.get("profile"),
            "state": doc.get("state"),
            "ready": not not_ready if doc else None,
            "not_ready": not_ready,
            "mission": doc.get("mission"),
            "run_id": doc.get("run_id"),
            "active_node": doc.get("active_node"),
            "safety": _safety(safety, telemetry),
            "causes": [
                f"{c.get('code')}: {c.get('message')}"
                for c in safety.get("causes") or []
                if isinstance(c, dict)
            ],
            "battery": battery.get("percent") if isinstance(battery, dict) else None,
            "executive_id": doc.get("executive_id"),
            "seq": doc.get("seq"),
            "age_s": None if age is None else round(age, 3),
            "stale": age is None or age > stale_s,
            "holders": sorted(claims.holders),
            "refused": sorted(claims.refused),
            "duplicate": claims.duplicate,
        }


def _safety(safety: dict[str, Any], telemetry: dict[str, Any]) -> Any:
    """The safety condition a row shows: the document's, but UNKNOWN where it says CLEAR
    while a safety source (one with a maximum age) is silent or undecodable: nothing is
    latched because nothing was heard, which is no all-clear."""
    condition = safety.get("condition")
    sources = telemetry.get("sources") or []
    unheard = any(
        isinstance(s, dict)
        and s.get("max_age_s") is not None
        and (s.get("silent") or s.get("undecodable"))
        for s in sources
    )
    return "UNKNOWN" if condition == "CLEAR" and unheard else condition


class FleetClient:
    """The fleet plane as an operator sees it: every robot's latest status, the events,
    the claim tokens, and signed requests to one robot. Thread-safe; ``close()`` ends the
    session. ``view=False``: requests only, no subscription (``fleet --robot``: zenoh
    1.10 may answer a ``liveliness().get`` with nothing while the history of a liveliness
    subscriber on the same keys is still on its way to the session)."""

    def __init__(
        self,
        config: zenoh.Config,
        *,
        prefix: str = "fleet",
        client_id: str = "operator",
        key: bytes | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        view: bool = True,
    ) -> None:
        self.prefix = prefix
        self.client_id = client_id
        self.key = key
        self.on_event = on_event
        self._lock = threading.Condition()
        self.robots: dict[str, Robot] = {}  # those that sent a status
        self.claims: dict[str, Claims] = {}  # the claim tokens of each robot id
        self.events: list[dict[str, Any]] = []
        self.session = open_session(config)
        self._subs: list[Any] = []
        if view:
            liveliness = self.session.liveliness()
            self._subs = [
                self.session.declare_subscriber(f"{prefix}/*/status", self._on_status),
                self.session.declare_subscriber(f"{prefix}/*/events", self._on_event),
                *(
                    liveliness.declare_subscriber(
                        token_key(prefix, "*", kind), self._on_token, history=True
                    )
                    for kind in (HOLDER, REFUSED)
                ),
            ]

    def _robot_id(self, sample: zenoh.Sample) -> str:
        return str(sample.key_expr).split("/")[-2]

    def _on_status(self, sample: zenoh.Sample) -> None:
        now = time.monotonic()
        try:
            doc = json.loads(sample.payload.to_bytes())
        except (ValueError, RecursionError):
            return  # not a document: nothing to show (nothing raises into zenoh)
        if not isinstance(doc, dict):
            return
        robot_id = self._robot_id(sample)
        attachment = sample.attachment
        instance = None
        if attachment is not None:
            instance = attachment.to_bytes().decode("utf-8", errors="replace") or None
        with self._lock:
            robot = self.robots.setdefault(robot_id, Robot(robot_id))
            robot.document, robot.received, robot.instance = doc, now, instance
            self._lock.notify_all()

    def _on_token(self, sample: zenoh.Sample) -> None:
        """A holder or refused token came or went (zenoh's thread: nothing raises)."""
        parsed = parse_token(self.prefix, str(sample.key_expr))
        if parsed is None:
            return
        robot_id, kind, instance = parsed
        alive = sample.kind == zenoh.SampleKind.PUT
        with self._lock:
            claims = self.claims.setdefault(robot_id, Claims())
            known = claims.holders if kind == HOLDER else claims.refused
            if alive:
                known.add(instance)
            else:
                known.discard(instance)
            self._lock.notify_all()

    def _on_event(self, sample: zenoh.Sample) -> None:
        try:
            event = json.loads(sample.payload.to_bytes())
        except (ValueError, RecursionError):
            return
        if not isinstance(event, dict):
            return
        event.setdefault("robot_id", self._robot_id(sample))
        with self._lock:
            self.events.append(event)
            self._lock.notify_all()
        if self.on_event is not None:
            with contextlib.suppress(Exception):  # a recorder's problem never ends the view
                self.on_event(event)

    def rows(self, stale_s: float = STALE_S) -> list[dict[str, Any]]:
        """A row a robot that sent a status, or whose id an executive was refused (a
        duplicate is never hidden); one whose holder has sent nothing yet waits."""
        now = time.monotonic()
        with self._lock:
            refused = {r for r, c in self.claims.items() if c.refused}
            return [
                self.robots.get(r, Robot(r)).row(now, stale_s, self.claims.get(r))
                for r in sorted(set(self.robots) | refused)
            ]

    def view(self, stale_s: float = STALE_S) -> dict[str, Any]:
        """The ``--json`` document."""
        return {"schema": SCHEMA, "version": 1, "robots": self.rows(stale_s)}

    def wait_for(self, predicate: Callable[[FleetClient], bool], timeout: float) -> bool:
        """Wait until ``predicate(self)`` holds (re-checked on every sample and every
        0.1 s, so ages count too); whether it did."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.1))
            return True

    def row(self, robot_id: str) -> dict[str, Any] | None:
        return next((r for r in self.rows() if r["robot_id"] == robot_id), None)

    # -- requests ---------------------------------------------------------------------------

    def instance(self, robot_id: str, timeout: float = 5.0) -> str:
        """The instance id of the one executive that holds ``robot_id`` now (asked of
        the routers: their token tables; with what this view's subscription knows, see
        the class); FleetError, saying which, if none or several do."""
        asked = holders_of(self.session, self.prefix, robot_id, timeout)
        with self._lock:
            known = self.claims.get(robot_id, Claims()).holders
            holders = sorted(set(asked) | known)
        if len(holders) == 1:
            return holders[0]
        if holders:
            raise FleetError(
                f"robot id {robot_id!r} is claimed by {len(holders)} executives at once "
                f"({', '.join(h[:SHOWN] for h in holders)}): nothing sent; give each its "
                "own fleet.robot_id"
            )
        claims = tokens(self.session, token_key(self.prefix, "*", "*"), self.prefix, timeout)
        with self._lock:
            refused = sorted(
                {i for r, k, i in claims if r == robot_id and k == REFUSED}
                | self.claims.get(robot_id, Claims()).refused
            )
            held = sorted(
                {r for r, k, _ in claims if k == HOLDER}
                | {r for r, c in self.claims.items() if c.holders}
            )
        why = f"no executive on the fleet plane holds robot id {robot_id!r}"
        if refused:
            why += (
                f" (refused to {len(refused)} executive(s) configured with it: "
                f"{', '.join(i[:SHOWN] for i in refused)}; a duplicate robot id)"
            )
        raise FleetError(f"{why}; on the plane: {', '.join(held) or 'no robot'}")

    def query(
        self,
        robot_id: str,
        fields: dict[str, Any],
        timeout: float,
        *,
        holder: str | None = None,
    ) -> dict[str, Any]:
        """One request as a zenoh query to the executive that holds ``robot_id``
        (``holder``: its instance, else asked first); its reply's fields."""
        began = time.monotonic()
        holder = holder or self.instance(robot_id, timeout)
        key = request_key(self.prefix, robot_id, holder)
        left = max(0.0, timeout - (time.monotonic() - began))
        replies = self.session.get(key, payload=json.dumps(fields), timeout=left)
        for reply in replies:
            if reply.ok is None:
                continue
            try:
                answer = json.loads(reply.ok.payload.to_bytes())
            except ValueError:
                continue
            if isinstance(answer, dict):
                return answer
        if time.monotonic() - began < 0.9 * timeout:  # the routers said: nobody there
            raise FleetError(
                f"robot {robot_id!r}: its executive ({holder[:SHOWN]}) left the fleet plane "
                "before it answered"
            )
        raise FleetError(f"no reply from robot {robot_id!r} within {timeout:g} s ({key})")

    def request(
        self,
        robot_id: str,
        verb: str,
        args: dict[str, Any] | None = None,
        timeout: float = 5.0,
        *,
        instance: str | None = None,
    ) -> dict[str, Any]:
        """A (signed, when there is a key) request to the executive that holds
        ``robot_id``; a command is bound to its instance (``instance``: to that one
        instead, to see it refused)."""
        from executive.service.auth import new_nonce
        from executive.service.protocol import MUTATING

        holder = self.instance(robot_id, timeout)
        signed = self.key is not None and verb in MUTATING
        nonce = new_nonce(instance or holder) if signed else ""
        return self.send(robot_id, verb, args or {}, nonce, timeout, holder=holder)

    def send(
        self,
        robot_id: str,
        verb: str,
        args: dict[str, Any],
        nonce: str,
        timeout: float,
        *,
        holder: str | None = None,
    ) -> dict[str, Any]:
        args_text = json.dumps(args)
        request_id, stamp = uuid.uuid4().hex, time.time_ns()
        signature = ""
        if self.key is not None and nonce:
            from executive.service.auth import sign

            signature = sign(self.key, request_id, self.client_id, verb, args_text, stamp, nonce)
        fields = {
            "request_id": request_id,
            "client_id": self.client_id,
            "verb": verb,
            "args": args_text,
            "timestamp_ns": stamp,
            "nonce": nonce,
            "signature": signature,
        }
        return self.query(robot_id, fields, timeout, holder=holder)

    def close(self) -> None:
        for sub in self._subs:
            sub.undeclare()
        close_session(self.session)


# -- the view ---------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "-" if value is None or value == "" else printable(str(value))


def shown_state(row: dict[str, Any]) -> str:
    """The state a row shows: NOT READY for an executive that could not start a mission
    now (idle or after a run), not IDLE; a run or a latch as itself."""
    if row.get("ready") is False and row["state"] not in SETTLED:
        return "NOT READY"
    return _text(row["state"])


def duplicate_note(row: dict[str, Any]) -> str:
    """'' or what the tokens say about a robot id claimed by more than one executive."""
    if not row.get("duplicate"):
        return ""
    parts = []
    if len(row["holders"]) > 1:
        parts.append("claimed at once by " + ", ".join(h[:SHOWN] for h in row["holders"]))
    if row["refused"]:
        parts.append("refused to " + ", ".join(i[:SHOWN] for i in row["refused"]))
    return "DUPLICATE ID: " + "; ".join(parts)


def table(rows: list[dict[str, Any]]) -> Any:
    """The rich table of the fleet (strings as ``Text``, never markup)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table(
        title="fleet", expand=True, caption=None if rows else "(no robot on the fleet plane yet)"
    )
    for name in ("robot", "kind", "state", "mission / active node", "safety", "battery", "age"):
        grid.add_column(name)
    for r in rows:
        stale = r["stale"]
        color = {"SAFE_STOP": "red", "CLEAR": "green"}.get(r["safety"], "yellow")
        safety = Text(_text(r["safety"]), style=color)
        if r["causes"]:
            safety.append("\n" + printable("; ".join(r["causes"])), style="red")
        robot = Text(printable(r["robot_id"]))
        if note := duplicate_note(r):
            robot.append("\n" + printable(note), style="bold red")
        state = Text(shown_state(r), style="dim" if stale else "")
        if r.get("ready") is False:
            state.stylize("yellow")
            state.append("\n" + printable("; ".join(r["not_ready"])), style="yellow")
        mission = _text(r["mission"])
        if r["active_node"]:
            mission += " / " + printable(str(r["active_node"]))
        battery = "-" if r["battery"] is None else f"{r['battery']:.0f} %"
        age_s = "-" if r["age_s"] is None else f"{r['age_s']:.1f} s"
        age = Text(f"stale {age_s}" if stale else age_s, style="bold red" if stale else "")
        grid.add_row(
            robot, Text(_text(r["kind"])), state, Text(mission), safety, Text(battery), age
        )
    return grid


def plain(rows: list[dict[str, Any]]) -> str:
    """The view as plain text: a line a robot."""
    lines = []
    for r in rows:
        causes = f" ({'; '.join(r['causes'])})" if r["causes"] else ""
        node = f" / {r['active_node']}" if r["active_node"] else ""
        battery = "-" if r["battery"] is None else f"{r['battery']:.0f}%"
        stale = " STALE" if r["stale"] else ""
        age = "-" if r["age_s"] is None else f"{r['age_s']:.1f} s"
        why = f" ({'; '.join(r['not_ready'])})" if r.get("ready") is False else ""
        note = f"{duplicate_note(r)}  " if r.get("duplicate") else ""
        lines.append(
            printable(
                f"{r['robot_id']:<12} {_text(r['kind']):<6} {shown_state(r):<10}{why} "
                f"{_text(r['mission'])}{node}  safety {_text(r['safety'])}{causes}  "
                f"{note}battery {battery}  age {age}{stale}"
            )
        )
    return "\n".join(lines) or "(no robot on the fleet plane yet)"


# -- the command ------------------------------------------------------------------------------


def _client(args: argparse.Namespace, **kwargs: Any) -> FleetClient:
    """The command's client. A person is waiting: no router within ``--timeout`` is an
    answer (the config's own wait, forever in the shipped ones, is for executives)."""
    source = args.zenoh_config or LOOPBACK_CLIENT
    wait = {
        "connect/timeout_ms": str(round(args.timeout * 1000)),
        "connect/exit_on_failure": "true",
    }
    try:
        config = load_config(source, wait)
    except ConfigError as e:
        raise SystemExit(printable(f"atom-executive fleet: {e}")) from None
    endpoints = ", ".join(json.loads(config.get_json("connect/endpoints")))
    try:
        return FleetClient(config, prefix=args.prefix, **kwargs)
    except ConfigError as e:
        raise SystemExit(
            printable(
                f"atom-executive fleet: no router at {endpoints or '(no endpoint)'} within "
                f"{args.timeout:g} s ({e})"
            )
        ) from None


def _command(args: argparse.Namespace) -> int:
    from executive.operator.commands import UsageError, _key, _params

    try:
        key = _key(args)
        params = _params(args.param)
    except UsageError as e:
        print(f"atom-executive fleet: {e}", file=sys.stderr)  # noqa: T201
        return 2
    action = args.action
    if action == "start" and not args.mission:
        print("atom-executive fleet: start needs a MISSION", file=sys.stderr)  # noqa: T201
        return 2
    verb_args: dict[str, Any] = {}
    if action == "start":
        verb_args = {"mission": args.mission, "params": params}
    elif action == "pause":
        verb_args = {"by": args.client_id}
    client = _client(args, client_id=args.client_id, key=key, view=False)
    try:  # the holder's instance from the routers, then the request to it alone
        reply = client.request(args.robot, action, verb_args, args.timeout)
    except FleetError as e:
        print(f"atom-executive fleet: {e}", file=sys.stderr)  # noqa: T201
        return 1
    finally:
        client.close()
    code = int(reply.get("code", -1))
    print(f"{args.robot}: {printable(str(reply.get('message', '')))}")  # noqa: T201
    return 0 if code == 0 else 1


def _recorder(path: Path | None) -> Any:
    if path is None:
        return None
    from mcap.writer import Writer

    stream = path.open("wb")
    writer = Writer(stream)
    writer.start(profile="", library="atom-executive fleet")
    schema = writer.register_schema(
        name="atom-executive/fleet-event",
        encoding="jsonschema",
        data=json.dumps({"type": "object"}).encode(),
    )
    channel = writer.register_channel(
        topic="/fleet/events", message_encoding="json", schema_id=schema
    )
    lock = threading.Lock()

    def write(event: dict[str, Any]) -> None:
        now = time.time_ns()
        with lock:
            writer.add_message(
                channel, log_time=now, data=json.dumps(event).encode(), publish_time=now
            )

    def close() -> None:
        with lock:
            writer.finish()  # type: ignore[no-untyped-call]
            stream.close()

    write.close = close  # type: ignore[attr-defined]
    return write


def run(args: argparse.Namespace) -> int:
    if args.robot is not None or args.action is not None:
        if args.robot is None or args.action is None:
            print("atom-executive fleet: --robot ID and an action go together", file=sys.stderr)  # noqa: T201
            return 2
        return _command(args)
    record = _recorder(args.record)
    client = _client(args, on_event=record)
    try:
        if args.json:
            time.sleep(args.wait)
            print(json.dumps(client.view(args.stale), indent=2))  # noqa: T201
            return 0
        return _live(client, args)
    finally:
        client.close()
        if record is not None:
            record.close()


def _live(client: FleetClient, args: argparse.Namespace) -> int:
    end = time.monotonic() + args.duration if args.duration > 0 else float("inf")
    if args.plain or not sys.stdout.isatty():
        last = ""
        while time.monotonic() < end:
            text = plain(client.rows(args.stale))
            shape = "\n".join(line.rsplit(" age ", 1)[0] for line in text.splitlines())
            if shape != last:  # a frame whenever what it says changes (ages tick on)
                last = shape
                print(text + "\n", flush=True)  # noqa: T201
            time.sleep(REFRESH)
        return 0
    from rich.console import Console
    from rich.live import Live

    with Live(table(client.rows(args.stale)), console=Console(), screen=True) as live:
        try:
            while time.monotonic() < end:
                time.sleep(REFRESH)
                live.update(table(client.rows(args.stale)))
        except KeyboardInterrupt:
            pass
    return 0


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1e6:
        raise argparse.ArgumentTypeError(f"{text}: seconds must be 0 or more")
    return value


def add_parser(sub: Any) -> None:
    p = sub.add_parser("fleet")  # its summary: executive.cli.COMMANDS
    p.add_argument(
        "--zenoh-config",
        type=Path,
        help=f"zenoh JSON5 client config: the router to connect to (default: {LOOPBACK_CLIENT.name})",
    )
    p.add_argument("--prefix", default="fleet", help="the fleet's key prefix (default: fleet)")
    p.add_argument("--json", action="store_true", help="print the view once as JSON")
    p.add_argument(
        "--wait", type=_seconds, default=1.5, help="with --json: seconds to listen first"
    )
    p.add_argument(
        "--stale", type=_seconds, default=STALE_S, help="seconds of silence before stale"
    )
    p.add_argument("--duration", type=_seconds, default=0.0, help="stop after this (0: never)")
    p.add_argument("--plain", action="store_true", help="plain text frames, even on a terminal")
    p.add_argument("--record", type=Path, metavar="FILE.mcap", help="record the fleet's events")
    p.add_argument("--robot", metavar="ID", help="the robot a command is for")
    p.add_argument("action", nargs="?", choices=ACTIONS, help="a command for --robot")
    p.add_argument("mission", nargs="?", help="start's mission")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--timeout", type=_seconds, default=5.0, help="seconds to wait for a reply")
    p.add_argument("--client-id", default="operator", help="client id (names the key)")
    p.add_argument("--key-file", type=Path, help="HMAC key file for commands")
    p.set_defaults(handler=run)
