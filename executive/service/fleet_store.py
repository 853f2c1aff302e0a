"""The site's membership store: what a fleet view opened later asks (issue 34).

zenoh's own storage (the storage manager plugin of zenohd) is not in the Python wheel
the router runs on (a ``plugins`` section is accepted and ignored), and a storage
would keep the last status put, not whether its robot was lost or left. So the router
(``atom-executive router``) keeps a ``Membership`` (executive/service/fleet_members.py)
on its own session: it follows ``<prefix>/*/holder/*`` tokens (with their history),
``<prefix>/*/status`` and the goodbyes on ``<prefix>/*/events``, and answers queries on
``<prefix>/@members/<router zid>`` (a verbatim chunk: no robot's wildcard matches it)
with::

    {"schema": "atom-executive/fleet-members", "version": 1, "router": ZID, "at": T,
     "members": [{"robot_id", "condition", "since", "instance", "status_at",
                  "status": {...the last status document...} | null}, ...]}

Times are wall-clock seconds. A view asks ``<prefix>/@members/*`` (every router's:
two sites joined, each store knows both sites' robots) and merges. With a roster
(``--roster``) the robots it expects are listed, missing until they come.

Nothing raises into zenoh's threads; a status is kept as its bytes (parsed only when a
view asks: 500 robots at 5 Hz must not cost the router a JSON parse each).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from typing import Any

import structlog
import zenoh

from executive.service.fleet_claim import HOLDER, parse_token, token_key
from executive.service.fleet_members import GOODBYE, Member, Membership
from executive.service.fleet_site import MEMBERS

log = structlog.get_logger(__name__)

SCHEMA = "atom-executive/fleet-members"


def store_key(prefix: str, zid: str = "*") -> str:
    """The store's queryable of the router ``zid`` (``*``: every router's)."""
    return f"{prefix}/{MEMBERS}/{zid}"


def robot_of(prefix: str, key: str, leaf: str) -> str | None:
    """The robot id of ``<prefix>/<id>/<leaf>``; None for another key."""
    head, tail = f"{prefix}/", f"/{leaf}"
    if not (key.startswith(head) and key.endswith(tail)):
        return None
    robot = key[len(head) : -len(tail)]
    return robot if robot and "/" not in robot else None


def members_document(members: Iterable[Member], router: str, at: float) -> bytes:
    """The store's reply (see the module); a status that is not JSON goes as null."""
    rows = []
    for m in members:
        row: dict[str, Any] = m.record()
        status = None
        if m.status is not None:
            try:
                status = json.loads(m.status)
            except (ValueError, RecursionError):
                status = None
        row["status"] = status if isinstance(status, dict) else None
        rows.append(row)
    return json.dumps(
        {"schema": SCHEMA, "version": 1, "router": router, "at": at, "members": rows}
    ).encode()


class MemberStore:
    """The store on ``session`` (the router's); ``close()`` undeclares it."""

    def __init__(
        self, session: zenoh.Session, prefix: str = "fleet", expected: Iterable[str] = ()
    ) -> None:
        self.session, self.prefix = session, prefix
        self.zid = str(session.info.zid())
        self.membership = Membership(expected, on_change=self._changed)
        self.key = store_key(prefix, self.zid)
        self._decls: list[Any] = [
            session.declare_subscriber(f"{prefix}/*/status", self._on_status),
            session.declare_subscriber(f"{prefix}/*/events", self._on_event),
            session.liveliness().declare_subscriber(
                token_key(prefix, "*", HOLDER), self._on_token, history=True
            ),
            session.declare_queryable(self.key, self._on_query),
        ]

    def _changed(self, member: Member) -> None:
        log.info(
            "fleet member",
            robot_id=member.robot_id,
            condition=member.condition,
            instance=member.instance,
        )

    def _on_status(self, sample: zenoh.Sample) -> None:
        try:
            robot = robot_of(self.prefix, str(sample.key_expr), "status")
            if robot is None:
                return
            attachment = sample.attachment
            instance = attachment.to_bytes().decode("utf-8", "replace") if attachment else None
            self.membership.status(robot, instance or None, sample.payload.to_bytes())
        except Exception:  # never into zenoh's thread
            log.exception("fleet store: a status could not be kept")

    def _on_event(self, sample: zenoh.Sample) -> None:
        try:
            robot = robot_of(self.prefix, str(sample.key_expr), "events")
            if robot is None:
                return
            event = json.loads(sample.payload.to_bytes())
            if isinstance(event, dict) and event.get("kind") == GOODBYE:
                instance = event.get("instance")
                if isinstance(instance, str) and instance:
                    self.membership.goodbye(robot, instance)
        except (ValueError, RecursionError):
            return  # not an event: nothing to keep
        except Exception:
            log.exception("fleet store: an event could not be read")

    def _on_token(self, sample: zenoh.Sample) -> None:
        try:
            parsed = parse_token(self.prefix, str(sample.key_expr))
            if parsed is None or parsed[1] != HOLDER:
                return
            robot, _, instance = parsed
            self.membership.token(robot, instance, sample.kind == zenoh.SampleKind.PUT)
        except Exception:
            log.exception("fleet store: a token could not be read")

    def _on_query(self, query: zenoh.Query) -> None:
        try:
            now = time.time()
            query.reply(self.key, members_document(self.membership.members(), self.zid, now))
        except Exception:
            log.exception("fleet store: a query could not be answered")
        finally:
            with contextlib.suppress(Exception):  # already dropped
                query.drop()  # type: ignore[no-untyped-call]

    def close(self) -> None:
        for decl in self._decls:
            with contextlib.suppress(Exception):  # a closing session
                decl.undeclare()
        self._decls.clear()
