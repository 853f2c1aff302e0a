"""The Fourier GRX over zenoh: state to snapshot, and an error code to the safe stop.

    python -m bench.parts.grx [--events 30] [--warmup 3] [--json FILE]

Two processes on loopback zenoh (peer to peer, ``tcp/127.0.0.1`` on ports of this run,
multicast and gossip scouting off, as ``executive/resources/zenoh-loopback.json5``):

1. the robot: ``PEER`` below, run with ``python -c``, a plain program with zenoh and
   msgpack only (no project code, the keys and field names spelled out from the seed). It
   listens on a free port and publishes the four server maps every 20 ms (heartbeat on,
   error code 0), stamps the events it is told to make with ``time.monotonic_ns()`` and
   watches ``.../grx/client`` (the virtual joystick) and ``.../task/client``;
2. this one: the executive's real assembly (``executive.core.runtime.Runtime``: the GRX
   adapter, the safety monitor and its fast path, the tree ticking at 50 Hz) built from
   the ``grx`` profile with ``zenoh_config`` a copy of the loopback config connected to
   the robot, and a plain zenoh session on the same setup for the floor.

Figures, ms, all on CLOCK_MONOTONIC:

- *state -> snapshot*: the robot puts a task map whose ``robot_task_state`` alternates
  (960, 965), stamped; the adapter's receive path is hooked (``GrxState.receive`` wrapped):
  after each task map is taken in, ``adapter.snapshot()`` is called and the time it
  returns showing the new state is the arrival. What the next tick reads is that snapshot
  (up to one 20 ms tick later, not counted);
- *error code -> zero axes*: a mission walking forward (the ``walk`` leaf, streaming the
  virtual joystick at 50 Hz) runs; once the robot has received non-zero axes (asserted,
  every event), after a random 0-20 ms it puts ``robot_error_codes`` 0x2310, stamped; the
  figure is the arrival of the first all-zero joystick map at the robot: the adapter's
  safety event, the executive's fast path (``EstopFastPath``), ``GrxAdapter.safe_stop``.
  Then the status must show SAFE_STOP ``servo_error``; the error is cleared and the
  executive reset. *-> safe task*: the profile's safe task (``ready``) at the robot;
- the floor, in the same run and interleaved with the events: a plain zenoh put from the
  robot's session to the plain session here (*one-way*), and the robot's put echoed back
  by the plain session (*round trip*: the safe stop is a round trip too). Ratios: state
  -> snapshot over one-way, error -> zero axes over the round trip.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
import structlog
import zenoh

from bench.harness import cli, figure_row, fmt, loadavg, summary, table
from bench.parts import Part, sized
from executive import logs
from executive.core.runtime import Runtime
from executive.core.tree import ExecState, Executive
from executive.harness.grx import free_port, zenoh_config_file
from executive.mission.store import MissionStore
from executive.robots.grx.adapter import GrxAdapter
from executive.seam.profile import load_profile
from executive.wire import dds

WAIT_S = 5.0  # any one reaction or reply
ERROR_CODE = 0x2310
STATES = (960, 965)  # ready, walk: the task state alternates between real task ids
SAFE_TASK = 960  # the grx profile's safe_task (ready)
MISSION = "grx_bench_walk"
ONEWAY_KEY, RTT_KEY, ECHO_KEY = "bench/grx/oneway", "bench/grx/rtt", "bench/grx/echo"
RNG = np.random.default_rng(13)  # the phases: random, and the same every run

# The robot: zenoh and msgpack only. argv[1]: the port it listens on; argv[2]: how many
# joints its robot map reports (the profile's GR-1 T2: 32). Commands on stdin, one per
# line; what it saw on stdout, one line each ("ready" first).
PEER = r"""
import sys, threading, time
import msgpack, zenoh

