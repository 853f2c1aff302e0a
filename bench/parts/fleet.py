"""The fleet plane (issue 24): status to the fleet view through one router, and what the
plane costs the service and what the router costs.

    python -m bench.parts.fleet [--seconds 15] [--rounds 2]

On a leased loopback domain: the simulated Atom (kinematic), the service, a router (``atom-executive
router``, its own process on a free port of 127.0.0.1) and, in this process, the operator's
``FleetClient`` connected to the router.

- **latency**: each document's first arrival at the view (``time.monotonic()`` in the
  subscriber's callback) less its ``produced_at.monotonic`` (the service stamps it while
  building the document on the tick thread; CLOCK_MONOTONIC is system-wide): the tick
  thread's hand-over, the plane's put, the router and the view's callback. Re-puts of a
  document (the 5 Hz steady rate) are not counted: only a seq's first arrival. The
  service's status heartbeat is ``STATUS_HZ`` here (a new document every 50 ms).
- **CPU**: the service's CPU (utime + stime of /proc/PID/stat, all threads, over
  ``seconds``, % of one core) with the fleet plane off (no ``fleet`` in its config) and on
  (through the router, the view connected), in turn ``rounds`` times, each after a
  settling second, its status heartbeat as shipped (2 Hz), idle beside the sim; the
  router's CPU over each "on" window (one robot, one view).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from typing import Any

from bench.harness import cli, fmt, loadavg, process_cpu_s, summary, table
from bench.parts import Part, sized
from executive.harness.fleet import (
    fleet_client,
    fleet_mapping,
    free_port,
    start_router,
)
from executive.harness.stack import Stack, running_stack

STATUS_HZ = 20.0  # the service's status heartbeat here: a new document every 50 ms
SETTLE_S = 1.0


def cpu_percent(pid: int, seconds: float) -> float:
    """A process's CPU over ``seconds`` of wall time, % of one core."""
    c0, t0 = process_cpu_s(pid), time.monotonic()
    time.sleep(seconds)
    return 100.0 * (process_cpu_s(pid) - c0) / (time.monotonic() - t0)


def start(stack: Stack, port: int | None, status_hz: float | None = None) -> int:
    """The service on ``stack``, on the fleet plane through ``port`` (None: off), its status
    heartbeat at ``status_hz`` (None: the shipped default); its pid."""
    extra: dict[str, Any] = {} if port is None else {"fleet": fleet_mapping(stack, "atom-1", port)}
    if status_hz is not None:
        extra["status_hz"] = status_hz
    stack.write_config(**extra)
    proc = stack.start_service()
    return proc.pid


def latency(stack: Stack, port: int, seconds: float) -> dict[str, Any]:
    """Seconds from each document's production to its first arrival at the view."""
    arrivals: dict[int, float] = {}
    produced: dict[int, float] = {}
    client = fleet_client(stack.workdir, port)

    def on_sample(sample: Any) -> None:
        now = time.monotonic()
        doc = json.loads(sample.payload.to_bytes())
        seq = int(doc["seq"])
        if seq not in arrivals:
            arrivals[seq] = now
            produced[seq] = float(doc["produced_at"]["monotonic"])

    sub = client.session.declare_subscriber("fleet/atom-1/status", on_sample)
    try:
        time.sleep(SETTLE_S)
        arrivals.clear()
        produced.clear()
        time.sleep(seconds)
    finally:
        sub.undeclare()  # type: ignore[no-untyped-call]
        client.close()
    return summary((arrivals[s] - produced[s] for s in arrivals), scale=1000.0)


def run(seconds: float = 15.0, rounds: int = 2) -> dict[str, Any]:
    load = loadavg()[0]
    off: list[float] = []
    on: list[float] = []
    router_cpu: list[float] = []
    with running_stack() as stack:
        port = free_port()
        router = start_router(stack, port)
        stack.start_sim("--physics", "kinematic", "--seed", "3")
        for _ in range(rounds):
            pid = start(stack, None)
            time.sleep(SETTLE_S)
            off.append(cpu_percent(pid, seconds))
            pid = start(stack, port)
            view = fleet_client(stack.workdir, port)  # the operator's view, connected
            try:
                view.wait_for(lambda c: "atom-1" in c.robots, 20)
                time.sleep(SETTLE_S)
                r0, t0 = process_cpu_s(router.pid), time.monotonic()
                on.append(cpu_percent(pid, seconds))
                router_cpu.append(
                    100.0 * (process_cpu_s(router.pid) - r0) / (time.monotonic() - t0)
                )
            finally:
                view.close()
        start(stack, port, STATUS_HZ)  # a new document every 50 ms: many samples
        lat = latency(stack, port, seconds)
    return {
        "seconds": seconds,
        "rounds": rounds,
        "status_hz": STATUS_HZ,
        "loadavg_at_start": load,
        "latency_ms": lat,
        "service_cpu_off": summary(off),
        "service_cpu_on": summary(on),
        "router_cpu": summary(router_cpu),
        "samples": {"off": off, "on": on, "router": router_cpu},
    }


def rows(results: dict[str, Any]) -> list[list[str]]:
    """``bench.run``'s summary: benchmark, condition, median, p99, target, verdict."""
    lat = results["latency_ms"]
    cond = "1 robot, 1 router, idle"
    return [
        ["fleet: status to view (ms)", cond, fmt(lat["median"]), fmt(lat["p99"]), "", "-"],
        [
            "fleet: service CPU off/on (%)",
            cond,
            f"{fmt(results['service_cpu_off']['median'], 1)} / "
            f"{fmt(results['service_cpu_on']['median'], 1)}",
            "",
            "",
            "-",
        ],
        [
            "fleet: router CPU (%)",
            cond,
            fmt(results["router_cpu"]["median"], 1),
            fmt(results["router_cpu"]["max"], 1),
            "",
            "-",
        ],
    ]


def report(results: dict[str, Any]) -> str:
    lat = results["latency_ms"]
    rows = [["status to fleet view (ms)", fmt(lat["median"]), fmt(lat["p99"]), fmt(lat["max"])]]
    rows[0].append(str(lat["n"]))
    for name, key in (
        ("service CPU, fleet off (%)", "service_cpu_off"),
        ("service CPU, fleet on (%)", "service_cpu_on"),
        ("router CPU (%)", "router_cpu"),
    ):
        s = results[key]
        rows.append([name, fmt(s["median"], 2), "", fmt(s["max"], 2), str(s["n"])])
    head = (
        f"fleet plane: {results['rounds']} rounds of {results['seconds']:g} s, status "
        f"{results['status_hz']:g} Hz, load {results['loadavg_at_start']}"
    )
    return head + "\n" + table(("figure", "median", "p99", "max", "n"), rows)


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(*sized(options, (15.0, 3), (5.0, 1), (1.0, 1)))


PART = Part("fleet", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--seconds", type=float, default=15.0)
        parser.add_argument("--rounds", type=int, default=2)

    return cli(__doc__, lambda args: run(args.seconds, args.rounds), report, arguments)


if __name__ == "__main__":
    sys.exit(main())
