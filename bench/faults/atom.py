"""The fault matrix's Atom rows: the simulated Atom and the service, a fault while both move.

The simulated Atom and the service run as separate processes on a leased loopback
domain (``executive.harness.stack``); the service runs as systemd would start it, with a
notify socket and ``WatchdogSec`` (5 s, as ``deploy/atom-executive.service``). Each row
starts the ``busy`` mission (``bench/missions/busy.yaml``: the base driving to a far tag
while the right arm sweeps), injects its fault through the sim's fault topic while both
move, and reads what happened from outside the service (``bench.faults.watch``). What
each row requires is in ``bench.faults`` (the matrix's description).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from cyclonedds.core import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from bench.faults import stall
from bench.faults.rows import (
    TIMEOUT,
    Row,
    judge_run_record,
    kill_and_restart,
    make_ready,
    run_row,
)
from bench.faults.watch import (
    HoldReport,
    RawRequests,
    RecordTail,
    fault_time,
    hold_report,
    run_events,
    run_result,
    wait_record_flushed,
)
from bench.harness import MISSIONS, WATCHDOG_S, LogWatch, reset_until_accepted
from executive.core.safety import STALL_S
from executive.harness.stack import Stack, running_stack
from executive.motion import native
from executive.robots.simkit.faults import parse_fault
from executive.seam.profile import load_profile
from executive.service import faultpoints
from executive.service.protocol import REPLY_TOPIC, REQUEST_QOS, STATUS_TOPIC, Code
from executive.service.requests import MAX_FIELD
from executive.wire.gen.own.atom_executive.msg import Reply_, Status_

FAR_TAGS = (3, 5)  # (2, 1.5) and (-1, 0) on the sim's default map: 3.4 m apart


class Matrix:
    """The stack the rows run in, and what every row needs from it."""

    def __init__(self, stack: Stack, *, amr_speed: float = 0.5) -> None:
        self.stack = stack
        self.amr_speed = amr_speed
        self.interface = ""
        self.armed = False
        self.tag = FAR_TAGS[0]
        self.tail = RecordTail(stack.workdir / "sim-record.jsonl")
        self.log = LogWatch(stack.log_path("executive"))
        self.notify = stack.notify_socket(WATCHDOG_S)
        self._raw: RawRequests | None = None

    # -- the stack -----------------------------------------------------------------------

    def boot(self, interface: str = "seed") -> None:
        """(Re)start the sim and the service speaking ``interface``."""
        st = self.stack
        st.stop("executive")
        st.stop("sim")
        st.write_config(missions_dir=str(MISSIONS), interface=interface)
        record = st.workdir / f"sim-record-{interface}.jsonl"
        st.start_sim(
            "--interface", interface, "--amr-speed", str(self.amr_speed), "--record", str(record)
        )
        self.tail = RecordTail(record)
        self.interface = interface
        self.start_service(armed=False)

    def start_service(self, *, armed: bool, wait: bool = True) -> int:
        """Start (or restart) the service; ``armed``: with the tick-hang fault point;
        ``wait``: until its status says it is ready (as ``Stack.start_service``)."""
        env = self.notify.env()
        if armed:
            env[faultpoints.ENV] = "tick-hang"
        proc = self.stack.start_service(env=env, wait=wait)
        self.armed = armed
        return proc.pid

    def close(self) -> None:
        """Delete the raw request writer and reader, before the stack's participant goes."""
        if self._raw is not None:
            self._raw.close()

    @property
    def raw(self) -> RawRequests:
        if self._raw is None:
            self._raw = RawRequests(self.stack.dds, self.stack.key)
        return self._raw

    # -- helpers for rows ----------------------------------------------------------------

    def ready(self) -> None:
        """No mission, no latch, no fault left over from the previous row."""
        if self.stack.sim.active_faults():
            self.stack.sim.clear_all()
        make_ready(self.stack.client)

    def start_busy(self, **params: Any) -> str:
        """Start ``busy`` towards the far tag; its run id once the status shows the run."""
        self.tag = FAR_TAGS[1] if self.tag == FAR_TAGS[0] else FAR_TAGS[0]
        reply = self.stack.client.request(
            "start", {"mission": "busy", "params": {"tag": self.tag, **params}}
        )
        if reply.code != 0:
            raise RuntimeError(f"start busy refused: {reply.message}")
        run_id = str(reply.message)
        if self.stack.client.wait_status(lambda s: s.run_id == run_id, TIMEOUT) is None:
            raise RuntimeError(f"run {run_id} never showed in the status")
        return run_id

    def wait_moving(self, run_id: str) -> bool:
        """Until the base is driving and the arm sweeping (as the status tree shows)."""

        def moving(s: Any) -> bool:
            nodes = {n.path.rsplit("/", 1)[-1]: n for n in s.tree}
            drive = nodes.get("Drive")
            arm = [
                n for name, n in nodes.items() if name.startswith("Arm") and n.status == "RUNNING"
            ]
            return (
                s.run_id == run_id
                and drive is not None
                and drive.feedback == "driving"
                and bool(arm)
            )

        return self.stack.client.wait_status(moving, 15.0) is not None

    def wait_ended(self, run_id: str, timeout: float = 60.0) -> Any:
        """The status once run ``run_id`` has ended (None if it did not in time)."""
        return self.stack.client.wait_status(
            lambda s: s.run_id != run_id and s.state != "RUNNING", timeout
        )

    def start_moving(self, row: Row) -> tuple[Any, str]:
        """From a clean start (``ready``), ``busy`` until the arm and the base move: the
        record's mark and the service's log from before it, and the run."""
        self.ready()
        mark = self.tail.mark()
        self.log.skip()
        run_id = self.start_busy()
        row.expect(self.wait_moving(run_id), "the mission never got the arm and the base moving")
        return mark, run_id

    def block_mid_move(self, row: Row) -> tuple[Any, str, float, float | None]:
        """The service restarted with ``gil-hog`` armed, ``busy`` moving, then its
        interpreter blocked (SIGUSR2): the record's mark, the run, when the block was asked
        for and when the service logged it (None: never)."""
        st = self.stack
        st.stop("executive")
        pid = st.start_service(env={**self.notify.env(), faultpoints.ENV: "gil-hog"}).pid
        self.armed = False  # (not tick-hang: the row that needs it restarts the service)
        mark, run_id = self.start_moving(row)
        t_signal = time.monotonic()
        os.kill(pid, signal.SIGUSR2)
        blocked = self.log.seen("fault point: the interpreter is blocked", t_signal - 0.5)
        return mark, run_id, t_signal, blocked

    def stays(self, predicate: Callable[[Any], bool], seconds: float) -> bool:
        """The status satisfies ``predicate`` now and for ``seconds`` (nothing resumes)."""
        client = self.stack.client
        if not predicate(client.status()):
            return False
        return client.wait_status(lambda s: not predicate(s), seconds) is None

    def record_after(self, mark: Any, t: float) -> Any:
        wait_record_flushed(self.stack.sim, t)
        return self.tail.since(mark)

    def judge_hold(self, row: Row, report: HoldReport, *, base: bool = True) -> None:
        row.hold_ms = report.hold_ms
        row.motion_after = report.motion_after
        row.details["hold"] = report.as_dict()
        row.expect(report.motion_after == 0, f"motion after the trigger: {report.first_motion}")
        row.expect(report.streamed == 0 or report.hold_ms is not None, "no hold seen in the record")
        if base:
            row.expect(report.cancels >= 1, "no AMR CANCEL_TASK after the trigger")
        row.expect(report.moves_after == 0, "an AMR task was sent after the trigger")

    def after_reset(self, row: Row, mark: Any, t_reset: float, tol: float = 0.02) -> None:
        """IDLE and staying so, with nothing sent that moves (the record after the reset)."""
        client = self.stack.client
        idle = client.wait_status(lambda s: s.state == "IDLE" and s.safety == "CLEAR", TIMEOUT)
        row.expect(idle is not None, f"not IDLE after the reset: {client.status().state}")
        row.expect(
            self.stays(lambda s: s.state == "IDLE" and not s.mission, 1.0),
            "something resumed after the reset",
        )
        rec = self.record_after(mark, time.monotonic())
        moving = rec.motion_commands(t_reset, tol=tol)  # the hold still in flight is no motion
        tasks = [
            e
            for e in rec.event_commands("amr_cmd", after=t_reset)
            if e.fields.get("command_type") == "MOVE_TO_TAG"
        ]
        row.expect(
            not moving and not tasks,
            f"after the reset: {len(moving)} motion commands, {len(tasks)} AMR tasks",
        )