PREFIX = "fourier-grx/dynalink_interface"
AXES = ("virtual_joystick_axis_left", "virtual_joystick_axis_right")
config = zenoh.Config()
config.insert_json5("mode", '"peer"')
config.insert_json5("listen/endpoints", '["tcp/127.0.0.1:%s"]' % sys.argv[1])
config.insert_json5("connect/endpoints", "[]")
config.insert_json5("scouting/multicast/enabled", "false")
config.insert_json5("scouting/gossip/enabled", "false")
session = zenoh.open(config)
lock, out = threading.Lock(), threading.Lock()
stop = threading.Event()


def say(*words):
    with out:
        sys.stdout.write(" ".join(str(w) for w in words) + "\n")
        sys.stdout.flush()


maps = {
    "comm": {"flag_heart_beat": True},
    "robot": {"joint_measured_position": [0.0] * int(sys.argv[2])},
    "task": {"flag_task_in_process": False, "robot_task_state": 960, "robot_task_substate": 0},
    "grx": {"fourier_core_version": "plain", "fourier_grx_version": "plain",
            "robot_error_codes": 0},
}
pubs = {
    c: session.declare_publisher(
        PREFIX + "/" + c + "/server", congestion_control=zenoh.CongestionControl.DROP
    )
    for c in maps
}
# the joystick after "arm": walking (non-zero maps), fault (pending event), zero seen,
# non-zero maps after the first zero (motion after the stop)
watch = {"armed": False, "walking": 0, "fault": None, "zero": False, "after": 0, "task": False}


def on_grx(sample):
    t = time.monotonic_ns()
    m = msgpack.unpackb(sample.payload.to_bytes(), raw=False)
    if not isinstance(m, dict) or not any(k in m for k in AXES):
        return
    moving = any(v for k in AXES for v in m.get(k, ()))
    with lock:
        if watch["zero"]:
            watch["after"] += int(moving)
        elif watch["fault"] is not None and not moving:
            watch["zero"] = True
            say("Z", watch["fault"], t, watch["walking"])
        elif moving and watch["armed"] and watch["fault"] is None:
            watch["walking"] += 1
            if watch["walking"] == 1:
                say("W")


def on_task(sample):
    t = time.monotonic_ns()
    m = msgpack.unpackb(sample.payload.to_bytes(), raw=False)
    cmd = m.get("robot_task_command") if isinstance(m, dict) else None
    with lock:
        if cmd is not None and watch["fault"] is not None and not watch["task"]:
            watch["task"] = True
            say("T", watch["fault"], t, cmd)


def on_echo(sample):
    t = time.monotonic_ns()
    m = msgpack.unpackb(sample.payload.to_bytes(), raw=False)
    say("R", m["k"], m["t"], t)


subs = [
    session.declare_subscriber(PREFIX + "/grx/client", on_grx),
    session.declare_subscriber(PREFIX + "/task/client", on_task),
    session.declare_subscriber("bench/grx/echo", on_echo),
]


def publish():
    deadline = time.monotonic()
    while not stop.is_set():
        with lock:
            for c in maps:
                pubs[c].put(msgpack.packb(maps[c]))
        deadline += 0.02
        stop.wait(max(0.0, deadline - time.monotonic()))


threading.Thread(target=publish, daemon=True).start()
say("ready")
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    verb, args = words[0], words[1:]
    if verb == "quit":
        break
    with lock:
        if verb == "state":  # state K VALUE: the task map now, stamped
            k, value = int(args[0]), int(args[1])
            task = dict(maps["task"], robot_task_state=value, bench_k=k)
            task["bench_sent_ns"] = time.monotonic_ns()
            maps["task"] = task
            pubs["task"].put(msgpack.packb(task))
        elif verb == "ping":  # ping K: one-way to the plain session
            session.put("bench/grx/oneway", msgpack.packb({"k": int(args[0]),
                                                           "t": time.monotonic_ns()}))
        elif verb == "rtt":  # rtt K: echoed by the plain session, stamped back here
            session.put("bench/grx/rtt", msgpack.packb({"k": int(args[0]),
                                                        "t": time.monotonic_ns()}))
        elif verb == "arm":
            watch.update(armed=True, walking=0, fault=None, zero=False, after=0, task=False)
            say("A")
        elif verb == "fault":  # fault K: robot_error_codes non-zero now, stamped
            maps["grx"] = dict(maps["grx"], robot_error_codes=int(args[1]))
            watch["fault"] = int(args[0])
            t = time.monotonic_ns()
            pubs["grx"].put(msgpack.packb(maps["grx"]))
            say("F", args[0], t)
        elif verb == "clear":
            maps["grx"] = dict(maps["grx"], robot_error_codes=0)
            pubs["grx"].put(msgpack.packb(maps["grx"]))
            say("C", watch["after"])
            watch.update(armed=False, fault=None)
