"""The request server: every request gets a reply; bad ones are refused in words."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import py_trees
import pytest
import structlog
from cyclonedds.core import Listener
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from behaviours.actions.basic import Wait
from executive.core.ticker import Ticker
from executive.seam.profile import DEFAULT_PROFILE, load_profile
from executive.service.auth import Authenticator, new_nonce, sign
from executive.service.protocol import REPLY_TOPIC, REQUEST_QOS, REQUEST_TOPIC, Code
from executive.service.requests import (
    MAX_FIELD,
    RequestServer,
    UndecodableError,
    decode_request,
)
from executive.wire import dds
from executive.wire.codec import raw_write
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_
from tests.rigs import Rig

ROOT = Path(__file__).resolve().parents[1]
KEY = b"k" * 32
INSTANCE = "5" * 32  # the served instance's id; requests are bound to it unless told not


class Library:
    """Two missions: 'wait' builds, 'broken' does not."""

    def __init__(self) -> None:
        self.reloads = 0

    def names(self) -> list[str]:
        return ["broken", "wait"]

    def validate(self, name: str) -> list[str]:
        return ["broken.yaml:3:5: root.joints: unknown joint 'nose'"] if name == "broken" else []

    def build(
        self, name: str, params: dict[str, Any]
    ) -> tuple[py_trees.behaviour.Behaviour | None, list[str]]:
        if name == "broken":
            return None, self.validate(name)
        return Wait(float(params.get("seconds", 30))), []

    def reload(self) -> tuple[bool, str]:
        self.reloads += 1
        return True, "reloaded 2 missions"


def request(verb: str, payload: Any = None, *, key: bytes | None = KEY, **over: Any) -> Request_:
    fields: dict[str, Any] = {
        "request_id": new_nonce(),
        "client_id": "operator",
        "verb": verb,
        "args": json.dumps(payload or {}),
        "timestamp_ns": time.time_ns(),
        "nonce": new_nonce(INSTANCE),
        "signature": "",
    }
    fields.update(over)
    if key is not None:
        fields["signature"] = sign(
            key,
            *(
                fields[k]
                for k in ("request_id", "client_id", "verb", "args", "timestamp_ns", "nonce")
            ),
        )
    return Request_(**fields)


@dataclass
class Served:
    server: RequestServer
    rig: Rig
    library: Library


@pytest.fixture
def served(rig: Rig) -> Iterator[Served]:
    library = Library()
    server = RequestServer(
        rig.participant,
        rig.ex,
        library,
        auth=Authenticator({"operator": KEY}, instance=INSTANCE),
        status=lambda: {"state": rig.ex.state.value},
    )
    ticker = Ticker(rig.ex.tick, 100)
    ticker.start()
    yield Served(server, rig, library)
    ticker.stop()


@pytest.mark.parametrize(
    ("req", "code", "words"),
    [
        (lambda: request("dance"), Code.UNKNOWN_VERB, "unknown verb 'dance'"),
        (lambda: request("status", key=None, args="{not json"), Code.BAD_REQUEST, "args: not JSON"),
        (
            lambda: request("status", key=None, args="[1, 2]"),
            Code.BAD_REQUEST,
            "must be a JSON object",
        ),
        (
            lambda: request("status", key=None, nonce="x" * (MAX_FIELD + 1)),
            Code.BAD_REQUEST,
            "nonce",
        ),
        (lambda: request("status", key=None, request_id=""), Code.BAD_REQUEST, "request_id"),
        (
            lambda: request("start", {"mission": "wait"}, key=None),
            Code.UNAUTHENTICATED,
            "bad signature",
        ),
        (
            lambda: request("start", {"mission": "wait"}, key=b"x" * 32),
            Code.UNAUTHENTICATED,
            "bad signature",
        ),
        (lambda: request("reset", client_id="mallory"), Code.UNAUTHENTICATED, "unknown client"),
        (
            lambda: request("start", {"mission": "wait"}, nonce=new_nonce()),
            Code.UNAUTHENTICATED,
            "refused: request not bound to this service instance",
        ),
        (
            lambda: request("stop", nonce=new_nonce("0" * 32)),
            Code.UNAUTHENTICATED,
            "refused: request signed for another service instance ('" + "0" * 32 + "')",
        ),
        (lambda: request("start", {"mission": "nope"}), Code.NOT_FOUND, "no mission 'nope'"),
        (lambda: request("start", {}), Code.BAD_REQUEST, "args.mission"),
        (
            lambda: request("start", {"mission": "wait", "params": [1]}),
            Code.BAD_REQUEST,
            "args.params",
        ),
        (lambda: request("start", {"mission": "broken"}), Code.INVALID, "unknown joint 'nose'"),
        (lambda: request("validate", {"mission": "broken"}, key=None), Code.INVALID, "1 problems"),
        (lambda: request("validate", {"mission": "wait"}, key=None), Code.OK, "valid"),
        (lambda: request("list_missions", key=None), Code.OK, "2 missions"),
    ],
)
def test_answers(served: Served, req: Any, code: Code, words: str) -> None:
    answer = served.server.answer(req())
    assert answer.code is code, answer
    assert words in answer.message


def test_the_status_reply_names_the_instance_commands_are_bound_to(served: Served) -> None:
    answer = served.server.answer(request("status", key=None))
    assert answer.code is Code.OK and answer.payload["instance"] == INSTANCE


def test_a_start_accepted_before_a_restart_is_refused_after_it(served: Served, rig: Rig) -> None:
    """The same signed bytes, to the service started again (a new RequestServer and
    Authenticator, nothing remembered, the request well inside the window): refused in
    words, and no mission runs."""
    start = request("start", {"mission": "wait", "params": {"seconds": 60}})
    assert served.server.answer(start).code is Code.OK
    assert served.server.answer(request("stop")).code is Code.OK
    restarted = RequestServer(
        rig.participant,
        rig.ex,
        served.library,
        auth=Authenticator({"operator": KEY}),  # a fresh instance id, as at every start
        status=lambda: {},
    )
    runs = rig.ex.counters.runs
    replay = restarted.answer(start)
    assert replay.code is Code.UNAUTHENTICATED, replay
    assert replay.message.startswith("refused: request signed for another service instance")
    assert rig.ex.counters.runs == runs and rig.ex.run is None


def test_start_stop_replay_and_busy(served: Served) -> None:
    s = served.server
    start = request("start", {"mission": "wait", "params": {"seconds": 60}})
    assert s.answer(start).code is Code.OK
    assert served.rig.ex.run is not None and served.rig.ex.run.name == "wait"
    replay = s.answer(start)
    assert replay.code is Code.UNAUTHENTICATED and "replayed" in replay.message
    again = s.answer(request("start", {"mission": "wait"}))
    assert again.code is Code.REFUSED and "is running" in again.message
    assert s.answer(request("reload")).code is Code.REFUSED and served.library.reloads == 0
    assert s.answer(request("stop")).code is Code.OK
    assert served.rig.ex.state.value == "ABORTED"
    assert s.answer(request("reload")).code is Code.OK and served.library.reloads == 1
    assert s.answer(request("reset")).code is Code.OK


@contextmanager
def raw_client(domain: int) -> Iterator[tuple[DataWriter[Request_], DataReader[Reply_]]]:
    """A bare request writer and reply reader, both matched with the server's."""
    with dds.open_participant(domain) as client:
        matched = [threading.Event(), threading.Event()]
        writer = DataWriter(
            client,
            Topic(client, REQUEST_TOPIC, Request_),
            qos=REQUEST_QOS,
            listener=Listener(on_publication_matched=lambda w, s: matched[0].set()),
        )
        reader = DataReader(
            client,
            Topic(client, REPLY_TOPIC, Reply_),
            qos=REQUEST_QOS,
            listener=Listener(on_subscription_matched=lambda r, s: matched[1].set()),
        )
        assert matched[0].wait(10) and matched[1].wait(10)
        yield writer, reader


