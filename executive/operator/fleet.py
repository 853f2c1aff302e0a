"""``atom-executive fleet``: every robot on the fleet plane, live, and commands to one of them.

A zenoh client (``--zenoh-config``, default the loopback client config
``executive/resources/zenoh-fleet-loopback.json5``) subscribes to ``<prefix>/*/status`` and
``<prefix>/*/events`` through the router: each robot's status document (the JSON ``status
--json`` prints; executive/service/fleet.py publishes it on change and at 5 Hz) and its
events. The view shows per robot: id and kind, state, mission and active node, safety and
its causes, battery, and the status' age, counted here from its arrival; a robot silent
for ``STALE_S`` (1.5 s) is marked stale (a killed executive, a lost link, a router between
that went away).

Every robot the site knows is listed, live or not (issue 34): its **condition** is live,
stale (silent past ``--stale``), lost (its executive's token went without a goodbye:
killed, link down), left (its service stopped cleanly) or missing (the roster expects it,
it never came), with its last status and since when (executive/service/fleet_members.py).
The view follows the tokens and goodbyes itself, and on opening asks the routers'
membership stores (``<prefix>/@members/*``, executive/service/fleet_store.py) what they
knew before: a robot killed before the view opened is listed as lost. ``--roster FILE``
(a site's roster, executive/service/fleet_site.py) adds the robots it expects.

At a site's size: ``--state``, ``--safety`` and ``--site`` filter the rows (a state or
condition, a safety condition, a robot id prefix), ``--sort`` orders them (``attention``
by default: latched, lost, stale and duplicate first), and a summary line counts them
(running, idle, safe stop, stale, lost, left, missing). The live view draws the rows
that fit the terminal; ``--plain`` (and any output that is not a terminal) prints the
summary and every row once, then a line, time-stamped, each time a robot's row changes
(its state, safety, condition: stale and lost included) and each time the summary does.

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
import datetime
import fnmatch
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
from executive.service.fleet_members import LEFT, LIVE, LOST, MISSING, Member, Membership
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
STALE = "stale"  # a live robot silent past --stale: the view's reading, not a membership's
SORTS = ("attention", "id", "state", "safety", "condition", "age")
RETRY_S = 0.05  # s between asks of an executive whose token the routers hold, not yet its queryable
STORE_TIMEOUT_S = 2.0  # for the membership stores' answers when a view opens


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
        self,
        now: float,
        stale_s: float = STALE_S,
        claims: Claims | None = None,
        member: Member | None = None,
        wall: float | None = None,
    ) -> dict[str, Any]:
        """The view's line of this robot, as data (``--json``'s rows); ``claims``: the
        tokens of its id; ``member``: its membership (None: live as far as known);
        ``wall``: ``time.time()`` at ``now`` (for since)."""
        claims = claims or Claims()
        wall = time.time() if wall is None else wall
        doc = self.document
        safety = doc.get("safety") or {}
        telemetry = doc.get("telemetry") or {}
        battery = telemetry.get("battery") or {}
        age = None if self.received is None else now - self.received
        not_ready = [str(x) for x in doc.get("not_ready") or []]
        silent = age is None or age > stale_s
        condition = LIVE if member is None else member.condition
        since = None if member is None else member.since
        if condition == LIVE and silent:
            condition = STALE
            since = None if age is None else wall - age
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
            "stale": silent or condition in (LOST, LEFT, MISSING),  # not current
            "condition": condition,
            "since": _iso(since),
            "for_s": None if since is None else round(max(0.0, wall - since), 1),
            "instance": self.instance or (None if member is None else member.instance),
            "holders": sorted(claims.holders),
            "refused": sorted(claims.refused),
            "duplicate": claims.duplicate,
        }


def _iso(at: float | None) -> str | None:
    if at is None:
        return None
    stamp = datetime.datetime.fromtimestamp(at, datetime.UTC)
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


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
        expected: tuple[str, ...] = (),
    ) -> None:
        self.prefix = prefix
        self.client_id = client_id
        self.key = key
        self.on_event = on_event
        self._lock = threading.Condition()
        self.robots: dict[str, Robot] = {}  # those that sent a status
        self.claims: dict[str, Claims] = {}  # the claim tokens of each robot id
        self.events: list[dict[str, Any]] = []
        self.members = Membership(expected, on_change=lambda _: self._notify())
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
            self.load_stores()

    def _notify(self) -> None:
        with self._lock:
            self._lock.notify_all()

    def load_stores(self, timeout: float = STORE_TIMEOUT_S) -> int:
        """What the routers' membership stores know (robots lost or left before this
        view opened, with their last status), merged; how many stores answered."""
        from executive.service.fleet_store import SCHEMA, store_key

        answered = 0
        replies = self.session.get(
            store_key(self.prefix),
            target=zenoh.QueryTarget.ALL,
            consolidation=zenoh.ConsolidationMode.NONE,
            timeout=timeout,
        )
        for reply in replies:
            if reply.ok is None:
                continue
            try:
                doc = json.loads(reply.ok.payload.to_bytes())
            except (ValueError, RecursionError):
                continue
            if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
                continue
            answered += 1
            for record in doc.get("members") or []:
                if isinstance(record, dict):
                    self._merge(record)
        return answered

    def _merge(self, record: dict[str, Any]) -> None:
        """One store's record: the membership, and the last status where newer."""
        self.members.merge(record, None)
        robot_id, status, at = record.get("robot_id"), record.get("status"), record.get("status_at")
        if not isinstance(robot_id, str) or not isinstance(status, dict):
            return
        if not isinstance(at, int | float):
            return
        received = time.monotonic() - max(0.0, time.time() - float(at))
        instance = record.get("instance") if isinstance(record.get("instance"), str) else None
        with self._lock:
            robot = self.robots.setdefault(robot_id, Robot(robot_id))
            if robot.received is None or received > robot.received:
                robot.document, robot.received, robot.instance = status, received, instance
            self._lock.notify_all()

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
        self.members.status(robot_id, instance, b"")  # the document is kept here
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
        if kind == HOLDER:
            self.members.token(robot_id, instance, alive)
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
        instance = event.get("instance")
        if event.get("kind") == "left" and isinstance(instance, str) and instance:
            self.members.goodbye(self._robot_id(sample), instance)
        with self._lock:
            self.events.append(event)
            self._lock.notify_all()
        if self.on_event is not None:
            with contextlib.suppress(Exception):  # a recorder's problem never ends the view
                self.on_event(event)

    def rows(self, stale_s: float = STALE_S) -> list[dict[str, Any]]:
        """A row a robot that sent a status, whose id an executive was refused (a
        duplicate is never hidden), or that the site knows lost, left or missing; a
        holder that has sent nothing yet waits. By robot id."""
        now, wall = time.monotonic(), time.time()
        members = {m.robot_id: m for m in self.members.members()}
        with self._lock:
            refused = {r for r, c in self.claims.items() if c.refused}
            known = {r for r, m in members.items() if m.condition in (LOST, LEFT, MISSING)}
            return [
                self.robots.get(r, Robot(r)).row(
                    now, stale_s, self.claims.get(r), members.get(r), wall
                )
                for r in sorted(set(self.robots) | refused | known)
            ]

    def view(
        self, stale_s: float = STALE_S, pick: Callable[[list[dict[str, Any]]], Any] | None = None
    ) -> dict[str, Any]:
        """The ``--json`` document (``pick``: the filter and order of the rows)."""
        rows = self.rows(stale_s)
        rows = rows if pick is None else pick(rows)
        return {"schema": SCHEMA, "version": 1, "summary": counts(rows), "robots": rows}

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
        payload = json.dumps(fields)
        while True:
            left = max(0.0, timeout - (time.monotonic() - began))
            for reply in self.session.get(key, payload=payload, timeout=left):
                if reply.ok is None:
                    continue
                try:
                    answer = json.loads(reply.ok.payload.to_bytes())
                except ValueError:
                    continue
                if isinstance(answer, dict):
                    return answer
            spent = time.monotonic() - began
            if spent >= 0.9 * timeout:
                raise FleetError(f"no reply from robot {robot_id!r} within {timeout:g} s ({key})")
            # the routers said nobody answers there: the executive left, or it has just
            # joined and its token reached this view ahead of its queryable (declared at
            # the same time, routed apart). Asked again while its token stays; the request
            # reached no one, so the same nonce is no replay.
            if holder not in holders_of(self.session, self.prefix, robot_id, timeout - spent):
                raise FleetError(
                    f"robot {robot_id!r}: its executive ({holder[:SHOWN]}) left the fleet "
                    "plane before it answered"
                )
            time.sleep(RETRY_S)

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


