"""Paths around the body: a plan (``path: plan``) beside one collision check of the same
model, in the same run.

    python -m bench.parts.paths [--plans 200]

- Plans: the right arm of the Atom's vendor model between pairs of configurations that
  are clear of the body but whose straight joint path is not (validation would refuse
  the move), drawn at random within the profile's limits from a fixed seed, plus the
  move across the torso the docs and tests use (the tuck to the front of the left side).
  Each is planned by ``executive.reach.plan`` as a leaf plans it (RRT-Connect, the
  simplifier, the segment checks), within the default budget, each with a different
  OMPL seed; success is a path found within it. OMPL's import is warmed first.
- The floor: one collision check as the planner makes it (the arm at a configuration,
  every checked pair with a link it moves, and the scene), the unit a plan is made of.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from bench.harness import cli, fmt, sample_row, summary, table
from bench.parts import Part, sized
from executive.reach import clearance
from executive.reach import plan as paths
from executive.seam import body as bodies
from executive.seam.profile import RobotProfile, load_profile
from tests.reach.across import ACROSS, TUCK  # the move the tests plan

SEED = 30  # the problems' (numpy's); each plan has its own OMPL seed


def problems(
    body: bodies.Body, profile: RobotProfile, arm: tuple[str, ...], n: int
) -> list[tuple[dict[str, float], dict[str, float]]]:
    """``n`` moves of the arm (start over the rest pose, goal) whose ends are clear and
    whose straight path is not: the tuck across first, then random ones."""
    start = dict.fromkeys(arm, 0.0) | TUCK
    out = [(start, dict(ACROSS))]
    rng = np.random.default_rng(SEED)
    # within the profile's limits, and +-2 rad: arms, not contortions
    lo = np.array([max(profile.joints[j].lower, -2.0) for j in arm])
    hi = np.array([min(profile.joints[j].upper, 2.0) for j in arm])
    moving = body.moved_by(arm)

    def clear(q: Mapping[str, float]) -> bool:
        body.pose(q)
        return not (body.collisions(only=moving) or body.scene_hits(only=moving))

    while len(out) < n:
        a = dict(zip(arm, rng.uniform(lo, hi).tolist(), strict=True))
        b = dict(zip(arm, rng.uniform(lo, hi).tolist(), strict=True))
        if clear(a) and clear(b) and clearance.first_hit(body, a, b) is not None:
            out.append((a, b))
    return out


def run(n: int = 200) -> dict[str, Any]:
    profile = load_profile()
    body = bodies.load(profile)
    arm = tuple(profile.joint_sets["right_arm"])
    moves = problems(body, profile, arm, max(2, n // 4))  # each planned 4 times, other seeds
    paths.plan(body, profile, *moves[0])  # warm: OMPL's import
    times, found, segments = [], 0, []
    for k in range(n):
        start, goal = moves[k % len(moves)]
        t = time.perf_counter()
        path = paths.plan(body, profile, start, goal, seed=1000 + k)
        times.append(time.perf_counter() - t)
        found += path.ok
        if path.ok:
            segments.append(len(path.waypoints))
    checks = []
    moving = body.moved_by(arm)
    base = body.qpos(moves[0][0])
    for _ in range(max(2000, 20 * n)):
        t = time.perf_counter()
        body.set_qpos(base)
        _ = body.collisions(only=moving) or body.scene_hits(only=moving)
        checks.append(time.perf_counter() - t)
    return {
        "plan_ms": summary(times, 1e3),
        "check_us": summary(checks, 1e6),
        "found": found,
        "plans": n,
        "moves": len(moves),
        "segments": summary(segments),
        "budget_s": paths.PLAN_TIMEOUT,
    }


def report(r: dict[str, Any]) -> str:
    planned = (
        f"plan around the body, right arm ({r['found']}/{r['plans']} found, "
        f"{r['moves']} moves, budget {r['budget_s']:g} s)"
    )
    rows = [
        sample_row(planned, r["plan_ms"], "ms"),
        sample_row("floor: one collision check", r["check_us"], "us"),
    ]
    return table(("what", "n", "median", "p99"), rows)


def rows(r: dict[str, Any]) -> list[list[str]]:
    per_check = r["plan_ms"]["median"] * 1e3 / r["check_us"]["median"]
    rate = 100 * r["found"] / r["plans"]
    return [
        [
            "path plan, right arm (ms)",
            f"{r['plans']} plans, {rate:.0f}% found; floor: check "
            f"{fmt(r['check_us']['median'], 1)} us ({per_check:.0f}x)",
            fmt(r["plan_ms"]["median"], 1),
            fmt(r["plan_ms"]["p99"], 1),
            "-",
            "-",
        ],
    ]


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(sized(options, 200, 40, 4))


PART = Part("paths", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--plans", type=int, default=200)

    return cli(__doc__, lambda args: run(args.plans), report, arguments)


if __name__ == "__main__":
    sys.exit(main())
