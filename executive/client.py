"""A DDS client of the executive: what the operator CLI, the demo and programs use.

It speaks the service's own topics like any other client would: reads the
transient-local status, writes signed requests and waits for the matching reply.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from cyclonedds.core import Listener
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.auth import new_nonce, sign
from executive.requests import REPLY_TOPIC, REQUEST_QOS, REQUEST_TOPIC
from executive.status import STATUS_QOS, STATUS_TOPIC
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
        self.status_reader: DataReader[Status_] = DataReader(
            participant,
            Topic(participant, STATUS_TOPIC, Status_),
            qos=STATUS_QOS,
            listener=Listener(on_data_available=self._on_status),  # type: ignore[no-untyped-call]
        )

    def _on_reply(self, reader: DataReader[Reply_]) -> None:
        with self._cond:
            for reply in reader.take(N=64):
                # a stock reader yields InvalidSample when the service's writer goes away
                if isinstance(reply, Reply_) and reply.client_id == self.client_id:
                    self._replies[reply.request_id] = reply
            self._cond.notify_all()

    def _on_status(self, reader: DataReader[Status_]) -> None:
        samples = [s for s in reader.take(N=64) if isinstance(s, Status_)]
        if samples:
            with self._cond:
                self._status = samples[-1]
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

    def request(
        self, verb: str, args: dict[str, Any] | None = None, timeout: float = 5.0
    ) -> Reply_:
        """Send a (signed, when we have a key) request and wait for its reply."""
        writer = self.writer
        # both ways matched, or the service's reply could leave before our reader is known
        if not (self._matched.wait(timeout) and self._reply_matched.wait(timeout)):
            raise NoExecutiveError(f"no executive is listening for requests (waited {timeout} s)")
        request_id, args_text, stamp, nonce = (
            uuid.uuid4().hex,
            json.dumps(args or {}),
            time.time_ns(),
            new_nonce(),
        )
        signature = (
            ""
            if self.key is None
            else sign(self.key, request_id, self.client_id, verb, args_text, stamp, nonce)
        )
        request = Request_(request_id, self.client_id, verb, args_text, stamp, nonce, signature)
        deadline = time.monotonic() + timeout
        writer.write(request)
        with self._cond:
            if not self._cond.wait_for(
                lambda: request.request_id in self._replies, max(0.0, deadline - time.monotonic())
            ):
                raise NoExecutiveError(f"no reply to {verb!r} within {timeout} s")
            return self._replies.pop(request.request_id)
