"""Fleet membership: every robot a site knows, live or not, and since when (issue 34).

A view that opens after a robot was killed must still list it: the robot is what the
operator is responsible for, whether or not its executive answers. Membership is built
on the claim tokens (executive/service/fleet_claim.py), not on a mechanism of its own:

- **live**: an executive holds the robot id (its ``holder/<instance>`` token is there);
- **lost**: the holder's token went without a goodbye (killed, its link down: zenoh
  withdraws a token with its session, at once on a closed connection, within the lease,
  10 s, on a silent one);
- **left**: the executive said goodbye (its service stopped cleanly: an ``events`` put of
  kind ``left`` naming its instance, before its token goes; a goodbye that arrives after
  the token's withdrawal still turns lost into left);
- **missing**: a robot the site's roster expects that never held its id.

A view shows a live robot silent past ``--stale`` as stale: that is the view's reading of
the status' age, not a membership condition.

``Membership`` is the same bookkeeping in the router's store (``atom-executive router``:
executive/service/fleet_store.py, which a view opened later asks) and in the view
itself (which follows the tokens while it runs and merges what the stores knew before).
Times are wall-clock seconds (``time.time()``): the store's ``since`` crosses machines.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

LIVE, LOST, LEFT, MISSING = "live", "lost", "left", "missing"
CONDITIONS = (LIVE, LOST, LEFT, MISSING)
GOODBYE = "left"  # the events' kind of an executive's goodbye
REMEMBERED_GOODBYES = 4096  # instances whose goodbye is kept (to turn a later lost into left)


@dataclass
class Member:
    """One robot id as the site knows it."""

    robot_id: str
    condition: str = MISSING
    since: float | None = None  # wall time the condition began (None: never seen)
    instance: str | None = None  # its holder's instance now, or the last one
    status: bytes | None = None  # its last status document, as published (JSON)
    status_at: float | None = None  # wall time that status arrived
    holders: set[str] = field(default_factory=set)  # live holder tokens (two: a duplicate)

    def record(self) -> dict[str, Any]:
        """The store's answer for this robot (``status`` left to the caller: raw JSON)."""
        return {
            "robot_id": self.robot_id,
            "condition": self.condition,
            "since": self.since,
            "instance": self.instance,
            "status_at": self.status_at,
        }


class Membership:
    """Thread-safe bookkeeping of the members (see the module); fed from zenoh's threads.
    ``on_change(member)`` is called (outside the lock) when a condition changes."""

    def __init__(
        self,
        expected: Iterable[str] = (),
        *,
        clock: Callable[[], float] = time.time,
        on_change: Callable[[Member], None] | None = None,
    ) -> None:
        self.clock = clock
        self.on_change = on_change
        self._lock = threading.Lock()
        self._members: dict[str, Member] = {r: Member(r) for r in expected}
        self._goodbyes: collections.OrderedDict[str, float] = collections.OrderedDict()

    def expect(self, robots: Iterable[str]) -> None:
        """Robots a roster expects: missing until they hold their id."""
        with self._lock:
            for r in robots:
                self._members.setdefault(r, Member(r))

    def _get(self, robot_id: str) -> Member:
        member = self._members.get(robot_id)
        if member is None:
            member = self._members[robot_id] = Member(robot_id)
        return member

    def _become(self, member: Member, condition: str, at: float) -> bool:
        if member.condition == condition:
            return False
        member.condition, member.since = condition, at
        return True

    def token(self, robot_id: str, instance: str, alive: bool) -> None:
        """A holder token of ``robot_id`` came (``alive``) or went."""
        now = self.clock()
        with self._lock:
            m = self._get(robot_id)
            if alive:
                if instance in self._goodbyes:
                    return  # a token seen again after its goodbye (a late copy)
                m.holders.add(instance)
                changed = m.condition != LIVE or m.instance != instance
                if changed:  # came, or came back as another executive (a restart)
                    m.condition, m.since, m.instance = LIVE, now, instance
            else:
                m.holders.discard(instance)
                changed = False
                if not m.holders and m.condition == LIVE and instance == m.instance:
                    gone = LEFT if instance in self._goodbyes else LOST
                    changed = self._become(m, gone, now)
            snapshot = replace(m, holders=set(m.holders)) if changed else None
        if snapshot is not None and self.on_change is not None:
            self.on_change(snapshot)

    def goodbye(self, robot_id: str, instance: str) -> None:
        """The executive ``instance`` of ``robot_id`` said it is leaving (stopped cleanly)."""
        now = self.clock()
        with self._lock:
            self._goodbyes[instance] = now
            while len(self._goodbyes) > REMEMBERED_GOODBYES:
                self._goodbyes.popitem(last=False)
            m = self._get(robot_id)
            changed = False
            if m.instance in (instance, None):
                m.holders.discard(instance)
                m.instance = instance
                if not m.holders:
                    # a goodbye after the token went: the lost robot left (since: the token's)
                    at = m.since if m.condition == LOST and m.since is not None else now
                    changed = self._become(m, LEFT, at)
            snapshot = replace(m, holders=set(m.holders)) if changed else None
        if snapshot is not None and self.on_change is not None:
            self.on_change(snapshot)

    def status(self, robot_id: str, instance: str | None, payload: bytes) -> None:
        """A status put of ``robot_id``: kept as its last. Only a holder publishes, so a
        robot not known yet (its token's history still on its way) is live."""
        now = self.clock()
        with self._lock:
            m = self._get(robot_id)
            m.status, m.status_at = payload, now
            changed = False
            if instance is not None and instance in self._goodbyes:
                pass  # a late put of an executive that has left
            elif m.condition == MISSING or (
                m.condition in (LOST, LEFT) and instance is not None and instance != m.instance
            ):
                changed = self._become(m, LIVE, now)
                m.instance = instance or m.instance
            snapshot = replace(m, holders=set(m.holders)) if changed else None
        if snapshot is not None and self.on_change is not None:
            self.on_change(snapshot)

    def merge(self, record: dict[str, Any], status: bytes | None) -> None:
        """What a store knew (a view opening): taken where it is newer than what this
        one has seen itself (a live token this view follows wins over an old record)."""
        robot_id = record.get("robot_id")
        condition = record.get("condition")
        if not isinstance(robot_id, str) or condition not in CONDITIONS:
            return
        since, status_at = _number(record.get("since")), _number(record.get("status_at"))
        instance = record.get("instance") if isinstance(record.get("instance"), str) else None
        with self._lock:
            m = self._get(robot_id)
            own = m.since is not None or m.holders
            newer = not own or (since or 0) > (m.since or 0)
            if condition != MISSING and newer and (not m.holders or condition == LIVE):
                m.condition, m.since = condition, since
                m.instance = instance or m.instance
            if status is not None and (m.status_at is None or (status_at or 0) > m.status_at):
                m.status, m.status_at = status, status_at

    def members(self) -> list[Member]:
        """A snapshot, by robot id."""
        with self._lock:
            return [
                replace(m, holders=set(m.holders))
                for _, m in sorted(self._members.items(), key=lambda kv: kv[0])
            ]

    def member(self, robot_id: str) -> Member | None:
        with self._lock:
            m = self._members.get(robot_id)
            return None if m is None else replace(m, holders=set(m.holders))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
