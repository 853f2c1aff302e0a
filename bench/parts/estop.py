"""E-stop to hold, measured across three processes, against the raw two-hop DDS latency.

    python -m bench.parts.estop [--events 200] [--no-hog] [--no-ddsperf]

Three processes on a leased loopback domain:

1. this one, the robot (``bench.robot.BenchRobot``): every state topic at the profile's
   rates, and the ``rt/emergency/state`` sample that starts each event, stamped with
   ``time.monotonic_ns()`` just before it is handed to DDS;
2. the executive: the real service (``atom-executive run`` through ``executive.harness.stack``)
   running ``estop_bench``, a mission that drives the base to a tag (so a task is there
   to cancel) while one move engages the upper, lower and hands streams (so a hold has
   something to hold: every stream publishing at 500 Hz);
3. an independent subscriber (``bench.estop_peer holds``, and ``bench.estop_peer amr``
   beside it) that stamps, on the same CLOCK_MONOTONIC, the arrival of each stream's
   hold and of every AMR command.

Each event is ``bench.episode``'s: the mission started, the e-stop once all three streams
publish, its holds and its cancel stamped, then cleared and reset. Per event: ``hold`` =
the first stream's hold command at the subscriber, ``hold_all`` = the last of the three,
``cancel`` = the first CANCEL_TASK after the e-stop.

The baseline, in a domain of its own: the same publisher and subscriber with
``bench.estop_peer relay`` in the middle (the executive's receive path and the
streamer's raw writer, no executive), and when Debian's ``ddsperf`` is installed its C
ping-pong round trip (two hops as well), at 200 Hz. Both conditions, idle and with one
CPU-burning process, run every part.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

from bench.episode import estop_rig, relay_events
from bench.harness import (
    cli,
    cpu_hog,
    figure_row,
    floor_row,
    fmt,
    loadavg,
    ratio,
    service_scheduling,
    summary,
    table,
    with_realtime,
)
from bench.parts import Part, sized
from bench.robot import MARKERS

TARGETS = {"median": 0.5, "p99_hog": 1.5}  # ms (issue 5)


_DDSPERF_LINE = re.compile(r"50% ([\d.]+)us 90% [\d.]+us 99% ([\d.]+)us max ([\d.]+)us cnt (\d+)")


def ddsperf_pingpong(env: dict[str, str], domain: int, seconds: int = 8) -> dict[str, Any] | None:
    """Debian's ``ddsperf`` ping (200 Hz) and pong: the C round trip, ms (None if absent).

    ddsperf prints percentiles per second; we quote the median of the per-second medians
    and of the per-second p99s, skipping the first second (discovery)."""
    exe = shutil.which("ddsperf")
    if exe is None:
        return None
    pong = subprocess.Popen(
        [exe, "-i", str(domain), "-D", str(seconds + 2), "pong"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ping = subprocess.run(
            [exe, "-i", str(domain), "-D", str(seconds), "ping", "200Hz"],
            env=env,
            capture_output=True,
            text=True,
            timeout=seconds + 20,
            check=False,
        )
    finally:
        pong.terminate()
        pong.wait(10)
    rows = [m.groups() for m in _DDSPERF_LINE.finditer(ping.stdout)][1:]
    if not rows:
        return None
    medians = [float(r[0]) / 1e3 for r in rows]
    p99s = [float(r[1]) / 1e3 for r in rows]
    return {
        "n": sum(int(r[3]) for r in rows),
        "median": summary(medians)["median"],
        "p99": summary(p99s)["median"],
        "max": max(float(r[2]) / 1e3 for r in rows),
    }


def run(
    events: int = 200,
    hog_modes: tuple[bool, ...] = (False, True),
    use_ddsperf: bool = True,
    trace: bool = False,
    realtime: bool = False,
) -> dict[str, Any]:
    """Every condition; a dict of results (samples included, for the plots). With
    ``realtime`` the service's streamer thread runs SCHED_FIFO, and the conditions are
    named ``idle, realtime`` and ``cpu hog, realtime``."""
    if events * len(hog_modes) > MARKERS - 5:
        raise ValueError(f"at most {(MARKERS - 5) // len(hog_modes)} events per condition")
    results: dict[str, Any] = {"events": events, "conditions": {}}
    config, env = service_scheduling(realtime)
    if trace:
        env = {**env, "BENCH_PROBE_TRACE": "1"}
    with estop_rig(config, env, probe=trace) as rig:
        rig.events(5, first=MARKERS - 5)  # warm-up
        threads = rig.threads()
        first = 0
        for hog in hog_modes:
            name = ("cpu hog" if hog else "idle") + (", realtime" if realtime else "")
            with cpu_hog(hog):
                load = loadavg()
                relay = relay_events(rig.stack.env(), rig.floor_domain, events)["hold"]
                perf = ddsperf_pingpong(rig.stack.env(), rig.floor_domain) if use_ddsperf else None
                started = time.monotonic()
                if rig.service is not None:
                    rig.service.begin()
                ours = rig.events(events, first)
                first += events  # the subscriber reports each marker once
                if rig.service is not None:
                    ours["trace"] = rig.service.end()["trace"]
                took = time.monotonic() - started
            results["conditions"][name] = _condition(ours, relay, perf, took, load)
            results["conditions"][name]["service_threads"] = threads
    return results


def _condition(
    ours: dict[str, list[float]],
    relay: list[float],
    perf: dict[str, Any] | None,
    took: float,
    load: tuple[float, float, float],
) -> dict[str, Any]:
    hold, relay_s = summary(ours["hold"]), summary(relay)
    out: dict[str, Any] = {
        "hold_ms": hold,
        "hold_all_ms": summary(ours["hold_all"]),
        "cancel_ms": summary(ours["cancel"]),
        "relay_ms": relay_s,
        "ddsperf_rtt_ms": perf,
        "hold_over_relay": ratio(hold, relay_s),
        "lost": len(ours["lost"]),
        "seconds": round(took, 1),
        "loadavg": load,
        "samples": {"hold": ours["hold"], "cancel": ours["cancel"], "relay": relay},
    }
    if "trace" in ours:
        out["path_ms"] = _path(ours["stamps"], ours["trace"])
    if perf is not None:
        out["hold_over_ddsperf"] = ratio(hold, perf)
    return out


def _path(stamps: list[dict[str, Any]], trace: list[tuple[str, int]]) -> dict[str, Any]:
    """Where the time goes, per event, from the probe's stamps inside the service."""
    legs: dict[str, list[float]] = {}
    for ev in stamps:
        sent = ev["sent"]
        after = [(name, t) for name, t in trace if t >= sent]
        first = {}
        for name, t in sorted(after, key=lambda x: x[1]):
            first.setdefault(name, t)
        points = [
            ("sent", sent),
            ("listener", first.get("listener")),
            ("fast_path", first.get("fast_path")),
            ("held_upper", first.get("held_upper")),
            ("arrived_upper", ev.get("upper")),
        ]
        amr_points = [
            ("fast_path", first.get("fast_path")),
            ("held_hands", first.get("held_hands")),
            ("amr_CANCEL_TASK", first.get("amr_CANCEL_TASK")),
            ("arrived_cancel", ev.get("cancel")),
        ]
        for seq in (points, amr_points):
            for (a, ta), (b, tb) in itertools.pairwise(seq):
                if ta is not None and tb is not None:
                    legs.setdefault(f"{a} -> {b}", []).append((tb - ta) / 1e6)
    return {leg: summary(values) for leg, values in legs.items()}