def condition_note(row: dict[str, Any]) -> tuple[str, str]:
    """What a row says of its condition: (the words, the part that ticks on by itself:
    an age). A live robot's is its status' age."""
    condition = row.get("condition", LIVE)
    age = "-" if row["age_s"] is None else f"{row['age_s']:.1f} s"
    if condition == LIVE:
        return "", f"age {age}"
    if condition == STALE:
        return "STALE", f"age {age}"
    if condition == MISSING:
        return "MISSING (never came)", ""
    since = (row.get("since") or "")[11:19] or "?"
    ticking = "" if row.get("for_s") is None else f"for {row['for_s']:.0f} s"
    return f"{condition.upper()} since {since}", ticking


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many robots are in each reading the summary line gives."""
    out = dict.fromkeys(("robots", "running", "idle", "safe_stop", STALE, LOST, LEFT, MISSING), 0)
    out["robots"] = len(rows)
    for r in rows:
        condition = r.get("condition", LIVE)
        if condition != LIVE:
            out[condition] += 1
        elif r["safety"] == "SAFE_STOP":
            out["safe_stop"] += 1
        elif r["state"] == "RUNNING":
            out["running"] += 1
        else:
            out["idle"] += 1
    return out


def summary(rows: list[dict[str, Any]]) -> str:
    """The summary line: running, idle, safe stop and lost always; the rest when any."""
    c = counts(rows)
    parts = [f"{c['running']} running", f"{c['idle']} idle", f"{c['safe_stop']} safe stop"]
    parts += [f"{c[k]} {k}" for k in (STALE, LOST, LEFT, MISSING) if c[k] or k == LOST]
    return f"{c['robots']} robot{'s' if c['robots'] != 1 else ''}: {', '.join(parts)}"


_ATTENTION = {"SAFE_STOP": 0, LOST: 1, STALE: 2, "duplicate": 3, "not_ready": 4, MISSING: 5}


def attention(row: dict[str, Any]) -> int:
    """How soon an operator must look at this robot (0: first)."""
    condition = row.get("condition", LIVE)
    if condition == LIVE and row["safety"] == "SAFE_STOP":
        return _ATTENTION["SAFE_STOP"]
    if condition in _ATTENTION:
        return _ATTENTION[condition]
    if row.get("duplicate"):
        return _ATTENTION["duplicate"]
    if row.get("ready") is False:
        return _ATTENTION["not_ready"]
    if condition == LEFT:
        return 8
    return 6 if row["state"] == "RUNNING" else 7


def pick(
    rows: list[dict[str, Any]],
    *,
    states: tuple[str, ...] = (),
    safety: tuple[str, ...] = (),
    sites: tuple[str, ...] = (),
    sort: str = "attention",
) -> list[dict[str, Any]]:
    """The rows the filters keep, in ``sort`` order. ``states``: a shown state or a
    condition (``running``, ``not ready``, ``lost``...); ``safety``: a safety condition;
    ``sites``: robot id prefixes (or glob patterns); each case-insensitive, any of a kind."""
    want_states = {x.upper() for x in states}
    want_safety = {x.upper() for x in safety}
    kept = []
    for r in rows:
        readings = {shown_state(r).upper(), str(r.get("condition", LIVE)).upper()}
        if want_states and not readings & want_states:
            continue
        if want_safety and str(r["safety"]).upper() not in want_safety:
            continue
        if sites and not any(_site(r["robot_id"], s) for s in sites):
            continue
        kept.append(r)
    by_id = sorted(kept, key=lambda r: r["robot_id"])
    if sort == "id":
        return by_id
    if sort == "age":  # the longest silent first
        return sorted(by_id, key=lambda r: -(r["age_s"] if r["age_s"] is not None else 1e12))
    keys: dict[str, Callable[[dict[str, Any]], Any]] = {
        "attention": attention,
        "state": shown_state,
        "safety": lambda r: _text(r["safety"]),
        "condition": lambda r: r.get("condition", LIVE),
    }
    return sorted(by_id, key=keys[sort])


def _site(robot_id: str, pattern: str) -> bool:
    robot_id, pattern = robot_id.lower(), pattern.lower()
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(robot_id, pattern)
    return robot_id.startswith(pattern)


def table(rows: list[dict[str, Any]], limit: int | None = None, total: str = "") -> Any:
    """The rich table of the fleet (strings as ``Text``, never markup); at most
    ``limit`` rows (those that fit the terminal), ``total`` the summary line."""
    from rich.table import Table
    from rich.text import Text

    shown = rows if limit is None else rows[: max(0, limit)]
    caption = total or None
    if not rows:
        caption = "(no robot on the fleet plane yet)"
    elif len(shown) < len(rows):
        caption = f"{total}  ({len(rows) - len(shown)} more: --state, --safety, --site filter)"
    grid = Table(title="fleet", expand=True, caption=caption)
    for name in ("robot", "kind", "state", "mission / active node", "safety", "battery", "link"):
        grid.add_column(name)
    for r in shown:
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
        words, ticking = condition_note(r)
        link = Text(printable(f"{words} {ticking}".strip()), style="bold red" if words else "")
        grid.add_row(
            robot, Text(_text(r["kind"])), state, Text(mission), safety, Text(battery), link
        )
    return grid


def plain_row(row: dict[str, Any]) -> tuple[str, str]:
    """A row as plain text: (what it says, the part that ticks on: an age)."""
    r = row
    causes = f" ({'; '.join(r['causes'])})" if r["causes"] else ""
    node = f" / {r['active_node']}" if r["active_node"] else ""
    battery = "-" if r["battery"] is None else f"{r['battery']:.0f}%"
    why = f" ({'; '.join(r['not_ready'])})" if r.get("ready") is False else ""
    note = f"{duplicate_note(r)}  " if r.get("duplicate") else ""
    words, ticking = condition_note(r)
    text = printable(
        f"{r['robot_id']:<12} {_text(r['kind']):<6} {shown_state(r):<10}{why} "
        f"{_text(r['mission'])}{node}  safety {_text(r['safety'])}{causes}  "
        f"{note}battery {battery}  {words}".rstrip()
    )
    return text, printable(ticking)


def plain(rows: list[dict[str, Any]]) -> str:
    """The view as plain text: the summary, then a line a robot."""
    if not rows:
        return "(no robot on the fleet plane yet)"
    return "\n".join(
        [summary(rows), *(f"{text}  {ticking}".rstrip() for text, ticking in map(plain_row, rows))]
    )


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
    expected: tuple[str, ...] = ()
    if args.roster is not None:
        from executive.service.fleet_site import SiteError, load_roster

        try:
            expected = load_roster(args.roster).robots
        except SiteError as e:
            print(f"atom-executive fleet: {e}", file=sys.stderr)  # noqa: T201
            return 2
    record = _recorder(args.record)
    client = _client(args, on_event=record, expected=expected)
    try:
        if args.json:
            time.sleep(args.wait)
            print(json.dumps(client.view(args.stale, _picker(args)), indent=2))  # noqa: T201
            return 0
        return _live(client, args)
    finally:
        client.close()
        if record is not None:
            record.close()


def _picker(args: argparse.Namespace) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    return lambda rows: pick(
        rows,
        states=tuple(args.state),
        safety=tuple(args.safety),
        sites=tuple(args.site),
        sort=args.sort,
    )


def _clock() -> str:
    return datetime.datetime.now().astimezone().strftime("%H:%M:%S")


def plain_log(
    client: FleetClient,
    stale_s: float,
    choose: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    until: float,
    write: Callable[[str], None],
    *,
    clock: Callable[[], float] = time.monotonic,
    refresh: float = REFRESH,
) -> None:
    """The plain view: the summary and every row once, then a time-stamped line each
    time a robot's row says something new (state, safety, condition: stale, lost, left)
    and each time the summary changes (a log, a terminal that is not a TTY)."""
    said: dict[str, str] = {}
    last_summary = ""
    first = True
    while True:
        rows = choose(client.rows(stale_s))
        lines = []
        if first:
            lines.append(plain(rows))
        for r in rows:
            text, ticking = plain_row(r)
            if said.get(r["robot_id"]) != text:
                if not first:
                    lines.append(f"{_clock()} {text}  {ticking}".rstrip())
                said[r["robot_id"]] = text
        line = summary(rows)
        if line != last_summary:
            if not first:
                lines.append(f"{_clock()} {line}")
            last_summary = line
        if lines:
            write("\n".join(lines))
        first = False
        if clock() >= until:
            return
        time.sleep(refresh)


def _live(client: FleetClient, args: argparse.Namespace) -> int:
    end = time.monotonic() + args.duration if args.duration > 0 else float("inf")
    choose = _picker(args)
    if args.plain or not sys.stdout.isatty():
        with contextlib.suppress(KeyboardInterrupt):
            plain_log(client, args.stale, choose, end, lambda text: print(text, flush=True))  # noqa: T201
        return 0
    from rich.console import Console
    from rich.live import Live

    console = Console()

    def frame() -> Any:
        rows = choose(client.rows(args.stale))
        # the rows that fit: a title, a header, a caption and borders; rows of one line
        return table(rows, limit=max(1, console.height - 7), total=summary(rows))

    with Live(frame(), console=console, screen=True, auto_refresh=False) as live:
        try:
            while time.monotonic() < end:
                time.sleep(REFRESH)
                live.update(frame(), refresh=True)
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
    p.add_argument(
        "--state",
        action="append",
        default=[],
        metavar="STATE",
        help="only robots in this state or condition (running, idle, 'not ready', lost, ...)",
    )
    p.add_argument(
        "--safety", action="append", default=[], help="only robots with this safety (SAFE_STOP)"
    )
    p.add_argument(
        "--site", action="append", default=[], metavar="PREFIX", help="only robot ids from here"
    )
    p.add_argument("--sort", choices=SORTS, default="attention", help="row order")
    p.add_argument("--roster", type=Path, metavar="FILE", help="the site's roster: expected robots")
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