# -- the rows ----------------------------------------------------------------------------


def latch_row(
    m: Matrix,
    row: Row,
    spec: str,
    code: str,
    *,
    tol: float = 0.02,
    reset_while_present: str | None = "refused",
    why_accepted: str = "",
) -> None:
    """A trigger that must latch SAFE_STOP: inject while the arm and the base move."""
    st, client = m.stack, m.stack.client
    kind = parse_fault(spec).kind
    row.details["expected"] = (
        f"SAFE_STOP ({code}); hold, no motion after; AMR CANCEL_TASK; start refused; reset "
        + ("refused" if reset_while_present else "refused or accepted")
        + " while present, accepted after clearing; IDLE, nothing resumed"
    )
    mark, run_id = m.start_moving(row)
    t_inject = time.monotonic()
    st.sim.inject_spec(spec)
    status = client.wait_status(
        lambda s: s.safety == "SAFE_STOP" and s.state == "SAFE_STOP", TIMEOUT
    )
    row.details["status_ms"] = round((time.monotonic() - t_inject) * 1e3, 1)
    status = status or client.status()
    row.reaction, row.reason = status.state, status.safety_reason or status.last_reason
    row.latched = status.safety == "SAFE_STOP"
    row.expect(status.state == "SAFE_STOP" and row.latched, f"no SAFE_STOP within {TIMEOUT:g} s")
    row.expect(
        f"{code}:" in status.safety_reason, f"reason is not {code}: {status.safety_reason!r}"
    )
    judge_run_record(row, m.stack.data_dir, run_id, "SAFE_STOP")
    # latched: no start; reset refused while the cause is present
    reply = client.request("start", {"mission": "busy"})
    row.expect(
        reply.code == Code.REFUSED and "latched" in reply.message,
        f"start while latched: {reply.message}",
    )
    reply = client.request("reset")
    row.reset_present = "refused" if reply.code != 0 else "accepted"
    row.details["reset_while_present"] = reply.message
    if reset_while_present is not None:
        row.expect(
            row.reset_present == reset_while_present,
            f"reset while present {row.reset_present}: {reply.message}",
        )
    elif row.reset_present == "accepted":
        row.reset_present = "accepted*"
        row.notes.append(f"reset accepted while the fault is still set: {why_accepted}")
    if reply.code == 0:  # already reset: clearing leaves nothing to reset
        t_reset = time.monotonic()
        st.sim.clear(kind)
        row.reset_clear = "(already reset) IDLE"
        accepted = True
    else:
        st.sim.clear(kind)
        accepted, attempts, t_reset = reset_until_accepted(m.stack.client, 5.0)
        row.reset_clear = f"accepted -> IDLE ({attempts} tries)" if accepted else "REFUSED"
    row.expect(accepted, "reset refused after the cause was cleared")
    seen = m.log.seen("safe stop", t_inject - 0.5)
    row.expect(seen is not None, "no 'safe stop' in the service's log")
    rec = m.record_after(mark, time.monotonic())
    t_fault = fault_time(rec, kind, after=t_inject - 1.0)
    row.expect(not math.isnan(t_fault), "the sim's record has no line for the fault")
    m.judge_hold(row, hold_report(rec, t_fault, seen or t_inject, t_reset, tol=tol))
    m.after_reset(row, mark, t_reset, tol)


