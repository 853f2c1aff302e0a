"""Other controllers of this robot on the DDS domain: another executive, another writer.

Two executives on one domain were not detected (issue 11): one signed ``start`` ran on
both, two motion streamers drove ``rt/upper/cmd`` together, the CLI showed one run id and
``status`` the other, and stopping one released the upper-body control the other relied
on. DDS has no owner for a topic: any participant may write the robot's commands, and the
robot obeys them all. So the service watches discovery (CycloneDDS's builtin participant
and publication topics, as executive/wire/typewatch.py does for types) and finds, among the
participants that are not its own:

- executives: participants writing ``atom/executive/status`` (only an executive does);
- other controllers: participants writing a command topic of the robot (every ``rt/*``
  topic the robot adapter lists in ``command_topics``: the Atom's every rt/* command topic) that are
  not executives: a teleop tool, a script, a bridge.

Who commands
------------
The executive that was on the domain first keeps commanding; a newcomer stands by. Both
must reach the same answer from what both can see, whatever order discovery brings things
in, or both stand by (nothing works) or neither does (the bug). Discovery gives host and
pid (CycloneDDS's ``__Hostname`` and ``__Pid`` participant properties) but no time, so
every participant says when it was created in its USER_DATA (``executive/wire/dds.py``):
the earlier ``(started_ns, participant GUID)`` is first. Every executive compares the same
two pairs, so they agree even if the two hosts' clocks do not; a clock that is off by
more than the time between the two starts can only make the wrong one of the two stand
by, never both or neither. The Status_ sample's ``stamp_ns`` is no start time (it is each
sample's), and which peer an executive happened to discover first is not symmetric: after
a network partition heals, each would see the other arrive "later".

- An executive that came first: this one stands by. ``Executive.conflicts`` names it, so
  every ``start`` is refused with its name and the status carries it in ``not_ready``;
  a mission this executive was running (only possible when both started at once, or a
  partition healed) is stopped, ABORTED, the reason naming the other executive. Stopping
  it releases only what this executive's own leaves took (``Executive._release_robot``
  acts on ``context.control_acquired``), never the other's control.
- An executive that came later: it stands by, and this one goes on as before; its
  status lists the newcomer under ``problems`` (so ``status`` of each says so), without
  refusing anything: refusing here too would leave the robot with no executive at all.
- An executive that says no start time (a version before this one): it does not stand
  by for anyone, so no mission starts here while it is there; one already running goes
  on (it was here first, as far as anyone can tell).
- A writer of a command topic that is not an executive: no mission starts while it is
  there, in any executive; a mission already running goes on (it was first), and the
  log and status name the topics and the participant.

An executive's command writers are created before its status writer (the service builds
its robot I/O first), so a participant with command writers and no status writer whose
USER_DATA shows it was made by ``dds.make_participant`` (an executive starting, perhaps)
is judged a non-executive only after ``GRACE_S`` of being seen; one without it (any other
tool) at once, and so is an executive that says its start time.

When it first looks: at once when the supervision loop starts. Discovery has long run
by then (the service is ready only once it has heard every robot state topic, which
takes the same discovery), and builtin readers hand over everything already discovered,
so a newcomer sees the executive that was there at its first look. A look that came too
early would still end right: the newcomer stands by as soon as it sees the other, and a
mission it had started is stopped. A "still looking" refusal for the first second was
tried and dropped: the service says READY and publishes a status with nothing in
``not_ready`` before its supervision loop starts (``run()`` creates the watch last), so
clients that wait for that status, the tests' ``Stack`` among them, raced it.

A participant killed (``kill -9``) stays in the discovery of those that knew it for its
lease (10 s; one that starts later never hears of it): a participant of a process on this
very host that is gone (or that has this process's pid: an earlier start of this service
in a container, where it is PID 1 every time) is a leftover, not a controller, and is
ignored (logged once), so the executive standing by for one that was killed takes over at
once, and the one that was first stops reporting a killed newcomer. A leftover on another
host is waited out.

Limits. Upper-body control is one flag on the robot: if both executives ran missions
(a healed partition), the one that stops releases the control its own leaf took, which
is the other's too (that one then latches ``control_revoked``: nobody commands, safely).
A standing-by executive still reacts to a safety trip as DESIGN.md 4 says (hold its own
streams, which are none, and cancel the base's task): stops only escalate. At boot,
``executive/service/recovery.py`` releases control and cancels a base task a killed
instance left only once ``alone`` says no other controller is here (``SETTLE_S`` of
discovery from the participant's creation, everyone seen judged): before that it sends
only what takes nothing from a live controller (the GRX's zero axes), so a newcomer
started while the first holds control leaves it alone
(tests/integration/test_two_executives.py). Two processes in different PID namespaces
with the same host name and pid would take each other for a leftover.

Only the service (``executive/service/run.py``, its supervision loop) runs a ``PeerWatch``;
``decide`` holds the rules as plain data, testable without DDS.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from cyclonedds.builtin import (
    BuiltinDataReader,
    BuiltinTopicDcpsParticipant,
    BuiltinTopicDcpsPublication,
)
from cyclonedds.core import DDSException, InstanceState, Policy, Qos
from cyclonedds.domain import DomainParticipant

from executive.core.tree import Executive
from executive.service import notify
from executive.service.protocol import STATUS_TOPIC
from executive.service.status import state_line
from executive.wire import dds

log = structlog.get_logger(__name__)

GRACE_S = 1.0
# s of discovery (from the participant's creation) before "no other controller" is believed
# (recovery); a participant seen less than GRACE_S ago that decide has not judged waits too
SETTLE_S = 1.5


@dataclass(frozen=True)
class Peer:
    """A participant as discovery shows it."""

    key: str  # its GUID
    host: str = ""  # __Hostname (CycloneDDS peers only)
    pid: int | None = None  # __Pid
    process: str = ""  # __ProcessName
    started_ns: int | None = None  # from USER_DATA (executive/wire/dds.py); None: not said

    @property
    def name(self) -> str:
        """``host:pid`` as the executive's status names itself, else the GUID."""
        if self.host and self.pid is not None:
            return f"{self.host}:{self.pid}"
        return f"participant {self.key}"

    def order(self) -> tuple[int, str]:
        """Sorts earlier-started first; the GUID breaks a tie the same way everywhere."""
        assert self.started_ns is not None
        return (self.started_ns, self.key)


