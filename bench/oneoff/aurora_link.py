"""The Aurora adapter's link alone: a group frame to the bridge's side and back.

    .venv/bin/python -m bench.oneoff.aurora_link [--samples 5000] [--json FILE]

Two processes on one ``executive.robots.aurora.ipc`` socket pair, as the adapter and its
bridge have it: this one sends what a joint stream writes (a ``group`` frame with 7
positions, encoded by ``ipc.encode``), the other (this script with ``--echo``, started like
the bridge with the socket's fd passed) decodes it with ``Channel.recv`` and answers with a
``state``-sized frame (every group's positions, as the bridge sends up). The round trip is
``time.perf_counter_ns`` from before the send to after the answer is decoded. Standard
library only on both ends, like the link itself.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from executive.robots.aurora import ipc

SIZES = {"left_leg": 6, "right_leg": 6, "waist": 3, "head": 2, "left_manipulator": 7}
SIZES |= {"right_manipulator": 7, "left_hand": 6, "right_hand": 6}


def echo(fd: int) -> int:
    link = ipc.Channel(socket.socket(fileno=fd))
    state = {
        "t": ipc.STATE,
        "at": 0.0,
        "groups": {g: {"q": [0.1] * n, "dq": [0.0] * n, "state": 1} for g, n in SIZES.items()},
    }
    while (m := link.recv()) is not None:
        state["at"] = time.monotonic()
        state["echo"] = m["q"][0]
        link.send(state)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--json", default="")
    parser.add_argument("--echo", type=int, default=-1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo >= 0:
        return echo(args.echo)
    ours, theirs = ipc.pair()
    child = subprocess.Popen(
        [sys.executable, __file__, "--echo", str(theirs.fileno())], pass_fds=(theirs.fileno(),)
    )
    theirs.close()
    link = ipc.Channel(ours)
    rtt = []
    try:
        for i in range(args.samples + 200):
            q = [0.001 * i] * 7
            t = time.perf_counter_ns()
            link.send_frame(ipc.encode({"t": ipc.GROUP, "g": "left_manipulator", "q": q}))
            answer = link.recv()
            done = time.perf_counter_ns()
            assert answer is not None and answer["echo"] == q[0]
            if i >= 200:  # warm-up
                rtt.append((done - t) / 1e3)
            time.sleep(0.0005)
    finally:
        link.close()
        child.wait(timeout=5)
    rtt.sort()
    result = {
        "samples": len(rtt),
        "median_us": round(statistics.median(rtt), 1),
        "p99_us": round(rtt[int(0.99 * (len(rtt) - 1))], 1),
        "max_us": round(rtt[-1], 1),
        "down_frame_bytes": len(ipc.encode({"t": ipc.GROUP, "g": "left_manipulator", "q": q})),
    }
    print(json.dumps(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
