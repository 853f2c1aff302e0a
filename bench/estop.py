"""E-stop to hold, measured across three processes, against the raw two-hop DDS latency.

    python bench/estop.py [--events 200] [--no-hog] [--no-ddsperf]

Three processes on a leased loopback domain:

1. this one, the robot (``bench.robot.BenchRobot``): every state topic at the profile's
   rates, and the ``rt/emergency/state`` sample that starts each event, stamped with
   ``time.monotonic_ns()`` just before it is handed to DDS;
2. the executive: the real service (``atom-executive run`` through ``executive.harness.stack``)
   running ``estop_bench``, a mission that drives the base to a tag (so a task is there
   to cancel) while one move engages the upper, lower and hands streams (so a hold has
   something to hold: every stream publishing at 500 Hz);
3. an independent subscriber (``bench.estop_peer holds``, and ``bench.estop_peer amr``
   beside it) that stamps, on the same CLOCK_MONOTONIC, the arrival of each stream's
   hold and of every AMR command.

Each event: start the mission; once all three streams publish, wait a random 0-20 ms
(so the e-stop falls anywhere in the stream's period and the tick's); move the measured
pose to event k's marker (see ``bench.robot``) and let it land; publish the e-stop; wait
for the three holds and the CANCEL_TASK; clear the e-stop; reset (a signed request, repeated
until the watchdog has seen the cause go); so the executive is idle for the next.

Per event: ``hold`` = the first stream's hold command at the subscriber, ``hold_all``
= the last of the three, ``cancel`` = the first CANCEL_TASK after the e-stop.

The baseline, in a domain of its own: the same publisher and subscriber with
``bench.estop_peer relay`` in the middle (the executive's receive path and the
streamer's raw writer, no executive), and when Debian's ``ddsperf`` is installed its C
ping-pong round trip (two hops as well), at 200 Hz. Both conditions, idle and with one
CPU-burning process, run every part.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: python bench/estop.py
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    LOOPBACK_URI,
    PEER_PRIORITY,
    cli,
    cpu_hog,
    fifo_argv,
    fmt,
    loadavg,
    service_scheduling,
    summary,
    table,
    thread_policies,
)
from bench.robot import MARKERS, BenchRobot, base_pose  # noqa: E402
from bench.service_probe import ProbedService  # noqa: E402
from executive.harness.stack import Stack, running_stack  # noqa: E402
from executive.robots.atom.interface import Interface  # noqa: E402
from executive.robots.atom.topics import TOPICS, AtomIO  # noqa: E402
from executive.seam.profile import RobotProfile, load_profile  # noqa: E402
from executive.wire import dds  # noqa: E402
from executive.wire.robot_io import Side  # noqa: E402

STREAM_NAMES = ("upper", "lower", "hands")
WAIT_S = 5.0  # any one reply, engagement or reaction
TARGETS = {"median": 0.5, "p99_hog": 1.5}  # ms (issue 5)
RNG = np.random.default_rng(5)  # the phases: random, and the same every run


class Peer:
    """A ``bench.estop_peer`` process, or its C twin, and what it has reported so far.

    The twin (``bench/floor_c/peer.c``) speaks the ``holds`` and ``amr`` roles' protocol
    and stamps on CycloneDDS's receive thread: the holds' peer receives the service's
    whole 500 Hz stream, and a Python listener with that backlog under a CPU hog stamped
    the holds late (the instrument in the p99, not the executive). ``bench.floor.build``
    makes it every later Peer's (``use_c``), so one run's executive and relay figures
    are stamped by the same kind; ``bench/estop.py`` alone builds no C and runs Python.
    The C peer runs under SCHED_FIFO ``PEER_PRIORITY`` where granted (``scheduling``).
    """

    _c: ClassVar[tuple[Path, tuple[Path, ...]] | None] = None
    C_ROLES = ("holds", "amr")

    @classmethod
    def use_c(cls, program: Path | None, tables: tuple[Path, ...] = ()) -> None:
        """The built C peer and its marker tables (upper, lower, hands); None: Python."""
        cls._c = None if program is None else (program, tables)

    def __init__(self, stack_env: dict[str, str], role: str, c: bool | None = None) -> None:
        """``c``: None, the C peer where one is built and has ``role``; True, the C peer
        (an error if there is none); False, the Python one."""
        if self._c is not None and not self._c[0].exists():
            Peer.use_c(None)  # its build directory is gone with the run that made it
        native = self._c if c is not False and role in self.C_ROLES else None
        if c and native is None:
            raise RuntimeError(f"no C peer for {role!r}: bench.floor.build makes one")
        self.scheduling = "SCHED_OTHER"
        if native is not None:  # real-time where granted: it stamps, it must not wait
            program, tables = native
            argv = [str(program), role, *(map(str, tables) if role == "holds" else ())]
            argv, self.scheduling = fifo_argv(argv, PEER_PRIORITY)
        else:
            argv = [sys.executable, "-m", "bench.estop_peer", role]
        self.kind = "C" if native is not None else "Python"
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


def write_mission(directory: Path, profile: RobotProfile) -> None:
    """``estop_bench``: the base to a tag while one slow move engages all three streams."""
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
    (directory / "estop_bench.yaml").write_text(
        f"""# bench/estop.py: something to hold (all three joint streams) and a task to cancel.
