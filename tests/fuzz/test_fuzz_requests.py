"""Requests, fuzzed against the real service process while a mission runs.

One stack for the module (``executive.harness.stack``: the simulated Atom and ``atom-executive
run`` as their own processes on a leased loopback domain, missions from
``tests/fuzz/missions``). ``fuzz_long`` is started first and must run through the whole
fuzz run. Every generated request goes over DDS (fields that are not UTF-8 as raw
bytes) and must get exactly the reply a model of the protocol predicts: the code, the
words, the payload of read-only verbs; ``status`` replies must show the same run still
RUNNING. Afterwards the service is alive, its log has no traceback, the run is still
RUNNING under the same run_id and has made progress, and correctly signed, valid
requests still work, down to stopping the run and starting a new one.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cyclonedds.core import Listener
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from hypothesis import given
from hypothesis import strategies as st

from executive.harness.stack import Stack, running_stack
from executive.mission.store import MissionStore
from executive.service.auth import WINDOW_NS, new_nonce, nonce_instance, sign
from executive.service.protocol import MUTATING, REPLY_TOPIC, REQUEST_QOS, REQUEST_TOPIC, Code
from executive.service.recover import RUN_ID
from executive.service.requests import MAX_FIELD, VERBS
from executive.wire.codec import raw_write
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_
from tests.fuzz.fuzzing import TIMEOUT_S, fuzz_settings, stats
from tests.fuzz.strategies import (
    DISTURBING,
    PROFILE,
    RequestSpec,
    describe_spec,
    json_or_none,
    request_specs,
)

pytestmark = [pytest.mark.dds, pytest.mark.timeout(TIMEOUT_S)]

MISSIONS = Path(__file__).resolve().parent / "missions"
TARGET = "fuzz_long"
FIELDS = ("request_id", "client_id", "verb", "args", "nonce", "signature")
REPLY_TIMEOUT = 20.0  # s for a batch: generous on a loaded 2-core machine
ECHO_LIMIT = 256  # characters of an oversized id the reply echoes
BAD_UTF8 = b"\xc3("  # a lead byte followed by a non-continuation byte
# what the log of a healthy service never holds
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Exception ignored|Exception in thread")
ROUNDS = re.compile(r"(\d+) success from")


@dataclass
class Sent:
    """A request as sent, and what must come back."""

    spec: RequestSpec
    fields: dict[str, Any]
    key: tuple[str, str]  # (request_id, client_id) the reply must carry
    code: Code
    words: str = ""  # the reply's message must contain these
    payload: Any = None  # the reply's payload must equal this (when not None)
    check: str = ""  # extra checks by name


@dataclass
class Fuzz:
    stack: Stack
    run_id: str
    key: bytes
    writer: DataWriter[Request_]
    store: MissionStore
    replies: dict[tuple[str, str], list[Reply_]] = field(default_factory=lambda: defaultdict(list))
    cond: threading.Condition = field(default_factory=threading.Condition)
    accepted: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    nonces: set[str] = field(default_factory=set)
    rng: random.Random = field(default_factory=lambda: random.Random(5))
    rounds0: int = 0  # rounds the run had done when the fuzzing began
    instance: str = ""  # the service instance signed commands are bound to
    codes: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def on_reply(self, reader: DataReader[Reply_]) -> None:
        with self.cond:
            for reply in reader.take(N=64):
                if isinstance(reply, Reply_):
                    self.replies[(reply.request_id, reply.client_id)].append(reply)
            self.cond.notify_all()

    def wait_reply(self, key: tuple[str, str], deadline: float) -> Reply_ | None:
        with self.cond:
            self.cond.wait_for(lambda: bool(self.replies.get(key)), deadline - time.monotonic())
            got = self.replies.get(key)
            return got.pop(0) if got else None


def _rounds(status: Any) -> int:
    for node in status.tree:
        if node.path.endswith("/Rounds"):
            m = ROUNDS.search(node.feedback)
            return int(m.group(1)) if m else 0
    return -1


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    work = tmp_path_factory.mktemp("fuzz-stack")
    with running_stack(work) as stack:
        stack.write_config(missions_dir=str(MISSIONS))
        stack.start_sim("--seed", "5")
        stack.start_service()
        client = stack.client
        started = client.request("start", {"mission": TARGET}, timeout=30)
        assert started.code == Code.OK, started.message
        run_id = started.message
        status = client.wait_status(lambda s: s.run_id == run_id and _rounds(s) >= 1, 60)
        assert status is not None, f"{TARGET} did not start its rounds; see {work}"
        participant = stack.dds
        matched = [threading.Event(), threading.Event()]
        fz: Fuzz | None = None

        def on_reply(reader: DataReader[Reply_] | None) -> None:
            # None: the reader was deleted while its last callback was in flight (teardown)
            if fz is not None and reader is not None:
                fz.on_reply(reader)

        reader = DataReader(
            participant,
            Topic(participant, REPLY_TOPIC, Reply_),
            qos=REQUEST_QOS,
            listener=Listener(  # type: ignore[no-untyped-call]
                on_data_available=on_reply,
                on_subscription_matched=lambda r, s: matched[1].set(),
            ),
        )
        writer = DataWriter(
            participant,
            Topic(participant, REQUEST_TOPIC, Request_),
            qos=REQUEST_QOS,
            listener=Listener(on_publication_matched=lambda w, s: matched[0].set()),  # type: ignore[no-untyped-call]
        )
        assert matched[0].wait(30) and matched[1].wait(30)
        fz = Fuzz(stack, run_id, stack.key, writer, MissionStore(MISSIONS, PROFILE))
        fz.instance = client.instance(10) or ""
        assert fz.instance, "the service names no instance in its status reply"
        fz.rounds0 = _rounds(client.status())
        yield fz
        del reader


# -- sending -------------------------------------------------------------------------------


def _signed(fields: dict[str, Any], key: bytes) -> str:
    f = fields
    return sign(
        key, f["request_id"], f["client_id"], f["verb"], f["args"], f["timestamp_ns"], f["nonce"]
    )


def _nonce(fz: Fuzz, spec: RequestSpec) -> str:
    """Bound to the service instance, as a current client binds it; a chosen nonce (made
    unique: the service forgets nonces after twice the window, so reusing one across the
    run would be accepted or refused by the clock) is also sent unbound, as an older
    client sends it, or bound to another instance, as a replay from before a restart."""
    if spec.nonce is None:
        return new_nonce(fz.instance)
    unique = spec.nonce + new_nonce()
    how = len(spec.nonce) % 3
    if how == 1:
        return unique  # unbound, unless it holds a "/" (then: bound to what precedes it)
    return f"{fz.instance if how == 0 else 'f' * 32}/{unique}"


def materialise(fz: Fuzz, spec: RequestSpec) -> dict[str, Any]:
    """The request's fields, made now (timestamp, nonce, signature) from the spec."""
    if spec.auth == "replay":  # an earlier accepted request, byte for byte
        now = time.monotonic()
        # young enough to be refused as a replay, or old enough to be refused as stale: not
        # at the window's edge, where either answer would do
        recent = [f for t, f in fz.accepted[-50:] if not 25 <= now - t <= 35]
        if recent:
            return dict(fz.rng.choice(recent))
    fields: dict[str, Any] = {
        "request_id": spec.request_id if spec.request_id is not None else uuid.uuid4().hex,
        "client_id": spec.client_id,
        "verb": spec.verb,
        "args": spec.args,
        "timestamp_ns": min(max(time.time_ns() + spec.stamp_offset_ns, 0), 2**64 - 1),
        "nonce": _nonce(fz, spec),
        "signature": "",
    }
    if spec.auth in ("empty_nonce", "replay"):
        fields["nonce"] = ""  # "replay" with nothing accepted yet: an empty nonce
    if spec.auth == "wrong_key":
        fields["signature"] = _signed(fields, b"w" * 32)
    elif spec.auth == "garbled":
        fields["signature"] = spec.signature
    elif spec.auth != "none":
        fields["signature"] = _signed(fields, fz.key)
    return fields