def test_over_dds_every_request_gets_a_reply(served: Served, dds_domain: int) -> None:
    served.server.start()
    try:
        with raw_client(dds_domain) as (writer, reader):
            deadline = time.monotonic() + 10
            sent = [
                request("list_missions", key=None),
                request("dance", key=None),
                request("stop", key=None),
            ]
            for r in sent:
                writer.write(r)
            replies: dict[str, Reply_] = {}
            while len(replies) < len(sent) and time.monotonic() < deadline:
                for reply in reader.take(N=10):
                    replies[reply.request_id] = reply
                time.sleep(0.01)
            codes = [replies[r.request_id].code for r in sent]
            assert codes == [Code.OK, Code.UNKNOWN_VERB, Code.UNAUTHENTICATED]
            assert json.loads(replies[sent[0].request_id].payload) == ["broken", "wait"]
    finally:
        served.server.stop()


def _ask_once(domain: int, req: Request_) -> Reply_:
    """A client that sends one request, waits for its reply, and goes away."""
    with raw_client(domain) as (writer, reader):
        writer.write(req)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for reply in reader.take(N=10):
                if isinstance(reply, Reply_) and reply.request_id == req.request_id:
                    return reply
            time.sleep(0.01)
    raise AssertionError("no reply")


def test_a_client_going_away_is_not_a_request(served: Served, dds_domain: int) -> None:
    """Its writer's disappearance reaches the server as an InvalidSample: no reply, no
    traceback, no count (it used to be answered INTERNAL with empty ids)."""
    served.server.start()
    try:
        assert _ask_once(dds_domain, request("list_missions", key=None)).code == Code.OK
        assert _ask_once(dds_domain, request("list_missions", key=None)).code == Code.OK
        assert served.server.handled == 2
    finally:
        served.server.stop()