mission: estop_bench
description: Drive the base to a tag while one slow move engages upper, lower and hands.
tree:
  parallel:
    name: Drive and move
    children:
      - navigate_to_tag:
          tag: 3
          timeout: 600
      - move_joints:
          name: Slow move
          joints: {{{joints}}}
          duration: 120
          timeout: 600
"""
    )


def _reset(stack: Stack) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        reply = stack.client.request("reset", timeout=WAIT_S)
        if reply.code == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"reset refused: {reply.message}")
        time.sleep(0.005)


def estop_events(
    stack: Stack, robot: BenchRobot, peer: Peer, amr: Peer, events: int, first: int = 0
) -> dict[str, list[float]]:
    """``events`` e-stops (numbered from ``first``) against the running service."""
    out: dict[str, list[Any]] = {"hold": [], "hold_all": [], "cancel": [], "lost": [], "stamps": []}
    for k in range(first, first + events):
        robot.set_base()
        robot.commands_seen()  # forget what came before
        reply = stack.client.request("start", {"mission": "estop_bench"}, timeout=WAIT_S)
        if reply.code != 0:
            raise RuntimeError(f"start refused: {reply.message}")
        running = stack.client.wait_status(lambda s: s.state == "RUNNING", WAIT_S)
        if running is None:
            raise RuntimeError(f"event {k}: the status never showed the mission running")
        seen: set[str] = set()
        deadline = time.monotonic() + WAIT_S
        while seen != set(STREAM_NAMES):
            if time.monotonic() > deadline:
                raise RuntimeError(f"event {k}: streams never engaged (saw {sorted(seen)})")
            seen |= robot.commands_seen()
            time.sleep(0.001)
        time.sleep(RNG.uniform(0.0, 0.02))  # any phase of the stream's and tick's periods
        robot.set_marker(k % MARKERS)
        # published at once; let it land before the e-stop, so the hold (at the measured
        # position) carries it: with 6 ms a fresh-clone CI's serial phase once saw a hold
        # at the position before the marker, an unrecognised hold counted as lost
        time.sleep(0.025)
        sent = robot.estop(True)
        got = peer.wait(
            lambda k=k: len(peer.holds.get(k % MARKERS, {})) == len(STREAM_NAMES), WAIT_S
        ) and amr.wait(lambda sent=sent: amr.cancel_after(sent) is not None, WAIT_S)
        # as an operator would: reset once the status shows the SAFE_STOP, then clear
        stopped = stack.client.wait_status(
            lambda s, seq=running.seq: s.state == "SAFE_STOP" and s.seq > seq, WAIT_S
        )
        robot.estop(False)
        robot.set_base()
        if stopped is None:
            raise RuntimeError(f"event {k}: the status never showed SAFE_STOP")
        if not got:
            out["lost"].append(float(k))
        holds = sorted(peer.holds.get(k % MARKERS, {}).values())
        if holds:
            out["hold"].append((holds[0] - sent) / 1e6)
            out["hold_all"].append((holds[-1] - sent) / 1e6)
        cancel = amr.cancel_after(sent)
        if cancel is not None:
            out["cancel"].append((cancel - sent) / 1e6)
        out["stamps"].append({"sent": sent, "cancel": cancel, **peer.holds.get(k % MARKERS, {})})
        peer.holds.pop(k % MARKERS, None)
        _reset(stack)
    return out


def relay_events(env: dict[str, str], domain: int, events: int) -> list[float]:
    """Publisher -> ``estop_peer relay`` -> ``estop_peer subscribe``, ``events`` times."""
    env = {**env, dds.DOMAIN_ENV: str(domain)}
    subscriber = Peer(env, "holds")
    relay = Peer(env, "relay")
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
        latencies: list[float] = []
        warm = 10  # the first answers also wait for discovery: not counted
        deadline = time.monotonic() + 30
        while len(latencies) < events:
            with subscriber._cond:
                subscriber.holds.clear()
            rec[flag] = True
            sent = time.monotonic_ns()
            io.write_record("emergency_state", rec)
            if subscriber.wait(lambda: bool(subscriber.holds), 1.0):
                (hold,) = subscriber.holds.values()
                if warm:
                    warm -= 1
                else:
                    latencies.append((hold["upper"] - sent) / 1e6)
            elif time.monotonic() > deadline:
                raise RuntimeError("the relay does not answer")
            rec[flag] = False
            io.write_record("emergency_state", rec)
            time.sleep(RNG.uniform(0.005, 0.015))
        return latencies
    finally:
        relay.close()
        subscriber.close()
        dds.close_participant(participant)


_DDSPERF_LINE = re.compile(r"50% ([\d.]+)us 90% [\d.]+us 99% ([\d.]+)us max ([\d.]+)us cnt (\d+)")


def ddsperf_pingpong(env: dict[str, str], domain: int, seconds: int = 8) -> dict[str, Any] | None:
    """Debian's ``ddsperf`` ping (200 Hz) and pong: the C round trip, ms (None if absent).

    ddsperf prints percentiles per second; we quote the median of the per-second medians
    and of the per-second p99s, skipping the first second (discovery)."""
    exe = shutil.which("ddsperf")
    if exe is None:
        return None
    pong = subprocess.Popen(
        [exe, "-i", str(domain), "-D", str(seconds + 2), "pong"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ping = subprocess.run(
            [exe, "-i", str(domain), "-D", str(seconds), "ping", "200Hz"],
            env=env,
            capture_output=True,
            text=True,
            timeout=seconds + 20,
            check=False,
        )
    finally:
        pong.terminate()
        pong.wait(10)
    rows = [m.groups() for m in _DDSPERF_LINE.finditer(ping.stdout)][1:]
    if not rows:
        return None
    medians = [float(r[0]) / 1e3 for r in rows]
    p99s = [float(r[1]) / 1e3 for r in rows]
    return {
        "n": sum(int(r[3]) for r in rows),
        "median": summary(medians)["median"],
        "p99": summary(p99s)["median"],
        "max": max(float(r[2]) / 1e3 for r in rows),
    }


def run(
    events: int = 200,
    hog_modes: tuple[bool, ...] = (False, True),
    use_ddsperf: bool = True,
    trace: bool = False,
    realtime: bool = False,
) -> dict[str, Any]:
    """Every condition; a dict of results (samples included, for the plots). With
    ``realtime`` the service's streamer thread runs SCHED_FIFO, and the conditions are
    named ``idle, realtime`` and ``cpu hog, realtime``."""
    if events * len(hog_modes) > MARKERS - 5:
        raise ValueError(f"at most {(MARKERS - 5) // len(hog_modes)} events per condition")
    profile = load_profile()
    results: dict[str, Any] = {"events": events, "conditions": {}}
    config, env = service_scheduling(realtime)
    missions = Path(tempfile.mkdtemp(prefix="bench-estop-missions-"))
    try:
        write_mission(missions, profile)
        with running_stack() as stack:
            stack.write_config(missions_dir=str(missions), **config)
            robot = BenchRobot(stack.dds, profile).start()
            peer, amr = Peer(stack.env(), "holds"), Peer(stack.env(), "amr")
            probe = None
            if trace:
                probe = ProbedService(stack, {**env, "BENCH_PROBE_TRACE": "1"})
            else:
                stack.start_service(env=env, ready=True)
            baseline_lease = dds.lease_domain()
            try:
                estop_events(stack, robot, peer, amr, 5, first=MARKERS - 5)  # warm-up
                pid = stack.pid("executive")
                threads = thread_policies(pid) if pid is not None else {}
                first = 0
                for hog in hog_modes:
                    name = ("cpu hog" if hog else "idle") + (", realtime" if realtime else "")
                    with cpu_hog(hog):
                        load = loadavg()
                        relay = relay_events(stack.env(), baseline_lease.domain, events)
                        perf = (
                            ddsperf_pingpong(stack.env(), baseline_lease.domain)
                            if use_ddsperf
                            else None
                        )
                        started = time.monotonic()
                        if probe is not None:
                            probe.begin()
                        ours = estop_events(stack, robot, peer, amr, events, first)
                        first += events  # the subscriber reports each marker once
                        if probe is not None:
                            ours["trace"] = probe.end()["trace"]
                        took = time.monotonic() - started
                    results["conditions"][name] = _condition(ours, relay, perf, took, load)
                    results["conditions"][name]["service_threads"] = threads
            finally:
                baseline_lease.release()
                peer.close()
                amr.close()
                robot.close()
    finally:
        shutil.rmtree(missions, ignore_errors=True)
    return results


def _condition(
    ours: dict[str, list[float]],
    relay: list[float],
    perf: dict[str, Any] | None,
    took: float,
    load: tuple[float, float, float],
) -> dict[str, Any]:
    hold, relay_s = summary(ours["hold"]), summary(relay)
    out: dict[str, Any] = {
        "hold_ms": hold,
        "hold_all_ms": summary(ours["hold_all"]),
        "cancel_ms": summary(ours["cancel"]),
        "relay_ms": relay_s,
        "ddsperf_rtt_ms": perf,
        "hold_over_relay": {
            "median": hold["median"] / relay_s["median"],
            "p99": hold["p99"] / relay_s["p99"],
        },
        "lost": len(ours["lost"]),
        "seconds": round(took, 1),
        "loadavg": load,
        "samples": {"hold": ours["hold"], "cancel": ours["cancel"], "relay": relay},
    }
    if "trace" in ours:
        out["path_ms"] = _path(ours["stamps"], ours["trace"])
    if perf is not None:
        out["hold_over_ddsperf"] = {
            "median": hold["median"] / perf["median"],
            "p99": hold["p99"] / perf["p99"],
        }
    return out


def _path(stamps: list[dict[str, Any]], trace: list[tuple[str, int]]) -> dict[str, Any]:
    """Where the time goes, per event, from the probe's stamps inside the service."""
    legs: dict[str, list[float]] = {}
    for ev in stamps:
        sent = ev["sent"]
        after = [(name, t) for name, t in trace if t >= sent]
        first = {}
        for name, t in sorted(after, key=lambda x: x[1]):
            first.setdefault(name, t)
        points = [
            ("sent", sent),
            ("listener", first.get("listener")),
            ("fast_path", first.get("fast_path")),
            ("held_upper", first.get("held_upper")),
            ("arrived_upper", ev.get("upper")),
        ]
        amr_points = [
            ("fast_path", first.get("fast_path")),
            ("held_hands", first.get("held_hands")),
            ("amr_CANCEL_TASK", first.get("amr_CANCEL_TASK")),
            ("arrived_cancel", ev.get("cancel")),
        ]
        for seq in (points, amr_points):
            for (a, ta), (b, tb) in itertools.pairwise(seq):
                if ta is not None and tb is not None:
                    legs.setdefault(f"{a} -> {b}", []).append((tb - ta) / 1e6)
    return {leg: summary(values) for leg, values in legs.items()}