@dataclass(frozen=True)
class Verdict:
    """What the watch concludes, for the executive and its status."""

    conflicts: tuple[str, ...] = ()  # keep this executive from starting missions
    notes: tuple[str, ...] = ()  # reported only (newcomers that stand by)
    stand_by: str = ""  # an executive that came first commands: stop our mission (why)
    leftovers: tuple[str, ...] = ()  # discovery records of processes gone, ignored


def _when(ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ns / 1e9))


def decide(
    me: Peer,
    peers: Mapping[str, Peer],
    writes: Mapping[str, frozenset[str]],
    seen: Mapping[str, float],
    now: float,
    *,
    grace: float = GRACE_S,
    alive: Callable[[int], bool] | None = None,
    command_topics: frozenset[str] = frozenset(),
) -> Verdict:
    """The rules (see the module's docstring) on plain data.

    ``peers``: participant key -> what discovery says of it (ours included or not);
    ``writes``: participant key -> the watched topics it writes (status, commands);
    ``seen``: participant key -> ``now``'s clock when the watch first saw it;
    ``alive``: whether a pid of this host runs (default: ``os.kill(pid, 0)``).
    """
    is_alive = alive or pid_alive
    conflicts: list[str] = []
    notes: list[str] = []
    leftovers: list[str] = []
    stand_by = ""
    for key in sorted(writes):
        topics = writes[key]
        if key == me.key or not topics:
            continue
        peer = peers.get(key, Peer(key))
        if _gone(peer, me, is_alive):
            leftovers.append(f"{peer.name}: still listed by discovery, but that process is gone")
            continue
        young = now - seen.get(key, now) < grace
        if STATUS_TOPIC in topics:
            if peer.started_ns is None:
                if young:
                    continue  # its participant record may not have come yet
                conflicts.append(
                    f"executive {peer.name} is on this DDS domain and does not say when it "
                    "started (an older version?): no mission starts here while it may "
                    "command the robot; stop one of the two"
                )
            elif me.started_ns is None or peer.order() < me.order():
                conflicts.append(
                    f"executive {peer.name} commands this robot (on this DDS domain since "
                    f"{_when(peer.started_ns)}, before this one): this one stands by; "
                    "stop one of the two"
                )
                stand_by = stand_by or (
                    f"another executive commands this robot: {peer.name} was on the DDS "
                    "domain first; this one stands by"
                )
            else:
                notes.append(
                    f"executive {peer.name} is on this DDS domain too (since "
                    f"{_when(peer.started_ns)}, after this one) and stands by: stop it"
                )
            continue
        commands = sorted(topics & command_topics)
        foreign = key in peers and peer.started_ns is None  # not made by dds.make_participant
        if commands and (foreign or not young):
            process = f" ({peer.process})" if peer.process else ""
            conflicts.append(
                f"{', '.join(commands)} written by {peer.name}{process}, which is not an "
                "executive: no mission starts while another controller can command the robot"
            )
    return Verdict(tuple(conflicts), tuple(notes), stand_by, tuple(leftovers))


