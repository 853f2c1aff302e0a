"""A DDS client of the executive: what the operator CLI, the demo and programs use.

It speaks the service's own topics like any other client would: reads the
transient-local status, writes signed requests and waits for the matching reply. A
signed command is bound to the service instance that will run it: the client asks for
the instance id (the ``status`` reply) and signs it into the nonce (executive/service/auth.py).

Its DDS listeners run on CycloneDDS's threads, and the entities they read may be
deleted under them: ``close()`` detaches every listener first (CycloneDDS waits for a
callback in flight), then deletes the entities, so a status sample arriving while a CLI
exits no longer ends in ``DDS_RETCODE_BAD_PARAMETER`` printed from a dying reader. A
client whose participant is deleted without ``close()`` (``dds.close_participant``)
stays quiet too: its callbacks ignore a reader that is gone or going.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from cyclonedds.core import DDSException, Entity, Listener
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.service.protocol import (
    MUTATING,
    REPLY_TOPIC,
    REQUEST_QOS,
    REQUEST_TOPIC,
    STATUS_QOS,
    STATUS_TOPIC,
)
from executive.wire import dds
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_, Status_


class NoExecutiveError(TimeoutError):
    """No executive answered in time."""


class ExecutiveClient:
    def __init__(
        self,
        participant: DomainParticipant,
        *,
        client_id: str = "operator",
        key: bytes | None = None,
    ) -> None:
        self.client_id = client_id
        self.key = key
        self._closed = False
        self._matched = threading.Event()
        self._reply_matched = threading.Event()
        self._replies: dict[str, Reply_] = {}
        self._cond = threading.Condition()
        self._status: Status_ | None = None
        self._participant = participant
        # request entities are made on the first request: a read-only client (status,
        # watch) needs no permission to write requests under DDS Security
        self._writer: DataWriter[Request_] | None = None
        self._reply_reader: DataReader[Reply_] | None = None
        # the listener goes on once the reader is whole: a transient-local status can
        # arrive while DataReader.__init__ still runs (the callback then got None, or a
        # reader without its topic); what came before is taken right after
        self.status_reader: DataReader[Status_] = DataReader(
            participant, Topic(participant, STATUS_TOPIC, Status_), qos=STATUS_QOS
        )
        self.status_reader.set_listener(Listener(on_data_available=self._on_status))  # type: ignore[no-untyped-call]
        self._on_status(self.status_reader)

    def _take(self, reader: DataReader[Any] | None) -> list[Any]:
        """What a listener's reader holds, or nothing if the reader is gone or going (a
        callback in flight while the participant is deleted)."""
        if reader is None or self._closed:
            return []
        try:
            return list(reader.take(N=64))
        except DDSException:  # DDS_RETCODE_BAD_PARAMETER: its handle is already closed
            return []

    def _on_reply(self, reader: DataReader[Reply_] | None) -> None:
        replies = self._take(reader)
        with self._cond:
            for reply in replies:
                # a stock reader yields InvalidSample when the service's writer goes away
                if isinstance(reply, Reply_) and reply.client_id == self.client_id:
                    self._replies[reply.request_id] = reply
            self._cond.notify_all()

    def _on_status(self, reader: DataReader[Status_] | None) -> None:
        samples = [s for s in self._take(reader) if isinstance(s, Status_)]
        if samples:
            with self._cond:
                self._status = samples[-1]
                self._cond.notify_all()

    def close(self) -> None:
        """Detach the listeners, then delete this client's readers and writer (in that
        order, and why: ``dds.delete_entities``). Idempotent; the participant itself stays
        the caller's."""
        if self._closed:
            return
        self._closed = True
        entities: list[Entity] = [self.status_reader]
        entities += [e for e in (self._reply_reader, self._writer) if e is not None]
        dds.delete_entities(entities)
        with self._cond:
            self._cond.notify_all()

    def status(self, timeout: float = 5.0) -> Status_:
        """The latest status (waiting up to ``timeout`` for the first one)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._status is not None, timeout):
                raise NoExecutiveError(
                    f"no executive status within {timeout} s (is the service running on this domain?)"
                )
            assert self._status is not None
            return self._status

    def wait_status(self, predicate: Any, timeout: float) -> Status_ | None:
        with self._cond:
            ok = self._cond.wait_for(
                lambda: self._status is not None and predicate(self._status), timeout
            )
            return self._status if ok else None

    @property
    def writer(self) -> DataWriter[Request_]:
        """The request writer (and the reply reader with it), made on first use."""
        if self._writer is None:
            p = self._participant
            self._reply_reader = DataReader(
                p,
                Topic(p, REPLY_TOPIC, Reply_),
                qos=REQUEST_QOS,
                listener=Listener(  # type: ignore[no-untyped-call]
                    on_data_available=self._on_reply,
                    on_subscription_matched=lambda r, s: self._reply_matched.set(),
                ),
            )
            self._writer = DataWriter(
                p,
                Topic(p, REQUEST_TOPIC, Request_),
                qos=REQUEST_QOS,
                listener=Listener(on_publication_matched=lambda w, s: self._matched.set()),  # type: ignore[no-untyped-call]
            )
        return self._writer

    def instance(self, timeout: float = 5.0) -> str | None:
        """The service instance id commands must be bound to, from a ``status`` reply;
        None from a service older than instance binding (it takes unbound nonces)."""
        reply = self._send("status", "{}", "", timeout)
        try:
            payload = json.loads(reply.payload) if reply.code == 0 and reply.payload else {}
        except ValueError:
            return None
        instance = payload.get("instance") if isinstance(payload, dict) else None
        return instance if isinstance(instance, str) and instance else None

    def request(
        self, verb: str, args: dict[str, Any] | None = None, timeout: float = 5.0
    ) -> Reply_:
        """Send a (signed, when we have a key) request and wait for its reply. A signed
        command is bound to the instance of the service that answers ``status`` now."""
        from executive.service.auth import new_nonce  # not for a read: status, missions

        deadline = time.monotonic() + timeout
        instance = self.instance(timeout) if self.key is not None and verb in MUTATING else None
        left = max(0.0, deadline - time.monotonic())
        return self._send(verb, json.dumps(args or {}), new_nonce(instance), left)

    def _send(self, verb: str, args_text: str, nonce: str, timeout: float) -> Reply_:
        writer = self.writer
        # both ways matched, or the service's reply could leave before our reader is known
        if not (self._matched.wait(timeout) and self._reply_matched.wait(timeout)):
            raise NoExecutiveError(f"no executive is listening for requests (waited {timeout} s)")
        request_id, stamp = uuid.uuid4().hex, time.time_ns()
        signature = ""
        if self.key is not None:
            from executive.service.auth import sign  # only a signed command needs it

            signature = sign(self.key, request_id, self.client_id, verb, args_text, stamp, nonce)
        request = Request_(request_id, self.client_id, verb, args_text, stamp, nonce, signature)
        deadline = time.monotonic() + timeout
        writer.write(request)
        with self._cond:
            if not self._cond.wait_for(
                lambda: request.request_id in self._replies, max(0.0, deadline - time.monotonic())
            ):
                raise NoExecutiveError(f"no reply to {verb!r} within {timeout} s")
            return self._replies.pop(request.request_id)
