"""A plain cyclonedds-11 round trip on loopback: the floor under any Aurora figure.

    .venv-aurora/bin/python bench/oneoff/aurora_roundtrip.py [--samples 200] [--rate 100] [--json FILE]

Two processes of .venv-aurora (this one and a copy started with ``--pong``), one
participant each, on a DDS domain leased as the tests lease theirs (the same lock files
as ``executive.wire.dds.lease_domain``, which this environment cannot import), configured
by ``executive/resources/cyclonedds11-loopback.xml``. The ping is what the adapter streams,
a ``RobotControlGroupCmd`` with one 7-joint group, written with the Aurora's writer QoS
(RELIABLE, VOLATILE, XCDR1) on ``bench_ping``; the pong process blocks on a WaitSet, takes it
with the Aurora's reader QoS (BEST_EFFORT) and writes it back on ``bench_pong``; this one
blocks on a WaitSet for it. The round trip is ``time.perf_counter_ns`` from before the write
to after the take, ``--samples`` of them at ``--rate`` Hz after ``--warmup`` unmeasured ones
(a lost ping or pong, possible with best-effort readers, is counted in ``lost``).
Prints the median, p99 and max in ms (and writes them to ``--json``). No project code but
the wire module; nothing of the executive.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cyclonedds.core import ReadCondition, SampleState, WaitSet
from cyclonedds.util import duration

from executive.robots.aurora.wire import types as idl
from executive.robots.aurora.wire.config import WireConfig
from executive.robots.aurora.wire.node import AuroraNode, header

PING, PONG = "bench_ping", "bench_pong"


def lease() -> tuple[int, int]:
    """A domain no test or run holds: (domain, the lock's fd, held until exit)."""
    for domain in random.sample(range(1, 233), 232):
        path = os.path.join(tempfile.gettempdir(), f"atom-executive-dds-domain-{domain}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return domain, fd
    raise RuntimeError("every DDS domain is leased")


def endpoints(node: AuroraNode, out: str, inp: str) -> tuple[object, object, WaitSet]:
    writer = node.writer(out)
    reader = node.reader(inp, depth=8)
    ws = WaitSet(node.participant)
    ws.attach(ReadCondition(reader, SampleState.NotRead))
    return writer, reader, ws


def pong(domain: int) -> int:
    node = AuroraNode(WireConfig(domain=domain))
    node.topic(PING, idl.RobotControlGroupCmd)
    node.topic(PONG, idl.RobotControlGroupCmd)
    writer, reader, ws = endpoints(node, PONG, PING)
    print("ready", flush=True)
    while True:
        ws.wait(duration(seconds=1))
        for sample in reader.take(N=8):  # type: ignore[attr-defined]
            if getattr(sample, "header", None) is None:
                continue
            if sample.header.frame_id == "stop":
                node.close()
                return 0
            writer.write(sample)  # type: ignore[attr-defined]


def ping(domain: int, samples: int, warmup: int, rate: float) -> dict[str, float | int]:
    node = AuroraNode(WireConfig(domain=domain))
    node.topic(PING, idl.RobotControlGroupCmd)
    node.topic(PONG, idl.RobotControlGroupCmd)
    writer, reader, ws = endpoints(node, PING, PONG)
    deadline = time.monotonic() + 15
    while not (writer.get_matched_subscriptions() and reader.get_matched_publications()):  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            raise RuntimeError("the pong process never matched")
        time.sleep(0.01)
    cmd = idl.ControlGroupCmd(
        group_name="left_manipulator", group_motion_state=1, position=[0.1] * 7
    )
    rtts: list[float] = []
    lost = 0
    i = 0
    while len(rtts) < samples:
        # the readers are BEST_EFFORT (the Aurora's): a ping or pong may be lost, most
        # likely just after discovery; a lost one is counted and not measured
        sample = idl.RobotControlGroupCmd(header=header(str(i)), group_cmd=[cmd])
        t0 = time.perf_counter_ns()
        writer.write(sample)  # type: ignore[attr-defined]
        got = False
        wait_until = time.monotonic() + 0.5
        while not got and time.monotonic() < wait_until:
            ws.wait(duration(seconds=0.1))
            got = any(s.header.frame_id == str(i) for s in reader.take(N=8))  # type: ignore[attr-defined]
        if not got:
            lost += 1
            if lost > 20:
                raise RuntimeError(f"{lost} pings lost")
        elif i >= warmup:
            rtts.append((time.perf_counter_ns() - t0) / 1e6)
        i += 1
        time.sleep(1.0 / rate)
    writer.write(idl.RobotControlGroupCmd(header=header("stop")))  # type: ignore[attr-defined]
    time.sleep(0.2)
    node.close()
    rtts.sort()
    return {
        "samples": len(rtts),
        "lost": lost,
        "median_ms": statistics.median(rtts),
        "p99_ms": rtts[min(len(rtts) - 1, int(0.99 * len(rtts)))],
        "max_ms": rtts[-1],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--json", default="")
    parser.add_argument("--pong", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pong is not None:
        return pong(args.pong)
    domain, _fd = lease()
    child = subprocess.Popen(
        [sys.executable, __file__, "--pong", str(domain)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        result = ping(domain, args.samples, args.warmup, args.rate)
    finally:
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
    result = {"domain": domain, **result}
    print(json.dumps(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