def _gone(peer: Peer, me: Peer, alive: Callable[[int], bool]) -> bool:
    """A participant of a process of this host that is no more (or has our pid: an earlier
    start of this service in a container, PID 1 every time)."""
    if not peer.host or peer.host != me.host or peer.pid is None:
        return False
    return peer.pid == me.pid or not alive(peer.pid)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: it runs
        return True
    return True


def peer_from_qos(key: str, qos: Qos | None) -> Peer:
    """What a participant's discovery QoS says of it: host, pid, process, start time."""
    props: dict[str, str] = {}
    started = None
    for policy in qos or ():
        if isinstance(policy, Policy.Property):
            props[policy.key] = policy.value
        elif isinstance(policy, Policy.Userdata):
            started = parse_started(policy.data)
    pid = props.get("__Pid", "")
    return Peer(
        key,
        host=props.get("__Hostname", ""),
        pid=int(pid) if pid.isdigit() else None,
        process=props.get("__ProcessName", ""),
        started_ns=started,
    )


def parse_started(data: bytes | None) -> int | None:
    """``started_ns`` from USER_DATA written by ``dds.participant_qos`` (None otherwise)."""
    if not data or not data.startswith(dds.STARTED_PREFIX):
        return None
    digits = data[len(dds.STARTED_PREFIX) :].split(b" ", 1)[0]
    return int(digits) if digits.isdigit() else None


def _alive(sample: Any) -> bool:
    info = sample.sample_info
    return bool(info.valid_data) and info.instance_state == InstanceState.Alive


