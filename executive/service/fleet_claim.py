"""One robot id, one executive: who answers for a robot on the fleet plane (issue 35).

Two executives configured with one ``fleet.robot_id`` (a copied config, a spare computer
brought up with the robot's) both answered that id's requests: an operator's ``stop``
for the robot running a mission was answered by the other ("no mission is running")
while the mission went on. So an executive *claims* its id with a zenoh liveliness
token, and only the holder of the claim is on the plane for that id.

The key space under ``<prefix>/<robot_id>/`` (besides ``status`` and ``events``):

- ``holder/<instance>``: the liveliness token of the executive that holds the id (its
  service instance id, executive/service/auth.py); it lives as long as that executive's
  zenoh session (a killed executive's token goes with its connection);
- ``refused/<instance>``: the token of an executive refused the id: the holder, the
  operator's view and the refused one itself all see the duplicate for as long as it
  runs;
- ``request/<instance>``: the holder's queryable. A request names the holder it is for,
  so it reaches that executive or none (the fleet view finds the holder by its token).

Claiming: ``liveliness().get`` on ``holder/*`` first; a live holder refuses the
newcomer, which declares its ``refused`` token, stays off the plane (no status, no
events, no queryable for the id) until it is restarted, and says so at level error, as
does the holder. No holder: the newcomer declares its ``holder`` token. Two that claimed
at once (each asked before the other declared, or two sites' routers joined) see each
other's ``holder`` token: both leave the plane, said the same way. Neither is chosen:
the one that goes on answering could be the wrong robot, which is the defect itself; a
request for the id is then refused by the operator's side in words, never delivered.

A refused executive stays off the plane while the id is held, and claims it once the
holder's token is gone (``retry``, every second or so from the plane's thread: the
holder was lost or left), saying so in its log. That is the executive restarted after
its link to the router was lost without a goodbye: it finds its former self's token
until the router's lease on that link expires (zenoh's default: 10 s), and comes on the
plane by itself then. A copied config on a spare computer takes the id over the same
way once the real robot's executive is lost; if that one comes back, the two see each
other's ``holder`` token and both leave (below), and the view shows the duplicate.
Two that claimed at once and both left do not retry: neither is chosen.

The tokens are also what the fleet's membership (live, lost, left robots) builds on:
``holder`` tokens come and go with executives, whatever their status puts do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog
import zenoh

log = structlog.get_logger(__name__)

HOLDER = "holder"  # the executive that holds the id
REFUSED = "refused"  # an executive refused the id (a duplicate)
KINDS = (HOLDER, REFUSED)
SHOWN = 8  # characters of an instance id a status problem or a view shows


def token_key(prefix: str, robot_id: str, kind: str, instance: str = "*") -> str:
    """The liveliness key of ``kind`` (``HOLDER``, ``REFUSED``) for ``robot_id``; with
    ``instance`` ``*`` the expression matching every one."""
    return f"{prefix}/{robot_id}/{kind}/{instance}"


def request_key(prefix: str, robot_id: str, instance: str) -> str:
    """The queryable of the executive ``instance`` that holds ``robot_id``."""
    return f"{prefix}/{robot_id}/request/{instance}"


def parse_token(prefix: str, key: str) -> tuple[str, str, str] | None:
    """(robot_id, kind, instance) of a token's key under ``prefix``; None if it is no
    claim token (another key, a kind this version does not know)."""
    head = f"{prefix}/"
    if not key.startswith(head):
        return None
    parts = key[len(head) :].split("/")
    if len(parts) != 3 or parts[1] not in KINDS or not parts[0] or not parts[2]:
        return None
    return parts[0], parts[1], parts[2]


def holders_of(session: zenoh.Session, prefix: str, robot_id: str, timeout: float) -> list[str]:
    """The instances whose ``holder`` token for ``robot_id`` is live now (the routers
    answer from their token tables: no holder is an answer within milliseconds)."""
    return [
        t[2]
        for t in tokens(session, token_key(prefix, robot_id, HOLDER), prefix, timeout)
        if t[1] == HOLDER and t[0] == robot_id
    ]


def tokens(
    session: zenoh.Session, expression: str, prefix: str, timeout: float
) -> list[tuple[str, str, str]]:
    """The live claim tokens matching ``expression``, parsed (``parse_token``)."""
    found = []
    for reply in session.liveliness().get(expression, timeout=timeout):
        if reply.ok is not None and (parsed := parse_token(prefix, str(reply.ok.key_expr))):
            found.append(parsed)
    return sorted(set(found))


class Claim:
    """This executive's claim on its robot id (see the module's docstring).

    ``take()`` once, on the fleet plane's thread, with the session open: True if this
    executive holds the id. ``held`` may turn False later (another holder appeared: both
    leave); ``on_change`` is called then (from zenoh's thread: it only wakes the plane's
    thread, which calls ``settle()``). ``problems()`` are the status' lines about it."""

    def __init__(
        self,
        session: zenoh.Session,
        prefix: str,
        robot_id: str,
        instance: str,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.session = session
        self.prefix, self.robot_id, self.instance = prefix, robot_id, instance
        self.on_change = on_change
        self._lock = threading.Lock()
        self.held = False
        self.holder: str | None = None  # the other executive that holds the id (refused)
        self.rivals: set[str] = set()  # other holders seen while holding: both left
        self.refused: set[str] = set()  # executives refused the id while this one held it
        self._problems: tuple[str, ...] = ()
        self._token: Any = None  # the holder token while held
        self._refused_token: Any = None
        self._subscribers: list[Any] = []

    def take(self, timeout: float = 5.0) -> bool:
        """Claim the id: refused if a live executive holds it, else held."""
        holders = [
            h
            for h in holders_of(self.session, self.prefix, self.robot_id, timeout)
            if h != self.instance
        ]
        if holders:
            self.holder = holders[0]
            self._refuse(
                "fleet plane: this robot id is held by another live executive; this one "
                "stays off the fleet plane (requests for the id never reach it)",
                holder=self.holder,
            )
            return False
        liveliness = self.session.liveliness()
        self._token = liveliness.declare_token(
            token_key(self.prefix, self.robot_id, HOLDER, self.instance)
        )
        with self._lock:
            self.held = True
        for kind in KINDS:  # from now: another holder (a race), a refused newcomer
            self._subscribers.append(
                liveliness.declare_subscriber(
                    token_key(self.prefix, self.robot_id, kind), self._on_token, history=True
                )
            )
        log.info("fleet plane: robot id claimed", robot_id=self.robot_id, instance=self.instance)
        return True

    def may_retry(self) -> bool:
        """Refused by a live holder (not one of two that claimed at once): ``retry``
        takes the id once that holder is gone."""
        with self._lock:
            return not self.held and self.holder is not None and not self.rivals

    def retry(self, timeout: float = 5.0) -> bool:
        """The holder that refused this executive gone (lost, or left): claim the id.
        True if it is held now."""
        if not self.may_retry():
            return False
        holders = [
            h
            for h in holders_of(self.session, self.prefix, self.robot_id, timeout)
            if h != self.instance
        ]
        if holders:
            return False
        gone = self.holder
        log.warning(
            "fleet plane: the executive that held this robot id is gone (lost or left); "
            "this one claims it",
            robot_id=self.robot_id,
            instance=self.instance,
            holder=gone,
        )
        if self._refused_token is not None:
            token, self._refused_token = self._refused_token, None
            token.undeclare()
        with self._lock:
            self.holder = None
            self._update_problems()
        return self.take(timeout)

    def _refuse(self, event: str, **fields: Any) -> None:
        """Off the plane for good: the ``refused`` token (the holder and the views see
        the duplicate by it), the problem line, the error line."""
        with self._lock:
            self.held = False
            self._update_problems()
        # kept: a token no one references is undeclared (the refusal would vanish)
        self._refused_token = self.session.liveliness().declare_token(
            token_key(self.prefix, self.robot_id, REFUSED, self.instance)
        )
        log.error(
            event,
            robot_id=self.robot_id,
            instance=self.instance,
            fix="give this executive its own fleet.robot_id and restart it",
            **fields,
        )

    def _on_token(self, sample: zenoh.Sample) -> None:
        """zenoh's thread: another executive's token came or went. Nothing raises here."""
        try:
            parsed = parse_token(self.prefix, str(sample.key_expr))
            if parsed is None or parsed[2] == self.instance:
                return
            _, kind, other = parsed
            alive = sample.kind == zenoh.SampleKind.PUT
            fields = {"robot_id": self.robot_id, "instance": self.instance, "other": other}
            with self._lock:
                held = self.held
                if kind == HOLDER:
                    if not alive or other in self.rivals:
                        return  # a rival leaving, a token seen again after a reconnection
                    self.rivals.add(other)
                    self.held = False  # settle() says so and declares the refusal
                elif alive == (other in self.refused):
                    return
                elif alive:
                    self.refused.add(other)
                else:
                    self.refused.discard(other)
                self._update_problems()
            if kind == REFUSED and alive and held:
                log.error(
                    "fleet plane: another executive with this robot id was refused; it stays "
                    "off the fleet plane, this one goes on answering for the id",
                    fix="give the other executive its own fleet.robot_id and restart it",
                    **fields,
                )
            elif kind == REFUSED and not alive:
                log.info("fleet plane: the refused executive with this robot id is gone", **fields)
            self.on_change()
        except Exception:  # never into zenoh's thread
            log.exception("fleet plane: a claim token could not be read")

    def settle(self) -> None:
        """On the plane's thread after ``on_change``: a holder that lost the id (another
        holder appeared) gives up its token and declares itself refused."""
        with self._lock:
            due = not self.held and self._token is not None
        if due:
            token, self._token = self._token, None
            token.undeclare()
            self._refuse(
                "fleet plane: another executive claimed this robot id at the same time; "
                "both leave the fleet plane (requests for the id reach neither)",
                others=sorted(self.rivals),
            )

    def _update_problems(self) -> None:
        """The status' lines (under the lock): what the operator reads on this robot."""
        rid = self.robot_id
        lines = []
        if not self.held:
            if self.holder:
                why = f"is held by another executive ({self.holder[:SHOWN]})"
            else:
                named = ", ".join(o[:SHOWN] for o in sorted(self.rivals))
                why = f"was claimed at once by this executive and another ({named})"
            lines.append(
                f"fleet plane: off it: robot id {rid!r} {why}; give this executive its own "
                "fleet.robot_id and restart it"
            )
        elif self.refused:
            named = ", ".join(o[:SHOWN] for o in sorted(self.refused))
            lines.append(
                f"fleet plane: another executive ({named}) claims robot id {rid!r}; it was "
                "refused and stays off the fleet plane"
            )
        self._problems = tuple(lines)

    def problems(self) -> list[str]:
        """The status' problem lines (cheap: the status publisher asks after every tick)."""
        return list(self._problems)

    def close(self) -> None:
        """Undeclare the subscribers and the tokens (a clean stop: after the goodbye)."""
        for sub in self._subscribers:
            sub.undeclare()
        self._subscribers.clear()
        for name in ("_token", "_refused_token"):
            token = getattr(self, name)
            if token is not None:
                setattr(self, name, None)
                token.undeclare()
