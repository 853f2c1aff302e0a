"""The fleet plane: this executive's status, events and signed requests on zenoh (issue 24).

With ``fleet: {robot_id, zenoh_config, prefix}`` in the config the service also
publishes, under ``<prefix>/<robot_id>/``:

- ``status``: the status document, the very JSON ``status --json`` prints (the ``document``
  of every ``Status_`` the service writes on DDS), on every change and again at
  ``STATUS_HZ`` (a fleet view marks a robot stale after 2 s of silence);
  each put carries the service instance id as its zenoh attachment (the one its
  ``holder`` token names: what a command must be bound to);
- ``events``: one JSON object per state change, safety latch and safety clear
  (``{"robot_id", "seq", "at", "kind": "state" | "safety", ...}``);

and answers queries on ``request/<instance>``: a JSON object with the ``Request_`` fields
(request_id, client_id, verb, args, timestamp_ns, nonce, signature), answered by the DDS
request server's own ``RequestServer.answer`` (the same verbs, keys, instance binding and
replay rules), the reply a JSON object with the ``Reply_`` fields.

A clean stop says goodbye before the token goes: an ``events`` put of kind ``left``
naming the instance, so the site's membership (executive/service/fleet_members.py) lists
the robot as left, not lost (a killed executive's token just goes).

All of it only while this executive holds its robot id (executive/service/fleet_claim.py,
issue 35): it claims the id with a liveliness token (``holder/<instance>``) before
anything goes out; an executive that finds the id held by a live one is refused, stays
off the plane (no status, no events, no queryable) and says so in its log and its
status' problems, as does the holder. A request names the holder's instance in its key,
so it reaches that executive or none.

A request signed for one robot is refused by every other: a command's nonce is bound to
the instance id of the service that will run it (executive/service/auth.py), drawn at
random at every start and inside the signed canonical form; the fleet client learns it from
the robot's ``holder`` token, the one its request is addressed to. Another robot (another
instance) refuses it with "request signed for another service instance", whatever keys
it holds.

What the robot must never feel (the tick loop runs the safety watchdog):

- no zenoh call on the tick thread: the tick thread only hands over what DDS already got
  (``FleetTee.write``: a reference to the latest sample and, on a change of state or
  safety, an event into a bounded deque); the plane's own thread opens the session (which
  waits for a router in client mode), serialises and puts;
- losing the router: zenoh's session retries in the background; puts while it is away go
  nowhere and return at once (congestion control DROP);
- a burst of queries: zenoh's callback only queues (at most ``MAX_QUERIES``; beyond that
  BUSY at once); one worker answers at most ``REQUESTS_PER_S`` reads a second (a token
  bucket of ``BURST``), the rest BUSY without being looked at: a status reply builds the
  whole document, and a flood of them must not take the interpreter from the tick loop.
  Commands (the signed verbs) have a bucket of their own: a flood of reads never keeps
  an operator's ``stop`` from the robot.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import json
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
import zenoh

from executive.logs import RateLimitedLog
from executive.service.auth import new_instance_id
from executive.service.config import FleetConfig
from executive.service.fleet_claim import Claim, request_key
from executive.service.fleet_members import GOODBYE
from executive.service.protocol import MUTATING, Answer, Code
from executive.wire.gen.own.atom_executive.msg import Request_, Status_
from executive.wire.zenoh_session import ConfigError, close_session, load_config, open_session

log = structlog.get_logger(__name__)

STATUS_HZ = 5.0  # the steady rate of status puts (besides every change)
MAX_EVENTS = 256  # events waiting for the plane's thread; the oldest go first
MAX_QUERIES = 32  # queries waiting for the worker; beyond: BUSY at once
REQUESTS_PER_S = 20.0  # requests answered a second, sustained
BURST = 20  # requests answered at once after a quiet spell
STRING_FIELDS = ("request_id", "client_id", "verb", "args", "nonce", "signature")
MAX_U64 = 2**64 - 1


CLAIM_TIMEOUT_S = 5.0  # for the routers' answer: who holds the robot id now
RECLAIM_S = 1.0  # refused: how often to ask whether the holder is gone (+ up to 50 %)


def keys(prefix: str, robot_id: str) -> tuple[str, str]:
    """The status and events key expressions of ``robot_id``."""
    base = f"{prefix}/{robot_id}"
    return f"{base}/status", f"{base}/events"


def parse_request(data: bytes) -> Request_ | str:
    """A ``Request_`` from a query's JSON payload, or why it is not one (a BAD_REQUEST)."""
    try:
        fields = json.loads(data)
    except (ValueError, RecursionError):
        return "the payload must be a JSON object of the request's fields"
    if not isinstance(fields, dict):
        return "the payload must be a JSON object of the request's fields"
    for name in STRING_FIELDS:
        if not isinstance(fields.get(name, ""), str):
            return f"{name}: must be text"
    stamp = fields.get("timestamp_ns", 0)
    if isinstance(stamp, bool) or not isinstance(stamp, int) or not 0 <= stamp <= MAX_U64:
        return "timestamp_ns: must be an integer 0..2**64-1"
    return Request_(
        request_id=fields.get("request_id", ""),
        client_id=fields.get("client_id", ""),
        verb=fields.get("verb", ""),
        args=fields.get("args", ""),
        timestamp_ns=stamp,
        nonce=fields.get("nonce", ""),
        signature=fields.get("signature", ""),
    )


