"""Fleet at scale (issue 34): N members on the fleet plane, through one router and through
two routers joined as two sites, and what the view and the routers pay per robot.

    python -m bench.parts.fleet_scale [--sizes 10,100,500] [--seconds 10] [--runs 3]

- **The documents**: a real executive (the service beside the simulated Atom, kinematic,
  running ``deliver_drink``) on a loopback router first: its status documents as the
  fleet plane carries them, the largest kept (a running mission's tree, ~6 KB).
- **The members**: light stand-ins, ``PER_PROCESS`` a process (``python -m
  bench.parts.fleet_scale standins``): each robot its own zenoh client session (as each
  executive has), its ``holder`` token, its ``request/<instance>`` queryable answering
  ``status`` with the document, and that document put on ``<prefix>/<id>/status`` at the
  real rate (5 Hz, the robots staggered over the period), its ``seq`` and
  ``produced_at.monotonic`` set at each put, the instance as the attachment.
- **The view**: the operator's ``FleetClient`` in a process of its own (``python -m
  bench.parts.fleet_scale view``), drawing the live view's frame (every row, filtered,
  sorted, the summary, the rich table of the rows a terminal shows) every 0.25 s as
  ``atom-executive fleet`` does, and sending a ``status`` request to a robot every 0.5 s
  (the holder looked up, then the query: the round trip ``fleet --robot`` makes).
- **Latency**: each put's arrival in the view's status callback less its
  ``produced_at.monotonic`` (CLOCK_MONOTONIC is system-wide): median and p99.
- **Cost**: the view's and each router's CPU (utime + stime over the window, % of one
  core) and resident memory at its end.
- **Topologies**: ``1 router`` (members and view on one ``atom-executive router``);
  ``2 routers`` (the members on site A's router, the view on site B's, B connected to A:
  every status crosses both); ``1 router, TLS`` (the secure layout of ``atom-executive
  fleet-site``: mutual TLS, access control, a certificate per robot) at the smaller sizes,
  for the ratio TLS / TCP.

Each case runs ``runs`` times; the figures are the medians of the runs. Everything on
127.0.0.1; the load average is recorded at each case's start.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.harness import cli, fmt, loadavg, process_cpu_s, summary, table
from bench.parts import Part, sized
from executive.harness.fleet import (
    fleet_client,
    fleet_mapping,
    free_port,
    secure_site,
    start_router,
)
from executive.harness.stack import rss_kib, running_stack

RATE_HZ = 5.0  # the fleet plane's steady status rate (executive/service/fleet.py STATUS_HZ)
PER_PROCESS = 125  # stand-in robots a process
WARMUP_S = 2.0  # after every member is in the view, before the window
TOPOLOGIES = ("1 router", "2 routers", "1 router, TLS")
TLS_UP_TO = 100  # the TLS case at sizes up to this (a certificate per robot)
SEQ, MONO = '"__SEQ__"', '"__MONO__"'


# -- the documents ---------------------------------------------------------------------------


def capture(work: Path, seconds: float = 3.0) -> dict[str, Any]:
    """A real executive's status documents on the fleet plane (the simulated Atom, a
    mission running); the largest one."""
    port = free_port()
    docs: list[bytes] = []
    with running_stack(work / "capture") as stack:
        start_router(stack, port)
        stack.start_sim("--physics", "kinematic", "--amr-speed", "0.5", "--seed", "3")
        stack.write_config(fleet=fleet_mapping(stack, "atom-1", port))
        stack.start_service()
        view = fleet_client(stack.workdir, port, key=stack.key)
        try:
            sub = view.session.declare_subscriber(
                "fleet/atom-1/status", lambda s: docs.append(s.payload.to_bytes())
            )
            view.request("atom-1", "start", {"mission": "deliver_drink", "params": {}})
            time.sleep(seconds)
            sub.undeclare()  # type: ignore[no-untyped-call]
            view.request("atom-1", "stop")
        finally:
            view.close()
    if not docs:
        raise RuntimeError("no status document from the executive on the fleet plane")
    largest = max(docs, key=len)
    return json.loads(largest)  # type: ignore[no-any-return]


def template(document: dict[str, Any]) -> str:
    """The document as text with the per-put fields as placeholders."""
    doc = json.loads(json.dumps(document))
    doc["seq"] = "__SEQ__"
    produced = doc.get("produced_at")
    if not isinstance(produced, dict):
        produced = doc["produced_at"] = {}
    produced["monotonic"] = "__MONO__"
    return json.dumps(doc)


# -- the stand-ins (a process) ---------------------------------------------------------------


def standins(args: argparse.Namespace) -> int:
    """``standins``: robots ``--ids`` on the plane through ``--config`` (or each its own
    ``--site`` config), until stdin closes."""
    import zenoh

    from executive.service.fleet_claim import request_key, token_key
    from executive.wire.zenoh_session import load_config, open_session

    text = Path(args.docs).read_text(encoding="utf-8")
    ids = args.ids.split(",")
    robots = []
    status = text.replace(SEQ, "0").replace(MONO, "0")  # what a status request answers
    for rid in ids:
        source = Path(args.site) / f"robot.{rid}.json5" if args.site else Path(args.config)
        session = open_session(load_config(source))
        instance = uuid.uuid4().hex

        def answer(
            query: Any, rid: str = rid, key: str = request_key("fleet", rid, instance)
        ) -> None:
            try:
                fields = json.loads(query.payload.to_bytes()) if query.payload else {}
                reply = {
                    "request_id": fields.get("request_id", ""),
                    "client_id": fields.get("client_id", ""),
                    "code": 0,
                    "message": "IDLE",
                    "payload": status,
                }
                query.reply(key, json.dumps(reply))
            except Exception:  # noqa: BLE001, S110 - a stand-in answers what it can
                pass
            finally:
                with contextlib.suppress(Exception):
                    query.drop()

        robots.append(
            {
                "id": rid,
                "session": session,
                "instance": instance.encode(),
                "token": session.liveliness().declare_token(
                    token_key("fleet", rid, "holder", instance)
                ),
                "queryable": session.declare_queryable(request_key("fleet", rid, instance), answer),
                "publisher": session.declare_publisher(
                    f"fleet/{rid}/status", congestion_control=zenoh.CongestionControl.DROP
                ),
            }
        )
    print("up", flush=True)
    stop = threading.Event()

    def until_closed() -> None:  # the bench closes our stdin: stop
        sys.stdin.read()
        stop.set()

    threading.Thread(target=until_closed, daemon=True).start()
    period = 1.0 / args.rate
    step = period / len(robots)
    seq = 0
    start = time.monotonic() + random.uniform(0, period)  # noqa: S311 - processes staggered
    while not stop.is_set():
        seq += 1
        for i, robot in enumerate(robots):
            due = start + (seq - 1) * period + i * step
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            doc = text.replace(SEQ, str(seq)).replace(MONO, repr(time.monotonic()))
            robot["publisher"].put(doc, attachment=robot["instance"])
    for robot in robots:
        robot["session"].close()
    return 0


# -- the view (a process) --------------------------------------------------------------------


def view_probe(args: argparse.Namespace) -> int:
    """``view``: the operator's view through ``--config`` until every one of ``--n``
    robots is in it, then ``--seconds`` of the live view's work, measured; JSON out."""
    from rich.console import Console

    from executive.operator.fleet import FleetClient, FleetError, pick, table
    from executive.operator.fleet import summary as summary_line
    from executive.wire.zenoh_session import load_config

    latencies: list[float] = []
    measuring = threading.Event()

    class Probe(FleetClient):
        def _on_status(self, sample: Any) -> None:
            now = time.monotonic()
            super()._on_status(sample)
            if measuring.is_set():
                robot = self.robots.get(self._robot_id(sample))
                produced = (robot.document.get("produced_at") or {}) if robot else {}
                if isinstance(produced.get("monotonic"), float):
                    latencies.append(now - produced["monotonic"])

    client = Probe(load_config(args.config), key=None)
    console = Console(file=io.StringIO(), width=160, height=50)
    ids = sorted(f"scale-{i:03d}" for i in range(args.n))
    got = client.wait_for(lambda c: len(c.robots) >= args.n, 120)
    time.sleep(WARMUP_S)
    frames: list[float] = []
    rtts: list[float] = []
    failed = 0
    cpu0 = time.process_time()
    print("measuring", flush=True)
    measuring.set()
    t0 = time.monotonic()
    next_request = t0
    while time.monotonic() - t0 < args.seconds:
        began = time.monotonic()
        rows = pick(client.rows())
        console.print(table(rows, limit=40, total=summary_line(rows)))
        console.file = io.StringIO()
        frames.append(time.monotonic() - began)
        if time.monotonic() >= next_request:
            next_request += 0.5
            began = time.monotonic()
            try:
                client.request(random.choice(ids), "status", timeout=2.0)  # noqa: S311
                rtts.append(time.monotonic() - began)
            except FleetError:
                failed += 1
        time.sleep(max(0.0, 0.25 - (time.monotonic() - began)))
    elapsed = time.monotonic() - t0
    measuring.clear()
    cpu = 100.0 * (time.process_time() - cpu0) / elapsed
    print("done", flush=True)
    out = {
        "all_in_view": got,
        "robots_seen": len(client.robots),
        "latency_ms": summary(latencies, 1000.0),
        "rate_per_s": len(latencies) / elapsed,
        "frame_ms": summary(frames, 1000.0),
        "request_ms": summary(rtts, 1000.0),
        "requests_failed": failed,
        "cpu_percent": cpu,
        "rss_mb": rss_kib(os.getpid()) / 1024.0,
    }
    Path(args.out).write_text(json.dumps(out))
    client.close()
    return 0


