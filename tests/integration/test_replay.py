"""A signed command captured on the wire cannot be run again by a restarted service.

The hostile tester's replay, as it happened: the service as its own process (systemd
restarts it 2 s after a kill -9), a signed ``start`` captured off DDS as bytes, the
service SIGKILLed and started again, the same bytes written again a few seconds later,
well inside the 30 s window. The new instance remembers no nonce; it refuses the
request because it was signed for the instance before it (executive/service/auth.py), says so
in the reply, and runs nothing. A client that binds no instance (older than the fix)
is refused in words too; a current client's start on the new instance still runs.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cyclonedds.core import Listener
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.harness.stack import Stack, running_stack
from executive.service.auth import WINDOW_NS, new_nonce, sign
from executive.service.protocol import REPLY_TOPIC, REQUEST_QOS, REQUEST_TOPIC, Code
from executive.wire.codec import raw_take, raw_write
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_

pytestmark = pytest.mark.dds

MISSION = {"mission": "head_scan", "params": {"sweeps": 20}}  # runs for minutes


class Wire:
    """An eavesdropper and replayer on the request topic: keeps every request's bytes
    as written, writes bytes back, and reads every reply (whoever asked)."""

    def __init__(self, stack: Stack) -> None:
        p = stack.dds
        self.captured: list[bytes] = []
        self.replies: dict[str, Reply_] = {}
        self._cond = threading.Condition()
        matched = [threading.Event(), threading.Event()]
        self.sniffer: DataReader[Request_] = DataReader(
            p,
            Topic(p, REQUEST_TOPIC, Request_),
            qos=REQUEST_QOS,
            listener=Listener(on_data_available=self._on_request),  # type: ignore[no-untyped-call]
        )
        self.replies_reader: DataReader[Reply_] = DataReader(
            p,
            Topic(p, REPLY_TOPIC, Reply_),
            qos=REQUEST_QOS,
            listener=Listener(  # type: ignore[no-untyped-call]
                on_data_available=self._on_reply,
                on_subscription_matched=lambda r, s: matched[0].set(),
            ),
        )
        self.writer: DataWriter[Request_] = DataWriter(
            p,
            Topic(p, REQUEST_TOPIC, Request_),
            qos=REQUEST_QOS,
            listener=Listener(on_publication_matched=lambda w, s: matched[1].set()),  # type: ignore[no-untyped-call]
        )
        self.matched = matched

    def _on_request(self, reader: DataReader[Request_] | None) -> None:
        if reader is not None:
            with self._cond:
                self.captured += raw_take(reader, 64)
                self._cond.notify_all()

    def _on_reply(self, reader: DataReader[Reply_] | None) -> None:
        if reader is not None:
            with self._cond:
                for reply in reader.take(N=64):
                    if isinstance(reply, Reply_):
                        self.replies[reply.request_id] = reply
                self._cond.notify_all()

    def captured_request(self, verb: str) -> tuple[bytes, Request_]:
        """The last request with ``verb`` seen on the wire: its bytes, and it decoded."""
        with self._cond:
            self._cond.wait_for(
                lambda: any(Request_.deserialize(d).verb == verb for d in self.captured), 10
            )
            data = next(d for d in reversed(self.captured) if Request_.deserialize(d).verb == verb)
        return data, Request_.deserialize(data)

    def send(self, data: bytes, request_id: str, timeout: float = 20) -> Reply_:
        """Write ``data`` as it is; the reply to ``request_id``."""
        assert self.matched[0].wait(30) and self.matched[1].wait(30), "the service is not matched"
        with self._cond:
            self.replies.pop(request_id, None)
        raw_write(self.writer, data)
        with self._cond:
            assert self._cond.wait_for(lambda: request_id in self.replies, timeout), "no reply"
            return self.replies[request_id]


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    with running_stack(tmp_path / "stack") as s:
        s.start_sim()
        s.start_service()
        yield s


def _run_records(stack: Stack) -> set[str]:
    runs = stack.data_dir / "runs"
    return {p.name for p in runs.glob("*.jsonl")} if runs.is_dir() else set()


def test_a_signed_start_replayed_after_kill_9_and_restart_is_refused(stack: Stack) -> None:
    began = time.monotonic()
    wire, client = Wire(stack), stack.client
    started = client.request("start", MISSION, timeout=20)
    assert started.code == Code.OK, started.message
    data, captured = wire.captured_request("start")
    assert captured.signature and "/" in captured.nonce  # a signed, bound start
    # the same instance refuses it as a replay (the control: the bytes are the real ones)
    again = wire.send(data, captured.request_id)
    assert again.code == Code.UNAUTHENTICATED and "replayed" in again.message, again.message
    assert client.wait_status(lambda s: s.state == "RUNNING", 10) is not None

    # kill -9, as the hostile tester did; systemd would restart it 2 s later
    old_pid = stack.pid("executive")
    assert stack.stop("executive", signal.SIGKILL) == -signal.SIGKILL
    records = _run_records(stack)
    stack.start_service()
    new = client.wait_status(lambda s: not s.executive_id.endswith(f":{old_pid}"), 10)
    assert new is not None and new.state != "RUNNING", new

    # the replay, inside the window: refused for the instance, in words; nothing runs
    age_s = (time.time_ns() - captured.timestamp_ns) / 1e9
    assert age_s < WINDOW_NS / 1e9 - 5, f"too slow to test the window case: {age_s:.1f} s"
    replay = wire.send(data, captured.request_id)
    assert replay.code == Code.UNAUTHENTICATED, replay
    assert replay.message.startswith("refused: request signed for another service instance"), (
        replay.message
    )
    assert "send the command again" in replay.message
    time.sleep(1.0)  # a start that got through would be RUNNING by now
    status = client.status()
    assert status.state != "RUNNING" and status.runs == 0 and not status.run_id, status
    assert _run_records(stack) == records, "a run was recorded after the replay"

    # an old client (a bare nonce, correctly signed) is told why, and runs nothing either
    rid, stamp, nonce, args = "old-client", time.time_ns(), new_nonce(), json.dumps(MISSION)
    old = Request_(
        rid, "operator", "start", args, stamp, nonce,
        sign(stack.key, rid, "operator", "start", args, stamp, nonce),
    )  # fmt: skip
    refused = wire.send(old.serialize(), rid)
    assert refused.code == Code.UNAUTHENTICATED, refused
    assert "not bound to this service instance" in refused.message and "update" in refused.message
    assert client.status().runs == 0

    # and a current client's start runs on the new instance
    fresh = client.request("start", MISSION, timeout=20)
    assert fresh.code == Code.OK, fresh.message
    assert client.wait_status(lambda s: s.run_id == fresh.message, 10) is not None
    assert client.request("stop", timeout=20).code == Code.OK
    assert time.monotonic() - began < 120
