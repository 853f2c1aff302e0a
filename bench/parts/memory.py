"""The service's resident memory after 1,000 mission runs, against after 10.

    python -m bench.parts.memory [--runs 1000]

The real service (``atom-executive run``) with a missions directory of one tiny but real
mission, ``tiny``: a ``log``, then a ``move_joints`` of one finger paced at 1.5 rad/s, about
40 ms for its 0.03 rad (the hands stream engages, a trajectory runs, the stream disengages
at the end), so a run goes through the request server, the mission loader and builder,
the tree, the motion streamer, the run record and the status publisher.
``bench.robot.BenchRobot`` publishes the robot's state; the finger's target alternates 0.03 rad either side of where it is measured, so
the move arrives within its tolerance when the trajectory ends.

First the service idles for ``--warmup`` seconds (120): left alone after READY, with the
robot's state arriving, its RSS grows by ~2 MB over its first minutes and then settles,
and that warm-up is not the runs' doing. Then runs go back to back: a signed ``start``,
then the status's run counter and a finished state. The service's RSS (``VmRSS``) is read
every 10 s of the warm-up, after 10 runs and every 50 after that.
"Flat" is judged by the growth from run 10 to the last, and the slope (KiB per run) of
a straight line through the samples of the second half.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import check, cli, table
from bench.parts import Part, sized
from bench.robot import BenchRobot, base_pose
from executive.harness.stack import Stack, running_stack
from executive.seam.profile import RobotProfile, load_profile

TARGET_MB = 150.0
DONE = ("SUCCEEDED", "FAILED", "ABORTED", "SAFE_STOP")


def write_mission(directory: Path, profile: RobotProfile) -> float:
    """``tiny``; returns the finger's measured position (its targets are either side)."""
    j = profile.joints["right_index"]
    base = float(base_pose(profile, "hands")[j.index])
    (directory / "tiny.yaml").write_text(
        f"""# bench/parts/memory.py: a tiny but real mission, run 1,000 times.
mission: tiny
description: Log a line, then move one finger a little.
params:
  q:
    type: number
    default: {base:.4f}
    min: {j.lower}
    max: {j.upper}
    description: Where the right index finger goes.
tree:
  sequence:
    name: Tiny
    children:
      - log: {{message: tiny run}}
      - move_joints:
          name: Finger
          joints:
            right_index: ${{q}}
          speed: 1.5  # rad/s peak: ~40 ms for its 0.03 rad (a duration is refused: the
          timeout: 2  # finger may start anywhere, and the caps need 0.86 s for the range)
"""
    )
    return base


def run_once(stack: Stack, n: int, q: float) -> str:
    reply = stack.client.request("start", {"mission": "tiny", "params": {"q": q}}, timeout=10)
    if reply.code != 0:
        raise RuntimeError(f"run {n}: start refused: {reply.message}")
    status = stack.client.wait_status(lambda s: s.runs >= n and s.state in DONE, 10)
    if status is None:
        raise RuntimeError(f"run {n} did not finish")
    return str(status.state)


def run(runs: int = 1000, warmup: float = 120.0) -> dict[str, Any]:
    profile = load_profile()
    missions = Path(tempfile.mkdtemp(prefix="bench-memory-missions-"))
    samples: list[tuple[int, float]] = []
    results: dict[str, int] = {}
    try:
        base = write_mission(missions, profile)
        with running_stack() as stack:
            stack.write_config(missions_dir=str(missions))
            robot = BenchRobot(stack.dds, profile, watch_commands=False).start()
            try:
                stack.start_service(ready=True)
                idle: list[tuple[float, float]] = []
                t0 = time.monotonic()
                while (waited := time.monotonic() - t0) < warmup:  # the RSS warms up alone
                    idle.append((round(waited, 1), stack.rss_kib("executive") / 1024))
                    time.sleep(min(10.0, warmup - waited))
                samples.append((0, stack.rss_kib("executive") / 1024))
                started = time.monotonic()
                for n in range(1, runs + 1):
                    state = run_once(stack, n, base + (0.03 if n % 2 else -0.03))
                    results[state] = results.get(state, 0) + 1
                    if n == 10 or n % 50 == 0 or n == runs:
                        samples.append((n, stack.rss_kib("executive") / 1024))
                took = time.monotonic() - started
            finally:
                robot.close()
    finally:
        shutil.rmtree(missions, ignore_errors=True)
    at = dict(samples)
    late = [(n, mb) for n, mb in samples if n >= runs / 2]
    slope = float(np.polyfit(*zip(*late, strict=True), 1)[0]) * 1024 if len(late) > 1 else 0.0
    return {
        "runs": runs,
        "results": results,
        "seconds": round(took, 1),
        "warmup_s": warmup,
        "rss_mb_idle_warmup": idle,
        "rss_mb_at_start": at[0],
        "rss_mb_after_10": at.get(10, float("nan")),
        "rss_mb_after_all": at[runs],
        "growth_mb": at[runs] - at.get(10, at[0]),
        "slope_kib_per_run_second_half": slope,
        "samples": samples,
    }


def report(r: dict[str, Any]) -> str:
    rows = [
        [
            "RSS at READY",
            f"{r['rss_mb_idle_warmup'][0][1] if r['rss_mb_idle_warmup'] else r['rss_mb_at_start']:.1f} MB",
        ],
        [f"RSS after {r['warmup_s']:.0f} s idle", f"{r['rss_mb_at_start']:.1f} MB"],
        ["RSS after 10 runs", f"{r['rss_mb_after_10']:.1f} MB"],
        [f"RSS after {r['runs']} runs", f"{r['rss_mb_after_all']:.1f} MB"],
        ["growth 10 -> last", f"{r['growth_mb']:+.2f} MB"],
        ["slope, second half", f"{r['slope_kib_per_run_second_half']:+.2f} KiB/run"],
        ["results", ", ".join(f"{k} {v}" for k, v in sorted(r["results"].items()))],
        ["time", f"{r['seconds']} s"],
    ]
    return table(("memory", "value"), rows)


FLAT_KIB_PER_RUN = 1.0  # "flat": the second half's slope stays under this


def rows(m: dict[str, Any]) -> list[list[str]]:
    """The summary's row: the RSS after every run, at most the target and flat."""
    slope = m["slope_kib_per_run_second_half"]
    ok = m["rss_mb_after_all"] <= TARGET_MB and slope <= FLAT_KIB_PER_RUN
    return [[f"RSS after {m['runs']} runs (MB)", f"after 10: {m['rss_mb_after_10']:.1f}", f"{m['rss_mb_after_all']:.1f}", f"{slope:+.2f} KiB/run", f"<= {TARGET_MB:.0f} MB, flat", check(ok)]]  # fmt: skip


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(options.runs or sized(options, 1000, 100, 20), sized(options, 120.0, 10.0, 1.0))


PART = Part("memory", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--runs", type=int, default=1000)
        parser.add_argument("--warmup", type=float, default=120.0, help="idle seconds first")

    return cli(__doc__, lambda args: run(args.runs, args.warmup), report, arguments)


if __name__ == "__main__":
    sys.exit(main())
