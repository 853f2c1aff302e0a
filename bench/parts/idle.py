"""Idle CPU: the service running no mission beside each simulated robot, and each simulated
robot, against a bare C loop publishing the same topics at the same rates (issue 22, 2 and 4).

    python -m bench.parts.idle [--seconds 20] [--robots atom,adam,grx]

For each robot, conditions on their own leased loopback domain (``running_stack``):

- the service (``atom-executive run``, the robot's profile, no mission) beside the simulated
  robot (``atom-executive sim``, its default physics), both streaming at the profile's rates;
- the same as before issue 22 (the DDS robots): the service with ``ATOM_EXECUTIVE_POLL=off``,
  so every state reader runs its Python listener per sample; shipped and before in turn,
  ``ROUNDS`` times, beside the same sim;
- the service beside the floor: a C program publishing the robot's state topics at the
  profile's rates and taking its command topics, with no model behind them. The Atom's is
  ``tests/crobot/crobot.c`` (idlc types, as the firmware); the Adam's
  ``bench/floor_c/pub_adam.c`` (idlc types of ``idl/pnd_adam``). The GRX speaks zenoh, and
  this machine has no zenoh-c: it has no C floor here (said in the table).

Method: each process's CPU time (utime + stime of ``/proc/PID/stat``, all threads) read
once a second for ``seconds`` after a settling second; a window's figure is its CPU time
over its wall time, in percent of one core. Median, p99 and mean over the windows (the
clock tick is 10 ms: a 1 s window resolves 1 %). The targets (issue 22): the service at
most 5 % of a core, a simulated robot at most 10 %.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.harness import ROOT, cli, fmt, loadavg, process_cpu_s, summary, table
from bench.parts import Part, sized
from executive.harness.stack import Stack, running_stack
from executive.seam.profile import load_profile

ROBOTS = ("atom", "adam", "grx")
TARGETS = {"service": 5.0, "sim": 10.0}  # % of a core
SETTLE_S = 2.0
ROUNDS = 2  # shipped and before, in turn, this many times
ADAM_PROFILE, ADAM_INTERFACE = "adam-pro", "sdk-1.2"


def cpu_windows(
    pids: Mapping[str, int], seconds: float, every: float = 1.0
) -> dict[str, list[float]]:
    """Each process's CPU share (% of a core) in consecutive windows of ``every`` s."""
    out: dict[str, list[float]] = {name: [] for name in pids}
    last = {name: process_cpu_s(pid) for name, pid in pids.items()}
    t_last = time.monotonic()
    end = t_last + seconds
    while t_last < end:
        time.sleep(every)
        now = time.monotonic()
        for name, pid in pids.items():
            cpu = process_cpu_s(pid)
            out[name].append(100.0 * (cpu - last[name]) / (now - t_last))
            last[name] = cpu
        t_last = now
    return out


def _figures(windows: list[float]) -> dict[str, Any]:
    s: dict[str, Any] = dict(summary(windows))
    s["mean"] = sum(windows) / len(windows) if windows else float("nan")
    s["samples"] = [round(w, 2) for w in windows]
    return s


def _measure(pids: Mapping[str, int], seconds: float) -> dict[str, Any]:
    time.sleep(SETTLE_S)
    return {name: _figures(w) for name, w in cpu_windows(pids, seconds).items()}


def _shipped_and_before(stack: Stack, seconds: float, rounds: int = ROUNDS) -> dict[str, Any]:
    """The service as shipped and as before (``BEFORE``) beside the running sim, in turn,
    ``rounds`` times for ``seconds / rounds`` each: a shared machine's load drifts, and
    both conditions see the same drift. The windows of a condition's rounds, together."""
    windows: dict[str, dict[str, list[float]]] = {}
    for _ in range(rounds):
        for name, env in (("sim", {}), ("before", BEFORE)):
            stack.start_service(env=env)
            time.sleep(SETTLE_S)
            pids = {"service": _pid(stack, "executive"), "sim": _pid(stack, "sim")}
            for who, w in cpu_windows(pids, seconds / rounds).items():
                windows.setdefault(name, {}).setdefault(who, []).extend(w)
    return {name: {who: _figures(w) for who, w in by.items()} for name, by in windows.items()}