def reply_document(request: Any, answer: Answer) -> bytes:
    """The reply's JSON: the ``Reply_`` fields, payload as JSON text as on DDS."""
    payload = "" if answer.payload is None else json.dumps(answer.payload, default=str)
    return json.dumps(
        {
            "request_id": str(getattr(request, "request_id", "")),
            "client_id": str(getattr(request, "client_id", "")),
            "code": int(answer.code),
            "message": answer.message,
            "payload": payload,
        }
    ).encode()


class TokenBucket:
    """``rate`` a second sustained, ``burst`` at once; ``take`` never waits."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = rate, float(burst), clock
        self.tokens, self.at = float(burst), clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


def _no_server(request: Any) -> Answer:
    return Answer(Code.BUSY, "the executive is starting; try again")


def _now_iso() -> str:
    return (
        datetime.datetime.now(datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


@dataclass
class _Last:
    state: str = ""
    safety: str = ""
    causes: str = ""


class FleetPlane:
    """One executive on the fleet plane; ``start()`` after the request server exists,
    ``close()`` at shutdown. ``tee(writer)`` is the status writer the publisher writes to."""

    def __init__(
        self,
        config: FleetConfig,
        answer: Callable[[Any], Answer] | None = None,
        *,
        status_hz: float = STATUS_HZ,
        requests_per_s: float = REQUESTS_PER_S,
        burst: int = BURST,
    ) -> None:
        self.config = config
        self.robot_id = config.robot_id
        self.status_key, self.events_key = keys(config.prefix, config.robot_id)
        # the request server's ``answer`` (the service sets it once the server exists)
        self.answer: Callable[[Any], Answer] = answer or _no_server
        # the service's instance id (auth's, which commands are bound to; the service
        # sets it before ``start``): the claim's token and the request key carry it
        self.instance: str = new_instance_id()
        self.claim: Claim | None = None  # once the session is open
        self.period = 1.0 / status_hz
        self.reads = TokenBucket(requests_per_s, burst)
        self.commands = TokenBucket(requests_per_s, burst)
        self.zconfig = load_config(config.zenoh_config)  # ConfigError: start-up names the file
        self._cond = threading.Condition()
        self._latest: str | None = None  # the latest status document (JSON text)
        self._fresh = False  # a document the plane has not put yet
        self._events: collections.deque[dict[str, Any]] = collections.deque(maxlen=MAX_EVENTS)
        self._event_seq = 0
        self._last = _Last()
        self._queries: queue.Queue[zenoh.Query | None] = queue.Queue(MAX_QUERIES)
        self._stop = threading.Event()
        self._session: zenoh.Session | None = None
        self._queryable: Any = None
        self.request_key = ""  # ``<prefix>/<robot_id>/request/<instance>`` once held
        self._claim_changed = False
        self._publisher = threading.Thread(target=self._publish, name="fleet-plane", daemon=True)
        self._worker = threading.Thread(target=self._serve, name="fleet-requests", daemon=True)
        self.quiet_log = RateLimitedLog(log)
        self.put_count = 0  # status puts (tests, the bench)
        self.busy_count = 0  # requests refused BUSY (flooded)

    # -- the tick thread's side: no zenoh, no JSON, O(1) -----------------------------------

    def offer(self, sample: Status_) -> None:
        """A status sample the service has just written on DDS (tick thread, or the
        runtime's supervisor while the loop stalls): kept for the plane's thread."""
        last = self._last
        events: list[dict[str, Any]] = []
        if sample.state != last.state:
            events.append(
                {
                    "kind": "state",
                    "state": sample.state,
                    "from": last.state or None,
                    "mission": sample.mission or None,
                    "run_id": sample.run_id or None,
                    "reason": sample.last_reason or None,
                }
            )
        changed = sample.safety != last.safety or (
            sample.safety == "SAFE_STOP" and sample.safety_reason != last.causes
        )
        if changed and (last.safety or sample.safety == "SAFE_STOP"):  # first CLEAR: no event
            events.append(
                {
                    "kind": "safety",
                    "safety": sample.safety,
                    "latched": sample.safety == "SAFE_STOP",
                    "causes": sample.safety_reason,
                }
            )
        self._last = _Last(sample.state, sample.safety, sample.safety_reason)
        with self._cond:
            self._latest = sample.document
            self._fresh = True
            for event in events:  # a full deque drops its oldest: never blocks
                self._event_seq += 1
                self._events.append({"seq": self._event_seq, "at": _now_iso(), **event})
            self._cond.notify()

    def tee(self, writer: Any) -> FleetTee:
        return FleetTee(writer, self)

    # -- the plane's threads ----------------------------------------------------------------

    def start(self) -> None:
        self._publisher.start()
        self._worker.start()

    def close(self, timeout: float = 2.0) -> None:
        """Stop the plane's threads and close the session. A session still waiting for
        its router (client mode, none ever came) is not waited for: the thread is a
        daemon, and the service's shutdown must not wait on a network."""
        self._stop.set()
        with self._cond:
            self._cond.notify()
        with contextlib.suppress(queue.Full):
            self._queries.put_nowait(None)
        self._publisher.join(timeout if self._session is not None else 0.0)
        self._worker.join(timeout)

    def _open(self) -> zenoh.Session | None:
        """The session (in client mode this waits for a router: here, never on start-up's
        or the tick's thread), the claim on the robot id and, if held, the queryable.
        None if zenoh refuses the config."""
        try:
            session = open_session(self.zconfig)
        except ConfigError as e:
            log.error("fleet plane off: zenoh refused the session", reason=str(e))
            return None
        # set before it is taken: the worker asks ``held()`` of every query that comes
        self.claim = claim = Claim(
            session, self.config.prefix, self.robot_id, self.instance, self._wake
        )
        try:
            if claim.take(CLAIM_TIMEOUT_S):
                self._hold(session)
        except Exception:  # a session closed under us at shutdown; never the robot's business
            if not self._stop.is_set():
                log.exception("fleet plane off: the claim on the robot id failed")
            with contextlib.suppress(Exception):
                close_session(session)
            return None
        return session

    def _hold(self, session: zenoh.Session) -> None:
        """The id is held: its request channel."""
        self.request_key = request_key(self.config.prefix, self.robot_id, self.instance)
        self._queryable = session.declare_queryable(self.request_key, self._on_query)
        log.info(
            "fleet plane on", robot_id=self.robot_id, instance=self.instance, status=self.status_key
        )

    def _retry(self, session: zenoh.Session) -> None:
        """Refused: claim the id if its holder is gone (fleet_claim.Claim.retry)."""
        try:
            if self.claim is not None and self.claim.retry(CLAIM_TIMEOUT_S):
                self._hold(session)
        except Exception:  # a session closing under us; the next round asks again
            if not self._stop.is_set():
                log.exception("fleet plane: claiming the robot id again failed")

    def _goodbye(self, session: zenoh.Session) -> None:
        """A clean stop while holding the id: the ``left`` event, before the token goes."""
        with self._cond:
            self._event_seq += 1
            seq = self._event_seq
        event = {
            "robot_id": self.robot_id,
            "seq": seq,
            "at": _now_iso(),
            "kind": GOODBYE,
            "instance": self.instance,
            "reason": "the service stopped",
        }
        session.put(
            self.events_key, json.dumps(event), congestion_control=zenoh.CongestionControl.BLOCK
        )

    def _wake(self) -> None:
        with self._cond:
            self._claim_changed = True
            self._cond.notify()

    def held(self) -> bool:
        """Whether this executive holds its robot id (is on the plane for it) now."""
        return self.claim is not None and self.claim.held

    def problems(self) -> list[str]:
        """The status' lines about the claim (a duplicate robot id); cheap."""
        return [] if self.claim is None else self.claim.problems()

    def _leave(self) -> None:
        """The claim was lost (another holder): no query is answered from now."""
        if self._queryable is not None:
            with contextlib.suppress(Exception):  # a session closing under us
                self._queryable.undeclare()
            self._queryable = None
        if self.claim is not None:
            self.claim.settle()

    def _publish(self) -> None:
        session = self._open()
        if session is None:
            return
        self._session = session
        drop = zenoh.CongestionControl.DROP
        status = session.declare_publisher(self.status_key, congestion_control=drop)
        events = session.declare_publisher(self.events_key, congestion_control=drop)
        last_put = next_retry = 0.0
        try:
            while not self._stop.is_set():
                with self._cond:
                    due = last_put + self.period - time.monotonic()
                    if not (self._fresh or self._events or self._claim_changed) and due > 0:
                        self._cond.wait(due)
                    pending = list(self._events)
                    self._events.clear()
                    document, fresh = self._latest, self._fresh
                    self._fresh = False
                    changed, self._claim_changed = self._claim_changed, False
                if changed and not self.held():
                    self._leave()
                if not self.held():  # refused, or left: nothing goes out for the id
                    last_put = time.monotonic()
                    if last_put >= next_retry:  # is its holder gone?
                        next_retry = last_put + RECLAIM_S * random.uniform(1.0, 1.5)  # noqa: S311
                        self._retry(session)
                    continue
                for event in pending:
                    events.put(json.dumps({"robot_id": self.robot_id, **event}))
                now = time.monotonic()
                if document is not None and (fresh or now - last_put >= self.period):
                    status.put(document, attachment=self.instance.encode())
                    self.put_count += 1
                    last_put = now
        except Exception:  # a session closed under us at shutdown; never the robot's business
            if not self._stop.is_set():
                log.exception("fleet plane stopped")
        finally:
            self._close(session)

    def _close(self, session: zenoh.Session) -> None:
        """A clean stop: the goodbye, the tokens, the session (best effort)."""
        with contextlib.suppress(Exception):
            if self._stop.is_set() and self.held():
                self._goodbye(session)
            if self.claim is not None:
                self.claim.close()
            close_session(session)

    def _on_query(self, query: zenoh.Query) -> None:
        """zenoh's thread: queue it, or BUSY at once; nothing raises out of here."""
        try:
            self._queries.put_nowait(query)
        except queue.Full:
            self.busy_count += 1
            self._reply(query, None, Answer(Code.BUSY, "too many fleet requests queued; try again"))

    def _serve(self) -> None:
        while not self._stop.is_set():
            query = self._queries.get()
            if query is None:
                continue
            payload = query.payload
            request = parse_request(payload.to_bytes() if payload is not None else b"")
            if isinstance(request, str):
                self._reply(query, None, Answer(Code.BAD_REQUEST, request))
                continue
            if not self.held():  # lost the id since the query came: another holder
                self._reply(query, request, Answer(Code.REFUSED, self._not_held()))
                continue
            bucket = self.commands if request.verb in MUTATING else self.reads
            if not bucket.take():
                self.busy_count += 1
                self._reply(query, request, Answer(Code.BUSY, "fleet requests rate-limited"))
                continue
            try:
                answer = self.answer(request)
            except Exception as e:
                log.exception("fleet request failed", verb=request.verb[:64])
                answer = Answer(Code.INTERNAL, f"internal error: {type(e).__name__}")
            self._reply(query, request, answer)
            if request.verb in MUTATING:  # the audit trail, as the DDS server's
                log.info(
                    "fleet request",
                    verb=request.verb,
                    client=request.client_id[:64],
                    code=answer.code.name,
                )

    def _not_held(self) -> str:
        return (
            f"this executive no longer answers for robot id {self.robot_id!r}: another "
            "executive claims it too (see its status' problems)"
        )

    def _reply(self, query: zenoh.Query, request: Any, answer: Answer) -> None:
        try:
            query.reply(self.request_key, reply_document(request, answer))
        except Exception as e:  # noqa: BLE001 - the querier went away: nothing to answer
            self.quiet_log.log("warning", "fleet reply failed", key="reply", reason=str(e))
        finally:
            with contextlib.suppress(Exception):  # already dropped
                query.drop()  # type: ignore[no-untyped-call]  # the stub leaves it unannotated


class FleetTee:
    """The status writer with the fleet plane beside it: writes to DDS, then hands the
    same sample to the plane (a reference; the plane's thread does the rest)."""

    def __init__(self, writer: Any, plane: FleetPlane) -> None:
        self.writer = writer
        self.plane = plane

    def write(self, sample: Status_) -> None:
        self.writer.write(sample)
        self.plane.offer(sample)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.writer, name)
