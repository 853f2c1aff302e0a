"""Two executives on one DDS domain (issue 11): one commands, the other stands by.

Real processes: the simulated Atom recording what it receives, and ``atom-executive run``
twice on one leased loopback domain, each with its own data dir. Requests and statuses
are read here per executive (a request goes to the domain: every service answers it).
The sim's record is the witness of what reached the robot.
"""

from __future__ import annotations

import json
import secrets
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.harness.stack import Stack, running_stack
from executive.robots.atom.interface import Interface
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.topics import TOPICS
from executive.seam.profile import load_profile
from executive.service.auth import sign
from executive.service.peers import GRACE_S
from executive.service.protocol import (
    REPLY_TOPIC,
    REQUEST_QOS,
    REQUEST_TOPIC,
    STATUS_QOS,
    STATUS_TOPIC,
    Code,
)
from executive.wire import dds
from executive.wire.gen.own.atom_executive.msg import Reply_, Request_, Status_

pytestmark = pytest.mark.dds

HOST = socket.gethostname()
TIMEOUT = 20.0
WAVE = {"mission": "greeting_wave", "params": {"waves": 10}}  # ~25 s of arm motion


def heard(s: Status_) -> bool:
    """The executive has heard every safety source of the robot."""
    return "safety state is not known" not in s.not_ready


class Statuses:
    """The latest status of each executive on the domain (``Status_`` is keyless: one
    reader sees every executive's samples; they are told apart by ``executive_id``)."""

    def __init__(self, participant: DomainParticipant) -> None:
        qos = Qos(
            Policy.Reliability.Reliable(0),
            Policy.Durability.TransientLocal,
            Policy.History.KeepLast(256),
        )
        self.reader: DataReader[Status_] = DataReader(
            participant, Topic(participant, STATUS_TOPIC, Status_), qos=qos
        )
        self.latest: dict[str, Status_] = {}

    def of(self, pid: int) -> Status_ | None:
        for s in self.reader.take(N=256):
            if isinstance(s, Status_):
                self.latest[s.executive_id] = s
        return self.latest.get(f"{HOST}:{pid}")

    def wait(self, pid: int, what: Any, timeout: float = TIMEOUT) -> Status_:
        deadline = time.monotonic() + timeout
        while True:
            s = self.of(pid)
            if s is not None and what(s):
                return s
            assert time.monotonic() < deadline, f"status of {pid}: {s}"
            time.sleep(0.05)


class Requests:
    """Signed requests as the CLI makes them, and *every* reply to each."""

    def __init__(self, participant: DomainParticipant, key: bytes) -> None:
        self.key = key
        self.writer: DataWriter[Request_] = DataWriter(
            participant, Topic(participant, REQUEST_TOPIC, Request_), qos=REQUEST_QOS
        )
        self.reader: DataReader[Reply_] = DataReader(
            participant, Topic(participant, REPLY_TOPIC, Reply_), qos=REQUEST_QOS
        )
        self.replies: dict[str, list[Reply_]] = {}

    def ask(
        self, verb: str, args: dict[str, Any], *, instance: str | None, replies: int
    ) -> list[Reply_]:
        """Send; the replies once ``replies`` came (or after ``TIMEOUT``). ``instance``:
        the service instance the nonce is bound to (executive/service/auth.py), None: unbound."""
        rid, text, stamp = uuid.uuid4().hex, json.dumps(args), time.time_ns()
        nonce = secrets.token_hex(16) if instance is None else f"{instance}/{secrets.token_hex(16)}"
        signature = sign(self.key, rid, "operator", verb, text, stamp, nonce)
        self.writer.write(Request_(rid, "operator", verb, text, stamp, nonce, signature))
        deadline = time.monotonic() + TIMEOUT
        while len(self.replies.get(rid, [])) < replies and time.monotonic() < deadline:
            for r in self.reader.take(N=64):
                if isinstance(r, Reply_):
                    self.replies.setdefault(r.request_id, []).append(r)
            time.sleep(0.02)
        return self.replies.pop(rid, [])

    def instances(self, services: int) -> list[str | None]:
        """Each service's instance id, from its ``status`` reply (None: none given)."""
        out = []
        for reply in self.ask("status", {}, instance=None, replies=services):
            payload = json.loads(reply.payload) if reply.payload else {}
            out.append(payload.get("instance"))
        assert len(out) == services, out
        return out


