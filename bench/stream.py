"""The 500 Hz command stream in the running service: lateness, missed periods, CPU share.

    python bench/stream.py [--seconds 20] [--hog]

The real service (``bench.service_probe``: ``atom-executive run`` with its inner figures
readable) runs ``estop_bench`` (``bench/estop.py``: a two-minute move that engages the
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
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: python bench/stream.py
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    cli,
    cpu_hog,
    fmt,
    loadavg,
    service_scheduling,
    summary,
    table,
)
from bench.estop import STREAM_NAMES, write_mission  # noqa: E402
from bench.robot import BenchRobot  # noqa: E402
from bench.service_probe import ProbedService  # noqa: E402
from executive.harness.stack import running_stack  # noqa: E402
from executive.seam.profile import load_profile  # noqa: E402

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
    missions = Path(tempfile.mkdtemp(prefix="bench-stream-missions-"))
    try:
        write_mission(missions, profile)
        with running_stack() as stack:
            stack.write_config(missions_dir=str(missions), **config)
            robot = BenchRobot(stack.dds, profile).start()
            try:
                service = ProbedService(stack, env)
                reply = stack.client.request("start", {"mission": "estop_bench"}, timeout=10)
                if reply.code != 0:
                    raise RuntimeError(f"start refused: {reply.message}")
                seen: set[str] = set()
                deadline = time.monotonic() + 10
                while seen != set(STREAM_NAMES) and time.monotonic() < deadline:
                    seen |= robot.commands_seen()
                    time.sleep(0.01)
                if seen != set(STREAM_NAMES):
                    raise RuntimeError(f"streams never engaged (saw {sorted(seen)})")
                for hog in hog_modes:
                    with cpu_hog(hog):
                        time.sleep(0.5)
                        load = loadavg()
                        window = service.window(seconds)
                    name = ("cpu hog" if hog else "idle") + (", realtime" if realtime else "")
                    results[name] = _figures(window, load)
                stack.client.request("stop", timeout=10)
            finally:
                robot.close()
    finally:
        shutil.rmtree(missions, ignore_errors=True)
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