def report(results: dict[str, Any]) -> str:
    rows = []
    for name, c in results["conditions"].items():
        for label, key in (
            ("e-stop -> first hold", "hold_ms"),
            ("e-stop -> all 3 holds", "hold_all_ms"),
            ("e-stop -> AMR cancel", "cancel_ms"),
            ("plain relay (python)", "relay_ms"),
            ("ddsperf ping-pong (C)", "ddsperf_rtt_ms"),
        ):
            s = c.get(key)
            if s is None:
                continue
            rows.append([name, label, str(s["n"]), fmt(s["median"]), fmt(s["p99"]), fmt(s["max"])])
        ratio = c["hold_over_relay"]
        rows.append(
            [name, "hold / relay", "", f"{ratio['median']:.1f}x", f"{ratio['p99']:.1f}x", ""]
        )
        if "hold_over_ddsperf" in c:
            ratio = c["hold_over_ddsperf"]
            rows.append(
                [name, "hold / ddsperf", "", f"{ratio['median']:.1f}x", f"{ratio['p99']:.1f}x", ""]
            )
    return table(("condition", "path", "n", "median ms", "p99 ms", "max ms"), rows)


def report_with_path(results: dict[str, Any]) -> str:
    """The table and, with ``--trace``, where the time went inside the service."""
    lines = [report(results)]
    for name, c in results["conditions"].items():
        for leg, s in c.get("path_ms", {}).items():
            lines.append(f"{name:8s} {leg:36s} median {fmt(s['median'])} p99 {fmt(s['p99'])} ms")
    return "\n".join(lines)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--events", type=int, default=200)
        parser.add_argument("--no-hog", action="store_true", help="only the idle condition")
        parser.add_argument("--no-ddsperf", action="store_true")
        parser.add_argument(
            "--trace", action="store_true", help="stamp the path inside the service (diagnosis)"
        )
        parser.add_argument(
            "--realtime",
            action="store_true",
            help="the streamer thread SCHED_FIFO (stream_priority)",
        )

    def run_with(args: argparse.Namespace) -> dict[str, Any]:
        hogs = (False,) if args.no_hog else (False, True)
        return run(args.events, hogs, not args.no_ddsperf, args.trace, args.realtime)

    return cli(__doc__, run_with, report_with_path, arguments)


if __name__ == "__main__":
    sys.exit(main())