def mission_failure_row(
    m: Matrix,
    row: Row,
    *,
    words: tuple[str, ...],
    before_start: str = "",
    mid: str = "",
    **params: Any,
) -> None:
    """A fault the mission must fail on (FAILED with the node's path), without a latch."""
    st, client = m.stack, m.stack.client
    row.details["expected"] = (
        f"FAILED with the node's path ({', '.join(words)}); no latch; no motion after; "
        "control handed back; nothing resumed"
    )
    m.ready()
    if before_start:
        st.sim.inject_spec(before_start)
    mark = m.tail.mark()
    m.log.skip()
    t_inject = time.monotonic()
    run_id = m.start_busy(**params)
    if mid:
        row.expect(m.wait_moving(run_id), "the mission never got the arm and the base moving")
        t_inject = time.monotonic()
        st.sim.inject_spec(mid)
    status = m.wait_ended(run_id, 30.0)
    row.details["status_ms"] = round((time.monotonic() - t_inject) * 1e3, 1)
    status = status or client.status()
    row.reaction, row.reason = status.state, status.last_reason
    row.latched = status.safety == "SAFE_STOP"
    row.expect(status.state == "FAILED", f"ended {status.state}, not FAILED")
    row.expect(not row.latched, "latched SAFE_STOP: a mission failure is not a safety trigger")
    row.expect(
        all(w in status.last_reason for w in words), f"reason lacks {words}: {status.last_reason!r}"
    )
    row.expect(
        status.last_reason.startswith("Atom/"),
        f"reason lacks the node's path: {status.last_reason!r}",
    )
    judge_run_record(row, m.stack.data_dir, run_id, "FAILED")
    seen = m.log.seen("mission ended", t_inject - 0.5)
    reply = client.request("reset")
    row.reset_present = "n/a (not latched)" if reply.code == 0 else f"refused: {reply.message}"
    row.details["reset"] = reply.message
    for spec in (before_start, mid):
        if spec:
            st.sim.clear(parse_fault(spec).kind)
    row.reset_clear = "n/a (not latched)"
    row.expect(
        m.stays(lambda s: s.state == "FAILED" and not s.mission, 1.0),
        "something resumed after the failure",
    )
    t_end = time.monotonic()
    rec = m.record_after(mark, t_end)
    t_fault = fault_time(rec, parse_fault(mid or before_start).kind, after=t_inject - 1.0)
    report = hold_report(rec, t_fault, seen or t_end, t_end)
    m.judge_hold(row, report, base=False)
    if not report.streamed:
        row.notes.append("no joint command was sent at all (the arm never moved)")
    release = [
        e
        for e in rec.event_commands("switch_upper_control", after=t_fault)
        if not e.fields.get("flag")
    ]
    row.expect(bool(release), "upper-body control was not handed back")


def bad_requests_row(m: Matrix, row: Row) -> None:
    """Every bad request gets its refusal; the mission runs on to SUCCEEDED."""
    client, raw = m.stack.client, m.raw
    row.details["expected"] = (
        "each refused in words, with its code; the mission runs on to SUCCEEDED"
    )
    m.ready()
    before = client.status()
    run_id = m.start_busy(sweeps=2)
    row.expect(m.wait_moving(run_id), "the mission never got the arm and the base moving")
    stale = time.time_ns() - 10 * 60 * 10**9
    valid_start = raw.make("start", {"mission": "busy"})
    big = "x" * (MAX_FIELD + 1)
    cases: list[tuple[str, Any, Code, str]] = [
        ("garbled JSON", raw.make("start", '{"mission": "busy",'), Code.BAD_REQUEST, "not JSON"),
        (
            "args not an object",
            raw.make("status", "[1, 2]", signed=False),
            Code.BAD_REQUEST,
            "object",
        ),
        ("unknown verb", raw.make("dance", signed=False), Code.UNKNOWN_VERB, "unknown verb"),
        ("oversized args", raw.make("validate", {"mission": big}), Code.BAD_REQUEST, "longer than"),
        (
            "oversized request_id",
            raw.make("status", request_id="r" * (MAX_FIELD + 1), signed=False),
            Code.BAD_REQUEST,
            "longer than",
        ),
        (
            "empty request_id",
            raw.make("status", request_id="", signed=False),
            Code.BAD_REQUEST,
            "must not be empty",
        ),
        (
            "stop without HMAC",
            raw.make("stop", signed=False),
            Code.UNAUTHENTICATED,
            "bad signature",
        ),
        (
            "stop, wrong HMAC key",
            raw.make("stop", key=os.urandom(32)),
            Code.UNAUTHENTICATED,
            "bad signature",
        ),
        (
            "stop, unknown client",
            raw.make("stop", client_id="intruder"),
            Code.UNAUTHENTICATED,
            "unknown client",
        ),
        (
            "stop, stale timestamp",
            raw.make("stop", timestamp_ns=stale),
            Code.UNAUTHENTICATED,
            "timestamp",
        ),
        ("start while running", valid_start, Code.REFUSED, "is running"),
        ("replayed nonce", valid_start, Code.UNAUTHENTICATED, "replayed"),
        (
            "start unknown mission",
            raw.make("start", {"mission": "nope"}),
            Code.NOT_FOUND,
            "no mission",
        ),
        (
            "start, bad params",
            raw.make("start", {"mission": "busy", "params": {"sweeps": 0}}),
            Code.INVALID,
            "sweeps",
        ),
        ("reload while running", raw.make("reload"), Code.REFUSED, "only while idle"),
    ]
    answers = []
    for label, request, code, words in cases:
        reply = raw.ask(request, TIMEOUT)
        got = "no reply" if reply is None else f"{Code(reply.code).name}: {reply.message[:80]}"
        answers.append({"request": label, "expected": code.name, "reply": got})
        row.expect(
            reply is not None and reply.code == code and words in reply.message, f"{label}: {got}"
        )
        status = client.status()
        row.expect(
            status.run_id == run_id and status.state == "RUNNING",
            f"after {label}: {status.state} {status.run_id}",
        )
    row.details["requests"] = answers
    end = m.wait_ended(run_id, 60.0)
    final = end or client.status()
    row.expect(final.state == "SUCCEEDED", f"the mission ended {final.state}: {final.last_reason}")
    row.expect(final.tick_errors == before.tick_errors, "tick errors while answering")
    refused = sum(1 for a in answers if a["reply"].split(":")[0] == a["expected"])
    row.reaction = f"{refused}/{len(cases)} refused; mission {final.state}"
    row.reason = ", ".join(sorted({a["expected"] for a in answers}))
    row.latched = final.safety == "SAFE_STOP"
    row.expect(not row.latched, "latched")