stop.set()
for s in subs:
    s.undeclare()
session.close()
"""


class Peer:
    """The plain robot process and what it has reported so far."""

    def __init__(self, port: int) -> None:
        joints = len(load_profile("grx").topics.get("robot", ()))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PEER, str(port), str(joints)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._cond = threading.Condition()
        self.ready = False
        self.walking = False
        self.armed = False
        self.faults: dict[int, int] = {}  # k -> put (ns)
        self.zeros: dict[int, tuple[int, int]] = {}  # k -> (arrival ns, non-zero maps before)
        self.tasks: dict[int, tuple[int, int]] = {}  # k -> (arrival ns, task id)
        self.rtt: dict[int, tuple[int, int]] = {}  # k -> (put ns, echo arrival ns)
        self.cleared: list[int] = []  # non-zero joystick maps after the zeros, per clear
        threading.Thread(target=self._read, name="grx-peer", daemon=True).start()
        if not self.wait(lambda: self.ready, 15):
            self.close()
            raise TimeoutError("the plain GRX peer did not start")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            w = line.split()
            with self._cond:
                if w == ["ready"]:
                    self.ready = True
                elif w == ["W"]:
                    self.walking = True
                elif w == ["A"]:
                    self.armed = True
                elif w[:1] == ["F"]:
                    self.faults[int(w[1])] = int(w[2])
                elif w[:1] == ["Z"]:
                    self.zeros[int(w[1])] = (int(w[2]), int(w[3]))
                elif w[:1] == ["T"]:
                    self.tasks[int(w[1])] = (int(w[2]), int(w[3]))
                elif w[:1] == ["R"]:
                    self.rtt[int(w[1])] = (int(w[2]), int(w[3]))
                elif w[:1] == ["C"]:
                    self.cleared.append(int(w[1]))
                self._cond.notify_all()

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def arm(self) -> None:
        with self._cond:
            self.walking = self.armed = False
        self.send("arm")
        if not self.wait(lambda: self.armed, WAIT_S):
            raise RuntimeError("the plain peer did not answer 'arm'")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait(5)


class SnapshotProbe:
    """The adapter's receive path, hooked: after a task map is taken in, the time
    ``snapshot()`` returns showing its state, by the map's ``bench_k``."""

    def __init__(self, adapter: GrxAdapter) -> None:
        self.adapter = adapter
        self.seen: dict[int, tuple[int, int]] = {}  # k -> (put ns, shown ns)
        self._cond = threading.Condition()
        receive = adapter.state.receive

        def hooked(category: str, payload: bytes) -> None:
            receive(category, payload)
            if category == "task":
                self._after_task()

        adapter.state.receive = hooked  # type: ignore[method-assign]

    def _after_task(self) -> None:
        snap = self.adapter.snapshot()
        shown = time.monotonic_ns()
        fields = self.adapter.state.latest("task") or {}
        k, sent = fields.get("bench_k"), fields.get("bench_sent_ns")
        if not isinstance(k, int) or not isinstance(sent, int) or k in self.seen:
            return
        if snap.fsm is None or snap.fsm.sample != fields.get("robot_task_state"):
            return
        with self._cond:
            self.seen[k] = (sent, shown)
            self._cond.notify_all()

    def wait(self, k: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: k in self.seen, timeout)


