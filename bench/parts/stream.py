"""The 500 Hz command stream in the running service: lateness, missed periods, CPU share.

    python -m bench.parts.stream [--seconds 20] [--hog]

The real service (``bench.service_probe``: ``atom-executive run`` with its inner figures
readable) runs ``estop_bench`` (``bench/episode.py``: a two-minute move that engages the
upper, lower and hands streams, beside a base task), while ``bench.robot.BenchRobot``
publishes the robot's state at the profile's rates (upper and lower 500 Hz, hands
100 Hz...). So the streamer thread shares the process, and the GIL, with everything the
service does: the tick loop, the state arriving, the status publisher, requests.

Over the window, from the streamer's own ``StreamStats``:

- lateness: how long after its deadline each period woke (ms): median, p99, max;
- missed: whole periods skipped because one overran, over the window;
- CPU share of the streamer: the streamer thread's CPU time over the window's wall time
  (from /proc/<pid>/task/<tid>/stat), as a percentage of one core; beside it the time
  spent publishing alone (``StreamStats.busy``) and the whole service's CPU share.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from typing import Any

from bench.episode import engage, estop_stack
from bench.harness import (
    check,
    cli,
    cpu_hog,
    figure_row,
    fmt,
    loadavg,
    service_scheduling,
    summary,
    table,
    with_realtime,
)
from bench.parts import Part, sized
from bench.service_probe import ProbedService
from executive.seam.profile import load_profile

TARGETS = {"p99_ms": 0.25, "missed": 0, "cpu_percent": 15.0}


def run(
    seconds: float = 20.0, hog_modes: tuple[bool, ...] = (False,), realtime: bool = False
) -> dict[str, Any]:
    """The conditions ``idle`` and ``cpu hog``; with ``realtime``, the service's streamer
    thread under SCHED_FIFO (``stream_priority``), and the conditions named
    ``idle, realtime`` and so on."""
    profile = load_profile()
    results: dict[str, Any] = {"seconds": seconds, "rate_hz": profile.command_hz}
    config, env = service_scheduling(realtime)
    with estop_stack(config) as (stack, robot):
        service = ProbedService(stack, env)
        engage(stack, robot, 0, timeout=10)
        for hog in hog_modes:
            with cpu_hog(hog):
                time.sleep(0.5)
                load = loadavg()
                window = service.window(seconds)
            name = ("cpu hog" if hog else "idle") + (", realtime" if realtime else "")
            results[name] = _figures(window, load)
        stack.client.request("stop", timeout=10)
    return results


def _figures(window: dict[str, Any], load: tuple[float, float, float]) -> dict[str, Any]:
    wall = window["t"]
    lateness = [x * 1e3 for x in window["lateness"]]
    return {
        "periods": window["periods"],
        "expected_periods": round(wall * 500),
        "missed": window["missed"],
        "lateness_ms": summary(lateness),
        "streamer_cpu_percent": 100 * window["thread_cpu"] / wall,
        "publish_percent": 100 * window["busy"] / wall,
        "service_cpu_percent": 100 * window["process_cpu"] / wall,
        "streamer_runqueue_wait_ms": 1e3 * window["thread_runqueue_wait"],
        "tick_overruns": window["tick_overruns"],
        "scheduling": window.get("scheduling", ""),
        **_gc_overlap(window),
        "loadavg": load,
        "samples": {"lateness": lateness},
    }


def _gc_overlap(window: dict[str, Any]) -> dict[str, Any]:
    """With ``BENCH_GC=1`` in the service: the collections by generation (count, longest
    ms) and how many periods late by > 0.5 ms overlapped one (a period's wait runs from its
    deadline, ``t - late``, to ``t``). Empty otherwise."""
    gcs, lates = window.get("gc_events", []), window.get("late_events", [])
    if not gcs:
        return {}
    by_gen: dict[str, dict[str, float]] = {}
    for gen, start, end in gcs:
        g = by_gen.setdefault(str(gen), {"count": 0, "max_ms": 0.0})
        g["count"] += 1
        g["max_ms"] = max(g["max_ms"], (end - start) * 1e3)
    overlapped = sum(
        any(start <= t and end >= t - late for _, start, end in gcs) for t, late in lates
    )
    return {"gc": by_gen, "late_periods": len(lates), "late_periods_during_gc": overlapped}


def report(results: dict[str, Any]) -> str:
    rows = []
    for name, r in results.items():
        if not isinstance(r, dict) or "lateness_ms" not in r:
            continue
        s = r["lateness_ms"]
        rows.append(
            [
                name,
                str(r["periods"]),
                fmt(s["median"]),
                fmt(s["p99"]),
                fmt(s["max"]),
                str(r["missed"]),
                f"{r['streamer_cpu_percent']:.1f}",
                f"{r['publish_percent']:.1f}",
                f"{r['service_cpu_percent']:.1f}",
            ]
        )
    return table(
        (
            "condition",
            "periods",
            "late median ms",
            "late p99 ms",
            "late max ms",
            "missed",
            "streamer % core",
            "publishing %",
            "service %",
        ),
        rows,
    )


def rows(st: dict[str, Any]) -> list[list[str]]:
    """The summary's rows: lateness, missed periods and the streamer's CPU per condition,
    judged where no CPU hog runs."""
    out = []
    for name, r in st.items():
        if not isinstance(r, dict) or "lateness_ms" not in r:
            continue
        judged = "hog" not in name
        s, cpu = r["lateness_ms"], r["streamer_cpu_percent"]
        out.append(figure_row("stream 500 Hz lateness", name, s, "p99 <= 0.25 ms", s["p99"] <= TARGETS["p99_ms"] if judged else None))  # fmt: skip
        out.append(["stream missed periods", name, f"{r['missed']} of {r['expected_periods']}", "", "0 in the run", check(r["missed"] == 0 if judged else None)])  # fmt: skip
        out.append(["streamer CPU, % of a core", name, f"{cpu:.1f}", "", "<= 15 %", check(cpu <= TARGETS["cpu_percent"] if judged else None)])  # fmt: skip
    return out


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    """``make bench``'s: idle and with a CPU hog, at both schedulings; the smallest, idle."""
    if options.size == "smallest":
        return run(1.0, (False,))
    seconds = sized(options, 20.0, 5.0, 1.0)
    return with_realtime(lambda rt: run(seconds, (False, True), rt))


PART = Part("stream", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seconds", type=float, default=20.0)
        parser.add_argument("--hog", action="store_true", help="also with one CPU-burning process")
        parser.add_argument(
            "--realtime",
            action="store_true",
            help="the streamer thread SCHED_FIFO (stream_priority)",
        )

    return cli(
        __doc__,
        lambda args: run(args.seconds, (False, True) if args.hog else (False,), args.realtime),
        report,
        arguments,
    )


if __name__ == "__main__":
    sys.exit(main())