class OnDomain:
    """Each executive's latest status, and every reply to a request (each service on the
    domain answers it): what a row with two executives must tell apart."""

    def __init__(self, m: Matrix) -> None:
        self.m, p = m, m.stack.dds
        self.host = socket.gethostname()
        qos = Qos(Policy.Reliability.Reliable(0), Policy.History.KeepLast(256))
        self.statuses: DataReader[Any] = DataReader(p, Topic(p, STATUS_TOPIC, Status_), qos=qos)
        self.replies: DataReader[Any] = DataReader(
            p, Topic(p, REPLY_TOPIC, Reply_), qos=REQUEST_QOS
        )
        self.latest: dict[str, Any] = {}

    def status(self, pid: int | None, what: Callable[[Any], bool], timeout: float) -> Any:
        """The status of the executive ``pid`` once ``what`` holds (or the last one seen)."""
        deadline = time.monotonic() + timeout
        while True:
            for s in self.statuses.take(N=256):
                if isinstance(s, Status_):
                    self.latest[s.executive_id] = s
            s = self.latest.get(f"{self.host}:{pid}")
            if (s is not None and what(s)) or time.monotonic() >= deadline:
                return s
            time.sleep(0.05)

    def ask(self, request: Any, count: int) -> list[Any]:
        """Send; the first ``count`` replies (fewer after ``TIMEOUT``)."""
        self.m.raw.writer.write(request)
        got: list[Any] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            got += [r for r in self.replies.take(N=64) if r.request_id == request.request_id]
            time.sleep(0.02)
        return got

    def instances(self, count: int) -> list[str | None]:
        """The instance ids of the services that answer ``status`` (None: not given)."""
        status = self.m.raw.make("status", signed=False)
        return [json.loads(r.payload or "{}").get("instance") for r in self.ask(status, count)]

    def start(self, args: dict[str, Any], instance: str | None) -> list[Any]:
        """A start signed for the service ``instance`` (executive/service/auth.py); every reply."""
        nonce = f"{instance}/{os.urandom(16).hex()}" if instance else None
        return self.ask(self.m.raw.make("start", args, nonce=nonce), 2)

    def start_second(self) -> int:
        """``atom-executive run`` again (``executive2``): same keys, its own data dir."""
        st = self.m.stack
        config = yaml.safe_load(st.config_path.read_text())
        config["data_dir"] = str(st.workdir / "data2")
        (st.workdir / "config2.yaml").write_text(yaml.safe_dump(config))
        return st.spawn("executive2", "run", "--config", str(st.workdir / "config2.yaml")).pid

    def close(self) -> None:
        self.statuses.__del__()
        self.replies.__del__()


RECOVERY_NOTE = (
    "the newcomer joins while the first is idle; one that joins while the first holds "
    "upper-body control leaves it alone (tests/integration/test_two_executives.py)"
)


def upper_cmd_rate(m: Matrix, mark: Any, seconds: float = 1.0) -> float:
    """Joint commands per second sent on rt/upper/cmd over the next ``seconds`` (by their
    source timestamps: the writers' rate, however late the sim took them)."""
    t0 = time.monotonic()
    time.sleep(seconds)
    t1 = time.monotonic()
    sent = m.record_after(mark, t1).commands("upper_cmd", after=t0)
    return sum(1 for c in sent if c.sent <= t1) / (t1 - t0)


def second_executive_row(m: Matrix, row: Row) -> None:
    """A second ``atom-executive run`` joins the domain: it stands by, the first runs
    ``busy`` (the start accepted once), a start signed for the second is refused naming the
    first, the robot hears one streamer (no doubled command rate); stopped, the second
    releases nothing and the first's mission runs on."""
    st = m.stack
    row.details["expected"] = (
        "the newcomer stands by; the first's start runs on it alone; a start for the "
        "newcomer refused naming the first; one command stream (the rate of one executive); "
        "stopping the newcomer sends no switch_upper_control false, the first runs on"
    )
    m.ready()
    domain, first = OnDomain(m), st.pid("executive")
    ours = domain.instances(1)
    mark = m.tail.mark()
    second = domain.start_second()
    names = f"executive {domain.host}:{first} commands this robot"
    try:
        # heard the robot: its look for a killed instance's leftovers is over (RECOVERY_NOTE)
        s2 = domain.status(
            second, lambda s: names in s.not_ready and "not known" not in s.not_ready, 30.0
        )
        stands_by = s2 is not None and names in s2.not_ready
        row.expect(stands_by, f"the second does not stand by: {s2}")
        row.reaction, row.reason = ("stands by", s2.not_ready) if stands_by else ("-", "-")
        s1 = domain.status(first, lambda s: any(f":{second}" in p for p in s.problems), TIMEOUT)
        row.expect(s1 is not None and bool(s1.problems), "the first's status omits the second")
        # one signed start, addressed to the domain as any is, signed for the first: it runs
        # there only (refused by the second, for its instance or for the first's presence)
        theirs = [i for i in domain.instances(2) if i not in ours] or [None]
        m.tag = FAR_TAGS[1] if m.tag == FAR_TAGS[0] else FAR_TAGS[0]
        answers = domain.start({"mission": "busy", "params": {"tag": m.tag}}, ours[0])
        accepted = [r.message for r in answers if r.code == Code.OK]
        row.expect(len(accepted) == 1, f"the first's start accepted {len(accepted)} times")
        run_id = accepted[0] if accepted else ""
        row.expect(m.wait_moving(run_id), "the mission never got the arm and the base moving")
        # a start signed for the second (its instance from its status reply): refused there
        answers = domain.start({"mission": "busy"}, theirs[0])
        row.details["start_on_second"] = [(Code(r.code).name, r.message) for r in answers]
        refused = not any(r.code == Code.OK for r in answers) and any(
            r.code == Code.REFUSED and names in r.message for r in answers
        )
        row.expect(refused, f"start on the second: {row.details['start_on_second']}")
        row.reset_present = "start refused" if refused else "start not refused"
        # one command stream: the rate of one executive
        rate, want = upper_cmd_rate(m, mark), load_profile().command_hz
        row.details["upper_cmd_hz"] = {"measured": round(rate, 1), "one_executive": want}
        row.expect(0.4 * want < rate < 1.3 * want, f"rt/upper/cmd at {rate:.0f} Hz, not {want:g}")
        # the second stopped: nothing released; the first's mission runs on
        stopping = time.monotonic()
        row.expect(st.stop("executive2") == 0, "the second did not exit 0 on SIGTERM")
        s1 = domain.status(first, lambda s: not s.problems, 5.0)
        rec = m.record_after(mark, time.monotonic())
        off = rec.event_commands("switch_upper_control", after=stopping)
        row.motion_after = sum(1 for e in off if not e.fields["flag"])
        row.expect(row.motion_after == 0, "stopping the second released upper-body control")
        row.expect(
            s1 is not None and (s1.state, s1.run_id, s1.safety) == ("RUNNING", run_id, "CLEAR"),
            f"the first's mission after the second stopped: {s1}",
        )
        row.latched = False
        row.reset_clear = f"one stream ({rate:.0f} Hz); first runs on"
        row.notes.append(RECOVERY_NOTE)
    finally:
        st.stop("executive2")
        domain.close()
    m.stack.client.request("stop")  # only the first answers now