def _write(fz: Fuzz, fields: dict[str, Any], not_utf8: str | None, marker: str) -> None:
    """Write the request; with ``not_utf8``, that field is ``marker`` with its first two
    bytes replaced by invalid UTF-8 (written as raw bytes: no DDS binding writes them)."""
    if not_utf8 is None:
        fz.writer.write(Request_(**fields))
        return
    sample = Request_(**{**fields, not_utf8: marker})
    data = sample.serialize(use_version_2=fz.writer._use_version_2)  # as DataWriter.write
    assert data.count(marker.encode()) == 1
    raw_write(fz.writer, data.replace(marker.encode(), BAD_UTF8 + marker[2:].encode()))


def _as_read(fields: dict[str, Any], not_utf8: str | None, marker: str) -> dict[str, Any]:
    """The fields as the service can read them (invalid bytes replaced)."""
    if not_utf8 is None:
        return fields
    return {**fields, not_utf8: (BAD_UTF8 + marker[2:].encode()).decode(errors="replace")}


# -- the model -----------------------------------------------------------------------------


def _echo(value: str) -> str:
    return value if len(value.encode()) <= MAX_FIELD else value[:ECHO_LIMIT]


def expect(fz: Fuzz, spec: RequestSpec, fields: dict[str, Any], seen: dict[str, Any]) -> Sent:
    """What the service must answer: the protocol's rules in order (requests.py and
    auth.py's docstrings), with the mission store as the oracle for mission contents."""
    key = (_echo(seen["request_id"]), _echo(seen["client_id"]))

    def sent(code: Code, words: str = "", payload: Any = None, check: str = "") -> Sent:
        return Sent(spec, fields, key, code, words, payload, check)

    if spec.not_utf8 is not None:
        return sent(Code.BAD_REQUEST, f"{spec.not_utf8}: not UTF-8")
    for name in FIELDS:
        if len(fields[name].encode()) > MAX_FIELD:
            return sent(Code.BAD_REQUEST, name)
    if not fields["request_id"]:
        return sent(Code.BAD_REQUEST, "request_id")
    verb = fields["verb"]
    if verb not in VERBS:
        return sent(Code.UNKNOWN_VERB, "unknown verb")
    parsed, args = json_or_none(fields["args"])
    if not parsed:
        return sent(Code.BAD_REQUEST, "args: not JSON")
    if not isinstance(args, dict):
        return sent(Code.BAD_REQUEST, "must be a JSON object")
    if verb in MUTATING:
        why = _auth(fz, fields)
        if why:
            return sent(Code.UNAUTHENTICATED, why)
        fz.accepted.append((time.monotonic(), dict(fields)))
        fz.nonces.add(fields["nonce"])
    if verb == "list_missions":
        return sent(Code.OK, "missions", fz.store.names())
    if verb == "status":
        return sent(Code.OK, "RUNNING", check="status")
    if verb == "reset":
        return sent(Code.OK, "not latched")
    if verb == "reload":
        return sent(Code.REFUSED, "only while idle")
    assert verb not in DISTURBING, (
        f"the fuzzer must never send a valid {verb}: {describe_spec(spec)}"
    )
    if verb == "resume":  # nothing is paused: the fuzzer never signs a pause correctly
        return sent(Code.REFUSED, "not paused")
    if verb == "recoverable":  # the runs a crash interrupted: none in the fuzzed service's data
        return sent(Code.OK, "")
    if verb == "recover":  # a run id is hex digits naming a record; none of the fuzzer's does
        asked = args.get("run_id")
        if not isinstance(asked, str) or not RUN_ID.fullmatch(asked):
            return sent(Code.BAD_REQUEST, "args.run_id")
        return sent(Code.NOT_FOUND, f"no run {asked}")
    if verb == "set":  # a place for the running mission (fuzz_long reaches for none)
        called = args.get("name")
        if not isinstance(called, str) or not PLACE.fullmatch(called):
            return sent(Code.BAD_REQUEST, "args.name")
        if not _is_place(args.get("at")):
            return sent(Code.BAD_REQUEST, "args.at")
        return sent(Code.OK, f"place {called} = [")
    name = args.get("mission")
    if not isinstance(name, str):
        return sent(Code.BAD_REQUEST, "args.mission")
    if verb == "start" and not isinstance(args.get("params", {}), dict):
        return sent(Code.BAD_REQUEST, "args.params")
    if (skipped := fz.store.skipped().get(name)) is not None:  # there, not for this robot
        return sent(Code.INVALID, "problems" if verb == "validate" else "can run", skipped)
    if name not in fz.store.names():
        return sent(Code.NOT_FOUND, "no mission")
    if verb == "validate":
        errors = fz.store.validate(name)
        return sent(Code.INVALID if errors else Code.OK, "problems" if errors else "valid", errors)
    root, errors = fz.store.build(name, args.get("params", {}))
    if root is None:
        return sent(Code.INVALID, "", errors)
    return sent(Code.REFUSED, f"mission {TARGET!r} is running")