def report(results: dict[str, Any]) -> str:
    rows = []
    for name, c in results["conditions"].items():
        for label, key in (
            ("e-stop -> first hold", "hold_ms"),
            ("e-stop -> all 3 holds", "hold_all_ms"),
            ("e-stop -> AMR cancel", "cancel_ms"),
            ("plain relay (python)", "relay_ms"),
            ("ddsperf ping-pong (C)", "ddsperf_rtt_ms"),
        ):
            s = c.get(key)
            if s is None:
                continue
            rows.append([name, label, str(s["n"]), fmt(s["median"]), fmt(s["p99"]), fmt(s["max"])])
        ratio = c["hold_over_relay"]
        rows.append(
            [name, "hold / relay", "", f"{ratio['median']:.1f}x", f"{ratio['p99']:.1f}x", ""]
        )
        if "hold_over_ddsperf" in c:
            ratio = c["hold_over_ddsperf"]
            rows.append(
                [name, "hold / ddsperf", "", f"{ratio['median']:.1f}x", f"{ratio['p99']:.1f}x", ""]
            )
    return table(("condition", "path", "n", "median ms", "p99 ms", "max ms"), rows)


def report_with_path(results: dict[str, Any]) -> str:
    """The table and, with ``--trace``, where the time went inside the service."""
    lines = [report(results)]
    for name, c in results["conditions"].items():
        for leg, s in c.get("path_ms", {}).items():
            lines.append(f"{name:8s} {leg:36s} median {fmt(s['median'])} p99 {fmt(s['p99'])} ms")
    return "\n".join(lines)


def rows(e: dict[str, Any]) -> list[list[str]]:
    """The summary's rows: per condition the first hold and the cancel against their
    targets (an idle machine's median, a loaded one's p99), and the floors under them."""
    out = []
    for name, c in e["conditions"].items():
        for label, key in (("e-stop -> first hold", "hold_ms"), ("e-stop -> AMR cancel", "cancel_ms")):  # fmt: skip
            s = c[key]
            if "hog" not in name:
                target, ok = "median <= 0.5 ms", s["median"] <= TARGETS["median"]
            else:
                target, ok = "p99 <= 1.5 ms", s["p99"] <= TARGETS["p99_hog"]
            if c["lost"]:
                target, ok = f"{target}; {c['lost']} events lost", False
            out.append(figure_row(label, name, s, target, ok))
        out.append(floor_row("  plain relay (two hops)", name, c["relay_ms"], c["hold_over_relay"], 1))  # fmt: skip
        if c.get("ddsperf_rtt_ms"):
            out.append(floor_row("  ddsperf ping-pong (C)", name, c["ddsperf_rtt_ms"], c["hold_over_ddsperf"], 0))  # fmt: skip
    return out


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    """``make bench``'s: idle and with a CPU hog, at both schedulings; the smallest, a
    few events idle, no ddsperf."""
    events = options.events or sized(options, 200, 50, 3)
    if options.size == "smallest":
        return run(events, (False,), use_ddsperf=False)
    return with_realtime(lambda rt: run(events, realtime=rt))


PART = Part("estop", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--events", type=int, default=200)
        parser.add_argument("--no-hog", action="store_true", help="only the idle condition")
        parser.add_argument("--no-ddsperf", action="store_true")
        parser.add_argument(
            "--trace", action="store_true", help="stamp the path inside the service (diagnosis)"
        )
        parser.add_argument(
            "--realtime",
            action="store_true",
            help="the streamer thread SCHED_FIFO (stream_priority)",
        )

    def run_with(args: argparse.Namespace) -> dict[str, Any]:
        hogs = (False,) if args.no_hog else (False, True)
        return run(args.events, hogs, not args.no_ddsperf, args.trace, args.realtime)

    return cli(__doc__, run_with, report_with_path, arguments)


if __name__ == "__main__":
    sys.exit(main())