def killed_row(m: Matrix, row: Row) -> None:
    """SIGKILL mid-mission; restarted (as systemd's Restart=on-failure), it is IDLE, closes
    the killed run's record as ABORTED, releases the control and the base task the killed
    instance left, and refuses the captured signed start replayed to it."""
    st, client = m.stack, m.stack.client
    row.details["expected"] = (
        "restarted: READY=1, IDLE, no mission, nothing resumed; the killed run's record closed "
        "ABORTED (crash); upper control released and the base task canceled within the "
        "profile's restart_safe_s of the restarted process's first line (time to hold); the "
        "start that was captured before the kill, replayed, refused as signed for another "
        "instance"
    )
    m.ready()
    mark = m.tail.mark()
    raw = m.raw  # the matrix's own: closed with it, never left to the garbage collector
    m.tag = FAR_TAGS[1] if m.tag == FAR_TAGS[0] else FAR_TAGS[0]
    captured = raw.make("start", {"mission": "busy", "params": {"tag": m.tag}})
    reply = raw.ask(captured, TIMEOUT)
    row.expect(reply is not None and reply.code == 0, f"the captured start: {reply}")
    run_id = str(reply.message) if reply is not None else ""
    row.expect(m.wait_moving(run_id), "the mission never got the arm and the base moving")

    def released(pid: int, timeout: float) -> bool:  # control released, the base task canceled
        ok = st.sim.wait_status(lambda s: not s.is_upper_control, timeout) is not None
        row.expect(ok, "upper-body control left on after the restart")
        return ok

    restarted = kill_and_restart(
        row,
        st,
        m.notify,
        start=lambda: m.start_service(armed=True, wait=False),  # for the tick-hang row next
        made_safe=released,
        bound=load_profile().restart_safe_s,
        sent="upper-body control released",
    )
    old, pid, t_kill = restarted.old, restarted.pid, restarted.killed
    status = (
        client.wait_status(lambda s: s.executive_id.endswith(f":{pid}"), TIMEOUT) or client.status()
    )
    row.reaction = f"restarted {status.state}; replay refused"
    row.reason = f"pid {old} killed; pid {pid} up, mission {status.mission or 'none'}"
    row.latched = status.safety == "SAFE_STOP"
    row.expect(
        status.state == "IDLE" and not status.mission and not row.latched,
        f"after the restart: {status.state} {status.mission}",
    )
    replayed = raw.ask(captured, TIMEOUT)
    row.details["replay"] = replayed.message if replayed is not None else None
    row.expect(
        replayed is not None
        and replayed.code == Code.UNAUTHENTICATED
        and "another service instance" in replayed.message,
        f"the replayed start: {replayed}",
    )
    row.expect(
        m.stays(lambda s: s.state == "IDLE" and not s.mission and s.runs == 0, 2.0),
        "something resumed (or the replay ran) after the restart",
    )
    end = run_result(run_events(st.data_dir, run_id))
    row.details["killed_run_record"] = end
    row.expect(
        end is not None and end.get("result") == "ABORTED" and "crash" in str(end.get("reason")),
        f"the killed run's record: {end}",
    )
    rec = m.record_after(mark, time.monotonic())
    tasks = [
        e
        for e in rec.event_commands("amr_cmd", after=t_kill)
        if e.fields.get("command_type") == "MOVE_TO_TAG"
    ]
    row.motion_after = len(rec.motion_commands(t_kill))
    row.expect(
        row.motion_after == 0 and not tasks,
        f"after the kill: {row.motion_after} motion commands, {len(tasks)} AMR tasks",
    )
    amr = [e.fields.get("command_type") for e in rec.event_commands("amr_cmd", after=t_kill)]
    row.details["amr_commands_after_kill"] = amr
    row.expect("CANCEL_TASK" in amr, f"the left base task was not canceled: {amr}")


