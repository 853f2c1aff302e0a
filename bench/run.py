"""``make bench``: every benchmark, one table, ``bench/results/latest.json`` and the plots.

    python bench/run.py                      # everything, about 6 minutes on 2 cores
    python bench/run.py --quick              # shortened runs, to check the harness
    python bench/run.py --only estop,stream  # some of: codec startup tick stream estop
                                             # estop_c grx reflex memory cli idle fleet
                                             # groot2

Each part is a module of ``bench/`` that also runs alone (``python bench/estop.py -h``):

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
- ``groot2``: the tick loop's p99 with a Groot2 client polling statuses at 50 Hz and
  without (their ratio), beside bare py_trees ticking the same tree; the publisher's CPU
  at idle with no client, beside a bare pyzmq poll (issue 32).

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: python bench/run.py
    sys.path.insert(0, str(ROOT))

from bench import cli as cli_wall  # noqa: E402
from bench import codec, estop, estop_c, grx, memory, reflex, startup, stream, tick  # noqa: E402
from bench import fleet as fleet_plane  # noqa: E402
from bench import groot2 as groot2_view  # noqa: E402
from bench import idle as idle_cpu  # noqa: E402
from bench.common import (  # noqa: E402
    RESULTS,
    busy_processes,
    fmt,
    loadavg,
    machine,
    realtime_available,
    setup,
    table,
)

PARTS = (
    "codec",
    "startup",
    "tick",
    "stream",
    "estop",
    "estop_c",
    "grx",
    "reflex",
    "memory",
    "cli",
    "idle",  # bench/idle.py: idle CPU of the service and the sims against a C robot
    "fleet",  # bench/fleet.py: status to the fleet view through a router; the plane's CPU
    "groot2",  # bench/groot2.py: the tick loop with a Groot2 client and without; idle CPU
)
FLAT_KIB_PER_RUN = 1.0  # "flat": the second half's slope stays under this


def _check(ok: bool | None) -> str:
    return "-" if ok is None else ("met" if ok else "MISSED")


def summary_rows(results: dict[str, Any]) -> list[list[str]]:
    """benchmark, condition, median, p99 (or the figure), target, verdict."""
    rows: list[list[str]] = []
    for part, rows_of in (
        ("estop", _estop_rows),
        ("estop_c", _estop_c_rows),
        ("grx", _grx_rows),
        ("stream", _stream_rows),
        ("codec", _codec_rows),
        ("tick", _tick_rows),
        ("startup", _startup_rows),
        ("memory", _memory_rows),
        ("cli", cli_wall.summary_rows),
        ("idle", idle_cpu.summary_rows),
        ("fleet", fleet_plane.summary_rows),
        ("groot2", groot2_view.summary_rows),
    ):
        if results.get(part):
            rows += rows_of(results[part])
    if results.get("reflex"):  # issue 14's targets, each against its floor
        rows += [[what, "cpu hog, shipped", figure, "", "", verdict] for what, figure, verdict in reflex.verdicts(results["reflex"], results.get("tick"))]  # fmt: skip
    return rows


def _estop_rows(e: dict[str, Any]) -> list[list[str]]:
    rows = []
    if e:
        for name, c in e["conditions"].items():
            for label, key in (
                ("e-stop -> first hold", "hold_ms"),
                ("e-stop -> AMR cancel", "cancel_ms"),
            ):
                s = c[key]
                if "hog" not in name:
                    target, ok = "median <= 0.5 ms", s["median"] <= estop.TARGETS["median"]
                else:
                    target, ok = "p99 <= 1.5 ms", s["p99"] <= estop.TARGETS["p99_hog"]
                if c["lost"]:
                    target, ok = f"{target}; {c['lost']} events lost", False
                rows.append([label, name, fmt(s["median"]), fmt(s["p99"]), target, _check(ok)])
            r = c["relay_ms"]
            ratio = c["hold_over_relay"]
            rows.append(
                [
                    "  plain relay (two hops)",
                    name,
                    fmt(r["median"]),
                    fmt(r["p99"]),
                    f"hold = {ratio['median']:.1f}x / {ratio['p99']:.1f}x",
                    "-",
                ]
            )
            if c.get("ddsperf_rtt_ms"):
                p = c["ddsperf_rtt_ms"]
                ratio = c["hold_over_ddsperf"]
                rows.append(
                    [
                        "  ddsperf ping-pong (C)",
                        name,
                        fmt(p["median"]),
                        fmt(p["p99"]),
                        f"hold = {ratio['median']:.0f}x / {ratio['p99']:.0f}x",
                        "-",
                    ]
                )
    return rows


def _estop_c_rows(e: dict[str, Any]) -> list[list[str]]:
    """The e-stop from C beside the Python robot's rows: the same target, and the ratio to
    the same floor (ddsperf's C ping-pong, as printed in the estop rows)."""
    if not e:
        return []
    name = f"idle, C robot ({e['variant']})"
    s = e["hold_ms"]
    target = "median <= 0.5 ms"
    if e["lost"]:
        target = f"{target}; {e['lost']} events lost"
    rows = [
        [
            "e-stop from C -> first hold",
            name,
            fmt(s["median"]),
            fmt(s["p99"]),
            target,
            _check(estop_c.met(e)),
        ]
    ]
    c = e["cancel_ms"]
    rows.append(["e-stop from C -> AMR cancel", name, fmt(c["median"]), fmt(c["p99"]), "", "-"])
    if e.get("hold_over_ddsperf"):
        ratio = e["hold_over_ddsperf"]
        p = e["ddsperf_rtt_ms"]
        rows.append(
            [
                "  over ddsperf ping-pong (C)",
                name,
                fmt(p["median"]),
                fmt(p["p99"]),
                f"hold = {ratio['median']:.0f}x / {ratio['p99']:.0f}x",
                "-",
            ]
        )
    return rows


def _grx_rows(g: dict[str, Any]) -> list[list[str]]:
    """The GRX's two figures, each with its ratio to the plain zenoh floor of its run."""
    if not g:
        return []
    name = "idle, GRX zenoh"
    lost = f"; {g['lost']} events lost" if g["lost"] else ""
    rows = []
    for label, key, ratio_key, floor in (
        ("GRX state -> snapshot", "state_ms", "state_over_oneway", "one-way"),
        ("GRX error code -> zero axes", "safe_stop_ms", "safe_stop_over_rtt", "round trip"),
    ):
        s, r = g[key], g[ratio_key]
        rows.append(
            [
                label,
                name,
                fmt(s["median"]),
                fmt(s["p99"]),
                f"{r['median']:.1f}x / {r['p99']:.1f}x {floor}{lost}",
                "MISSED" if g["lost"] else "-",
            ]
        )
    for label, key in (("  plain zenoh one-way", "oneway_ms"), ("  plain zenoh round trip", "rtt_ms")):  # fmt: skip
        s = g[key]
        rows.append([label, name, fmt(s["median"]), fmt(s["p99"]), "", "-"])
    return rows


def c_floor(results: dict[str, Any]) -> dict[str, Any] | None:
    """The ddsperf ping-pong the estop part measured idle, for the C robot's ratio."""
    conditions = (results.get("estop") or {}).get("conditions", {})
    floor: dict[str, Any] | None = conditions.get("idle", {}).get("ddsperf_rtt_ms")
    return floor


def _stream_rows(st: dict[str, Any]) -> list[list[str]]:
    rows = []
    if st:
        for name, r in st.items():
            if not isinstance(r, dict) or "lateness_ms" not in r:
                continue
            s = r["lateness_ms"]
            target = "hog" not in name
            rows.append(
                [
                    "stream 500 Hz lateness",
                    name,
                    fmt(s["median"]),
                    fmt(s["p99"]),
                    "p99 <= 0.25 ms",
                    _check(s["p99"] <= stream.TARGETS["p99_ms"] if target else None),
                ]
            )
            rows.append(
                [
                    "stream missed periods",
                    name,
                    f"{r['missed']} of {r['expected_periods']}",
                    "",
                    "0 in the run",
                    _check(r["missed"] == 0 if target else None),
                ]
            )
            rows.append(
                [
                    "streamer CPU, % of a core",
                    name,
                    f"{r['streamer_cpu_percent']:.1f}",
                    "",
                    "<= 15 %",
                    _check(
                        r["streamer_cpu_percent"] <= stream.TARGETS["cpu_percent"]
                        if target
                        else None
                    ),
                ]
            )
    return rows


def _codec_rows(c: dict[str, Any]) -> list[list[str]]:
    rows = []
    if c:
        for name, r in c.items():
            s = r["codec_us"]
            is_cmd = name in codec.COMMANDS
            rows.append(
                [
                    f"{r['op']} {name} (us)",
                    f"stock {fmt(r['stock_us']['median'], 1)} us",
                    fmt(s["median"], 2),
                    fmt(s["p99"], 2),
                    "<= 10 us" if is_cmd else "",
                    _check(s["p99"] <= codec.TARGET_US if is_cmd else None),
                ]
            )
    return rows


def _tick_rows(t: dict[str, Any]) -> list[list[str]]:
    rows = []
    if t:
        for n, r in t.items():
            if not n.isdigit():
                continue
            s = r["tree_tick_ms"]
            limit = tick.TARGET_P99_MS.get(int(n))
            rows.append(
                [
                    f"tick, {n} nodes",
                    f"loop p99 {fmt(r['loop_tick_ms']['p99'])}",
                    fmt(s["median"]),
                    fmt(s["p99"]),
                    f"p99 <= {limit} ms" if limit else "",
                    _check(s["p99"] <= limit if limit else None),
                ]
            )
    return rows


def _startup_rows(s: dict[str, Any]) -> list[list[str]]:
    rows = []
    if s:
        v = s["validation"]["in_process_s"]
        rows.append(
            [
                "validate 100 files (s)",
                f"cli {fmt(s['validation']['cli_s']['median'])} s",
                fmt(v["median"]),
                f"max {fmt(v['max'])}",
                "<= 1 s",
                _check(v["max"] <= startup.TARGETS["validate_s"]),
            ]
        )
        r = s["ready"]["ready_s"]
        rows.append(
            [
                "start to READY=1 (s)",
                f"{r['n']} starts",
                fmt(r["median"]),
                f"max {fmt(r['max'])}",
                "<= 2 s",
                _check(r["max"] <= startup.TARGETS["ready_s"]),
            ]
        )
    return rows


def _memory_rows(m: dict[str, Any]) -> list[list[str]]:
    rows = []
    if m:
        flat = m["slope_kib_per_run_second_half"] <= FLAT_KIB_PER_RUN
        rows.append(
            [
                f"RSS after {m['runs']} runs (MB)",
                f"after 10: {m['rss_mb_after_10']:.1f}",
                f"{m['rss_mb_after_all']:.1f}",
                f"{m['slope_kib_per_run_second_half']:+.2f} KiB/run",
                f"<= {memory.TARGET_MB:.0f} MB, flat",
                _check(m["rss_mb_after_all"] <= memory.TARGET_MB and flat),
            ]
        )
    return rows


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


def both(run: Callable[[bool], dict[str, Any]]) -> dict[str, Any]:
    """A benchmark with the service at normal scheduling, then with its streamer thread
    under SCHED_FIFO (when this machine grants it): one result, the conditions of both."""
    results = run(False)
    refused = realtime_available()
    if refused is not None:
        print(f"   realtime conditions skipped: {refused}")
        results["realtime_skipped"] = refused
        return results
    rt = run(True)
    if "conditions" in results:  # estop
        results["conditions"].update(rt["conditions"])
    else:  # stream
        results.update({k: v for k, v in rt.items() if k.endswith("realtime")})
    return results


def main() -> int:
    setup()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help=f"comma-separated parts (default all: {','.join(PARTS)})")
    parser.add_argument("--quick", action="store_true", help="shortened runs, to check the harness")
    parser.add_argument("--events", type=int, help="e-stop events per condition (default 200)")
    parser.add_argument("--c-events", type=int, help="e-stop events from the C robot (default 30)")
    parser.add_argument("--grx-events", type=int, help="events per GRX figure (default 30)")
    parser.add_argument(
        "--runs", type=int, help="mission runs for the memory figure (default 1000)"
    )
    parser.add_argument("--json", type=Path, default=RESULTS / "latest.json")
    parser.add_argument("--plots", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args()
    parts = args.only.split(",") if args.only else list(PARTS)
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))} (known: {', '.join(PARTS)})")
    q = args.quick
    events = args.events or (50 if q else 200)
    c_events = args.c_events or (10 if q else 30)
    grx_events = args.grx_events or (10 if q else 30)
    runs = args.runs or (100 if q else 1000)
    results: dict[str, Any] = {
        "machine": machine(),
        "busy_at_start": busy_processes(),
        "quick": q,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }
    jobs: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[dict[str, Any]], str]]] = {
        "codec": (lambda: codec.run(5000 if q else 20_000, 300 if q else 1000), codec.report),
        "startup": (lambda: startup.run(3 if q else 5), startup.report),
        "tick": (lambda: tick.run(3.0 if q else 6.0), tick.report),
        "stream": (
            lambda: both(lambda rt: stream.run(5.0 if q else 20.0, (False, True), rt)),
            stream.report,
        ),
        "estop": (lambda: both(lambda rt: estop.run(events, realtime=rt)), estop.report),
        # after estop: its idle ddsperf figure is the floor (measured here when it did not run)
        "estop_c": (lambda: estop_c.run(c_events, floor=c_floor(results)), estop_c.report),
        "grx": (lambda: grx.run(grx_events), grx.report),
        # the service as shipped and as before, every figure against a C floor of this run
        "reflex": (
            lambda: reflex.run(events if q else 150, 3 if q else 15, 4.0 if q else 10.0),
            lambda r: reflex.report(r, results.get("tick")),
        ),
        "memory": (lambda: memory.run(runs, 10.0 if q else 120.0), memory.report),
        "cli": (lambda: cli_wall.run(5 if q else 15), cli_wall.report),  # bench/cli.py
        "idle": (lambda: idle_cpu.run(8.0 if q else 20.0), idle_cpu.report),  # bench/idle.py
        "fleet": (lambda: fleet_plane.run(5.0 if q else 15.0, 1 if q else 3), fleet_plane.report),
        "groot2": (
            lambda: groot2_view.run(6.0 if q else 24.0, 100, 5.0 if q else 20.0),
            groot2_view.report,
        ),
    }
    began = time.monotonic()
    for part in PARTS:
        if part not in parts:
            continue
        run, show = jobs[part]
        print(f"== {part} (load {loadavg()[0]})", flush=True)
        t = time.monotonic()
        results[part] = run()
        print(show(results[part]))
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
            for path in plots.make(results, args.plots):
                print(f"plot: {path}")
            if results.get("reflex"):
                for path in reflex.plot(results["reflex"], args.plots):
                    print(f"plot: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