def _pid(stack: Stack, name: str) -> int:
    pid = stack.pid(name)
    if pid is None:
        raise RuntimeError(f"{name} is not running; see {stack.log_path(name)}")
    return pid


# -- the robots -----------------------------------------------------------------------------


BEFORE = {"ATOM_EXECUTIVE_POLL": "off"}  # every reader listens per sample, as before


def atom(seconds: float, work: Path) -> dict[str, Any]:
    from executive.robots.atom.interface import DEFAULT_PRESET, Variant
    from tests.crobot.harness import CRobot, build_crobot, crobot_args

    out: dict[str, Any] = {}
    with running_stack(work / "atom-sim") as stack:
        stack.write_config()
        stack.start_sim()
        out.update(_shipped_and_before(stack, seconds))
    exe = build_crobot(Variant.parse(DEFAULT_PRESET), work / "crobot")
    with running_stack(work / "atom-floor") as stack:
        stack.write_config()
        robot = CRobot(exe, stack.domain, work / "crobot.jsonl", crobot_args(load_profile()))
        with robot.start():
            stack.start_service(ready=True)
            assert robot.proc is not None
            out["floor"] = _measure(
                {"service": _pid(stack, "executive"), "sim": robot.proc.pid}, seconds
            )
    return out


def build_pub_adam(work: Path) -> Path:
    """idlc -l c over idl/pnd_adam (common and sdk12), gcc over bench/floor_c/pub_adam.c."""
    idlc = shutil.which("idlc") or "/usr/bin/idlc"
    gcc = shutil.which("gcc") or "gcc"
    idl = ROOT / "idl" / "pnd_adam"
    sources, includes = [], []
    for folder in ("common", "sdk12"):
        outdir = work / folder
        outdir.mkdir(parents=True, exist_ok=True)
        for f in sorted((idl / folder).glob("*.idl")):
            _run([idlc, "-l", "c", "-o", outdir, f])
            sources.append(outdir / f"{f.stem}.c")
            includes.append(f'#include "{folder}/{f.stem}.h"')
    (work / "pub_adam_idl.h").write_text("\n".join(includes) + "\n")
    exe = work / "pub_adam"
    strict = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]
    src = ROOT / "bench" / "floor_c" / "pub_adam.c"
    _run([gcc, *strict, "-I", work, "-o", exe, src, *sources, "-lddsc"])
    return exe


def _run(cmd: list[Any]) -> None:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=180, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}")