def full_disk_row(m: Matrix, row: Row) -> None:
    """The data dir's disk fills mid-mission: a 256 KiB tmpfs mounted in the service's own
    mount namespace (``unshare --mount``, as root), filled from outside through
    ``/proc/PID/root``. Run records and MCAP writes fail; each is counted and shown in the
    status' problems, the tick loop and the mission go on, nothing raises."""
    st, client = m.stack, m.stack.client
    row.details["expected"] = (
        "record writes fail with ENOSPC: a problem in the status, no traceback; the mission "
        "runs on (RUNNING, CLEAR, ticks advancing); a stop is answered"
    )
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        row.reaction, row.reason = "skipped", "needs root and unshare for a real full disk"
        row.notes.append("not run: a full disk here needs a tmpfs in a mount namespace (root)")
        return
    m.ready()
    st.stop("executive", signal.SIGTERM)
    data = st.workdir / "full-disk"
    data.mkdir(exist_ok=True)
    config = yaml.safe_load(st.config_path.read_text())
    config["data_dir"] = str(data)
    config_path = st.workdir / "config-full-disk.yaml"
    config_path.write_text(yaml.safe_dump(config))
    script = (
        'mount -t tmpfs -o size=256k tmpfs "$1" && exec "$2" -m executive.cli run --config "$3"'
    )
    with st.log_path("executive").open("ab") as log:
        proc = subprocess.Popen(
            [
                *("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"),
                *(str(data), sys.executable, str(config_path)),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**st.env(), **m.notify.env()},
        )
    st.procs["executive"] = proc  # stack.close() ends it; unshare and sh exec: one pid
    up = client.wait_status(
        lambda s: s.executive_id.endswith(f":{proc.pid}") and not s.not_ready, 30
    )
    row.expect(up is not None, "the service on the small disk never came up")
    fd = os.open(f"/proc/{proc.pid}/root{data}/filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)  # unbuffered: the ENOSPC comes here, not at close
    except OSError as e:
        row.details["filled"] = e.strerror
    finally:
        os.close(fd)
    run_id = m.start_busy()
    row.expect(m.wait_moving(run_id), "the mission never got the arm and the base moving")
    full = client.wait_status(
        lambda s: any("No space left on device" in p for p in s.problems), TIMEOUT
    )
    status = full or client.status()
    row.details["problems"] = list(status.problems)
    row.expect(full is not None, f"no full-disk problem in the status: {list(status.problems)}")
    ticks = status.ticks
    row.expect(
        client.wait_status(lambda s: s.ticks > ticks + 25, TIMEOUT) is not None,
        "the tick loop stopped",
    )
    status = client.status()
    row.expect(
        status.state == "RUNNING" and status.safety == "CLEAR" and status.run_id == run_id,
        f"the mission did not go on: {status.state} {status.safety}",
    )
    reply = client.request("stop")
    row.expect(reply.code == 0, f"stop: {reply.message}")
    log = st.log_path("executive").read_text(errors="replace")
    row.expect("Traceback" not in log, "a traceback in the service's log")
    row.reaction = "problem reported; mission went on"
    row.reason = (list(status.problems) or ["-"])[0][:80]
    row.latched = False
    st.stop("executive", signal.SIGTERM)
    m.start_service(armed=m.armed)  # back on the stack's own data dir for the next row


def tick_hang_row(m: Matrix, row: Row) -> None:
    """The tick loop hangs: the watchdog pings stop, an e-stop is still held by the fast
    path; killed and restarted as systemd would, it latches on the e-stop still pressed."""
    st, client = m.stack, m.stack.client
    row.details["expected"] = (
        "no WATCHDOG=1 for longer than WatchdogSec; SAFE_STOP internal in the status (published by "
        "the supervisor); the e-stop held by the fast path (no motion after); reset answered BUSY; "
        "restarted: SAFE_STOP (e-stop still pressed), reset refused, "
        "accepted after release; IDLE, nothing resumed"
    )
    if not m.armed:
        m.start_service(armed=True)
    mark, run_id = m.start_moving(row)
    t0 = time.monotonic()
    row.expect(
        m.notify.wait_for("WATCHDOG=1", after=t0, timeout=WATCHDOG_S) is not None,
        "no watchdog pings before the hang",
    )
    pid = st.pid("executive")
    assert pid is not None
    t_signal = time.monotonic()
    os.kill(pid, signal.SIGUSR2)
    t_hung = m.log.seen("fault point: the tick loop hangs", t_signal - 0.5)
    row.expect(t_hung is not None, "the tick loop never hung")
    t_hung = t_hung or t_signal
    t_inject = time.monotonic()
    st.sim.inject("estop-soft")
    seen = m.log.seen("safe stop", t_inject - 0.5)
    row.expect(seen is not None, "the fast path did not trip (no 'safe stop' logged)")
    # the supervisor publishes the status while no tick does, with the latch in it
    status = client.wait_status(lambda s: s.safety == "SAFE_STOP", TIMEOUT) or client.status()
    row.details["status_while_hung"] = {
        "state": status.state,
        "safety": status.safety,
        "reason": status.safety_reason,
    }
    row.expect(status.safety == "SAFE_STOP", f"status while hung: {status.safety}")
    row.expect(
        "estop:" in status.safety_reason and "internal: tick loop" in status.safety_reason,
        f"status while hung does not name both causes: {status.safety_reason!r}",
    )
    # a reset cannot be answered by a loop that does not tick: BUSY, in words
    reply = client.request("reset", timeout=TIMEOUT)
    row.reset_present = f"{Code(reply.code).name} (loop hung)"
    row.details["reset_while_hung"] = reply.message
    row.expect(reply.code != 0, f"reset accepted while the loop hangs: {reply.message}")
    # the pings: none after the hang, for longer than WatchdogSec
    pings = [at for at, _ in m.notify.since(0.0, "WATCHDOG=1") if at > t0]
    last = max([at for at in pings if at <= t_hung + 0.05], default=t0)
    late = m.notify.wait_for(
        "WATCHDOG=1",
        after=t_hung + 0.05,
        timeout=max(0.0, last + WATCHDOG_S + 1.0 - time.monotonic()),
    )
    gap = (late or time.monotonic()) - last
    row.details["ping_gap_s"] = round(gap, 2)
    row.expect(late is None, f"a WATCHDOG=1 ping {(late or t_hung) - t_hung:.2f} s into the hang")
    row.reaction = f"pings stopped {gap:.1f} s; fast-path hold; status {status.safety} (internal)"
    row.reason = "no WATCHDOG=1 > WatchdogSec"
    row.latched = True
    restart_after_hang(m, row, mark, t_inject, seen)


def restart_after_hang(m: Matrix, row: Row, mark: Any, t_inject: float, seen: float | None) -> None:
    """What systemd does next: kill it (SIGABRT; SIGKILL here: no core dump), restart it."""
    st, client = m.stack, m.stack.client
    t_kill = time.monotonic()
    st.stop("executive", signal.SIGKILL)
    m.start_service(armed=False)
    after = client.wait_status(lambda s: s.state == "SAFE_STOP", TIMEOUT) or client.status()
    row.details["after_restart"] = {"state": after.state, "safety_reason": after.safety_reason}
    row.expect(
        after.state == "SAFE_STOP" and "estop:" in after.safety_reason,
        f"restarted with the e-stop pressed: {after.state}",
    )
    row.expect(not after.mission, "a mission resumed after the restart")
    reply = client.request("reset")
    row.expect(reply.code == Code.REFUSED, f"reset with the e-stop still pressed: {reply.message}")
    st.sim.clear("estop-soft")
    accepted, attempts, t_reset = reset_until_accepted(m.stack.client, 5.0)
    row.expect(accepted, "reset refused after the e-stop was released")
    row.reset_clear = f"accepted -> IDLE ({attempts} tries)" if accepted else "REFUSED"
    rec = m.record_after(mark, time.monotonic())
    t_fault = fault_time(rec, "estop-soft", after=t_inject - 1.0)
    m.judge_hold(row, hold_report(rec, t_fault, seen or t_inject, t_kill))
    m.after_reset(row, mark, t_reset)
    row.notes.append("restarted with the e-stop still pressed, the new service latches it at once")


def _nothing_between_the_reflex_and_its_hold(m: Matrix, row: Row, rec: Any, hold: Any) -> None:
    """Nothing left between the reflex taking the e-stop sample and its hold (``hold``, the
    first command from which on nothing moves): the reflex's own log line says how long
    after the sample its hold left. What the stream sent before the sample reached the
    service (the sim publishes its state at its own pace) was sent before anyone knew."""
    held = [e for e in m.log.events if e.get("event") == "e-stop reflex held"]
    if not held or held[-1].get("sample_to_hold_us") is None:
        row.expect(False, "no 'e-stop reflex held' line with its timing")
        return
    t_sample = hold.sent - float(held[-1]["sample_to_hold_us"]) / 1e6
    late = [c for c in rec.commands(after=t_sample + 0.001) if c.sent < hold.sent]
    row.details["commands_between_the_reflex_and_its_hold"] = len(late)
    row.expect(not late, f"{len(late)} commands between the reflex's sample and its hold")


def gil_hog_row(m: Matrix, row: Row) -> None:
    """The interpreter blocked (``gil-hog``: one C call holding the GIL for 3 s) when the
    e-stop comes: the reflex holds and cancels in C meanwhile; Python latches afterwards."""
    st, client = m.stack, m.stack.client
    row.details["expected"] = (
        "the hold and the CANCEL_TASK sent while no Python thread runs, within a few ms of "
        "the e-stop; no motion after the hold; SAFE_STOP (estop) once Python runs again; "
        "reset refused while pressed, accepted after release; IDLE, nothing resumed"
    )
    mark, _, _, blocked = m.block_mid_move(row)
    row.expect(blocked is not None, "the interpreter was never blocked")
    t_inject = time.monotonic()
    st.sim.inject("estop-soft")
    free = m.log.seen(
        "fault point: the interpreter runs again", t_inject, faultpoints.GIL_HOG_S + 5
    )
    row.expect(free is not None, "the interpreter never ran again")
    seen = m.log.seen("safe stop", t_inject - 0.5)
    status = client.wait_status(lambda s: s.state == "SAFE_STOP", TIMEOUT) or client.status()
    row.reaction = f"held in C while blocked; {status.state} after"
    row.reason, row.latched = status.safety_reason, status.safety == "SAFE_STOP"
    row.expect(row.latched and "estop:" in status.safety_reason, f"latched: {status.safety_reason}")
    reply = client.request("reset")
    row.reset_present = "refused" if reply.code != 0 else "accepted"
    row.expect(reply.code != 0, f"reset with the e-stop still pressed: {reply.message}")
    st.sim.clear("estop-soft")
    accepted, attempts, t_reset = reset_until_accepted(m.stack.client, 5.0)
    row.reset_clear = f"accepted -> IDLE ({attempts} tries)" if accepted else "REFUSED"
    row.expect(accepted, "reset refused after the e-stop was released")
    rec = m.record_after(mark, time.monotonic())
    t_fault = fault_time(rec, "estop-soft", after=t_inject - 1.0)
    row.expect(not math.isnan(t_fault), "the sim's record has no line for the e-stop")
    m.judge_hold(row, hold_report(rec, t_fault, seen or t_inject, t_reset))
    # stricter than from the latch on: nothing that moves from the reflex's hold on. The
    # hold is the first command after the e-stop from which on nothing moves (the native
    # stream may send a period of its move between the e-stop and the reflex's hold, as
    # the Python one does when not blocked); the Python stream sends nothing else
    first = next(
        (
            c
            for c in sorted(rec.commands(after=t_fault), key=lambda c: c.sent)
            if not rec.motion_commands(c.sent - 1e-6, before=t_reset)
        ),
        None,
    )
    cancels = [
        e.t
        for e in rec.event_commands("amr_cmd", after=t_fault)
        if e.fields.get("command_type") == "CANCEL_TASK"
    ]
    t_free = free or t_fault
    row.expect(first is not None and first.sent < t_free, "no hold while Python was blocked")
    row.expect(bool(cancels) and cancels[0] < t_free, "no cancel while Python was blocked")
    if first is not None:
        _nothing_between_the_reflex_and_its_hold(m, row, rec, first)
        row.motion_after = len(rec.motion_commands(first.sent - 1e-6, before=t_reset))
        row.expect(row.motion_after == 0, "motion after the reflex's hold")
        row.details["hold_sent_ms_after_the_estop"] = round((first.sent - t_fault) * 1e3, 2)
        row.details["hold_sent_s_before_python_ran"] = round(t_free - first.sent, 3)
    if cancels:
        row.details["cancel_ms_after_the_estop"] = round((cancels[0] - t_fault) * 1e3, 2)
    m.after_reset(row, mark, t_reset)


def stall_row(m: Matrix, row: Row) -> None:
    """The interpreter blocked mid-move (``gil-hog``: the GIL held 3 s), no other fault:
    every stream goes on and holds within its dead man (``bench/faults/stall.py`` judges the
    record); SAFE_STOP (internal, the stall) once Python runs again; reset accepted."""
    client = m.stack.client
    profile = load_profile()
    row.details["expected"] = (
        "every commanded stream streamed while blocked and held within "
        f"{stall.hold_bound_s(profile) * 1e3:.0f} ms of the block; no motion after the hold; "
        "SAFE_STOP (internal) once Python runs; reset accepted; IDLE, nothing resumed"
    )
    row.details["stream_mode"] = native.mode(profile.stream_mode)
    mark, run_id, t_signal, blocked = m.block_mid_move(row)
    free = m.log.seen(
        "fault point: the interpreter runs again", t_signal, faultpoints.GIL_HOG_S + 5
    )
    row.expect(blocked is not None and free is not None, "the interpreter was never blocked")
    status = client.wait_status(lambda s: s.state == "SAFE_STOP", 3.0) or client.status()
    row.reaction = f"{row.details['stream_mode']} stream; {status.state} after"
    row.reason, row.latched = status.safety_reason, status.safety == "SAFE_STOP"
    if blocked is None or free is None:
        return
    stalled = free - blocked >= STALL_S
    if not stalled:  # a late renewal: the moves resumed and the mission runs on to its end
        m.wait_ended(run_id)
    accepted, attempts, t_reset = reset_until_accepted(m.stack.client, 5.0)
    row.reset_clear = f"accepted -> IDLE ({attempts} tries)" if accepted else "REFUSED"
    row.expect(accepted, "reset refused after the stall")
    stall.judge_stall(row, m.record_after(mark, time.monotonic()), profile, blocked, free)
    if stalled and stall.latched_or_noted(row, status.state):
        m.after_reset(row, mark, t_reset)


# -- the matrix --------------------------------------------------------------------------

REVOKE_WHY = (
    "control_revoked is a cause only while a mission holds control, and none does after the stop"
)

RowBody = Callable[[Matrix, Row], None]


def latch(spec: str, code: str, **kwargs: Any) -> RowBody:
    return lambda m, r: latch_row(m, r, spec, code, **kwargs)


def failure(words: tuple[str, ...], **kwargs: Any) -> RowBody:
    return lambda m, r: mission_failure_row(m, r, words=words, **kwargs)


SEED, SDK_1_1 = "seed", "sdk-1.1.0"
# fmt: off
ROWS: list[tuple[str, str, str, RowBody]] = [  # key, the fault as shown, interface, row
    ("estop-soft", "e-stop soft (estop-soft)", SEED, latch("estop-soft", "estop")),
    ("estop-hard", "e-stop hard (estop-hard)", SEED, latch("estop-hard", "estop")),
    ("estop-amr", "e-stop AMR flag (estop-amr)", SEED, latch("estop-amr", "estop")),
    ("bms-upper", "BMS alarm upper (bms-alarm:upper=4)", SEED, latch("bms-alarm:upper=4", "bms_alarm")),
    ("bms-lower", "BMS alarm lower (bms-alarm:lower=0x80)", SEED, latch("bms-alarm:lower=0x80", "bms_alarm")),
    ("amr-estop", "AMR e-stop (amr-estop)", SEED, latch("amr-estop", "amr_estop")),
    ("servo-error", "servo error (servo-error:right_elbow_pitch)", SEED, latch("servo-error:right_elbow_pitch=0x2310", "servo_error")),
    ("dropout", "state dropout (dropout:upper_state)", SEED, latch("dropout:upper_state", "stale_state", tol=0.1)),
    ("control-revoked", "upper control revoked (revoke-upper-control)", SEED, latch("revoke-upper-control", "control_revoked", reset_while_present=None, why_accepted=REVOKE_WHY)),
    ("battery-critical", "battery critical (battery=4)", SEED, latch("battery=4", "battery_critical")),
    ("amr-failed", "AMR FAILED (amr-failure)", SEED, failure(("Drive", "amr_failed"), mid="amr-failure")),
    ("fsm-unconfirmed", "FSM never confirmed (refuse-fsm)", SEED, failure(("Set FSM", "never confirmed"), before_start="refuse-fsm", fsm="stand", fsm_timeout=1.5)),
    ("bad-requests", "bad and unauthenticated requests", SEED, bad_requests_row),
    ("second-executive", "second executive on the domain", SEED, second_executive_row),
    ("killed", "service killed (SIGKILL), restarted, start replayed", SEED, killed_row),
    ("tick-hang", "tick loop hung (watchdog) + e-stop", SEED, tick_hang_row),
    ("gil-hog", "interpreter blocked (GIL held 3 s) + e-stop", SEED, gil_hog_row),
    ("stall", "interpreter blocked (GIL held 3 s) mid-move", SEED, stall_row),
    ("full-disk", "data dir's disk full mid-mission (tmpfs)", SEED, full_disk_row),
    ("estop-di", "e-stop DI flag (estop-di, sdk-1.1.0)", SDK_1_1, latch("estop-di", "estop")),
]
# fmt: on
KEYS = [key for key, *_ in ROWS]
LISTING = [f"{key:18s} {label} [{interface}]" for key, label, interface, _ in ROWS]


def run_rows(
    only: list[str] | None,
    workdir: Path | None = None,
    *,
    keep: bool = False,
    amr_speed: float = 0.5,
) -> list[Row]:
    """The Atom's rows (``only``: these keys; None: all), in one stack, each in the
    interface it needs."""
    selected = [r for r in ROWS if only is None or r[0] in only]
    rows: list[Row] = []
    if not selected:
        return rows
    with running_stack(workdir, keep=keep) as stack:
        m = Matrix(stack, amr_speed=amr_speed)
        for key, label, interface, body in selected:
            row = Row(key, label)

            def attempt(interface: str = interface, body: RowBody = body, row: Row = row) -> None:
                if m.interface != interface:
                    m.boot(interface)
                body(m, row)

            rows.append(run_row(row, label, attempt))
        m.close()
        if keep or workdir is not None:
            print(f"work directory (logs, records): {stack.workdir}")
    return rows
