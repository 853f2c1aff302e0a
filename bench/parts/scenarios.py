"""Mission tests (issue 31): every shipped scenario in simulated time, and one beside its run
in real time.

    python -m bench.parts.scenarios [--jobs 2] [--one deliver_drink.succeeds]

- all: ``atom-executive test missions/tests --jobs N`` as a process of its own, from its
  spawn to its exit (imports, the files checked, every scenario run and judged): its wall
  time, and its CPU time (user + system of it and its worker processes:
  ``RUSAGE_CHILDREN``); each scenario's simulated seconds, wall and CPU from the JUnit
  report. Issue 31's target: all of them in under 60 s on this 2-core machine.
- one: a scenario run alone (``--jobs 1``) in simulated time, then with ``--realtime``
  against the real service and simulator processes: the speed-up is the real run's wall
  time over the simulated one's (each from its spawn to its exit).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.harness import ROOT, check, cli, fmt, loadavg, table
from bench.parts import Part, sized

TESTS = ROOT / "missions" / "tests"
ONE = "deliver_drink.succeeds"
TARGET_ALL_S = 60.0


def _test(*args: str, junit: Path | None = None) -> dict[str, Any]:
    """``atom-executive test ARGS`` as a process: its wall and CPU time, exit code, and
    each scenario's figures (from its JUnit report)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    report = ["--junit", str(junit)] if junit else []
    proc = subprocess.run(
        [sys.executable, "-m", "executive.cli", "test", *args, *report],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cases = []
    if junit is not None and junit.exists():
        # the report our own command just wrote, not untrusted input
        for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314
            props = {p.get("name"): p.get("value") for p in case.iter("property")}
            cases.append(
                {
                    "name": case.get("name"),
                    "wall_s": float(case.get("time") or 0),
                    "simulated_s": float(props.get("simulated_s") or 0),
                    "real_s": float(props.get("real_s") or 0),
                    "cpu_s": float(props.get("cpu_s") or 0),
                    "failed": case.find("failure") is not None,
                }
            )
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "code": proc.returncode,
        "out": proc.stdout,
        "cases": cases,
    }


SMALLEST = ("greeting_wave.stop", "head_scan.battery")  # seconds: the harness checked


def run(
    jobs: int = 2, one: str = ONE, realtime: bool = True, only: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``only``: these scenarios instead of every shipped one (a smallest run)."""
    work = Path(tempfile.mkdtemp(prefix="bench-scenarios-"))
    load = loadavg()
    paths = [str(next(TESTS.rglob(f"{n}.test.yaml"))) for n in only] or [str(TESTS)]
    every = _test(*paths, "--jobs", str(jobs), junit=work / "all.xml")
    if every["code"] != 0:
        raise RuntimeError(f"the shipped scenarios did not all pass:\n{every['out']}")
    path = next(TESTS.rglob(f"{one}.test.yaml"))
    simulated = _test(str(path), junit=work / "one.xml")
    real = _test(str(path), "--realtime", junit=work / "real.xml") if realtime else None
    return {
        "load_at_start": load,
        "jobs": jobs,
        "all": {k: every[k] for k in ("wall_s", "cpu_s", "cases")},
        "one": {
            "name": one,
            "simulated": {k: simulated[k] for k in ("wall_s", "cpu_s", "cases")},
            "real": None if real is None else {k: real[k] for k in ("wall_s", "cpu_s", "cases")},
        },
    }


def report(r: dict[str, Any]) -> str:
    a = r["all"]
    sim_s = sum(c["simulated_s"] for c in a["cases"])
    rows = [
        [
            f"all {len(a['cases'])} shipped scenarios, --jobs {r['jobs']}",
            fmt(a["wall_s"]),
            fmt(a["cpu_s"]),
            fmt(sim_s),
            f"{sim_s / a['wall_s']:.1f}x",
        ]
    ]
    one = r["one"]
    s = one["simulated"]
    s_sim = s["cases"][0]["simulated_s"] if s["cases"] else float("nan")
    rows.append([f"{one['name']}, simulated time", fmt(s["wall_s"]), fmt(s["cpu_s"]), fmt(s_sim), f"{s_sim / s['wall_s']:.1f}x"])  # fmt: skip
    if one["real"] is not None:
        q = one["real"]
        q_real = q["cases"][0]["real_s"] if q["cases"] else float("nan")
        rows.append([f"{one['name']}, --realtime", fmt(q["wall_s"]), "-", fmt(q_real), f"{q_real / q['wall_s']:.1f}x"])  # fmt: skip
    out = table(("what", "wall s", "CPU s", "scenario s", "scenario / wall"), rows)
    slowest = sorted(a["cases"], key=lambda c: -c["wall_s"])[:5]
    out += "\nslowest: " + "; ".join(
        f"{c['name']} {fmt(c['simulated_s'])} s in {fmt(c['wall_s'])} s" for c in slowest
    )
    return out


def rows(r: dict[str, Any]) -> list[list[str]]:
    """The summary's rows: all shipped scenarios' wall time against 60 s; the speed-up."""
    a = r["all"]
    out = [
        [
            "all shipped scenarios, simulated time (s)",
            f"{len(a['cases'])}, --jobs {r['jobs']}, CPU {fmt(a['cpu_s'])} s",
            fmt(a["wall_s"]),
            "-",
            f"< {TARGET_ALL_S:g} s",
            check(a["wall_s"] < TARGET_ALL_S),
        ]
    ]
    one = r["one"]
    if one["real"] is not None:
        speedup = one["real"]["wall_s"] / one["simulated"]["wall_s"]
        out.append(
            [
                f"{one['name']}: real time / simulated time (wall)",
                f"{fmt(one['real']['wall_s'])} s / {fmt(one['simulated']['wall_s'])} s",
                f"{speedup:.1f}x",
                "-",
                "-",
                check(None),
            ]
        )
    return out


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(2, ONE, sized(options, True, True, False), sized(options, (), (), SMALLEST))


PART = Part("scenarios", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--jobs", type=int, default=2)
        parser.add_argument("--one", default=ONE, help="the scenario run both ways")
        parser.add_argument("--no-realtime", action="store_true")

    return cli(
        __doc__, lambda args: run(args.jobs, args.one, not args.no_realtime), report, arguments
    )


if __name__ == "__main__":
    sys.exit(main())