# -- one case --------------------------------------------------------------------------------


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.parts.fleet_scale", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _client_config(path: Path, port: int) -> Path:
    from executive.harness.fleet import client_config_file

    return client_config_file(path, port)


def case(work: Path, n: int, topology: str, docs: Path, seconds: float) -> dict[str, Any]:
    """``n`` stand-ins and the view on ``topology``; the view's and the routers' figures."""
    load = loadavg()[0]
    ids = [f"scale-{i:03d}" for i in range(n)]
    with running_stack(work / "routers") as stack:
        port = free_port()
        site = None
        if topology.endswith("TLS"):
            site = secure_site(work / "site", port, tuple(ids))
            routers = [start_router(stack, port, "router-a", site=site)]
            member_args = ["--site", str(site.layout.directory)]
            view_config = site.config("operator", "operator")
        else:
            routers = [start_router(stack, port, "router-a")]
            member_args = ["--config", str(_client_config(work / "member.json5", port))]
            view_port = port
            if topology == "2 routers":
                view_port = free_port()
                routers.append(start_router(stack, view_port, "router-b", connect=port))
            view_config = _client_config(work / "view.json5", view_port)
        members = []
        for first in range(0, n, PER_PROCESS):
            chunk = ",".join(ids[first : first + PER_PROCESS])
            members.append(_spawn("standins", "--ids", chunk, "--docs", str(docs), *member_args))
        try:
            for proc in members:
                assert proc.stdout is not None
                if proc.stdout.readline().strip() != "up":
                    raise RuntimeError("a stand-in process did not come up")
            out = work / f"view-{n}.json"
            view = _spawn(
                *("view", "--config", str(view_config), "--n", str(n)),
                *("--seconds", str(seconds), "--out", str(out)),
            )
            assert view.stdout is not None
            if view.stdout.readline().strip() != "measuring":
                raise RuntimeError("the view did not start measuring")
            before = [(process_cpu_s(r.pid), time.monotonic()) for r in routers]
            view.stdout.readline()  # done
            cpu = [
                100.0 * (process_cpu_s(r.pid) - c0) / (time.monotonic() - t0)
                for r, (c0, t0) in zip(routers, before, strict=True)
            ]
            rss = [rss_kib(r.pid) / 1024.0 for r in routers]
            view.wait(60)
            result = json.loads(out.read_text())
        finally:
            for proc in members:
                with contextlib.suppress(Exception):
                    assert proc.stdin is not None
                    proc.stdin.close()
            for proc in members:
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return {
        "n": n,
        "topology": topology,
        "loadavg": load,
        **result,
        "router_cpu_percent": cpu,
        "router_rss_mb": rss,
    }