PLACE = re.compile(r"[a-z][a-z0-9_]{0,63}")  # the protocol's place names (``set``)


def _is_place(at: object) -> bool:
    """Three finite numbers (not booleans), each within 100 m of the robot."""
    if not isinstance(at, list) or len(at) != 3:
        return False
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in at):
        return False
    return all(abs(v) <= 100 for v in at)  # (inf and NaN fail; a huge int is just huge)


def _auth(fz: Fuzz, fields: dict[str, Any]) -> str:
    if fields["client_id"] != "operator":
        return "unknown client"
    if fields["signature"] != _signed(fields, fz.key):
        return "bad signature"
    bound = nonce_instance(fields["nonce"])
    if bound is None:
        return "not bound to this service instance"
    if bound != fz.instance:
        return "signed for another service instance"
    if abs(time.time_ns() - fields["timestamp_ns"]) > WINDOW_NS - 10**9:
        return "timestamp"  # (a second of slack either way: we do not race the window)
    if fields["nonce"] in fz.nonces:
        return "replayed"
    return ""


def _judge(fz: Fuzz, s: Sent, reply: Reply_ | None) -> None:
    what = describe_spec(s.spec)
    assert reply is not None, f"no reply (a silent drop) to {what}"
    code = Code(reply.code)
    fz.codes[code.name] += 1
    assert code is s.code, f"{code.name} {reply.message[:300]!r}, expected {s.code.name}: {what}"
    assert s.words in reply.message, f"{reply.message[:300]!r} lacks {s.words!r}: {what}"
    if s.payload is not None:
        assert json.loads(reply.payload) == s.payload, what
    if s.check == "status":
        status = json.loads(reply.payload)
        assert (status["state"], status["run_id"]) == ("RUNNING", fz.run_id), status
        assert status["safety"] == "CLEAR", status


