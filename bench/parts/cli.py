"""The CLI's wall time: ``atom-executive --help``, ``status``, ``missions`` and ``watch``
against a running service, beside a bare Python status reader of the same run.

    python -m bench.parts.cli [--runs 15]

A leased loopback domain with the simulated Atom (kinematic physics) and the service
(``executive.harness.stack``), then, ``--runs`` times in turn (after one warm-up round
that is not counted), each command as a fresh process, timed from just before the spawn
to its exit (``watch``: to its first frame on standard output, then it is interrupted):

- ``python -c pass``: the interpreter alone, for scale;
- the floor, ``bench/status_floor.py``: a bare Python process that imports cyclonedds
  and the generated status type, reads the status topic once and prints it;
- ``atom-executive --help``, ``status``, ``missions`` and ``watch --plain``.

Each figure is printed beside the floor with the ratio of the medians; issue 22's target:
``status`` (and ``--help``, which needs no DDS at all) at most ``TARGET_RATIO`` x the
floor. The commands run as a person runs them: the console script, the stack's domain
in ``ATOM_DDS_DOMAIN``, loopback DDS, no harness variables.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.harness import ROOT, cli, fmt, summary, table
from bench.parts import Part, sized
from executive.cli import PARENT_ENV
from executive.harness.stack import running_stack

TARGET_RATIO = 2.0  # issue 22: status at most 2x the bare Python status reader
FLOOR = "floor: bare status reader"
TARGETED = ("atom-executive --help", "atom-executive status")
TIMEOUT_S = 30.0


def executable() -> list[str]:
    """``atom-executive`` as installed beside this interpreter (the console script a
    person runs), else the module."""
    script = Path(sys.executable).parent / "atom-executive"
    return [str(script)] if script.exists() else [sys.executable, "-m", "executive.cli"]


def commands() -> dict[str, list[str]]:
    exe = executable()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        FLOOR: [sys.executable, str(ROOT / "bench" / "status_floor.py")],
        "atom-executive --help": [*exe, "--help"],
        "atom-executive status": [*exe, "status"],
        "atom-executive missions": [*exe, "missions"],
        "atom-executive watch (first frame)": [*exe, "watch", "--plain"],
    }


def wall_s(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from just before the spawn to the exit; a failure raises with its output."""
    t = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, timeout=TIMEOUT_S, check=False)
    took = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]!r}")
    return took


def first_frame_s(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from just before the spawn to the first line on standard output (``watch``
    prints a frame, flushed, as soon as it has a status); then it is interrupted."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        took = time.perf_counter() - t
        if not line:
            raise RuntimeError(f"{' '.join(argv)} printed nothing: {proc.stderr.read()!r}")  # type: ignore[union-attr]
        return took
    finally:
        proc.send_signal(signal.SIGINT)  # watch ends on Ctrl-C, exit 0
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def measure(runs: int) -> dict[str, Any]:
    cmds = commands()
    timers: dict[str, Callable[[list[str], dict[str, str]], float]] = {
        name: first_frame_s if "watch" in name else wall_s for name in cmds
    }
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    with running_stack() as stack:
        stack.start_sim("--physics", "kinematic")
        stack.start_service()
        env = {k: v for k, v in stack.env().items() if k != PARENT_ENV}
        for round_ in range(runs + 1):  # round 0 warms caches and is not counted
            names = list(cmds)
            shift = round_ % len(names)  # each command in every position over the rounds
            for name in names[shift:] + names[:shift]:
                took = timers[name](cmds[name], env)
                if round_:
                    samples[name].append(took)
    return {
        "runs": runs,
        "commands": {name: " ".join(argv) for name, argv in cmds.items()},
        "wall_s": {name: summary(values) for name, values in samples.items()},
        "samples_s": samples,
    }


def ratios(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each command's median and max over the floor's (the same run's)."""
    walls = results["wall_s"]
    floor = walls[FLOOR]
    return {
        name: {
            "median": s["median"] / floor["median"],
            "max": s["max"] / floor["max"],
        }
        for name, s in walls.items()
        if name != FLOOR
    }


def met(results: dict[str, Any]) -> dict[str, bool]:
    """Issue 22's target for each targeted command: the median at most 2x the floor's."""
    r = ratios(results)
    return {name: r[name]["median"] <= TARGET_RATIO for name in TARGETED}


def run(runs: int = 15) -> dict[str, Any]:
    results = measure(runs)
    results["over_floor"] = ratios(results)
    results["met"] = met(results)
    return results


def rows(results: dict[str, Any]) -> list[list[str]]:
    """``bench.run``'s summary: benchmark, condition, median, p99, target, verdict (s)."""
    walls, over, verdict = results["wall_s"], results["over_floor"], results["met"]
    floor = walls[FLOOR]
    condition = f"{results['runs']} runs, idle service"
    rows = []
    for name in TARGETED:
        s, r = walls[name], over[name]
        rows.append(
            [
                f"{name} (s)",
                condition,
                fmt(s["median"]),
                fmt(s["p99"]),
                f"<= {TARGET_RATIO:.0f}x floor: {r['median']:.2f}x",
                "met" if verdict[name] else "MISSED",
            ]
        )
    rows.append([f"  {FLOOR} (s)", condition, fmt(floor["median"]), fmt(floor["p99"]), "", "-"])
    return rows


def report(results: dict[str, Any]) -> str:
    walls, over, verdict = results["wall_s"], results["over_floor"], results["met"]
    floor = walls[FLOOR]
    rows = []
    for name, s in walls.items():
        if name == FLOOR:
            rows.append([name, fmt(s["median"]), fmt(s["p99"]), fmt(s["max"]), "", "", "-"])
            continue
        r = over[name]
        target = f"<= {TARGET_RATIO:.0f}x floor" if name in verdict else ""
        check = ("met" if verdict[name] else "MISSED") if name in verdict else "-"
        rows.append(
            [
                name,
                fmt(s["median"]),
                fmt(s["p99"]),
                fmt(s["max"]),
                f"{r['median']:.2f}x / {r['max']:.2f}x",
                target,
                check,
            ]
        )
    headers = ("command", "median s", "p99 s", "max s", "over floor (median / max)", "target", "verdict")  # fmt: skip
    head = f"{results['runs']} runs each; floor median {fmt(floor['median'])} s"
    return head + "\n" + table(headers, rows)


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(sized(options, 15, 5, 1))


PART = Part("cli", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--runs", type=int, default=15)

    return cli(__doc__, lambda args: run(args.runs), report, arguments)


if __name__ == "__main__":
    sys.exit(main())