class Floor:
    """A plain zenoh session on the same setup: one-way arrivals, and the echo."""

    def __init__(self, config: Path) -> None:
        self.session = zenoh.open(zenoh.Config.from_file(str(config)))
        self._cond = threading.Condition()
        self.oneway: dict[int, tuple[int, int]] = {}  # k -> (put ns, arrival ns)
        self._echo = self.session.declare_publisher(ECHO_KEY)
        self._subs = [
            self.session.declare_subscriber(ONEWAY_KEY, self._on_oneway),
            self.session.declare_subscriber(RTT_KEY, self._on_rtt),
        ]

    def _on_oneway(self, sample: zenoh.Sample) -> None:
        t = time.monotonic_ns()
        m = msgpack_unpack(sample.payload.to_bytes())
        with self._cond:
            self.oneway[int(m["k"])] = (int(m["t"]), t)
            self._cond.notify_all()

    def _on_rtt(self, sample: zenoh.Sample) -> None:
        self._echo.put(sample.payload.to_bytes())

    def wait(self, k: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: k in self.oneway, timeout)

    def close(self) -> None:
        self.session.close()  # type: ignore[no-untyped-call]


def msgpack_unpack(payload: bytes) -> dict[str, Any]:
    fields = msgpack.unpackb(payload, raw=False)
    assert isinstance(fields, dict)
    return fields


def write_mission(directory: Path) -> None:
    """Walk forward for longer than any event lasts (the ``walk`` leaf alone: the plain
    robot runs no task protocol, and the leaf reads nothing of the robot's state)."""
    (directory / f"{MISSION}.yaml").write_text(
        f"""# bench/parts/grx.py: a joystick stream to stop.
mission: {MISSION}
description: Walk forward at half rate until stopped.
tree:
  walk: {{forward: 0.5, duration: 300}}
"""
    )


def _until(predicate: Callable[[], bool], timeout: float, every: float = 0.0005) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def _reset(ex: Executive) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        ok, message = ex.submit(ex.reset).result(WAIT_S)
        if ok:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"reset refused: {message}")
        time.sleep(0.005)


def state_events(
    peer: Peer, probe: SnapshotProbe, floor: Floor, first: int, events: int
) -> dict[str, list[float]]:
    """``events`` state changes, each after a one-way floor put; ms."""
    out: dict[str, list[float]] = {"state": [], "oneway": [], "lost": []}
    for k in range(first, first + events):
        peer.send(f"ping {k}")
        if floor.wait(k, WAIT_S):
            sent, got = floor.oneway[k]
            out["oneway"].append((got - sent) / 1e6)
        time.sleep(RNG.uniform(0.002, 0.012))
        peer.send(f"state {k} {STATES[k % 2]}")
        if probe.wait(k, WAIT_S):
            sent, shown = probe.seen[k]
            out["state"].append((shown - sent) / 1e6)
        else:
            out["lost"].append(float(k))
        time.sleep(RNG.uniform(0.002, 0.012))  # any phase of the robot's 20 ms period
    return out


def fault_events(
    runtime: Runtime, store: MissionStore, peer: Peer, first: int, events: int
) -> dict[str, list[Any]]:
    """``events`` error codes mid-walk, each after a round-trip floor put; ms."""
    keys = ("zero", "task", "rtt", "lost", "walking_maps", "motion_after", "reasons")
    out: dict[str, list[Any]] = {key: [] for key in keys}
    for k in range(first, first + events):
        fault_event(runtime.executive, store, peer, k, out)
    return out


