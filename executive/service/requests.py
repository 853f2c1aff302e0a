"""Requests with replies over DDS: list missions, validate, start, stop, pause, resume, reset,
reload, status, recoverable and recover (executive/service/recover.py), and set (a place for
the running mission's reach: behaviours/places.py).

Every request gets exactly one reply, with a code and a message: unknown verbs, bad or
oversized fields, fields that are not UTF-8, JSON too deep or with numbers too long to
read, unauthenticated or replayed commands, a start while running or latched — all are
refused in words, never with a crash or silence. The reply echoes the request's
request_id and client_id as sent, so the client can match it. Requests are taken
off DDS by a listener that only queues them; a worker thread answers, so a slow
request can never delay CycloneDDS's receive thread (which also delivers the e-stop).
Anything that touches the tree is handed to the executive's tick thread.

Refused commands (unsigned, a bad signature, a replay) and requests that are not even a
``Request_`` are logged quietly (``executive.logs.RateLimitedLog``): the first, then one
line per 10 s with the count since; anyone on the domain can send them in a loop. Reads
(``status``, ``list_missions``, ``validate``) are counted the same way, per verb, so a program
polling the status does not fill the journal; every start, stop, reset and reload is a line
of its own, the audit trail of who commanded the robot. A
start or validate of an unknown mission says which known names are close ("did you
mean"); ``list_missions`` with ``{"detail": true}`` describes every mission.

The ``status`` reply's payload carries ``instance``: this service start's id, which a
command's nonce must be bound to (executive/service/auth.py says why), so a command signed for
one instance of the service is refused by every other.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import struct
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import py_trees
import structlog
from cyclonedds.core import Listener
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from behaviours import places
from executive.core.tree import Executive
from executive.logs import RateLimitedLog
from executive.mission.catalogue import describe_missions
from executive.service.auth import Authenticator
from executive.service.protocol import (
    MUTATING,
    REPLY_TOPIC,
    REQUEST_QOS,
    REQUEST_TOPIC,
    Answer,
    Code,
)
from executive.suggest import not_found
from executive.wire.codec import raw_take
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_

if TYPE_CHECKING:
    from executive.service.recover import Recoveries

log = structlog.get_logger(__name__)

MAX_FIELD = 64 * 1024  # bytes of any one string field
ECHO_OVERSIZED = 256  # characters of an oversized request_id/client_id the reply echoes
MAX_QUEUE = 256
LOGGED_ID = 64  # characters of a client id a log line repeats
# the topics, their QoS and MUTATING (the signed verbs) are executive/service/protocol.py's
VERBS = frozenset({"list_missions", "validate", "status", "recoverable", *MUTATING})


class MissionLibrary(Protocol):
    """What the request server needs from the mission files."""

    def names(self) -> list[str]: ...
    def validate(self, name: str) -> list[str]: ...
    def build(
        self, name: str, params: dict[str, Any]
    ) -> tuple[py_trees.behaviour.Behaviour | None, list[str]]: ...
    def reload(self) -> tuple[bool, str]: ...


class UndecodableError(ValueError):
    """Request bytes that are not even a Request_ (no ids to reply to)."""


def decode_request(data: bytes) -> tuple[Request_, tuple[str, ...]]:
    """A request from its serialized bytes, and the names of its fields that are not
    UTF-8. The stock deserializer raises on those (inside the DDS listener, where it would
    lose every sample taken with it); here they are read with replacement characters, so
    the request can still be answered, and refused."""
    try:
        try:
            return Request_.deserialize(data), ()
        except UnicodeDecodeError:
            return _decode_leniently(data)
    except (struct.error, IndexError, ValueError, TypeError) as e:
        raise UndecodableError(f"not a Request_: {e}") from None


def _decode_leniently(data: bytes) -> tuple[Request_, tuple[str, ...]]:
    """Request_ is @final: its strings and its uint64 in order, CDR-aligned after the
    4-byte encapsulation header (XCDR1 aligns 8-byte values to 8, XCDR2 to 4)."""
    order = "<" if data[1] & 1 else ">"
    max_align = 4 if data[1] > 1 else 8
    pos = 4
    values: dict[str, Any] = {}
    bad: list[str] = []
    for f in dataclasses.fields(Request_):
        size = 4 if f.type is str else min(8, max_align)
        pos = 4 + -(-(pos - 4) // size) * size
        if f.type is str:
            (length,) = struct.unpack_from(order + "I", data, pos)
            raw = data[pos + 4 : pos + 3 + length]
            pos += 4 + length
            try:
                values[f.name] = raw.decode("utf-8")
            except UnicodeDecodeError:
                values[f.name] = raw.decode("utf-8", errors="replace")
                bad.append(f.name)
        else:  # timestamp_ns, the one uint64
            (values[f.name],) = struct.unpack_from(order + "Q", data, pos)
            pos += 8
    return Request_(**values), tuple(bad)


def _echo(value: object) -> str:
    """An id as the reply carries it: as sent, unless it was refused for its size."""
    text = str(value)
    return text if len(text.encode()) <= MAX_FIELD else text[:ECHO_OVERSIZED]


class RequestServer:
    """Answers ``Request_`` samples with ``Reply_`` samples."""

    def __init__(
        self,
        participant: DomainParticipant,
        executive: Executive,
        library: MissionLibrary,
        *,
        auth: Authenticator | None,
        status: Callable[[], Any],
        tick_timeout: float = 2.0,
    ) -> None:
        self.executive = executive
        self.library = library
        self.auth = auth
        self.status = status
        self.tick_timeout = tick_timeout
        # ``reload`` re-reads the keys file too (run.Reloader.keys; SIGHUP does the same)
        self.reload_keys: Callable[[], tuple[bool, str]] | None = None
        # ``recoverable``/``recover``: runs a crash interrupted (set by the service, which
        # keeps the run records; executive/service/recover.py)
        self.recoveries: Recoveries | None = None
        self.handled = 0
        # a request and the names of its fields that were not UTF-8; None wakes the worker
        self._queue: queue.Queue[tuple[Request_, tuple[str, ...]] | None] = queue.Queue(MAX_QUEUE)
        self.writer: DataWriter[Reply_] = DataWriter(
            participant, Topic(participant, REPLY_TOPIC, Reply_), qos=REQUEST_QOS
        )
        self.reader: DataReader[Request_] = DataReader(
            participant,
            Topic(participant, REQUEST_TOPIC, Request_),
            qos=REQUEST_QOS,
            listener=Listener(on_data_available=self._on_data),  # type: ignore[no-untyped-call]
        )
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._run, name="request-server", daemon=True)
        # refused unsigned/unauthentic commands and undecodable requests: anyone on the
        # domain can send them as fast as they like; the first is logged, then a count
        self.quiet_log = RateLimitedLog(log)

    def start(self) -> None:
        self._worker.start()

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(None)
        self._worker.join(2.0)

    def _on_data(self, reader: DataReader[Request_]) -> None:
        # raw bytes (valid data only: a client's writer going away is not a request), each
        # decoded on its own, so one bad sample cannot take the others down with it
        for data in raw_take(reader, 64):
            try:
                request, not_text = decode_request(data)
            except UndecodableError as e:
                self.quiet_log.log("warning", "request dropped", reason=str(e), size=len(data))
                continue
            try:
                self._queue.put_nowait((request, not_text))
            except queue.Full:
                self._reply(request, Answer(Code.BUSY, "too many requests queued; try again"))

    def _run(self) -> None:
        while not self._stop.is_set():
            item = self._queue.get()
            if item is None:
                continue
            request, not_text = item
            try:
                answer = (
                    Answer(Code.BAD_REQUEST, f"{', '.join(not_text)}: not UTF-8 text")
                    if not_text
                    else self.answer(request)
                )
            except Exception as e:
                log.exception("request failed", verb=getattr(request, "verb", "?"))
                answer = Answer(Code.INTERNAL, f"internal error: {type(e).__name__}")
            self._reply(request, answer)
            self.handled += 1

    def _reply(self, request: Any, answer: Answer) -> None:
        payload = "" if answer.payload is None else json.dumps(answer.payload, default=str)
        self.writer.write(
            Reply_(
                request_id=_echo(getattr(request, "request_id", "")),
                client_id=_echo(getattr(request, "client_id", "")),
                code=int(answer.code),
                message=answer.message,
                payload=payload,
            )
        )
        verb, client = getattr(request, "verb", ""), getattr(request, "client_id", "")
        if answer.code is Code.UNAUTHENTICATED:
            self.quiet_log.log(
                "warning",
                "request refused",
                key="unauthenticated",
                verb=str(verb)[:LOGGED_ID],
                client=str(client)[:LOGGED_ID],
                why=answer.message,
            )
        elif verb in MUTATING:  # the audit trail: who started, stopped, reset or reloaded
            log.info("request", verb=verb, client=client, code=answer.code.name)
        else:  # reads (a program polling status, a watch): counted, not a line each
            self.quiet_log.log(
                "info",
                "read requests",
                key=f"read:{verb if verb in VERBS else 'unknown'}",
                verb=str(verb)[:LOGGED_ID],
                client=str(client)[:LOGGED_ID],
                code=answer.code.name,
            )

    # -- the decision, testable without DDS --------------------------------------------------

    def answer(self, request: Any) -> Answer:
        for name in ("request_id", "client_id", "verb", "args", "nonce", "signature"):
            value = getattr(request, name, "")
            if not isinstance(value, str) or len(value.encode()) > MAX_FIELD:
                return Answer(
                    Code.BAD_REQUEST, f"{name}: missing, not text or longer than {MAX_FIELD} bytes"
                )
        if not request.request_id:
            return Answer(Code.BAD_REQUEST, "request_id: must not be empty")
        verb = request.verb
        if verb not in VERBS:
            return Answer(
                Code.UNKNOWN_VERB, f"unknown verb {verb!r}; known: {', '.join(sorted(VERBS))}"
            )
        try:
            args = json.loads(request.args) if request.args else {}
        except json.JSONDecodeError as e:
            return Answer(Code.BAD_REQUEST, f"args: not JSON ({e.msg} at {e.pos})")
        except RecursionError:
            return Answer(Code.BAD_REQUEST, "args: not JSON this service reads (nested too deeply)")
        except ValueError:  # int() refuses numbers over sys.get_int_max_str_digits() digits
            return Answer(Code.BAD_REQUEST, "args: not JSON this service reads (a number too long)")
        if not isinstance(args, dict):
            return Answer(Code.BAD_REQUEST, "args: must be a JSON object")
        if verb in MUTATING:
            if self.auth is None:
                return Answer(
                    Code.UNAUTHENTICATED, "commands are disabled: the service has no keys_file"
                )
            why = self.auth.check(request)
            if why is not None:
                return Answer(Code.UNAUTHENTICATED, f"refused: {why}")
        handler = getattr(self, f"_verb_{verb}")
        result: Answer = handler(args)
        return result

    def _on_tick(self, action: Callable[[], tuple[bool, str]]) -> Answer:
        try:
            ok, message = self.executive.submit(action).result(self.tick_timeout)
        except FutureTimeout:
            return Answer(Code.BUSY, "the tick loop did not take the request in time")
        return Answer(Code.OK if ok else Code.REFUSED, message)

    def _verb_list_missions(self, args: dict[str, Any]) -> Answer:
        """The mission names; with ``{"detail": true}`` each mission's description and
        parameters (``executive.mission.catalogue.describe_mission``) instead of its bare name."""
        names = self.library.names()
        if args.get("detail") is True:
            return Answer(Code.OK, f"{len(names)} missions", self._details(names))
        return Answer(Code.OK, f"{len(names)} missions", names)

    def _details(self, names: list[str]) -> list[Any]:
        """Description and parameters of each mission, read from the store's directory
        (a ``MissionStore``: ``directory`` and ``profile``); names only from a library
        that has no files to read."""
        directory = getattr(self.library, "directory", None)
        profile = getattr(self.library, "profile", None)
        if directory is None or profile is None:
            return [{"name": n} for n in names]
        return describe_missions(Path(directory), profile, names)

    def _skipped(self, name: str) -> list[str] | None:
        """Why the store skipped mission ``name`` (not valid for this robot), or None."""
        skipped = getattr(self.library, "skipped", None)
        return None if skipped is None else skipped().get(name)

    def _verb_validate(self, args: dict[str, Any]) -> Answer:
        name = args.get("mission")
        if not isinstance(name, str):
            return Answer(Code.BAD_REQUEST, "args.mission: a mission name is required")
        if (skipped := self._skipped(name)) is not None:
            return Answer(Code.INVALID, f"{len(skipped)} problems", skipped)
        if name not in (names := self.library.names()):
            return Answer(Code.NOT_FOUND, not_found("mission", name, names))
        errors = self.library.validate(name)
        return Answer(
            Code.INVALID if errors else Code.OK,
            f"{len(errors)} problems" if errors else "valid",
            errors,
        )

    def _verb_status(self, args: dict[str, Any]) -> Answer:
        payload = self.status()
        if self.auth is not None and isinstance(payload, dict):
            payload = {**payload, "instance": self.auth.instance}  # what commands are bound to
        return Answer(Code.OK, self.executive.state.value, payload)

    def _verb_start(self, args: dict[str, Any]) -> Answer:
        name, params = args.get("mission"), args.get("params", {})
        if not isinstance(name, str):
            return Answer(Code.BAD_REQUEST, "args.mission: a mission name is required")
        if not isinstance(params, dict):
            return Answer(Code.BAD_REQUEST, "args.params: must be an object of parameter values")
        if (skipped := self._skipped(name)) is not None:
            why = "; ".join(skipped)
            return Answer(Code.INVALID, f"not a mission this robot can run: {why}", skipped)
        if name not in (names := self.library.names()):
            return Answer(Code.NOT_FOUND, not_found("mission", name, names))
        prepare = getattr(self.library, "prepare", None)  # the store's: with the run's meta
        if prepare is not None:
            prepared = prepare(name, params)
            root, errors, meta = prepared.root, prepared.errors, prepared.meta
        else:
            (root, errors), meta = self.library.build(name, params), {}
        if root is None:
            return Answer(Code.INVALID, "; ".join(errors) or "the mission did not build", errors)
        built = root
        return self._on_tick(lambda: self.executive.start_mission(name, built, meta))

    def _verb_stop(self, args: dict[str, Any]) -> Answer:
        return self._on_tick(lambda: self.executive.stop_mission("stopped by request"))

    def _verb_pause(self, args: dict[str, Any]) -> Answer:
        client = str(args.get("by", "")) or "request"
        return self._on_tick(lambda: self.executive.pause(client[:LOGGED_ID]))

    def _verb_resume(self, args: dict[str, Any]) -> Answer:
        return self._on_tick(self.executive.resume)

    def _verb_recoverable(self, args: dict[str, Any]) -> Answer:
        if self.recoveries is None:
            return Answer(Code.REFUSED, "this service keeps no run records to recover from")
        return self.recoveries.listing()

    def _verb_recover(self, args: dict[str, Any]) -> Answer:
        run_id = args.get("run_id")
        if not isinstance(run_id, str):
            return Answer(Code.BAD_REQUEST, "args.run_id: a run id is required")
        if self.recoveries is None:
            return Answer(Code.REFUSED, "this service keeps no run records to recover from")
        library = self.library
        if not hasattr(library, "prepare"):
            return Answer(Code.REFUSED, "this service's missions cannot be recovered")
        return self.recoveries.recover(run_id, library, self._on_tick)  # type: ignore[arg-type]

    def _verb_set(self, args: dict[str, Any]) -> Answer:
        """``{"name": "cup", "at": [x, y, z]}``: a place for the running mission
        (behaviours/places.py), checked here, applied on the tick thread."""
        name, value = args.get("name"), args.get("at")
        at, why = places.check(name, value)
        if at is None:
            return Answer(Code.BAD_REQUEST, why)
        by = str(args.get("by", "")) or "request"
        point = at
        return self._on_tick(lambda: self.executive.set_place(str(name), point, by[:LOGGED_ID]))

    def _verb_reset(self, args: dict[str, Any]) -> Answer:
        return self._on_tick(self.executive.reset)

    def _verb_reload(self, args: dict[str, Any]) -> Answer:
        """Files are read here, never on the tick thread: a reload that blocked there (a FIFO
        named ``*.yaml``) once froze the tick loop, the safety watchdog with it. Missions
        are built from the store on this thread too, so the swap needs no tick."""
        if self.executive.run is not None:
            return Answer(Code.REFUSED, "refused: reload only while idle")
        ok, message = self.library.reload()
        if self.reload_keys is not None:
            keys_ok, keys = self.reload_keys()
            ok, message = ok and keys_ok, f"{message}; {keys}"
        return Answer(Code.OK if ok else Code.REFUSED, message)
