"""A scenario in real time: the real service and simulator processes over the robot's real
wire (``atom-executive test --realtime``), as the integration tests run them.

``executive.harness.stack`` starts the robot's simulator (its ``sim_argv`` for the
scenario's world, recording every command it receives) and the service (the scenario's
profile and missions directory) on a leased loopback domain; the mission is started by a
signed request, and the run is followed through the service's own run record
(``<data_dir>/runs/<run_id>.jsonl``, read as it is written), which is what the
simulated-time run is judged from too. Events are applied as a person would: faults and
buttons through the simulator's fault topic (``LockstepPart.fault_client``), requests
signed over DDS. A robot whose wire is not DDS says where the processes meet on its own
(``LockstepPart.real_wire``: the GRX's zenoh endpoints and its fault client). What the robot was doing when an event came is the status's
``telemetry.motion`` (the adapter's ``motion()``, as in simulated time); the joints at
the end are the run's MCAP file's last measured ones.

Slow (real seconds, and the processes' start), so it proves, it does not iterate: the
parity test (``tests/scenario/test_parity.py``) runs scenarios both ways and requires the
same result, causes and node order.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from executive.harness.stack import Stack, running_stack
from executive.scenario import nodes
from executive.scenario.model import BodyCheck, Event, Scenario
from executive.scenario.simtime import lockstep_part
from executive.scenario.story import Fired, Outcome, Pose, missed, read_story
from executive.seam.lockstep import FaultClient, RealWire
from executive.seam.profile import load_profile

POLL_S = 0.01  # the run record is read this often
STATUS_HZ = 10.0  # the service's status heartbeat: the motion it tells is at most this old


class RealtimeRun:
    """One scenario against the real processes (``run()``), its files in ``workdir``."""

    def __init__(self, scenario: Scenario, workdir: Path) -> None:
        self.scenario = scenario
        self.workdir = workdir
        self.profile = load_profile(scenario.profile)
        self.part = lockstep_part(self.profile)
        self.fired = {e.index: Fired(e) for e in scenario.events}

    def run(self) -> Outcome:
        s = self.scenario
        wall = time.perf_counter()
        if s.mission_file.parent.resolve() != s.missions_dir.resolve():
            return self._error(
                f"--realtime runs a mission of its missions directory, not {s.mission_file}", wall
            )
        with running_stack(self.workdir, keep=True) as stack:
            real_wire = getattr(self.part, "real_wire", None)
            wire: RealWire | None = real_wire(stack.workdir) if real_wire else None
            try:
                config: dict[str, Any] = {
                    "profile": s.profile,
                    "missions_dir": str(s.missions_dir),
                    "status_hz": STATUS_HZ,
                    **(wire.service_config if wire else {}),
                }
                if "interface" in s.world:
                    config["interface"] = s.world["interface"]
                stack.write_config(**config)
                argv = [*self.part.sim_argv(self.profile, s.world, s.base)]
                # how to see the sim is up: its wire's or its part's ``sim_ready`` (its own
                # status), if it has one; else the simulated Atom's status
                ready = getattr(self.part, "sim_ready", None)
                if wire is not None:
                    argv, ready = [*argv, *wire.sim_args], wire.sim_ready
                try:
                    stack.start_sim(*argv, record=True, sim_ready=ready)
                    stack.start_service()
                except (TimeoutError, OSError) as e:  # said as the scenario's error
                    logs = {f"{n} log": stack.log_path(n) for n in ("sim", "executive")}
                    return self._error(_not_up(e, logs), wall, logs)
                faults = wire.fault_client() if wire else self.part.fault_client(stack.dds)
                return self._follow(stack, faults, wall)
            finally:
                if wire is not None:
                    wire.close()

    def _error(self, why: str, wall: float, files: dict[str, Path] | None = None) -> Outcome:
        return Outcome(None, list(self.fired.values()), {}, None, error=why, simulated=False,
                       wall=time.perf_counter() - wall, files=files or {})  # fmt: skip

    def _follow(self, stack: Stack, faults: FaultClient, wall: float) -> Outcome:
        s = self.scenario
        reply = stack.client.request("start", {"mission": s.mission, "params": dict(s.params)}, 10)
        if reply.code != 0:
            return self._error(f"the start was refused: {reply.message}", wall)
        run_id, started = reply.message, time.monotonic()
        record = stack.data_dir / "runs" / f"{run_id}.jsonl"
        follow = _Record(record, s, started)
        timed_out = ""
        while True:
            now = time.monotonic()
            for event in follow.read(now):
                self._apply(event, stack, faults, started)
            if follow.ended_at < math.inf:
                if not follow.pending and now >= follow.ended_at + s.tail:
                    break
            elif now - started >= s.timeout:
                timed_out = follow.running() or s.mission
                stack.client.request("stop", timeout=10)
                follow.ended_at = now
            time.sleep(POLL_S)
        duration = time.monotonic() - started
        stack.stop("executive")  # the run's MCAP file finished
        stack.stop("sim")
        for fired in self.fired.values():
            if fired.at is None and not fired.missed:
                fired.missed = missed(fired.event, started=True)
        mcap = stack.data_dir / "runs" / f"{run_id}.mcap"
        return Outcome(
            story=read_story(record) if record.is_file() else None,
            fired=[self.fired[i] for i in sorted(self.fired)],
            joints=last_joints(mcap),
            body={i: last_joints(mcap, until=at) for i, at in follow.body_at.items()},
            base=last_base(mcap),
            body_base={i: last_base(mcap, until=at) for i, at in follow.body_at.items()},
            record=stack.record_path,
            files={"run record": record, "run MCAP": mcap, "sim record": stack.record_path},
            timed_out=timed_out,
            simulated=False,
            duration=duration,
            wall=time.perf_counter() - wall,
            cpu=0.0,
        )

    def _apply(self, event: Event, stack: Stack, faults: FaultClient, started: float) -> None:
        fired = self.fired[event.index]
        fired.moving = _moving(stack)
        # when it goes out, as simulated time stamps it: a request acts before its reply
        # is back (a resume's first joystick axes came before it, inside its pause)
        fired.t = time.monotonic()
        fired.at = fired.t - started
        try:
            if event.action == "fault":
                faults.fault(event.value)
            elif event.action == "clear":
                faults.clear(event.value)
            elif event.action == "press":
                faults.press(event.value)
            else:
                args = {"by": "scenario"} if event.value == "pause" else {}
                reply = stack.client.request(event.value, args, timeout=10)
                fired.reply = reply.message
        except Exception as e:  # noqa: BLE001 - said in the report, the scenario goes on
            fired.reply = f"failed: {type(e).__name__}: {e}"


class _Record:
    """The run's record as the service writes it: what happened (node transitions, the
    end), and so which events and body checks are due."""

    def __init__(self, path: Path, scenario: Scenario, started: float) -> None:
        self.path = path
        self.offset = 0
        self.pending = [(started + e.seconds, e) for e in scenario.events if e.when == "at"]
        self.waiting = [e for e in scenario.events if e.when != "at"]
        self.seen: dict[str, set[str]] = {}  # node path -> statuses seen
        self.body = list(scenario.expect.body)
        self.body_at: dict[int, float] = {}  # each body check: the record's wall time
        self.ended_at = math.inf

    def read(self, now: float) -> list[Event]:
        """Read what was written since; the events due now, in order."""
        self.offset, lines = _new_lines(self.path, self.offset)
        for line in lines:
            if line.get("event") == "node":
                path = nodes.mission_path(str(line["node"]))
                self.seen.setdefault(path, set()).add(str(line["status"]))
                for check in [c for c in self.body if _happened(c, self.seen)]:
                    self.body.remove(check)
                    self.body_at[check.index] = float(line["ts"])
            elif line.get("event") == "state" and "result" in line:
                self.ended_at = min(self.ended_at, now)
        for e in [e for e in self.waiting if _happened(e, self.seen)]:
            self.waiting.remove(e)
            self.pending.append((now + e.seconds, e))
        if self.ended_at < math.inf:
            self.waiting.clear()  # a node's start or end never comes now
        due = sorted((p for p in self.pending if p[0] <= now), key=lambda p: (p[0], p[1].index))
        for item in due:
            self.pending.remove(item)
        return [e for _, e in due]

    def running(self) -> str:
        """The last node seen RUNNING, by mission path ("" if none)."""
        running = [p for p, statuses in self.seen.items() if "RUNNING" in statuses]
        return running[-1] if running else ""


def _not_up(error: Exception, logs: dict[str, Path]) -> str:
    """Why the stack did not come up, in one line: the stack's words, and each process's
    last log line (the logs go with the scenario's files: ``--keep`` keeps them)."""
    said = [str(error).split("; see ")[0]]
    for name, path in logs.items():
        lines = path.read_text(errors="replace").splitlines() if path.is_file() else []
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        if last:
            said.append(f"{name}: {last[:300]}")
    return "; ".join(said)


def _new_lines(path: Path, offset: int) -> tuple[int, list[dict[str, Any]]]:
    """The whole lines appended to ``path`` since ``offset``, and the new offset."""
    if not path.is_file():
        return offset, []
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    lines = [json.loads(line) for line in data[:end].decode().splitlines() if line.strip()]
    return offset + end, lines


def _happened(event: Event | BodyCheck, seen: dict[str, set[str]]) -> bool:
    for path, statuses in seen.items():
        if nodes.matches(event.node, path):
            if event.when == "on_start" and statuses - {"INVALID"}:
                return True
            if event.when == "on_end" and statuses & {"SUCCESS", "FAILURE"}:
                return True
    return False


def _moving(stack: Stack) -> tuple[str, ...] | None:
    """What the service's status says moves now (``telemetry.motion``); None: unknown."""
    try:
        document = json.loads(stack.client.status(1.0).document)
        motion = document["telemetry"]["motion"]
    except Exception:  # noqa: BLE001 - unknown: judged from the commands instead
        return None
    if motion.get("moving") is None:
        return None
    return tuple(motion.get("reasons", ())) if motion["moving"] else ()


def last_base(mcap: Path, until: float = math.inf) -> Pose | None:
    """The base's last pose in a run's MCAP file (as of ``until``, wall clock s); None if
    the robot reported none."""
    if not mcap.is_file():
        return None
    from mcap.reader import make_reader

    out: Pose | None = None
    with mcap.open("rb") as f:
        for _, _, message in make_reader(f).iter_messages(topics=["/robot/base"]):
            if message.log_time > until * 1e9:
                break
            p = json.loads(message.data).get("position") or {}
            if all(isinstance(p.get(k), int | float) for k in ("x", "y", "yaw")):
                out = (float(p["x"]), float(p["y"]), float(p["yaw"]))
    return out


def last_joints(mcap: Path, until: float = math.inf) -> dict[str, float]:
    """The last measured position of every joint in a run's MCAP file, by name (as of
    ``until``, wall clock s: the run record's ``ts``)."""
    if not mcap.is_file():
        return {}
    from mcap.reader import make_reader

    out: dict[str, float] = {}
    with mcap.open("rb") as f:
        for _, channel, message in make_reader(f).iter_messages(log_time_order=True):
            if message.log_time > until * 1e9:
                break
            if channel.topic.startswith("/robot/joints/"):
                for name, q in json.loads(message.data)["position"].items():
                    if q is not None:
                        out[name] = float(q)
    return out