# -- the run ---------------------------------------------------------------------------------


def run(sizes: tuple[int, ...], seconds: float, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fleet-scale-") as tmp:
        work = Path(tmp)
        document = capture(work)
        docs = work / "status.json"
        docs.write_text(template(document), encoding="utf-8")
        cases: list[dict[str, Any]] = []
        for n in sizes:
            for topology in TOPOLOGIES:
                if topology.endswith("TLS") and n > TLS_UP_TO:
                    continue
                for r in range(runs):
                    where = work / f"{n}-{topology.replace(' ', '_')}-{r}"
                    where.mkdir()
                    cases.append(case(where, n, topology, docs, seconds))
                    c = cases[-1]
                    print(  # the log keeps each case, whatever happens to the run
                        f"N={n} {topology} run {r}: status p99 {c['latency_ms']['p99']:.1f} ms, "
                        f"view CPU {c['cpu_percent']:.1f} %, routers CPU "
                        f"{sum(c['router_cpu_percent']):.1f} %, load {c['loadavg']}",
                        flush=True,
                    )
    return {
        "sizes": list(sizes),
        "seconds": seconds,
        "runs": runs,
        "rate_hz": RATE_HZ,
        "document_bytes": len(json.dumps(document)),
        "cases": cases,
        "figures": figures(cases),
    }


FIGURES: tuple[tuple[str, Callable[[dict[str, Any]], float]], ...] = (
    ("view status median (ms)", lambda c: c["latency_ms"]["median"]),
    ("view status p99 (ms)", lambda c: c["latency_ms"]["p99"]),
    ("view CPU (%)", lambda c: c["cpu_percent"]),
    ("view RSS (MB)", lambda c: c["rss_mb"]),
    ("view frame p99 (ms)", lambda c: c["frame_ms"]["p99"]),
    ("request median (ms)", lambda c: c["request_ms"]["median"]),
    ("request p99 (ms)", lambda c: c["request_ms"]["p99"]),
    ("routers CPU (%)", lambda c: sum(c["router_cpu_percent"])),
    ("busiest router CPU (%)", lambda c: max(c["router_cpu_percent"])),
    ("routers RSS (MB)", lambda c: sum(c["router_rss_mb"])),
    ("statuses a second at the view", lambda c: c["rate_per_s"]),
)


def figures(cases: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """{topology: {N: {figure: the median over the runs}}}."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for c in cases:
        out.setdefault(c["topology"], {}).setdefault(str(c["n"]), {})
    for topology, by_n in out.items():
        for n in by_n:
            runs = [c for c in cases if c["topology"] == topology and str(c["n"]) == n]
            by_n[n] = {name: float(_median([get(c) for c in runs])) for name, get in FIGURES} | {
                "loadavg": float(_median([c["loadavg"] for c in runs]))
            }
    return out


def _median(values: list[float]) -> float:
    values = sorted(v for v in values if not math.isnan(v))
    if not values:
        return float("nan")
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def growth(results: dict[str, Any], topology: str, figure: str) -> float | None:
    """Per robot: (figure at the largest N less at the smallest) / (the N between)."""
    by_n = results["figures"].get(topology, {})
    ns = sorted(int(n) for n in by_n)
    if len(ns) < 2:
        return None
    lo, hi = float(by_n[str(ns[0])][figure]), float(by_n[str(ns[-1])][figure])
    return (hi - lo) / (ns[-1] - ns[0])


def report(results: dict[str, Any]) -> str:
    lines = [
        f"fleet at scale: {results['runs']} run(s) of {results['seconds']:g} s a case, "
        f"status {results['rate_hz']:g} Hz, {results['document_bytes']} B documents"
    ]
    names = [name for name, _ in FIGURES]
    for topology, by_n in results["figures"].items():
        ns = sorted(by_n, key=int)
        rows = [[name, *(fmt(by_n[n][name], 1) for n in ns)] for name in names]
        rows.append(["load average", *(fmt(by_n[n]["loadavg"], 1) for n in ns)])
        lines.append(f"\n{topology}")
        lines.append(table(("figure", *(f"N={n}" for n in ns)), rows))
    return "\n".join(lines)


def rows(results: dict[str, Any]) -> list[list[str]]:
    """``bench.run``'s summary: the largest N's figures against issue 34's targets."""
    out: list[list[str]] = []
    for topology, by_n in results["figures"].items():
        ns = sorted(by_n, key=int)
        small, big = by_n[ns[0]], by_n[ns[-1]]
        cond = f"N={ns[-1]}, {topology}"
        out.append(
            [
                "fleet at scale: view status (ms)",
                cond,
                fmt(big["view status median (ms)"], 1),
                fmt(big["view status p99 (ms)"], 1),
                f"p99 <= 2x N={ns[0]}'s ({fmt(2 * small['view status p99 (ms)'], 1)})",
                "met"
                if big["view status p99 (ms)"] <= 2 * small["view status p99 (ms)"]
                else "MISSED",
            ]
        )
        out.append(
            [
                "fleet at scale: busiest router CPU (%)",
                cond,
                fmt(big["busiest router CPU (%)"], 1),
                "",
                "< 100 (one core)",
                "met" if big["busiest router CPU (%)"] < 100 else "MISSED",
            ]
        )
    return out


def plot(results: dict[str, Any], out: Path) -> list[Path]:
    """``fleet_scale.png``: latency, CPU, memory and the request round trip against N."""
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    panels = (
        ("status to the view (ms)", ("view status median (ms)", "view status p99 (ms)")),
        ("CPU (% of one core)", ("view CPU (%)", "busiest router CPU (%)")),
        ("resident memory (MB)", ("view RSS (MB)", "routers RSS (MB)")),
        ("request round trip (ms)", ("request median (ms)", "request p99 (ms)")),
    )
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), dpi=110)
    colours = dict(zip(TOPOLOGIES, ("tab:blue", "tab:orange", "tab:green"), strict=True))
    for ax, (title, names) in zip(axes.flat, panels, strict=True):
        for topology, by_n in results["figures"].items():
            ns = sorted(by_n, key=int)
            xs = [int(n) for n in ns]
            for name, style in zip(names, ("-", "--"), strict=True):
                ax.plot(
                    xs,
                    [by_n[n][name] for n in ns],
                    style,
                    marker="o",
                    color=colours.get(topology, "black"),
                    label=f"{topology}: {name}",
                )
        ax.set_xscale("log")
        ax.set_xlabel("robots on the plane (N)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(
        f"fleet at scale: stand-ins at {results['rate_hz']:g} Hz, "
        f"{results['document_bytes']} B status documents; medians of {results['runs']} run(s)"
    )
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "fleet_scale.png"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(*sized(options, ((10, 100, 500), 10.0, 3), ((10, 100), 4.0, 1), ((10,), 2.0, 1)))


PART = Part("fleet_scale", run_part, report, rows, plot)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in ("standins", "view"):
        parser = argparse.ArgumentParser()
        parser.add_argument("mode")
        parser.add_argument("--ids", default="")
        parser.add_argument("--docs", default="")
        parser.add_argument("--config", default="")
        parser.add_argument("--site", default="")
        parser.add_argument("--rate", type=float, default=RATE_HZ)
        parser.add_argument("--n", type=int, default=0)
        parser.add_argument("--seconds", type=float, default=10.0)
        parser.add_argument("--out", default="")
        args = parser.parse_args()
        return standins(args) if args.mode == "standins" else view_probe(args)

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--sizes", default="10,100,500")
        parser.add_argument("--seconds", type=float, default=10.0)
        parser.add_argument("--runs", type=int, default=3)
        parser.add_argument("--plot", type=Path, help="draw fleet_scale.png into this directory")

    def go(args: argparse.Namespace) -> dict[str, Any]:
        results = run(tuple(int(n) for n in args.sizes.split(",")), args.seconds, args.runs)
        if args.plot:
            print(f"plot: {plot(results, args.plot)[0]}")
        return results

    return cli(__doc__, go, report, arguments)


if __name__ == "__main__":
    sys.exit(main())