def start_second(stack: Stack) -> subprocess.Popen[bytes]:
    """``atom-executive run`` again, same keys and missions, its own data dir."""
    config = yaml.safe_load(stack.config_path.read_text())
    config["data_dir"] = str(stack.workdir / "data2")
    path = stack.workdir / "config2.yaml"
    path.write_text(yaml.safe_dump(config))
    return stack.spawn("executive2", "run", "--config", str(path))


def sent_rate(stack: Stack, seconds: float = 1.0) -> float:
    """Joint commands per second sent on rt/upper/cmd over the next ``seconds`` (by their
    source timestamps: the writers' rate, whenever the sim, busy or not, took them)."""
    t0 = time.monotonic()
    time.sleep(seconds)
    t1 = time.monotonic()
    assert stack.sim.wait_status(lambda s: s.monotonic > t1 + 0.3, 5), "the sim is silent"
    sent = Recording.load(stack.record_path).commands("upper_cmd", after=t0)
    return sum(1 for c in sent if c.sent <= t1) / (t1 - t0)


def released_control(rec: Recording, after: float) -> list[float]:
    return [
        e.t for e in rec.event_commands("switch_upper_control", after=after) if not e.fields["flag"]
    ]


def test_a_second_executive_stands_by_and_a_start_runs_on_one_only(tmp_path: Path) -> None:
    with running_stack(tmp_path / "stack") as stack:
        stack.start_sim(record=True)
        first = stack.start_service().pid
        statuses, requests = Statuses(stack.dds), Requests(stack.dds, stack.key)
        (a,) = requests.instances(1)
        second = start_second(stack).pid

        # the newcomer refuses, naming the first; the first goes on and reports the newcomer.
        # Once it has heard the robot, its look for a killed instance's leftovers is over
        # (it would take the first's control for one: see the xfail test below)
        names_first = f"executive {HOST}:{first} commands this robot"
        s2 = statuses.wait(second, lambda s: names_first in s.not_ready and heard(s))
        assert "this one stands by" in s2.not_ready, s2.not_ready
        s1 = statuses.wait(first, lambda s: any(f"{HOST}:{second}" in p for p in s.problems))
        assert s1.not_ready == "", s1.not_ready
        assert "stands by" in str(s1.problems), s1.problems
        b = next(i for i in requests.instances(2) if i != a or a is None)

        # one signed start addressed to the domain, signed for the first (as the CLI signs
        # for the service that answers it): it runs on exactly one
        replies = requests.ask("start", WAVE, instance=a, replies=2)
        assert [r.code for r in replies].count(Code.OK) == 1, replies
        run = statuses.wait(first, lambda s: "One wave" in s.active_node)
        time.sleep(1.5)  # waving: the arm streams
        s2 = statuses.wait(second, lambda s: True)
        assert (s2.state, s2.runs, s2.mission) == ("IDLE", 0, ""), s2
        # a start signed for the second: refused there, naming the first
        replies = requests.ask("start", WAVE, instance=b, replies=2)
        refusal = [r for r in replies if names_first in r.message]
        assert len(refusal) == 1 and refusal[0].code == Code.REFUSED, replies
        assert refusal[0].message.startswith("refused: another controller: "), refusal
        assert Code.OK not in [r.code for r in replies], replies

        # the robot hears one streamer: the command rate is one executive's, not two
        rate, want = sent_rate(stack), load_profile().command_hz
        assert 0.4 * want < rate < 1.3 * want, (rate, want)

        # stopping the one that stands by releases nothing; the first's mission goes on
        stopping = time.monotonic()
        assert stack.stop("executive2", signal.SIGTERM, timeout=20) == 0
        statuses.wait(first, lambda s: not s.problems, timeout=5)
        time.sleep(0.3)  # the sim flushes its record every 100 ms
        rec = Recording.load(stack.record_path)
        assert released_control(rec, stopping) == []
        s1 = statuses.wait(first, lambda s: True)
        assert (s1.state, s1.run_id, s1.safety) == ("RUNNING", run.run_id, "CLEAR"), (
            s1.safety_reason,
            s1.last_reason,
        )
    log2 = (tmp_path / "stack" / "executive2.log").read_text()
    assert log2.count('"event": "another controller of this robot"') == 1, log2[-3000:]


