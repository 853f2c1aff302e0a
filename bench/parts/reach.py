"""Reach: an IK solve beside one forward kinematics of the same model; validation with
the solved poses beside validation without them.

    python -m bench.parts.reach [--solves 200]

- IK: the right arm solved for points on a grid over its workspace in front of and beside
  the robot (``executive.reach.ik``: mink, DAQP, the collision limit), each from the rest
  pose with the solver's memory of earlier answers emptied, so every solve is a solve.
  Reachable and unreachable points alike: a refusal costs what the solver spent finding
  there is no answer. The floor, in the same run: one forward kinematics of the same
  compiled model (``Body.pose`` + ``Body.point``), the unit a solve is made of.
- Validation: the shipped missions checked by one fresh loader (``validate_files``, as
  ``atom-executive validate`` uses it), with the shipped library (its poses solved for
  their intent included: ``missions/poses/places.yaml``) and with that file left out;
  the ratio is what solving the library adds to a validation. The solver's memory of
  earlier answers is emptied before each (a loader in the same process would not solve
  again); mink's import is warmed, as a service that has validated once has it.
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

from bench.harness import ROOT, check, cli, fmt, sample_row, summary, table
from bench.parts import Part, sized
from executive.mission.loader import validate_files
from executive.reach import ik
from executive.reach.ik import Goal, Solver
from executive.seam import body as bodies
from executive.seam.profile import load_profile

MISSIONS = ROOT / "missions"
SOLVED = "places.yaml"  # the shipped poses given by where they go


def grid(n: int) -> list[tuple[float, float, float]]:
    """``n`` points over the right arm's workspace (x forward, y right, z up), in a fixed
    order: some out of reach, some inside the body, most reachable."""
    xs, ys, zs = (0.15, 0.3, 0.45, 0.6), (-0.05, -0.2, -0.35, -0.5), (-0.2, 0.0, 0.2, 0.4)
    points = [(x, y, z) for z in zs for y in ys for x in xs]
    return [points[i % len(points)] for i in range(n)]


def solves(n: int) -> dict[str, Any]:
    profile = load_profile()
    solver = Solver(profile)
    arm = solver.joints_of("right_arm")
    solver.solve([Goal("right_hand", (0.45, -0.2, 0.1))], arm, {})  # warm: imports, the QP
    times, reached, iterations = [], 0, []
    for at in grid(n):
        solver._solved.clear()  # every solve a solve, not a memory
        t = time.perf_counter()
        sol = solver.solve([Goal("right_hand", at)], arm, {})
        times.append(time.perf_counter() - t)
        reached += sol.ok
        iterations.append(sol.iterations)
    body = bodies.load(profile)
    fk = []
    q = {j: 0.3 for j in arm}
    for _ in range(max(1000, 10 * n)):
        t = time.perf_counter()
        body.pose(q)
        body.point("right_hand")
        fk.append(time.perf_counter() - t)
    return {
        "solve_ms": summary(times, 1e3),
        "fk_us": summary(fk, 1e6),
        "reached": reached,
        "points": n,
        "iterations": summary(iterations),
    }


def validation(repeats: int) -> dict[str, Any]:
    profile = load_profile()
    work = Path(tempfile.mkdtemp(prefix="bench-reach-"))
    out: dict[str, Any] = {}
    try:
        for case in ("without", "with"):
            root = work / case
            for folder in ("poses", "gestures", "subtrees"):
                shutil.copytree(MISSIONS / folder, root / folder)
            if case == "without":
                (root / "poses" / SOLVED).unlink()
            paths = []
            for src in sorted(MISSIONS.glob("*.yaml")):
                shutil.copy(src, root / src.name)
                paths.append(root / src.name)
            validate_files(paths[:1], profile, root)  # warm imports (mink's too)
            times = []
            for _ in range(repeats):
                for solver in getattr(ik._local, "solvers", {}).values():
                    solver._solved.clear()  # the process's memory of answers: solve again
                t = time.perf_counter()
                results = validate_files(paths, profile, root)
                times.append(time.perf_counter() - t)
                if not all(r.ok for r in results):
                    raise AssertionError("a shipped mission does not validate")
            out[case] = summary(times)
            out["files"] = len(paths)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def run(n: int = 200, repeats: int = 5) -> dict[str, Any]:
    return {"ik": solves(n), "validation": validation(repeats)}


def report(results: dict[str, Any]) -> str:
    ik, v = results["ik"], results["validation"]
    rows = [
        sample_row(
            f"IK solve, right arm ({ik['reached']}/{ik['points']} reached)", ik["solve_ms"], "ms"
        ),
        sample_row("floor: one forward kinematics", ik["fk_us"], "us"),
        [
            f"validate {v['files']} shipped missions, without solved poses",
            str(v["without"]["n"]),
            f"{fmt(v['without']['median'])} s",
            f"{fmt(v['without']['p99'])} s",
        ],
        [
            f"validate {v['files']} shipped missions, with them",
            str(v["with"]["n"]),
            f"{fmt(v['with']['median'])} s",
            f"{fmt(v['with']['p99'])} s",
        ],
    ]
    return table(("what", "n", "median", "p99"), rows)


def rows(s: dict[str, Any]) -> list[list[str]]:
    ik, v = s["ik"], s["validation"]
    ratio = v["with"]["median"] / v["without"]["median"]
    per_fk = ik["solve_ms"]["median"] * 1e3 / ik["fk_us"]["median"]
    return [
        [
            "IK solve, right arm (ms)",
            f"{ik['points']} points; floor: FK {fmt(ik['fk_us']['median'], 1)} us ({per_fk:.0f}x)",
            fmt(ik["solve_ms"]["median"], 1),
            fmt(ik["solve_ms"]["p99"], 1),
            "-",
            check(None),
        ],
        [
            "validation, with solved poses (s)",
            f"{v['files']} files; without: {fmt(v['without']['median'])} s",
            fmt(v["with"]["median"]),
            f"ratio {ratio:.2f}",
            "-",
            check(None),
        ],
    ]


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(sized(options, 200, 40, 4), sized(options, 5, 3, 1))


PART = Part("reach", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--solves", type=int, default=200)
        parser.add_argument("--repeats", type=int, default=5)

    return cli(__doc__, lambda args: run(args.solves, args.repeats), report, arguments)


if __name__ == "__main__":
    sys.exit(main())
