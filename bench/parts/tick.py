"""Tick time of 10-, 100- and 1000-node mission trees, in the running service.

    python -m bench.parts.tick [--seconds 6] [--sizes 10,100,1000]

Each tree is a mission file (``tree_<N>.yaml``) the service loads like any other: a
``parallel`` of branches, each a ``guard`` that re-checks ``check_battery`` every tick
around a ``sequence`` of a ``log`` and a long ``wait``, padded with ``log`` leaves to
exactly N nodes. Every branch stays RUNNING, so every tick visits four nodes in five:
the parallel ticks each guard, the guard its condition (a read of the robot's state on
the blackboard) and its sequence, the sequence its wait.

The service runs under ``bench.service_probe`` with ``bench.robot.BenchRobot``
publishing the robot's state (so the condition has a battery to read, and the service
its real 1,100 state samples a second). Per tree, over the window:

- tree tick: ``Executive.tick()`` (queued requests, the core tree with the safety
  watchdog and the mission, settling its end);
- loop iteration: ``Runtime.tick()``, the tick loop's whole work: the tree, then the
  run record and the status publisher (which sends the tree's per-node status); its
  duration and its CPU time (the tick thread's: a loaded machine's waits left out);
- the floor, in the same window: bare py_trees ticking the same tree (the mission's
  composites, its leaves py_trees' ``Success`` and ``Running``: ``BehaviourTree.tick()``)
  at 50 Hz in a thread of this process, timed the same two ways. Issue 31's target: the
  whole loop iteration at most 1.5x the floor.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import py_trees

from bench.harness import cli, figure_row, fmt, summary, table
from bench.parts import Part, sized
from bench.robot import BenchRobot
from bench.service_probe import ProbedService
from executive.harness.stack import running_stack
from executive.mission.build import build
from executive.mission.builders import BUILDERS
from executive.mission.loader import MissionLoader
from executive.seam.profile import load_profile

SIZES = (10, 100, 1000)
BRANCH = 5  # nodes in one branch: guard, check_battery, sequence, log, wait
TARGET_P99_MS = {100: 1.5}
TARGET_FLOOR_RATIO = {100: 1.5}  # issue 31: the whole loop, against bare py_trees
TICK_HZ = 50.0


def mission_text(nodes: int) -> str:
    """A mission of exactly ``nodes`` nodes (``nodes`` >= 6)."""
    branches = (nodes - 1) // BRANCH
    pad = nodes - 1 - branches * BRANCH
    lines = [
        f"# bench/parts/tick.py: {nodes} nodes, {branches} branches that stay RUNNING",
        f"mission: tree_{nodes}",
        "tree:",
        "  parallel:",
        f"    name: {branches} branches",
        "    children:",
    ]
    for b in range(branches):
        extra = pad if b == branches - 1 else 0
        lines += [
            "      - guard:",
            f"          name: Branch {b}",
            "          condition:",
            "            check_battery: {min_level: 20}",
            "          child:",
            "            sequence:",
            f"              name: Steps {b}",
            "              children:",
            *[f"                - log: {{message: step {b}.{i}}}" for i in range(1 + extra)],
            "                - wait: {seconds: 3600}",
        ]
    return "\n".join(lines) + "\n"


def write_missions(directory: Path, sizes: tuple[int, ...]) -> None:
    profile = load_profile()
    loader = MissionLoader(profile, directory)
    for n in sizes:
        path = directory / f"tree_{n}.yaml"
        path.write_text(mission_text(n))
        mission = loader.load(path)
        count = sum(1 for _ in build(mission, BUILDERS).iterate())
        if count != n:
            raise AssertionError(f"tree_{n}.yaml builds {count} nodes, not {n}")


class Floor:
    """Bare py_trees ticking a mission's tree (its composites; leaves ``Running`` for a
    ``wait``, ``Success`` for the rest) at ``TICK_HZ`` on a thread of this process, from
    ``start()`` to ``stop()``: each tick's duration and its CPU time (the thread's)."""

    def __init__(self, mission_path: Path) -> None:
        from executive.mission.registry import LEAF_KINDS

        mission = MissionLoader(load_profile(), mission_path.parent).load(mission_path)
        builders = {
            kind: (
                (lambda leaf: py_trees.behaviours.Running(name=leaf.name))
                if kind == "wait"
                else (lambda leaf: py_trees.behaviours.Success(name=leaf.name))
            )
            for kind in LEAF_KINDS
        }
        self.tree = py_trees.trees.BehaviourTree(build(mission, builders))
        self.ticks: list[float] = []
        self.cpu: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-floor", daemon=True)

    def _run(self) -> None:
        deadline = time.monotonic()
        while not self._stop.is_set():
            t, c = time.perf_counter_ns(), time.thread_time_ns()
            self.tree.tick()
            self.cpu.append((time.thread_time_ns() - c) / 1e9)
            self.ticks.append((time.perf_counter_ns() - t) / 1e9)
            deadline += 1.0 / TICK_HZ
            self._stop.wait(max(0.0, deadline - time.monotonic()))

    def start(self) -> Floor:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2.0)


def run(seconds: float = 6.0, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    profile = load_profile()
    results: dict[str, Any] = {"seconds": seconds}
    missions = Path(tempfile.mkdtemp(prefix="bench-tick-missions-"))
    try:
        write_missions(missions, sizes)
        with running_stack() as stack:
            stack.write_config(missions_dir=str(missions))
            robot = BenchRobot(stack.dds, profile, watch_commands=False).start()
            try:
                service = ProbedService(stack)
                for n in sizes:
                    reply = stack.client.request("start", {"mission": f"tree_{n}"}, timeout=10)
                    if reply.code != 0:
                        raise RuntimeError(f"tree_{n}: start refused: {reply.message}")
                    rid = reply.message
                    if stack.client.wait_status(lambda s, rid=rid: s.run_id == rid, 10) is None:
                        raise RuntimeError(f"tree_{n}: the status never showed it running")
                    floor = Floor(missions / f"tree_{n}.yaml").start()  # the same window
                    window = service.window(seconds)
                    floor.stop()
                    stack.client.request("stop", timeout=10)
                    results[str(n)] = {
                        "tree_tick_ms": summary(window["tree_tick"], 1e3),
                        "loop_tick_ms": summary(window["loop_tick"], 1e3),
                        "loop_cpu_ms": summary(window.get("loop_tick_cpu", []), 1e3),
                        "floor_tick_ms": summary(floor.ticks, 1e3),
                        "floor_cpu_ms": summary(floor.cpu, 1e3),
                        "tick_overruns": window["tick_overruns"],
                        "samples": {"tree_tick": [x * 1e3 for x in window["tree_tick"]]},
                    }
            finally:
                robot.close()
    finally:
        shutil.rmtree(missions, ignore_errors=True)
    return results


def ratio(r: dict[str, Any], clock: str = "tick") -> tuple[float, float]:
    """The loop's median and p99 over the floor's (``clock``: "tick" durations, "cpu"
    CPU times)."""
    loop, floor = r[f"loop_{clock}_ms"], r[f"floor_{clock}_ms"]
    return loop["median"] / floor["median"], loop["p99"] / floor["p99"]


def report(results: dict[str, Any]) -> str:
    rows = []
    for n, r in results.items():
        if not n.isdigit():
            continue
        t, loop = r["tree_tick_ms"], r["loop_tick_ms"]
        cpu, fl, flc = r["loop_cpu_ms"], r["floor_tick_ms"], r["floor_cpu_ms"]
        rows.append(
            [
                n,
                str(t["n"]),
                fmt(t["median"]),
                fmt(t["p99"]),
                f"{fmt(loop['median'])} / {fmt(loop['p99'])}",
                f"{fmt(cpu['median'])} / {fmt(cpu['p99'])}",
                f"{fmt(fl['median'])} / {fmt(fl['p99'])}",
                f"{fmt(flc['median'])} / {fmt(flc['p99'])}",
                "{:.1f}x / {:.1f}x".format(*ratio(r, "cpu")),
                str(r["tick_overruns"]),
            ]
        )
    return table(
        (
            "nodes",
            "ticks",
            "tree med ms",
            "tree p99 ms",
            "loop med/p99 ms",
            "loop CPU med/p99",
            "floor med/p99",
            "floor CPU med/p99",
            "loop/floor CPU",
            "overruns",
        ),
        rows,
    )


def rows(t: dict[str, Any]) -> list[list[str]]:
    """The summary's rows: each tree's tick, against its target where it has one."""
    out = []
    for n, r in t.items():
        if not n.isdigit():
            continue
        limit = TARGET_P99_MS.get(int(n))
        target = f"p99 <= {limit} ms" if limit else ""
        ok = r["tree_tick_ms"]["p99"] <= limit if limit else None
        out.append(figure_row(f"tick, {n} nodes", f"loop p99 {fmt(r['loop_tick_ms']['p99'])}", r["tree_tick_ms"], target, ok))  # fmt: skip
        most = TARGET_FLOOR_RATIO.get(int(n))
        if most and "floor_cpu_ms" in r:
            med, p99 = ratio(r, "cpu")
            floor = f"floor {fmt(r['floor_cpu_ms']['median'])} / {fmt(r['floor_cpu_ms']['p99'])} ms"
            out.append(
                figure_row(
                    f"whole loop / bare py_trees, {n} nodes (CPU): median / p99",
                    floor,
                    {"median": med, "p99": p99},
                    f"<= {most}x",
                    max(med, p99) <= most,
                    digits=2,
                )
            )
    return out


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(sized(options, 6.0, 3.0, 1.0))


PART = Part("tick", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seconds", type=float, default=6.0)
        parser.add_argument("--sizes", default=",".join(map(str, SIZES)))

    return cli(
        __doc__,
        lambda args: run(args.seconds, tuple(int(n) for n in args.sizes.split(","))),
        report,
        arguments,
    )


if __name__ == "__main__":
    sys.exit(main())
