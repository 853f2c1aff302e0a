"""Other controllers on the domain (executive/service/peers.py): the rules on plain data, then
the discovery readers on real CycloneDDS, in this process."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any, cast

import pytest
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic

from executive.core.tree import ExecState, Executive
from executive.robots.atom.adapter import COMMAND_TOPICS
from executive.robots.atom.interface import Interface
from executive.robots.atom.topics import TOPICS
from executive.service.peers import (
    Peer,
    PeerWatch,
    Verdict,
    decide,
    parse_started,
    peer_from_qos,
)
from executive.service.protocol import STATUS_QOS, STATUS_TOPIC
from executive.wire import dds
from executive.wire.gen.own.atom_executive.msg import Status_

ME = Peer("guid-me", host="pc2", pid=100, started_ns=2_000)
EARLIER = Peer("guid-a", host="pc2", pid=200, started_ns=1_000)
LATER = Peer("guid-b", host="pc2", pid=300, started_ns=3_000)
EXEC = frozenset({STATUS_TOPIC, "rt/upper/cmd", "rt/switch/upper/control"})
ALIVE = {200, 300, 400}


def judge(
    peers: list[Peer],
    writes: dict[str, frozenset[str]],
    *,
    me: Peer = ME,
    now: float = 10.0,
    seen: float = 0.0,
    alive: set[int] = ALIVE,
) -> Verdict:
    return decide(
        me,
        {p.key: p for p in [me, *peers]},
        writes,
        {p.key: seen for p in peers},
        now,
        grace=1.0,
        alive=lambda pid: pid in alive,
        command_topics=COMMAND_TOPICS,
    )


def test_the_command_topics_are_the_controller_side_of_the_robot() -> None:
    assert {
        "rt/upper/cmd",
        "rt/lower/cmd",
        "rt/hands/cmd",
        "rt/set/fsm/id",
        "rt/switch/upper/control",
        "rt/clear/errors",
        "rt/amr/cmd",
        "rt/remote/control",
    } == COMMAND_TOPICS


def test_alone_or_with_the_robot_there_is_nothing_to_say() -> None:
    robot = Peer("guid-robot", host="atom", pid=7, started_ns=None)
    assert judge([robot], {"guid-robot": frozenset()}) == Verdict()
    # our own writers never count, whatever they write
    assert judge([], {ME.key: EXEC}) == Verdict()


def test_an_executive_that_came_first_commands_and_we_stand_by() -> None:
    v = judge([EARLIER], {EARLIER.key: EXEC})
    (conflict,) = v.conflicts
    assert conflict.startswith("executive pc2:200 commands this robot")
    assert "before this one): this one stands by" in conflict
    assert "pc2:200 was on the DDS domain first" in v.stand_by
    assert v.notes == ()


def test_an_executive_that_came_later_stands_by_and_we_only_report_it() -> None:
    v = judge([LATER], {LATER.key: EXEC})
    assert v.conflicts == () and v.stand_by == ""
    (note,) = v.notes
    assert note.startswith("executive pc2:300 is on this DDS domain too")
    assert "after this one) and stands by: stop it" in note


def test_both_executives_reach_the_same_answer_whatever_each_sees() -> None:
    """Seen from either side: exactly one stands by, including on a tie of start times
    (the GUID decides it the same way on both)."""
    for a, b in [
        (EARLIER, LATER),
        (Peer("guid-x", "pc2", 1, started_ns=5), Peer("guid-y", "pc3", 1, started_ns=5)),
    ]:
        a_sees = judge([b], {b.key: EXEC}, me=a)
        b_sees = judge([a], {a.key: EXEC}, me=b)
        assert [bool(a_sees.stand_by), bool(b_sees.stand_by)] == [False, True]
        assert (a_sees.conflicts, b_sees.notes) == ((), ())


def test_an_executive_that_does_not_say_when_it_started_blocks_but_stops_nothing() -> None:
    old = Peer("guid-old", host="pc3", pid=1, started_ns=None)
    assert judge([old], {old.key: EXEC}, now=0.5) == Verdict()  # its record may be coming
    v = judge([old], {old.key: EXEC})
    (conflict,) = v.conflicts
    assert "executive pc3:1 is on this DDS domain and does not say when it started" in conflict
    assert v.stand_by == ""


def test_a_writer_of_a_command_topic_that_is_no_executive_blocks_every_start() -> None:
    teleop = Peer("guid-t", host="laptop", pid=4, process="teleop", started_ns=None)
    v = judge([teleop], {teleop.key: frozenset({"rt/upper/cmd", "rt/hands/cmd"})}, now=0.1)
    (conflict,) = v.conflicts  # a foreign participant: at once
    assert conflict.startswith("rt/hands/cmd, rt/upper/cmd written by laptop:4 (teleop)")
    assert "not an executive" in conflict and v.stand_by == ""
    # made by dds.make_participant (an executive whose status writer is still to come?):
    # judged after the grace
    ours = Peer("guid-o", host="pc2", pid=400, started_ns=5_000)
    writes = {ours.key: frozenset({"rt/set/fsm/id"})}
    assert judge([ours], writes, now=0.5) == Verdict()
    (conflict,) = judge([ours], writes, now=1.5).conflicts
    assert conflict.startswith("rt/set/fsm/id written by pc2:400")
    # an endpoint whose participant record has not come yet: judged after the grace too
    assert decide(ME, {}, writes, {ours.key: 0.0}, 0.5, grace=1.0) == Verdict()  # no commands


def test_state_and_other_topics_are_not_commands() -> None:
    sim = Peer("guid-s", host="pc2", pid=400, started_ns=9)
    writes = {sim.key: frozenset({"rt/upper/state", "atom/sim/status"})}
    assert judge([sim], writes) == Verdict()


def test_a_participant_of_a_process_of_this_host_that_is_gone_is_ignored() -> None:
    """kill -9 leaves the participant in the discovery of those that knew it until its
    lease ends (10 s): the executive standing by for one that was killed takes over."""
    ghost = Peer("guid-g", host="pc2", pid=999, started_ns=1_000)
    v = judge([ghost], {ghost.key: EXEC})
    assert v.conflicts == () and v.stand_by == ""
    assert v.leftovers == ("pc2:999: still listed by discovery, but that process is gone",)
    # a previous start with our pid (a container's PID 1): a ghost too
    same = Peer("guid-p", host="pc2", pid=ME.pid, started_ns=1_000)
    assert judge([same], {same.key: EXEC}).stand_by == ""
    # on another host we cannot tell: it counts until discovery drops it
    far = Peer("guid-f", host="pc9", pid=999, started_ns=1_000)
    assert judge([far], {far.key: EXEC}).stand_by


def test_user_data_and_properties_name_the_participant() -> None:
    (user_data,) = dds.participant_qos(123)
    assert parse_started(user_data.data) == 123
    assert parse_started(b"something else") is None
    assert parse_started(None) is None
    qos = Qos(
        Policy.Property("__Hostname", "pc2"),
        Policy.Property("__Pid", "42"),
        Policy.Property("__ProcessName", "atom-executive"),
        Policy.Userdata(dds.STARTED_PREFIX + b"77"),
    )
    assert peer_from_qos("k", qos) == Peer("k", "pc2", 42, "atom-executive", 77)
    assert peer_from_qos("k", None) == Peer("k")
    assert Peer("k").name == "participant k"


# -- on DDS --------------------------------------------------------------------------------


def _poll_until(watch: PeerWatch, what: Any, timeout: float = 10.0) -> Verdict:
    deadline = time.monotonic() + timeout
    while True:
        v = watch.poll()
        if what(v):
            return v
        assert time.monotonic() < deadline, v
        time.sleep(0.05)


class FakeExecutive(SimpleNamespace):
    """What ``PeerWatch.watch`` touches of an Executive; requests run at once."""

    def submit(self, request: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(request())
        return future

    def stop_mission(self, reason: str) -> tuple[bool, str]:
        self.stopped = reason
        self.run = None
        return True, reason


@pytest.mark.dds
def test_the_watch_sees_executives_and_writers_come_and_go(
    dds_domain: int, participant: DomainParticipant
) -> None:
    # the other participants live in this process: pid -1 for us, so they are not ghosts
    watch = PeerWatch(participant, command_topics=COMMAND_TOPICS, grace=0.2, pid=-1)
    assert watch.me.started_ns is not None  # made by dds.make_participant
    run = SimpleNamespace(run_id="r1")
    ex = FakeExecutive(conflicts=(), run=run, state=ExecState.IDLE, last_run=None)
    ex_ = cast(Executive, ex)
    assert watch.watch(ex_) == Verdict()

    earlier = DomainParticipant(dds_domain, qos=dds.participant_qos(watch.me.started_ns - 10**9))
    writer = DataWriter(earlier, Topic(earlier, STATUS_TOPIC, Status_), qos=STATUS_QOS)
    v = _poll_until(watch, lambda v: v.stand_by)
    watch.verdict = Verdict()  # as if this poll had not happened: watch() acts on it
    v = watch.watch(ex_)
    assert ex.conflicts == v.conflicts and "commands this robot" in ex.conflicts[0]
    assert ex.stopped == v.stand_by and ex.run is None  # our mission stopped, once
    del writer
    dds.close_participant(earlier)
    _poll_until(watch, lambda v: v == Verdict())
    watch.watch(ex_)
    assert ex.conflicts == ()

    # a participant not made by dds.make_participant (no USER_DATA): a tool, judged at once
    tool = DomainParticipant(dds_domain)
    spec = TOPICS["amr_cmd"]
    amr = DataWriter(tool, Topic(tool, spec.name, getattr(Interface(), spec.type_name)))
    v = _poll_until(watch, lambda v: v.conflicts)
    assert v.conflicts[0].startswith("rt/amr/cmd written by ")
    del amr
    dds.close_participant(tool)
    _poll_until(watch, lambda v: v == Verdict())


@pytest.mark.dds
def test_a_participant_without_a_start_time_gets_one(dds_domain: int) -> None:
    plain = DomainParticipant(dds_domain)
    try:
        before = time.time_ns()
        watch = PeerWatch(plain, command_topics=COMMAND_TOPICS)
        assert watch.me.started_ns is not None and watch.me.started_ns >= before
    finally:
        dds.close_participant(plain)


GHOST = """
import sys, time
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from executive.wire import dds
from executive.service.protocol import STATUS_QOS, STATUS_TOPIC
from executive.wire.gen.own.atom_executive.msg import Status_
p = DomainParticipant(int(sys.argv[1]), qos=dds.participant_qos(time.time_ns() - 10**12))
w = DataWriter(p, Topic(p, STATUS_TOPIC, Status_), qos=STATUS_QOS)
print("up", flush=True)
time.sleep(60)
"""


@pytest.mark.dds
def test_the_one_standing_by_takes_over_at_once_when_the_first_is_killed(
    dds_domain: int, participant: DomainParticipant
) -> None:
    """An executive of this host that was first, killed -9: its participant stays in
    discovery for its lease (10 s), but its process is gone: no longer a reason to wait."""
    watch = PeerWatch(participant, command_topics=COMMAND_TOPICS)
    first = subprocess.Popen(
        [sys.executable, "-c", GHOST, str(dds_domain)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert first.stdout is not None and first.stdout.readline() == "up\n"
        v = _poll_until(watch, lambda v: v.stand_by)
        assert f"executive {socket.gethostname()}:{first.pid} commands" in v.conflicts[0]
    finally:
        first.kill()
        first.wait(10)
    v = _poll_until(watch, lambda v: v.leftovers, timeout=5)  # well within the lease
    assert v.conflicts == () and v.stand_by == ""


@pytest.mark.dds
def test_alone_counts_discovery_from_the_participant_and_waits_for_everyone_seen(
    dds_domain: int, participant: DomainParticipant
) -> None:
    """Recovery acts on ``alone`` (executive/service/recovery.py): it may answer as soon as
    ``SETTLE_S`` of discovery have passed since the participant was made (not since the
    watch's first poll, which comes after the whole start-up), but never over a participant
    whose writers it has seen and not judged yet (younger than the grace)."""
    now = [1000.0]
    watch = PeerWatch(
        participant,
        command_topics=COMMAND_TOPICS,
        grace=1.0,
        pid=-1,
        clock=lambda: now[0],
        since=now[0] - 1.0,  # the participant was made 1 s ago
    )
    assert watch.alone(1.5) is None  # never polled
    watch.poll()
    assert watch.alone(1.5) is None  # 1 s of discovery
    now[0] += 0.6
    assert watch.alone(1.5) is None  # the newest verdict is still from 1 s
    watch.poll()
    assert watch.alone(1.5) is True  # its first poll was 0.6 s ago: from since, it is 1.6 s

    # an executive's participant whose command writer came before its status writer
    other = DomainParticipant(dds_domain, qos=dds.participant_qos())
    spec = TOPICS["amr_cmd"]
    amr = DataWriter(other, Topic(other, spec.name, getattr(Interface(), spec.type_name)))
    try:
        deadline = time.monotonic() + 10
        while watch.alone(1.5) is not None:  # seen now: not judged within its grace
            assert time.monotonic() < deadline, watch.verdict
            time.sleep(0.05)
            watch.poll()
        assert watch.verdict.conflicts == ()
        now[0] += 1.1
        watch.poll()
        assert watch.alone(1.5) is False, watch.verdict  # judged: another controller
        assert watch.verdict.conflicts[0].startswith("rt/amr/cmd written by ")
    finally:
        del amr
        dds.close_participant(other)
