"""The e-stop episode every e-stop figure runs, written once.

``python -m bench.parts.estop``, ``bench.parts.reflex``, ``bench.parts.stream`` and
``bench.floor`` share it:

- ``write_mission``: ``estop_bench`` (or the C robot's ``estop_c_bench``), the base driving
  to a tag (a task to cancel) while one move engages the upper, lower and hands streams (a
  hold has something to hold: every stream publishing at 500 Hz);
- ``Peer``: an independent subscriber process (``bench.estop_peer``, or its C twin) that
  stamps, on the same CLOCK_MONOTONIC, the arrival of each stream's hold and of every AMR
  command;
- ``EstopRig``: the service, the bench robot (``bench.robot``) and the two peers on a
  leased domain (``estop_rig``), and their events: ``engage`` (the mission started, all
  three streams publishing), ``events`` (e-stops, each to its holds and its cancel, then
  cleared and reset; ``Blocker``: with the service's interpreter blocked first);
- ``relay_events``: the same publisher and peers with a plain relay in the middle, the
  Python one (``bench.estop_peer relay``) or the C one (``bench.floor``): the floor.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bench.harness import (
    LOOPBACK_URI,
    PEER_PRIORITY,
    ROOT,
    LogWatch,
    fifo_argv,
    reset_until_accepted,
    thread_policies,
)
from bench.robot import MARKERS, BenchRobot, base_pose
from bench.service_probe import ProbedService
from executive.harness.stack import Stack, running_stack
from executive.robots.atom.interface import Interface
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.profile import RobotProfile, load_profile
from executive.service import faultpoints
from executive.wire import dds
from executive.wire.robot_io import Side

STREAM_NAMES = ("upper", "lower", "hands")
WAIT_S = 5.0  # any one reply, engagement or reaction
RNG = np.random.default_rng(5)  # the phases: random, and the same every run


class Peer:
    """A ``bench.estop_peer`` process, or its C twin, and what it has reported so far.

    The twin (``bench/floor_c/peer.c``) speaks the ``holds`` and ``amr`` roles' protocol
    and stamps on CycloneDDS's receive thread: the holds' peer receives the service's
    whole 500 Hz stream, and a Python listener with that backlog under a CPU hog stamped
    the holds late (the instrument in the p99, not the executive). ``bench.floor.build``
    makes it every later Peer's (``use_c``), so one run's executive and relay figures
    are stamped by the same kind; ``python -m bench.parts.estop`` alone builds no C and runs
    Python. The C peer runs under SCHED_FIFO ``PEER_PRIORITY`` where granted
    (``scheduling``). ``argv``: another process that speaks the protocol (the C relay).
    """

    _c: ClassVar[tuple[Path, tuple[Path, ...]] | None] = None
    C_ROLES = ("holds", "amr")

    @classmethod
    def use_c(cls, program: Path | None, tables: tuple[Path, ...] = ()) -> None:
        """The built C peer and its marker tables (upper, lower, hands); None: Python."""
        cls._c = None if program is None else (program, tables)

    def __init__(
        self,
        stack_env: dict[str, str],
        role: str,
        c: bool | None = None,
        argv: list[str] | None = None,
    ) -> None:
        """``c``: None, the C peer where one is built and has ``role``; True, the C peer
        (an error if there is none); False, the Python one."""
        if self._c is not None and not self._c[0].exists():
            Peer.use_c(None)  # its build directory is gone with the run that made it
        native = self._c if c is not False and role in self.C_ROLES else None
        if c and native is None:
            raise RuntimeError(f"no C peer for {role!r}: bench.floor.build makes one")
        self.scheduling = "SCHED_OTHER"
        if argv is not None:
            self.kind = "C"
        elif native is not None:  # real-time where granted: it stamps, it must not wait
            program, tables = native
            argv = [str(program), role, *(map(str, tables) if role == "holds" else ())]
            argv, self.scheduling = fifo_argv(argv, PEER_PRIORITY)
            self.kind = "C"
        else:
            argv = [sys.executable, "-m", "bench.estop_peer", role]
            self.kind = "Python"
        env = {"CYCLONEDDS_URI": LOOPBACK_URI, **stack_env}  # as estop_peer's setup()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            text=True,
        )
        self.holds: dict[int, dict[str, int]] = {}
        self.amr: list[tuple[int, str]] = []
        self.ready = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, name=f"peer-{role}", daemon=True)
        self._thread.start()
        if not self.wait(lambda: self.ready, 30):
            self.close()
            raise TimeoutError(f"the {self.kind} estop peer {role} did not start")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            parts = line.split()
            with self._cond:
                if parts == ["ready"]:
                    self.ready = True
                elif len(parts) == 4 and parts[0] == "H":
                    self.holds.setdefault(int(parts[2]), {})[parts[1]] = int(parts[3])
                elif len(parts) == 3 and parts[0] == "A":
                    self.amr.append((int(parts[2]), parts[1]))
                self._cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def cancel_after(self, t_ns: int) -> int | None:
        """Arrival of the first CANCEL_TASK stamped after ``t_ns``."""
        with self._cond:
            return next((t for t, kind in self.amr if t > t_ns and kind == "CANCEL_TASK"), None)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def write_mission(
    directory: Path, profile: RobotProfile, name: str = "estop_bench", duration: float | None = 120
) -> None:
    """``name``: the base to a tag while one move engages all three streams. With a
    ``duration`` it is slow; without, the speed caps pace it from wherever the joints are,
    so validation accepts it whatever the caps become, and a robot whose joints do not
    follow (the C robot) never lets it arrive: the streams are engaged at every e-stop."""
    moves = {}
    for topic, joint in (
        ("upper", "right_shoulder_pitch"),
        ("lower", "left_knee"),
        ("hands", "right_index"),
    ):
        j = profile.joints[joint]
        base = float(base_pose(profile, topic)[j.index])
        moves[joint] = round(base + 0.3 * (j.upper - base), 3)
    joints = ", ".join(f"{n}: {q}" for n, q in moves.items())
    paced = f"\n          duration: {duration:g}" if duration is not None else ""
    (directory / f"{name}.yaml").write_text(
        f"""# bench/episode.py: something to hold (all three joint streams) and a task to cancel.