def send_batch(fz: Fuzz, specs: list[RequestSpec]) -> None:
    """Send every request of the batch at once, then wait for every reply."""
    batch = []
    for spec in specs:
        fields = materialise(fz, spec)
        if spec.auth == "replay" and fields["nonce"]:
            # an identical resend: refused as a replay, or as stale once the window passed
            _write(fz, fields, None, "")
            stale = abs(time.time_ns() - fields["timestamp_ns"]) > WINDOW_NS - 10**9
            words = "timestamp" if stale else "replayed"
            batch.append(
                Sent(spec, fields, (fields["request_id"], "operator"), Code.UNAUTHENTICATED, words)
            )
            continue
        marker = "@@" + uuid.uuid4().hex
        predicted = expect(fz, spec, fields, _as_read(fields, spec.not_utf8, marker))
        _write(fz, fields, spec.not_utf8, marker)
        batch.append(predicted)
    deadline = time.monotonic() + REPLY_TIMEOUT
    for s in batch:
        _judge(fz, s, fz.wait_reply(s.key, deadline))


# -- the properties ------------------------------------------------------------------------


def test_the_model_refuses_to_send_a_valid_stop_or_pause() -> None:
    """The fuzzer never signs a stop or a pause correctly: that would end or hold the run it
    watches."""
    assert all(not (spec.verb in DISTURBING and spec.auth == "correct") for spec in _samples())


def _samples() -> list[RequestSpec]:
    out: list[RequestSpec] = []

    @fuzz_settings(200, 200)
    @given(request_specs())
    def collect(spec: RequestSpec) -> None:
        out.append(spec)

    collect()
    return out


@fuzz_settings(300, shrink=False)
@given(specs=st.lists(request_specs(), min_size=1, max_size=4))
def test_every_request_gets_the_reply_the_protocol_predicts(
    fuzz: Fuzz, specs: list[RequestSpec]
) -> None:
    s = stats("requests over DDS")
    s.begin()
    send_batch(fuzz, specs)
    s.end(len(specs))
    s.outcomes.clear()
    s.outcomes.update(fuzz.codes)


def test_afterwards_the_service_and_the_mission_are_unharmed(fuzz: Fuzz) -> None:
    stack, client = fuzz.stack, fuzz.stack.client
    s = stats("requests over DDS")
    proc = stack.procs["executive"]
    assert proc.poll() is None, f"the service exited with {proc.returncode}"
    before = client.status()
    time.sleep(3)
    status = client.status()
    assert (status.state, status.run_id, status.safety) == ("RUNNING", fuzz.run_id, "CLEAR")
    rounds = _rounds(status)
    assert status.ticks > before.ticks and rounds > fuzz.rounds0, (fuzz.rounds0, rounds)
    s.notes.append(f"run {fuzz.run_id} RUNNING throughout, rounds {fuzz.rounds0} -> {rounds}")
    # correctly signed, valid requests still work, down to stopping and starting
    assert client.request("list_missions", timeout=10).code == Code.OK
    assert client.request("validate", {"mission": TARGET}, timeout=10).code == Code.OK
    assert client.request("reset", timeout=10).code == Code.OK
    assert client.request("stop", timeout=10).code == Code.OK
    assert client.wait_status(lambda st_: st_.state == "ABORTED", 10) is not None
    restarted = client.request("start", {"mission": TARGET, "params": {"rounds": 1}}, timeout=30)
    assert restarted.code == Code.OK and restarted.message != fuzz.run_id, restarted.message
    assert client.request("stop", timeout=10).code == Code.OK
    for name in ("executive", "sim"):
        log = (stack.workdir / f"{name}.log").read_text(encoding="utf-8", errors="replace")
        found = TRACEBACK.findall(log)
        s.notes.append(f"{name}.log: {len(log) // 1024} KiB, {len(found)} tracebacks")
        assert not found, f"{len(found)} tracebacks in {stack.workdir / name}.log"
    assert proc.poll() is None
