"""An in-process stand-in for zenoh sessions, for simulated time (the GRX's wire).

What ``executive.wire.loop.LoopBus`` is for DDS, ``ZenohLoop`` is for zenoh: the executive's
adapter and the robot's simulator each open a session on it (``loop.open()``) where they
would open a zenoh session, and declare their publishers, subscribers and queryables as
they do on zenoh. What travels is the payload both ends would put on zenoh (the GRX's
msgpack maps), so the adapter's and the simulator's own code run on it unchanged.

What zenoh does that matters here, the loop does the same way:

- a put reaches every subscriber whose key expression intersects the put's (zenoh's own
  ``KeyExpr.intersects``), its putting session's own subscribers included (zenoh delivers
  locally too);
- a sample is what a callback reads: ``payload.to_bytes()`` and ``key_expr``.

What it does not do: delivery on zenoh's threads (here a put delivers at once, on the
putting thread, as a local DDS write does on the loop), queries (nobody queries in
simulated time), loss, congestion, lateness; the publishers' QoS arguments are taken and
ignored. What the real wire adds is proved by ``--realtime`` and the parity test.

Where a real process would run a thread of its own at a fixed rate (the simulator's
publisher, the adapter's joystick stream), it asks the loop instead (``every``), which
hands the job to whoever drives the simulated clock (the robot's lockstep part: a
``simkit`` scheduler that the scenario engine runs, ``executive.seam.lockstep``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zenoh

from executive.clock import SimClock

Job = Callable[[float, int], None]  # (now, periods elapsed): a scheduler's job


@dataclass(frozen=True)
class LoopSample:
    """What a subscriber's callback gets: zenoh's ``Sample`` as far as callbacks read it."""

    key_expr: zenoh.KeyExpr
    payload: zenoh.ZBytes


class ZenohLoop:
    """The sessions of one simulated robot and its executive, and the jobs they would run
    on threads of their own, on one simulated clock."""

    def __init__(self, clock: SimClock, every: Callable[[str, float, Job], None]) -> None:
        self.clock = clock
        self._every = every
        self._subscribers: list[LoopSubscriber] = []
        self._routes: dict[str, list[LoopSubscriber]] = {}  # key -> its subscribers (a cache)
        self.delivered: dict[str, int] = {}  # puts, by key

    def open(self) -> LoopSession:
        """A session on the loop (``zenoh.open(config)``'s counterpart)."""
        return LoopSession(self)

    def every(self, name: str, hz: float, job: Job) -> None:
        """Run ``job(now, periods)`` at ``hz`` on the simulated clock (instead of a thread)."""
        self._every(name, hz, job)

    def put(self, key: str, payload: bytes) -> None:
        """Hand ``payload`` to every subscriber of ``key``, now, on this thread."""
        self.delivered[key] = self.delivered.get(key, 0) + 1
        route = self._routes.get(key)
        if route is None:
            expr = zenoh.KeyExpr(key)
            route = [s for s in self._subscribers if s.key_expr.intersects(expr)]
            self._routes[key] = route
        if not route:
            return
        sample = LoopSample(zenoh.KeyExpr(key), zenoh.ZBytes(payload))
        for subscriber in tuple(route):
            subscriber.callback(sample)

    def attach(self, subscriber: LoopSubscriber) -> None:
        self._subscribers.append(subscriber)
        self._routes.clear()

    def detach(self, subscriber: LoopSubscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)
            self._routes.clear()


@dataclass(eq=False)
class LoopSubscriber:
    loop: ZenohLoop
    key_expr: zenoh.KeyExpr
    callback: Callable[[LoopSample], None]

    def undeclare(self) -> None:
        self.loop.detach(self)


@dataclass
class LoopPublisher:
    loop: ZenohLoop
    key: str
    _open: bool = True

    def put(self, payload: bytes, **_: Any) -> None:
        if self._open:
            self.loop.put(self.key, payload)

    def undeclare(self) -> None:
        self._open = False


@dataclass
class LoopQueryable:
    """A queryable nobody queries (simulated time has no other process to ask)."""

    key: str

    def undeclare(self) -> None:
        pass


class LoopSession:
    """One party's session on the loop: ``zenoh.Session`` as the GRX's adapter and
    simulator use it (declare publishers, subscribers and queryables; put; close)."""

    def __init__(self, loop: ZenohLoop) -> None:
        self.loop = loop
        self._subscribers: list[LoopSubscriber] = []
        self._publishers: list[LoopPublisher] = []
        self._closed = False

    def declare_subscriber(
        self, key_expr: str, handler: Callable[[LoopSample], None], **_: Any
    ) -> LoopSubscriber:
        subscriber = LoopSubscriber(self.loop, zenoh.KeyExpr(key_expr), handler)
        self._subscribers.append(subscriber)
        self.loop.attach(subscriber)
        return subscriber

    def declare_publisher(self, key_expr: str, **_: Any) -> LoopPublisher:
        publisher = LoopPublisher(self.loop, str(key_expr))
        self._publishers.append(publisher)
        return publisher

    def declare_queryable(self, key_expr: str, handler: object, **_: Any) -> LoopQueryable:
        return LoopQueryable(str(key_expr))

    def put(self, key_expr: str, payload: bytes, **_: Any) -> None:
        if not self._closed:
            self.loop.put(str(key_expr), payload)

    def close(self) -> None:
        """Undeclare everything this session declared; idempotent."""
        if self._closed:
            return
        self._closed = True
        for subscriber in self._subscribers:
            subscriber.undeclare()
        for publisher in self._publishers:
            publisher.undeclare()