def fault_event(
    ex: Executive, store: MissionStore, peer: Peer, k: int, out: dict[str, list[Any]]
) -> None:
    """Event ``k``: the floor's round trip, a walk, the error code, the reset."""
    peer.send(f"rtt {k}")
    if peer.wait(lambda: k in peer.rtt, WAIT_S):
        sent, got = peer.rtt[k]
        out["rtt"].append((got - sent) / 1e6)
    peer.arm()
    root, errors = store.build(MISSION, {})
    if root is None:
        raise RuntimeError(f"{MISSION}: {errors}")
    ok, why = ex.submit(functools.partial(ex.start_mission, MISSION, root)).result(WAIT_S)
    if not ok:
        raise RuntimeError(f"event {k}: start refused: {why}")
    if not peer.wait(lambda: peer.walking, WAIT_S):
        raise RuntimeError(f"event {k}: the robot never received non-zero axes")
    time.sleep(RNG.uniform(0.0, 0.02))  # any phase of the 50 Hz stream and tick
    peer.send(f"fault {k} {ERROR_CODE}")
    zeroed = peer.wait(lambda: k in peer.zeros and k in peer.faults, WAIT_S)
    if not _until(lambda: ex.state is ExecState.SAFE_STOP, WAIT_S):
        raise RuntimeError(f"event {k}: no SAFE_STOP (state {ex.state.value})")
    out["reasons"].append("; ".join(map(str, ex.monitor.reasons)))
    peer.wait(lambda: k in peer.tasks, 0.5)
    n_cleared = len(peer.cleared)
    peer.send("clear")
    peer.wait(lambda: len(peer.cleared) > n_cleared, WAIT_S)
    out["motion_after"].append(peer.cleared[-1] if peer.cleared else -1)
    if zeroed:
        t_zero, walking = peer.zeros[k]
        out["zero"].append((t_zero - peer.faults[k]) / 1e6)
        out["walking_maps"].append(walking)
    else:
        out["lost"].append(k)
    if k in peer.tasks and k in peer.faults:
        t_task, tid = peer.tasks[k]
        if tid == SAFE_TASK:
            out["task"].append((t_task - peer.faults[k]) / 1e6)
    _reset(ex)
    if not _until(lambda: ex.state is ExecState.IDLE, WAIT_S):
        raise RuntimeError(f"event {k}: not IDLE after the reset ({ex.state.value})")


def run(events: int = 30, warmup: int = 3) -> dict[str, Any]:
    """The plain robot, the executive in this process, the floor; the figures."""
    profile = load_profile("grx")
    work = Path(tempfile.mkdtemp(prefix="bench-grx-"))
    lease = dds.lease_domain()
    logging = structlog.get_config()
    logs.configure(journal=False, level="critical")  # every event is a logged safe stop
    runtime: Runtime | None = None
    peer: Peer | None = None
    floor: Floor | None = None
    try:
        write_mission(work)
        port = free_port()
        peer = Peer(port)
        ours = zenoh_config_file(work / "executive.json5", connect=port)
        participant = dds.make_participant(lease.domain)
        try:
            runtime = Runtime.build(profile, participant=participant, zenoh_config=str(ours))
        except BaseException:
            dds.close_participant(participant)
            raise
        adapter = runtime.adapter
        if not isinstance(adapter, GrxAdapter):
            raise TypeError(f"the grx profile opened {type(adapter).__name__}")
        probe = SnapshotProbe(adapter)
        floor = Floor(zenoh_config_file(work / "floor.json5", connect=port))
        runtime.start()
        ex = runtime.executive
        if not _until(lambda: not ex.not_ready(), 15, every=0.05):
            raise RuntimeError(f"the executive never heard the robot: {ex.not_ready()}")
        store = MissionStore(work, profile)
        if MISSION not in store.names():
            raise RuntimeError(f"{MISSION} does not validate: {store.skipped()}")
        state_events(peer, probe, floor, 0, warmup)
        fault_events(runtime, store, peer, 0, warmup)
        load = loadavg()
        started = time.monotonic()
        st = state_events(peer, probe, floor, warmup, events)
        fa = fault_events(runtime, store, peer, warmup, events)
        took = time.monotonic() - started
    finally:
        if floor is not None:
            floor.close()
        if runtime is not None:
            runtime.close()  # the adapter's session and the participant
        if peer is not None:
            peer.close()
        lease.release()
        shutil.rmtree(work, ignore_errors=True)
        structlog.configure(**logging)
    return _results(events, st, fa, took, load)