# -- found by tests/fuzz ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ("[" * 60_000, "nested too deeply"),  # json raised RecursionError: INTERNAL
        ('{"n": ' + "9" * 5000 + "}", "a number too long"),  # int() digit limit: INTERNAL
    ],
    ids=["deep", "long-number"],
)
def test_json_the_parser_cannot_read_is_a_bad_request(
    served: Served, args: str, words: str
) -> None:
    answer = served.server.answer(request("status", key=None, args=args))
    assert answer.code is Code.BAD_REQUEST and "args: not JSON" in answer.message
    assert words in answer.message


def _not_utf8(req: Request_, field: str, version_2: bool = False) -> bytes:
    """``req`` serialized with ``field``'s first bytes replaced by invalid UTF-8."""
    marker = "@@" + new_nonce()
    data = replace(req, **{field: marker}).serialize(use_version_2=version_2)
    return data.replace(marker.encode(), b"\xc3(" + marker[2:].encode())


@pytest.mark.parametrize("version_2", [False, True])
def test_decode_request_reads_what_stock_reads_and_names_fields_that_are_not_utf8(
    version_2: bool,
) -> None:
    req = request("start", {"mission": "wait"})
    data = req.serialize(use_version_2=version_2)
    assert decode_request(data) == (Request_.deserialize(data), ())
    decoded, bad = decode_request(_not_utf8(req, "verb", version_2))
    assert bad == ("verb",) and decoded.verb.startswith("\ufffd(")
    assert replace(decoded, verb=req.verb) == req
    with pytest.raises(UndecodableError):
        decode_request(b"\x00\x01\x00\x00\x05")


def test_over_dds_a_field_that_is_not_utf8_is_refused_and_loses_no_other_request(
    served: Served, dds_domain: int
) -> None:
    """The stock reader raised UnicodeDecodeError inside the DDS listener: a traceback, no
    reply, and every request taken in the same batch was lost with it."""
    served.server.start()
    try:
        with raw_client(dds_domain) as (writer, reader):
            bad = request("status", key=None)
            good = request("list_missions", key=None)
            raw_write(writer, _not_utf8(bad, "args"))
            writer.write(good)
            replies: dict[str, Reply_] = {}
            deadline = time.monotonic() + 10
            while len(replies) < 2 and time.monotonic() < deadline:
                for reply in reader.take(N=10):
                    if isinstance(reply, Reply_):
                        replies[reply.request_id] = reply
                time.sleep(0.01)
            assert replies[bad.request_id].code == Code.BAD_REQUEST
            assert replies[bad.request_id].message == "args: not UTF-8 text"
            assert replies[good.request_id].code == Code.OK
    finally:
        served.server.stop()


def test_over_dds_the_reply_echoes_a_long_request_id_whole(served: Served, dds_domain: int) -> None:
    """Ids were cut to 256 characters: a client with a longer request_id never saw the
    reply to a request the service had carried out."""
    served.server.start()
    try:
        req = request("list_missions", key=None, request_id="r" * 300, client_id="c" * 300)
        reply = _ask_once(dds_domain, req)
        assert (reply.request_id, reply.client_id, reply.code) == (
            req.request_id,
            req.client_id,
            Code.OK,
        )
    finally:
        served.server.stop()


def test_an_unknown_mission_gets_a_did_you_mean(served: Served) -> None:
    for verb, key in (("start", KEY), ("validate", None)):
        answer = served.server.answer(request(verb, {"mission": "wiat"}, key=key))
        assert answer.code is Code.NOT_FOUND
        assert answer.message == "no mission 'wiat' (did you mean 'wait'?)", answer
    far = served.server.answer(request("start", {"mission": "zzzzzz"}))
    assert far.message == "no mission 'zzzzzz' (known: broken, wait)"