def test_a_teleop_writer_blocks_starts_and_an_earlier_executive_stops_our_mission(
    tmp_path: Path,
) -> None:
    with running_stack(tmp_path / "stack") as stack:
        stack.start_sim(record=True)
        pid = stack.start_service().pid
        statuses, requests = Statuses(stack.dds), Requests(stack.dds, stack.key)
        (instance,) = requests.instances(1)
        (reply,) = requests.ask("start", WAVE, instance=instance, replies=1)
        assert reply.code == Code.OK, reply.message
        run = statuses.wait(pid, lambda s: "One wave" in s.active_node)

        # a teleop tool: a writer of rt/upper/cmd, no executive: no start, the run goes on
        teleop = dds.make_participant(stack.domain)
        spec = TOPICS["upper_cmd"]
        writer = DataWriter(teleop, Topic(teleop, spec.name, getattr(Interface(), spec.type_name)))
        named = f"rt/upper/cmd written by {HOST}:"
        s = statuses.wait(pid, lambda s: named in s.not_ready, timeout=GRACE_S + 5)
        assert "which is not an executive" in s.not_ready, s.not_ready
        assert (s.state, s.run_id) == ("RUNNING", run.run_id), s
        dds.close_participant(teleop)
        del writer
        statuses.wait(pid, lambda s: s.not_ready == "", timeout=5)

        # an executive that was on the domain first (its USER_DATA says an hour ago): ours
        # stops its mission, ABORTED, naming it, and refuses to start another
        earlier = DomainParticipant(
            stack.domain, qos=dds.participant_qos(time.time_ns() - 3600 * 10**9)
        )
        try:
            status_writer = DataWriter(
                earlier, Topic(earlier, STATUS_TOPIC, Status_), qos=STATUS_QOS
            )
            s = statuses.wait(pid, lambda s: s.last_result == "ABORTED", timeout=5)
            assert "was on the DDS domain first; this one stands by" in s.last_reason, s
            assert s.state == "ABORTED" and "this one stands by" in s.not_ready, s
            (reply,) = requests.ask("start", WAVE, instance=instance, replies=1)
            assert reply.code == Code.REFUSED and "commands this robot" in reply.message
            del status_writer
        finally:
            dds.close_participant(earlier)
        statuses.wait(pid, lambda s: s.not_ready == "", timeout=5)


def test_a_newcomer_does_not_release_the_control_of_the_executive_that_was_first(
    tmp_path: Path,
) -> None:
    with running_stack(tmp_path / "stack") as stack:
        stack.start_sim(record=True)
        first = stack.start_service().pid
        statuses, requests = Statuses(stack.dds), Requests(stack.dds, stack.key)
        (instance,) = requests.instances(1)
        (reply,) = requests.ask("start", WAVE, instance=instance, replies=1)
        assert reply.code == Code.OK, reply.message
        run = statuses.wait(first, lambda s: "One wave" in s.active_node)
        starting = time.monotonic()
        second = start_second(stack).pid
        statuses.wait(second, lambda s: f"{HOST}:{first}" in s.not_ready and heard(s))
        time.sleep(2.5)  # it has looked for leftovers (and not acted); the sim flushes its record
        rec = Recording.load(stack.record_path)
        assert released_control(rec, starting) == []
        s1 = statuses.wait(first, lambda s: True)
        assert (s1.state, s1.run_id, s1.safety) == ("RUNNING", run.run_id, "CLEAR"), (
            s1.safety_reason,
            s1.last_reason,
        )