def _ratio(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {"median": a["median"] / b["median"], "p99": a["p99"] / b["p99"]}


def _results(
    events: int,
    st: dict[str, list[float]],
    fa: dict[str, list[Any]],
    took: float,
    load: tuple[float, float, float],
) -> dict[str, Any]:
    state, zero = summary(st["state"]), summary(fa["zero"])
    oneway, rtt = summary(st["oneway"]), summary(fa["rtt"])
    return {
        "events": events,
        "state_ms": state,
        "safe_stop_ms": zero,
        "safe_task_ms": summary(fa["task"]),
        "oneway_ms": oneway,
        "rtt_ms": rtt,
        "state_over_oneway": _ratio(state, oneway),
        "safe_stop_over_rtt": _ratio(zero, rtt),
        "lost": len(st["lost"]) + len(fa["lost"]),
        "walking_maps_before_fault": {
            "min": min(fa["walking_maps"], default=0),
            "median": float(np.median(fa["walking_maps"])) if fa["walking_maps"] else 0.0,
        },
        "motion_after": sum(max(n, 0) for n in fa["motion_after"]),
        "reasons": sorted({r.split(":")[0] for r in fa["reasons"]}),
        "seconds": round(took, 1),
        "loadavg": load,
        "samples": {
            "state": st["state"],
            "safe_stop": fa["zero"],
            "safe_task": fa["task"],
            "oneway": st["oneway"],
            "rtt": fa["rtt"],
        },
    }


def report(results: dict[str, Any]) -> str:
    rows = []
    for label, key in (
        ("state -> snapshot", "state_ms"),
        ("error code -> zero axes (safe stop)", "safe_stop_ms"),
        ("error code -> safe task (ready)", "safe_task_ms"),
        ("plain zenoh one-way (floor)", "oneway_ms"),
        ("plain zenoh round trip (floor)", "rtt_ms"),
    ):
        s = results[key]
        rows.append([label, str(s["n"]), fmt(s["median"]), fmt(s["p99"]), fmt(s["max"])])
    for label, key in (
        ("state / one-way", "state_over_oneway"),
        ("safe stop / round trip", "safe_stop_over_rtt"),
    ):
        r = results[key]
        rows.append([label, "", f"{r['median']:.1f}x", f"{r['p99']:.1f}x", ""])
    text = table(("GRX over zenoh (idle)", "n", "median ms", "p99 ms", "max ms"), rows)
    walking = results["walking_maps_before_fault"]
    return (
        f"{text}\nlost {results['lost']} of {2 * results['events']}; non-zero joystick maps "
        f"before each fault: min {walking['min']}, median {walking['median']:.0f}; "
        f"non-zero after the zeros: {results['motion_after']}; "
        f"causes: {', '.join(results['reasons'])}; {results['seconds']} s"
    )


def rows(g: dict[str, Any]) -> list[list[str]]:
    """The GRX's two figures, each with its ratio to the plain zenoh floor of its run."""
    name = "idle, GRX zenoh"
    lost = f"; {g['lost']} events lost" if g["lost"] else ""
    out = []
    for label, key, ratio_key, floor in (
        ("GRX state -> snapshot", "state_ms", "state_over_oneway", "one-way"),
        ("GRX error code -> zero axes", "safe_stop_ms", "safe_stop_over_rtt", "round trip"),
    ):
        r = g[ratio_key]
        row = figure_row(label, name, g[key], f"{r['median']:.1f}x / {r['p99']:.1f}x {floor}{lost}", None)  # fmt: skip
        out.append([*row[:-1], "MISSED" if g["lost"] else "-"])
    for label, key in (("  plain zenoh one-way", "oneway_ms"), ("  plain zenoh round trip", "rtt_ms")):  # fmt: skip
        out.append(figure_row(label, name, g[key], "", None))
    return out


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    events = options.grx_events or sized(options, 30, 10, 2)
    return run(events, warmup=1) if options.size == "smallest" else run(events)


PART = Part("grx", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--events", type=int, default=30, help="events per figure")
        parser.add_argument("--warmup", type=int, default=3, help="events not counted")

    def run_with(args: argparse.Namespace) -> dict[str, Any]:
        return run(args.events, args.warmup)

    return cli(__doc__, run_with, report, arguments)


if __name__ == "__main__":
    sys.exit(main())