mission: {name}
description: Drive the base to a tag while one move engages upper, lower and hands.
tree:
  parallel:
    name: Drive and move
    children:
      - navigate_to_tag:
          tag: 3
          timeout: 600
      - move_joints:
          name: {"Slow move" if duration is not None else "Move away from the start pose"}
          joints: {{{joints}}}{paced}
          timeout: 600
"""
    )


def reset(stack: Stack) -> None:
    """Reset until accepted, at once (the watchdog may still see the cleared cause)."""
    accepted, _, _ = reset_until_accepted(stack.client, WAIT_S, every=0.005, reply_timeout=WAIT_S)
    if not accepted:
        raise RuntimeError(f"reset refused: {stack.client.request('reset').message}")


def engage(stack: Stack, robot: BenchRobot, k: int, timeout: float = WAIT_S) -> Any:
    """Start ``estop_bench`` and wait until all three streams publish; its RUNNING status."""
    robot.set_base()
    robot.commands_seen()  # forget what came before
    reply = stack.client.request("start", {"mission": "estop_bench"}, timeout=timeout)
    if reply.code != 0:
        raise RuntimeError(f"start refused: {reply.message}")
    running = stack.client.wait_status(lambda s: s.state == "RUNNING", timeout)
    if running is None:
        raise RuntimeError(f"event {k}: the status never showed the mission running")
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while seen != set(STREAM_NAMES):
        if time.monotonic() > deadline:
            raise RuntimeError(f"event {k}: streams never engaged (saw {sorted(seen)})")
        seen |= robot.commands_seen()
        time.sleep(0.001)
    return running


class Blocker:
    """The service's interpreter blocked in a GIL-holding call (``gil-hog``: SIGUSR2, 3 s)
    before each e-stop; ``free`` says when it ran again (its log line)."""

    def __init__(self, stack: Stack) -> None:
        pid = stack.pid("executive")
        assert pid is not None
        self.pid = pid
        self.log = LogWatch(stack.log_path("executive"))

    def block(self, k: int) -> None:
        self.log.skip()
        os.kill(self.pid, signal.SIGUSR2)
        if self.log.line("fault point: the interpreter is blocked", None, WAIT_S, 0.002) is None:
            raise RuntimeError(f"event {k}: the service's interpreter was never blocked")
        time.sleep(RNG.uniform(0.05, 0.1))  # blocked by now, wherever its threads were

    def free(self, timeout: float) -> dict[str, Any] | None:
        return self.log.line("fault point: the interpreter runs again", None, timeout, 0.002)


@dataclass
class EstopRig:
    """The running service, the bench robot and the two peers (``estop_rig``), and a
    domain of their own for the floors (``floor_domain``)."""

    stack: Stack
    robot: BenchRobot
    peer: Peer
    amr: Peer
    service: ProbedService | None
    floor_domain: int

    def threads(self, names: tuple[str, ...] = ("recv", "motion-streamer")) -> dict[str, str]:
        pid = self.stack.pid("executive")
        return thread_policies(pid, names) if pid is not None else {}

    def engage(self, k: int) -> Any:
        return engage(self.stack, self.robot, k)

    def events(
        self, events: int, first: int = 0, *, blocked: Blocker | None = None
    ) -> dict[str, list[Any]]:
        """``events`` e-stops (numbered from ``first``) against the running service.

        Each: start the mission; once all three streams publish, wait a random 0-20 ms (so
        the e-stop falls anywhere in the stream's period and the tick's; with ``blocked``,
        block the interpreter instead); move the measured pose to event k's marker (see
        ``bench.robot``) and let it land; publish the e-stop; wait for the three holds and
        the CANCEL_TASK; clear the e-stop; reset, so the executive is idle for the next.
        Per event: ``hold`` = the first stream's hold command at the subscriber,
        ``hold_all`` = the last of the three, ``cancel`` = the first CANCEL_TASK after the
        e-stop (ms). With ``blocked`` an event counts whole or is lost, and
        ``before_python`` says (1.0) whether the holds and the cancel arrived while the
        interpreter was still blocked: within half the block's length of the e-stop,
        itself sent 50-100 ms into the block (the Python fast path's come only once the
        block is over, ~3 s after the e-stop)."""
        stack, robot, peer, amr = self.stack, self.robot, self.peer, self.amr
        out: dict[str, list[Any]] = {"hold": [], "hold_all": [], "cancel": [], "lost": [], "stamps": []}  # fmt: skip
        if blocked is not None:
            out["before_python"] = []
        wait = WAIT_S if blocked is None else faultpoints.GIL_HOG_S + WAIT_S
        for k in range(first, first + events):
            running = engage(stack, robot, k)
            if blocked is None:
                time.sleep(RNG.uniform(0.0, 0.02))  # any phase of the stream's and tick's periods
                robot.set_marker(k % MARKERS)
                # published at once; let it land before the e-stop, so the hold (at the
                # measured position) carries it: with 6 ms a fresh-clone CI's serial phase
                # once saw a hold at the position before the marker, counted as lost
                time.sleep(0.025)
            else:
                robot.set_marker(k % MARKERS)
                time.sleep(0.006)
                blocked.block(k)
            sent = robot.estop(True)
            got = peer.wait(
                lambda k=k: len(peer.holds.get(k % MARKERS, {})) == len(STREAM_NAMES), wait
            ) and amr.wait(lambda sent=sent: amr.cancel_after(sent) is not None, wait)
            free = blocked.free(wait) if blocked is not None else None
            # as an operator would: reset once the status shows the SAFE_STOP, then clear
            stopped = stack.client.wait_status(
                lambda s, seq=running.seq: s.state == "SAFE_STOP" and s.seq > seq, wait
            )
            robot.estop(False)
            robot.set_base()
            if stopped is None:
                raise RuntimeError(f"event {k}: the status never showed SAFE_STOP")
            holds = sorted(peer.holds.get(k % MARKERS, {}).values())
            cancel = amr.cancel_after(sent)
            # with the interpreter blocked an event counts whole or not at all
            whole = got and bool(holds) and cancel is not None
            if not (got if blocked is None else whole):
                out["lost"].append(float(k))
            if blocked is None or whole:
                if holds:
                    out["hold"].append((holds[0] - sent) / 1e6)
                    out["hold_all"].append((holds[-1] - sent) / 1e6)
                if cancel is not None:
                    out["cancel"].append((cancel - sent) / 1e6)
            if blocked is not None and whole and cancel is not None:
                blocked_s = float(free["seconds"]) if free is not None else 0.0
                early = (max(holds[-1], cancel) - sent) / 1e9 < blocked_s / 2
                out["before_python"].append(1.0 if early else 0.0)
            out["stamps"].append({"sent": sent, "cancel": cancel, **peer.holds.get(k % MARKERS, {})})  # fmt: skip
            peer.holds.pop(k % MARKERS, None)
            reset(stack)
        return out


@contextmanager
def estop_stack(config: dict[str, Any]) -> Iterator[tuple[Stack, BenchRobot]]:
    """A stack with ``estop_bench`` in a missions directory of its own (``config``: the
    service's overrides), and the bench robot publishing; the service not started."""
    profile = load_profile()
    missions = Path(tempfile.mkdtemp(prefix="bench-estop-missions-"))
    try:
        write_mission(missions, profile)
        with running_stack() as stack:
            stack.write_config(missions_dir=str(missions), **config)
            robot = BenchRobot(stack.dds, profile).start()
            try:
                yield stack, robot
            finally:
                robot.close()
    finally:
        shutil.rmtree(missions, ignore_errors=True)


@contextmanager
def estop_rig(
    config: dict[str, Any], env: dict[str, str], *, probe: bool = True
) -> Iterator[EstopRig]:
    """``estop_stack``, the two peers, the service (``env``: its environment; ``probe``:
    under ``bench.service_probe``, else as it is, waited for until ready) and a floor
    domain."""
    with estop_stack(config) as (stack, robot):
        peer, amr = Peer(stack.env(), "holds"), Peer(stack.env(), "amr")
        service = None
        if probe:
            service = ProbedService(stack, env)
        else:
            stack.start_service(env=env, ready=True)
        lease = dds.lease_domain()
        try:
            yield EstopRig(stack, robot, peer, amr, service, lease.domain)
        finally:
            lease.release()
            peer.close()
            amr.close()


def relay_events(
    env: dict[str, str], domain: int, events: int, relay: list[str] | None = None
) -> dict[str, list[float]]:
    """Publisher -> a relay -> the ``holds`` (and ``amr``) peers, ``events`` times, in
    ``domain``: e-stop to the first hold, to all the holds, to the cancel (ms). ``relay``:
    the C relay's command (it answers with the three streams' holds and a CANCEL_TASK,
    ``bench.floor``); None: ``bench.estop_peer relay`` (one marked ``UpperCmd_``: the
    first hold only)."""
    env = {**env, dds.DOMAIN_ENV: str(domain)}
    streams, answers_amr = (STREAM_NAMES, True) if relay is not None else (("upper",), False)
    subscriber = Peer(env, "holds")
    amr = Peer(env, "amr") if answers_amr else None
    middle = Peer(env, "relay", argv=relay)
    participant = dds.make_participant(domain)
    try:
        io = AtomIO(
            participant,
            Interface(),
            side=Side.ROBOT,
            topics={"emergency_state": TOPICS["emergency_state"]},
            records=("emergency_state",),
        )
        rec = io.codec("emergency_state").zeros()
        flag = (rec.dtype.names or ())[0]
        out: dict[str, list[float]] = {"hold": [], "hold_all": [], "cancel": []}
        warm = 10  # the first answers also wait for discovery: not counted
        deadline = time.monotonic() + 30

        def answered(sent: int) -> bool:
            holds = list(subscriber.holds.values())
            return (
                len(holds) == 1
                and all(s in holds[0] for s in streams)
                and (amr is None or amr.cancel_after(sent) is not None)
            )

        while len(out["hold"]) < events:
            with subscriber._cond:
                subscriber.holds.clear()
            rec[flag] = True
            sent = time.monotonic_ns()
            io.write_record("emergency_state", rec)
            if subscriber.wait(lambda s=sent: answered(s), 1.0) and (
                amr is None or amr.wait(lambda s=sent: answered(s), 1.0)
            ):
                (holds,) = subscriber.holds.values()
                if warm:
                    warm -= 1
                else:
                    out["hold"].append((min(holds.values()) - sent) / 1e6)
                    out["hold_all"].append((max(holds.values()) - sent) / 1e6)
                    if amr is not None:
                        cancel = amr.cancel_after(sent)
                        assert cancel is not None
                        out["cancel"].append((cancel - sent) / 1e6)
            elif time.monotonic() > deadline:
                raise RuntimeError(f"the {middle.kind} relay does not answer")
            rec[flag] = False
            io.write_record("emergency_state", rec)
            time.sleep(RNG.uniform(0.005, 0.015))
        return out
    finally:
        middle.close()
        subscriber.close()
        if amr is not None:
            amr.close()
        dds.close_participant(participant)