def test_list_missions_in_detail_describes_each_mission(served: Served) -> None:
    """The service's store has its directory and profile: descriptions and parameters
    come from the files; a library without files gives names in the same shape."""
    plain = served.server.answer(request("list_missions", {"detail": True}, key=None))
    assert plain.payload == [{"name": "broken"}, {"name": "wait"}]
    store = ShippedLibrary()
    served.server.library = store
    answer = served.server.answer(request("list_missions", {"detail": True}, key=None))
    assert answer.code is Code.OK
    entries = {e["name"]: e for e in answer.payload}
    assert set(entries) == set(store.names())
    scan = entries["head_scan"]
    assert scan["description"].strip()
    sweeps = next(p for p in scan["params"] if p["name"] == "sweeps")
    assert sweeps["type"] == "integer" and sweeps["required"] is False and "default" in sweeps
    json.dumps(answer.payload)  # what the reply carries


class ShippedLibrary(Library):
    """The shipped missions directory, as the service's MissionStore exposes it."""

    directory = ROOT / "missions"
    profile = load_profile(DEFAULT_PROFILE)

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.yaml"))


def test_refused_commands_are_logged_once_then_counted(served: Served) -> None:
    """Anyone on the domain can send unsigned commands in a loop: the first refusal is
    logged, the rest are counted for the next line, not one line each."""
    with structlog.testing.capture_logs() as lines:
        for _ in range(50):
            req = request("stop", key=None)
            served.server._reply(req, served.server.answer(req))
        ok = request("list_missions", key=None)
        served.server._reply(ok, served.server.answer(ok))
    refused = [x for x in lines if x["event"] == "request refused"]
    assert len(refused) == 1 and refused[0]["why"] == "refused: bad signature", refused
    assert served.server.quiet_log.unlogged("unauthenticated") == 49
    assert [x["verb"] for x in lines if x["event"] == "read requests"] == ["list_missions"]


def test_reads_are_counted_and_commands_are_each_logged(served: Served) -> None:
    """A program polling status once a second must not fill the journal (issue 15, quiet
    logs); every start, stop, reset and reload stays a line of its own: the audit trail."""
    with structlog.testing.capture_logs() as lines:
        for _ in range(30):
            req = request("status")
            served.server._reply(req, served.server.answer(req))
        for _ in range(3):
            req = request("reset")
            served.server._reply(req, served.server.answer(req))
    reads = [x for x in lines if x["event"] == "read requests"]
    assert len(reads) == 1 and reads[0]["verb"] == "status", reads
    assert served.server.quiet_log.unlogged("read:status") == 29
    assert [x["verb"] for x in lines if x["event"] == "request"] == ["reset"] * 3


def test_set_gives_the_running_mission_a_place_and_refuses_what_is_none(served: Served) -> None:
    """``set NAME [x, y, z]`` (signed): refused unsigned, while idle, or when the value is
    not three finite numbers; applied on the tick thread while a mission runs, and the
    places are gone when the run ends (behaviours/places.py)."""
    from behaviours import places

    server = served.server
    assert (
        server.answer(request("set", {"name": "cup", "at": [0.4, -0.2, 0.1]}, key=None)).code
        is Code.UNAUTHENTICATED
    )
    idle = server.answer(request("set", {"name": "cup", "at": [0.4, -0.2, 0.1]}))
    assert idle.code is Code.REFUSED and "no mission is running" in idle.message
    for bad, words in (
        ({"name": "cup", "at": [0.4, -0.2]}, "expected a point [x, y, z]"),
        ({"name": "cup", "at": [0.4, -0.2, 1e9]}, "more than 100 m"),
        ({"name": "cup", "at": "here"}, "expected a point"),
        ({"name": "Cup!", "at": [0.4, -0.2, 0.1]}, "lower_case letters"),
    ):
        answer = server.answer(request("set", bad))
        assert answer.code is Code.BAD_REQUEST and words in answer.message, answer
    assert server.answer(request("start", {"mission": "wait"})).code is Code.OK
    answer = server.answer(request("set", {"name": "cup", "at": [0.4, -0.2, 0.1]}))
    assert answer.code is Code.OK and answer.message == "place cup = [0.4, -0.2, 0.1]"
    assert places.names() == ["cup"]
    assert server.answer(request("stop")).code is Code.OK
    assert places.names() == []