@contextmanager
def c_process(cmd: list[Any], env: Mapping[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A C floor, started and waited for (its "ready" line), ended with the block."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, env=dict(env), text=True)
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{cmd[0]} did not start")
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def adam(seconds: float, work: Path) -> dict[str, Any]:
    from executive.robots.adam.sim.client import client_for

    def ready(stack: Stack, pid: int) -> bool:
        return client_for(stack.dds).wait_status(lambda s: s.pid == pid, 30) is not None

    profile = load_profile(ADAM_PROFILE)
    out: dict[str, Any] = {}
    with running_stack(work / "adam-sim") as stack:
        stack.write_config(profile=ADAM_PROFILE, interface=ADAM_INTERFACE)
        stack.start_sim("--profile", ADAM_PROFILE, "--interface", ADAM_INTERFACE, sim_ready=ready)
        out.update(_shipped_and_before(stack, seconds))
    exe = build_pub_adam(work / "pub_adam")
    hz = profile.state_hz
    motors = len(profile.topics["body"])
    with running_stack(work / "adam-floor") as stack:
        stack.write_config(profile=ADAM_PROFILE, interface=ADAM_INTERFACE)
        env = {**stack.env()}
        cmd = [exe, stack.domain, motors, hz["low_state"], hz["hand_state"]]
        with c_process(cmd, env) as proc:
            stack.start_service(ready=True)
            out["floor"] = _measure({"service": _pid(stack, "executive"), "sim": proc.pid}, seconds)
    return out


def grx(seconds: float, work: Path) -> dict[str, Any]:
    from executive.harness.grx import start

    with running_stack(work / "grx-sim") as stack:
        sim = start(stack)
        try:
            pids = {"service": _pid(stack, "executive"), "sim": sim.proc.pid}
            return {"sim": _measure(pids, seconds), "floor": None}
        finally:
            sim.close()


RUNNERS: dict[str, Callable[[float, Path], dict[str, Any]]] = {
    "atom": atom,
    "adam": adam,
    "grx": grx,
}


def run(seconds: float = 20.0, robots: tuple[str, ...] = ROBOTS) -> dict[str, Any]:
    results: dict[str, Any] = {"seconds": seconds, "targets": TARGETS, "loadavg": loadavg()}
    work = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    try:
        for robot in robots:
            results[robot] = RUNNERS[robot](seconds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["loadavg_at_end"] = loadavg()
    return results


def _cell(s: dict[str, Any] | None) -> str:
    return "-" if s is None else f"{fmt(s['median'], 1)} (p99 {fmt(s['p99'], 1)})"


def verdicts(results: dict[str, Any]) -> list[list[str]]:
    """Per robot, the service's and the simulated robot's idle CPU (median and p99 of the
    windows, % of a core): shipped, as before issue 22 (the same run), the floor of the
    same run (the service beside the C robot; the C robot itself), target and verdict."""
    rows = []
    for robot in ROBOTS:
        r = results.get(robot)
        if not r:
            continue
        for who, label in (("service", "service idle beside"), ("sim", "simulated")):
            fig = r["sim"][who]
            before = (r.get("before") or {}).get(who)
            floor = (r.get("floor") or {}).get(who)
            ok = fig["median"] <= TARGETS[who]
            rows.append(
                [
                    f"{label} {robot}",
                    _cell(fig),
                    _cell(before),
                    _cell(floor),
                    f"<= {TARGETS[who]:g} %",
                    "met" if ok else "MISSED",
                ]
            )
    return rows


def rows(results: dict[str, Any]) -> list[list[str]]:
    """``bench.run``'s summary: benchmark, condition, median, p99, target, verdict."""
    rows = []
    for what, fig, before, floor, target, verdict in verdicts(results):
        median, _, p99 = fig.partition(" (p99 ")
        rows.append(
            [
                f"idle CPU %, {what}",
                f"before {before}; floor {floor}",
                median,
                p99.rstrip(")"),
                target,
                verdict,
            ]
        )
    return rows


def report(results: dict[str, Any]) -> str:
    text = table(
        (
            "idle CPU, % of a core",
            "median (p99)",
            "before (ATOM_EXECUTIVE_POLL=off)",
            "C floor",
            "target",
            "verdict",
        ),
        verdicts(results),
    )
    return (
        f"{text}\n{results['seconds']:g} s of 1 s windows per condition; load "
        f"{results['loadavg']} -> {results.get('loadavg_at_end')}; floor: the service beside "
        "the C robot (service rows), the C robot itself (simulated rows)"
    )


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    if options.size == "smallest":  # the Atom's conditions only, a second each
        return run(1.0, ("atom",))
    return run(sized(options, 20.0, 8.0, 1.0))


PART = Part("idle", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seconds", type=float, default=20.0)
        parser.add_argument("--robots", default=",".join(ROBOTS))

    def run_with(args: argparse.Namespace) -> dict[str, Any]:
        robots = tuple(r for r in args.robots.split(",") if r)
        unknown = set(robots) - set(ROBOTS)
        if unknown:
            raise SystemExit(
                f"--robots: unknown {', '.join(sorted(unknown))} (known: {', '.join(ROBOTS)})"
            )
        return run(args.seconds, robots)

    return cli(__doc__, run_with, report, arguments)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
