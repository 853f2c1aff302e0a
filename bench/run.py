"""``make bench``: every benchmark, one table, ``bench/results/latest.json`` and the plots.

    python -m bench.run                      # everything, about 6 minutes on 2 cores
    python -m bench.run --quick              # shortened runs, to check the harness
    python -m bench.run --only estop,stream  # some of: codec startup tick stream estop
                                             # estop_c grx reflex memory cli idle fleet
                                             # fleet_scale groot2 scenarios

Each part is a module of ``bench/`` that also runs alone (``python bench/parts/estop.py -h``):

- ``codec``: serialization of the hot wire types against stock cyclonedds-python;
- ``startup``: validation of 100 mission files; the service's start to READY=1;
- ``tick``: tick time of 10-, 100- and 1000-node trees in the running service;
- ``stream``: the 500 Hz command stream in the running service (lateness, misses, CPU);
- ``estop``: e-stop to hold and to the AMR cancel across three processes, idle and with a
  CPU hog, against a plain relay and ddsperf's ping-pong;
- ``estop_c``: the same figure with the e-stop written by the C robot (``tests/crobot``,
  CycloneDDS 0.10 and idlc, as the firmware), beside it and over the same ddsperf floor;
- ``grx``: the Fourier GRX over loopback zenoh: a plain robot's task map to the adapter's
  snapshot, and its error code mid-walk to zero joystick axes (the safe stop), against a
  plain zenoh one-way and round trip of the same run;
- ``reflex``: the service as shipped (the e-stop reflex, the streamer SCHED_FIFO) and as
  before, every figure against a floor measured in the same run (``bench/floor.py``: a C
  relay, a C SCHED_FIFO loop), e-stops with the interpreter blocked, issue 14's targets;
- ``memory``: the service's RSS after 1,000 mission runs against after 10;
- ``cli``: ``atom-executive --help`` and ``status`` wall time against a bare Python status
  reader of the same run (issue 22's target: at most 2x);
- ``idle``: the idle service's CPU beside each simulated robot and each simulated robot's,
  as before issue 22 and against a C robot publishing the same topics (issue 22's targets);
- ``fleet``: the status document to the fleet view through one router (median, p99), the
  service's CPU with the fleet plane off and on, and the router's (issue 24);
- ``fleet_scale``: 10, 100 and 500 stand-in robots on the fleet plane through one router,
  two joined routers and one over TLS: the view's status latency, CPU, memory and frame
  time, a request's round trip, the routers' CPU and memory, against N (issue 34);
- ``groot2``: the tick loop's p99 with a Groot2 client polling statuses at 50 Hz and
  without (their ratio), beside bare py_trees ticking the same tree; the publisher's CPU
  at idle with no client, beside a bare pyzmq poll (issue 32);
- ``scenarios``: every shipped mission scenario in simulated time (wall and CPU), and one
  beside its run in real time (issue 31).

Every DDS participant uses the loopback config (``CYCLONEDDS_URI`` is set to
``executive/resources/cyclonedds-loopback.xml`` when unset) and a leased domain. The
results, with the machine they came from and every sample the plots use, go to
``bench/results/latest.json``; the plots (with the ``bench`` extra installed: matplotlib)
to ``docs/img/``. See ``docs/benchmarks.md`` for the method and the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from bench.harness import RESULTS, ROOT, busy_processes, loadavg, machine, setup, table
from bench.parts import (
    SIZES,
    Part,
    codec,
    estop,
    estop_c,
    fleet,
    fleet_scale,
    groot2,
    grx,
    idle,
    memory,
    options,
    paths,
    reach,
    reflex,
    scenarios,
    startup,
    stream,
    tick,
)
from bench.parts import cli as cli_wall

# in the order they run: a part may read the results of the ones before it (estop_c the
# estop part's ddsperf floor, reflex the tick part's 100-node tree)
PARTS: tuple[Part, ...] = tuple(
    m.PART
    for m in (
        codec,
        startup,
        reach,
        paths,
        tick,
        stream,
        estop,
        estop_c,
        grx,
        reflex,
        memory,
        cli_wall,
        idle,
        fleet,
        fleet_scale,
        groot2,
        scenarios,
    )
)
NAMES = [part.name for part in PARTS]


def summary_rows(results: dict[str, Any]) -> list[list[str]]:
    """benchmark, condition, median, p99 (or the figure), target, verdict: every part's
    that ran."""
    return [row for part in PARTS if results.get(part.name) for row in part.rows(results[part.name])]  # fmt: skip


def report(results: dict[str, Any]) -> str:
    return table(
        ("benchmark", "condition", "median", "p99", "target", "verdict"), summary_rows(results)
    )


def _json_safe(value: Any) -> Any:
    """NaN is not JSON: write null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run",
        description=(__doc__ or "").split("\n\n")[0],
    )
    parser.add_argument("--only", help=f"comma-separated parts (default all: {','.join(NAMES)})")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="shortened runs, to check the harness")
    size.add_argument(
        "--smallest",
        action="store_true",
        help="each part's smallest form (seconds, a few events): its rows, not its figures",
    )
    parser.add_argument("--events", type=int, help="e-stop events per condition (default 200)")
    parser.add_argument("--c-events", type=int, help="e-stop events from the C robot (default 30)")
    parser.add_argument("--grx-events", type=int, help="events per GRX figure (default 30)")
    parser.add_argument(
        "--runs", type=int, help="mission runs for the memory figure (default 1000)"
    )
    parser.add_argument("--json", type=Path, default=RESULTS / "latest.json")
    parser.add_argument("--plots", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    args.parts = args.only.split(",") if args.only else list(NAMES)
    unknown = set(args.parts) - set(NAMES)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))} (known: {', '.join(NAMES)})")
    return args


def main(argv: list[str] | None = None) -> int:
    setup()
    args = parse(argv)
    size = SIZES[1] if args.quick else SIZES[2] if args.smallest else SIZES[0]
    given = {k: getattr(args, k) for k in ("events", "c_events", "grx_events", "runs")}
    opts = options(size, **given)
    results: dict[str, Any] = {
        "machine": machine(),
        "busy_at_start": busy_processes(),
        "quick": args.quick,
        "size": size,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }
    began = time.monotonic()
    for part in PARTS:
        if part.name not in args.parts:
            continue
        print(f"== {part.name} (load {loadavg()[0]})", flush=True)
        t = time.monotonic()
        results[part.name] = part.run(opts, results)
        print(part.report(results[part.name]))
        print(f"   {time.monotonic() - t:.0f} s\n", flush=True)
    results["seconds"] = round(time.monotonic() - began, 1)
    results["loadavg_at_end"] = loadavg()
    print(
        f"== summary ({results['machine']['nproc']} x {results['machine']['cpu']}, "
        f"load {results['machine']['loadavg_at_start'][0]} -> {results['loadavg_at_end'][0]}, "
        f"{results['seconds']:.0f} s)"
    )
    print(report(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(_json_safe(results), indent=1))
    print(f"\nresults: {args.json}")
    if not args.no_plots:
        try:
            from bench import plots
        except ImportError:
            print("plots: matplotlib is not installed (pip install -e '.[bench]')")
        else:
            made = plots.make(results, args.plots)
            for part in PARTS:
                if part.plot is not None and results.get(part.name):
                    made += part.plot(results[part.name], args.plots)
            for path in made:
                print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
