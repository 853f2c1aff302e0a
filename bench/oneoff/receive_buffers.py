"""CycloneDDS's receive buffers in the idle service and in the sim over service restarts.

    python -m bench.oneoff.receive_buffers                          # the shipped loopback config
    python -m bench.oneoff.receive_buffers --receive-buffer 1MiB    # CycloneDDS's default
    python -m bench.oneoff.receive_buffers --receive-buffer 64KiB --chunk 32KiB

Each receive thread of CycloneDDS keeps the messages it hands on in a buffer of
``Sizing/ReceiveBufferSize`` filled front to back, so the buffer's pages become resident
at the pace of what is kept (discovery's, for the discovery thread): with the 1 MiB
default that looked like a leak in ``make soak`` (docs/benchmarks.md, "CycloneDDS's
receive buffers sized"). The simulated Atom and the service run on a leased loopback
domain; the service idles ``--idle`` seconds with its ``[heap]`` and anonymous RSS
(``/proc/PID/smaps``) read every 15 s, then is killed (SIGKILL) and started again
``--restarts`` times, the sim's RSS read after each start. The sizes given are laid over
the shipped loopback config for this process and its children (an inline
``CYCLONEDDS_URI`` part); CycloneDDS refuses a misspelt size at start.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from typing import Any

import numpy as np

from bench.harness import cli, table
from bench.soak import rss_by_mapping
from executive.harness.stack import LOOPBACK_URI, running_stack

SIZE = re.compile(r"\d+(B|KiB|kB|MiB|MB)")
EVERY_S = 15.0


def uri(receive_buffer: str | None, chunk: str | None) -> str:
    """The loopback config with the given ``<Sizing>`` laid over it (None: as shipped)."""
    sizing = ""
    given = (
        ("ReceiveBufferSize", "--receive-buffer", receive_buffer),
        ("ReceiveBufferChunkSize", "--chunk", chunk),
    )
    for name, option, value in given:
        if value is None:
            continue
        if not SIZE.fullmatch(value):
            raise SystemExit(f"{option}: {value!r} is not a CycloneDDS size such as 160KiB")
        sizing += f"<{name}>{value}</{name}>"
    if not sizing:
        return LOOPBACK_URI
    return f'{LOOPBACK_URI},<CycloneDDS><Domain id="any"><Sizing>{sizing}</Sizing></Domain></CycloneDDS>'


def slope(values: list[int]) -> float:
    """KiB per step, a straight line fitted (0 for fewer than three)."""
    if len(values) < 3:
        return 0.0
    return float(np.polyfit(np.arange(len(values), dtype=float), values, 1)[0])


def run(args: argparse.Namespace) -> dict[str, Any]:
    os.environ["CYCLONEDDS_URI"] = uri(args.receive_buffer, args.chunk)  # before any DDS
    idle: list[dict[str, Any]] = []
    restarts: list[dict[str, int]] = []
    with running_stack() as stack:
        stack.write_config()
        stack.start_sim()
        stack.start_service(ready=True)
        t0 = time.monotonic()
        while (t := time.monotonic() - t0) <= args.idle:
            pid = stack.pid("executive")
            assert pid is not None, "the service died"
            idle.append({"t": round(t), **rss_by_mapping(pid)})
            time.sleep(EVERY_S)
        for _ in range(args.restarts):
            stack.stop("executive", signal.SIGKILL)
            stack.start_service(ready=True)
            sim = stack.pid("sim")
            assert sim is not None, "the sim died"
            restarts.append(rss_by_mapping(sim))
    sim_kib = [r["heap"] + r["anon"] for r in restarts]
    return {
        "cyclonedds_uri": os.environ["CYCLONEDDS_URI"],
        "idle": idle,
        "sim_over_restarts": restarts,
        "sim_kib_per_restart": round(slope(sim_kib), 1),
        "sim_kib_per_restart_from_5th": round(slope(sim_kib[4:]), 1),
    }


def report(r: dict[str, Any]) -> str:
    idle, sim = r["idle"], r["sim_over_restarts"]
    rows = [["config", r["cyclonedds_uri"].split(",", 1)[-1][:90]]]
    if idle:
        first, last = idle[0], idle[-1]
        heap = " ".join(str(s["heap"]) for s in idle)
        rows += [
            [f"idle service [heap], every {EVERY_S:g} s", heap],
            [
                f"idle service first -> last ({last['t']} s)",
                f"heap {first['heap']} -> {last['heap']}, anon {first['anon']} -> {last['anon']} KiB",
            ],
        ]
    if sim:
        rows += [
            [
                f"sim over {len(sim)} restarts",
                f"heap {sim[0]['heap']} -> {sim[-1]['heap']}, anon {sim[0]['anon']} -> {sim[-1]['anon']} KiB",
            ],
            [
                "sim per restart, fitted; from the 5th",
                f"{r['sim_kib_per_restart']}; {r['sim_kib_per_restart_from_5th']} KiB",
            ],
        ]
    return table(("receive buffers", "value"), rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--receive-buffer", help="Sizing/ReceiveBufferSize, e.g. 1MiB")
        parser.add_argument("--chunk", help="Sizing/ReceiveBufferChunkSize, e.g. 32KiB")
        parser.add_argument("--idle", type=float, default=240.0, help="idle seconds first")
        parser.add_argument("--restarts", type=int, default=20)

    return cli(__doc__, run, report, arguments)


if __name__ == "__main__":
    sys.exit(main())