class PeerWatch:
    """Discovery readers, what they have shown so far, and the verdict.

    ``poll()`` and ``watch()`` from one thread (the service's supervision loop); the
    verdict is an immutable object, readable from any thread.
    """

    def __init__(
        self,
        participant: DomainParticipant,
        *,
        command_topics: frozenset[str] = frozenset(),
        grace: float = GRACE_S,
        clock: Callable[[], float] = time.monotonic,
        host: str | None = None,
        pid: int | None = None,
        since: float | None = None,
    ) -> None:
        self.grace = grace
        # when discovery began (the participant's creation, on ``clock``): ``alone`` counts
        # its settling time from there; None: from the first poll
        self.since = since
        self.clock = clock
        self.command_topics = command_topics  # the robot's (the adapter's command_topics)
        key = str(participant.guid)
        own = peer_from_qos(key, participant.get_qos())
        if own.started_ns is None:  # not made by dds.make_participant: say it now
            try:
                participant.set_qos(dds.participant_qos())
            except DDSException as e:  # then peers see an executive of unknown start
                log.warning("could not say when this participant started", error=str(e))
            own = peer_from_qos(key, participant.get_qos())
        self.me = Peer(
            key,
            host=socket.gethostname() if host is None else host,
            pid=os.getpid() if pid is None else pid,
            started_ns=own.started_ns,
        )
        self._peers: dict[str, Peer] = {}
        self._writers: dict[str, tuple[str, str]] = {}  # writer key -> (participant, topic)
        self._seen: dict[str, float] = {}
        self._participants = BuiltinDataReader(participant, BuiltinTopicDcpsParticipant)
        self._publications = BuiltinDataReader(participant, BuiltinTopicDcpsPublication)
        self.verdict = Verdict()
        self._stood_by = ""  # the run we stopped, so it is said once
        self._first_poll: float | None = None
        self._last_poll: float | None = None
        self._undecided = False  # someone the newest verdict has not judged yet (its grace)

    def alone(self, settle: float = SETTLE_S) -> bool | None:
        """Whether no other controller is on the domain: None until the newest verdict comes
        from ``settle`` s of discovery (from ``since``, else from the first poll), then that
        verdict's answer. Any thread."""
        first = self._first_poll if self.since is None else self.since
        last = self._last_poll
        if first is None or last is None or last - first < settle or self._undecided:
            return None
        v = self.verdict
        return not (v.conflicts or v.notes or v.stand_by)

    def poll(self) -> Verdict:
        """Take what discovery brought since the last call; the verdict now."""
        now = self.clock()
        if self._first_poll is None:
            self._first_poll = now
        for sample in _take_all(self._participants):
            key = str(sample.key)
            if _alive(sample):
                self._peers[key] = peer_from_qos(key, sample.qos)
                self._seen.setdefault(key, now)
            elif sample.sample_info.instance_state != InstanceState.Alive:
                self._peers.pop(key, None)
                self._seen.pop(key, None)
                self._writers = {w: v for w, v in self._writers.items() if v[0] != key}
        for sample in _take_all(self._publications):
            if _alive(sample):
                if sample.topic_name == STATUS_TOPIC or sample.topic_name in self.command_topics:
                    owner = str(sample.participant_key)
                    self._writers[str(sample.key)] = (owner, sample.topic_name)
                    self._seen.setdefault(owner, now)
            elif sample.sample_info.instance_state != InstanceState.Alive:
                self._writers.pop(str(sample.key), None)
        writes: dict[str, set[str]] = {}
        for owner, topic in self._writers.values():
            writes.setdefault(owner, set()).add(topic)
        self.verdict = decide(
            self.me,
            self._peers,
            {k: frozenset(v) for k, v in writes.items()},
            self._seen,
            now,
            grace=self.grace,
            command_topics=self.command_topics,
        )
        # a participant that writes what we watch and is younger than the grace may not be
        # judged yet (decide skips it): ``alone`` waits for it (a process gone is no one)
        self._undecided = any(
            key != self.me.key
            and now - self._seen.get(key, now) < self.grace
            and not _gone(self._peers.get(key, Peer(key)), self.me, pid_alive)
            for key in writes
        )
        self._last_poll = now  # after the verdict: ``alone`` never pairs it with an older one
        return self.verdict

    def watch(self, executive: Executive) -> Verdict:
        """Poll, and act on the executive: its conflicts, a mission to stop, the log."""
        before = self.verdict
        verdict = self.poll()
        _changes(before.conflicts, verdict.conflicts, "another controller of this robot", log.error)
        _changes(before.notes, verdict.notes, "another executive stands by", log.warning)
        for gone in sorted(set(verdict.leftovers) - set(before.leftovers)):
            log.info("ignored: discovery lists a process that is gone", peer=gone)
        if verdict.conflicts != executive.conflicts:
            executive.conflicts = verdict.conflicts  # the tick thread reads the new tuple
            notify.status(
                "ANOTHER CONTROLLER: " + "; ".join(verdict.conflicts)
                if verdict.conflicts
                else state_line(executive)
            )
        run = executive.run  # a hint from this thread; the stop checks again on the tick thread
        if verdict.stand_by and run is not None and self._stood_by != run.run_id:
            run_id, reason = run.run_id, verdict.stand_by
            self._stood_by = run_id
            log.error("standing by: stopping our mission", run_id=run_id, reason=reason)
            executive.submit(lambda: _stop_run(executive, run_id, reason))
        return verdict


def _stop_run(executive: Executive, run_id: str, reason: str) -> tuple[bool, str]:
    """On the tick thread: stop ``run_id`` if it still runs (ABORTED, ``reason``)."""
    if executive.run is None or executive.run.run_id != run_id:
        return False, "no longer running"
    return executive.stop_mission(reason)


def _changes(
    before: tuple[str, ...], after: tuple[str, ...], event: str, say: Callable[..., Any]
) -> None:
    """Log each message once when it appears (with ``say``) and once when it goes."""
    for message in after:
        if message not in before:
            say(event, detail=message)
    for message in before:
        if message not in after:
            log.info(event + ": gone", detail=message)


def _take_all(reader: BuiltinDataReader) -> list[Any]:
    out: list[Any] = []
    while True:
        batch = reader.take(N=256)
        out.extend(batch)
        if len(batch) < 256:
            return out
