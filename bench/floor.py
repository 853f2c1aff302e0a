"""The floors of ``make bench``: what plain C gets on this machine, measured in the same run.

    python -m bench.floor [--events 150] [--seconds 10] [--no-hog]

Three C programs (``bench/floor_c/``), built here at run time (Debian's ``idlc -l c`` over the
wire types they need, gcc, ``-lddsc``), as ``tests/wire/c_interop.py`` builds its C:

- ``relay``: CycloneDDS in C and nothing else. An ``EmergencyState_`` with a flag set in;
  out, from the listener on the receive thread, what the executive sends: the three
  joint streams' commands at that e-stop's marker (``bench/robot.py``), then a
  ``CANCEL_TASK``. Between the same publisher and subscribers as the executive's e-stop
  figures (``bench.episode.relay_events``: this process publishes and stamps, the ``holds`` and
  ``amr`` peers, ``peer`` below, receive and stamp), it is the floor of e-stop -> first hold, -> all
  three holds and -> cancel: two DDS hops and C in the middle, the subscribers' own
  handling of three samples in a row included as it is in the executive's figures. It
  runs under SCHED_FIFO ``RELAY_PRIORITY`` (81, where the service's reflex runs: CycloneDDS's
  receive thread, one above the streamer) and the C peers under ``PEER_PRIORITY`` (70),
  where this machine grants it: at normal priority the peers' and the relay's own waits
  for a CPU were most of both figures' p99 under a CPU hog (the reflex's part: sample to
  first hold <= 0.09 ms p99), and the ratio measured the scheduler;
- ``loop``: a thread under SCHED_FIFO (the service's ``stream_priority``) waking to 2 ms
  deadlines, timed as the motion streamer times its periods, with no work in them: the
  floor of the stream's lateness and missed periods. ``Loop`` runs it beside a window of
  the service's stream, so both see the same machine;
- ``peer``: ``bench.estop_peer``'s ``holds`` and ``amr`` roles in C, stamping each
  arrival on CycloneDDS's receive thread. ``build`` makes every ``bench.episode.Peer``
  after it this one, so the executive's figures and the relay's are stamped alike and
  neither depends on how fast a Python listener drains the service's 500 Hz stream
  (the holds' peer receives all of it; under a CPU hog its backlog stamped late).

Figures are milliseconds; ``bench/parts/reflex.py`` divides every figure by its floor.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.episode import STREAM_NAMES, Peer, relay_events
from bench.harness import (
    REALTIME_PRIORITY,
    RELAY_PRIORITY,
    ROOT,
    cli,
    cpu_hog,
    fifo_argv,
    fmt,
    loadavg,
    summary,
    table,
)
from bench.robot import MARKERS, marker, marker_table
from executive.robots.atom.interface import Interface
from executive.seam.profile import load_profile
from executive.wire import dds

SOURCES = ROOT / "bench" / "floor_c"
IDL = ROOT / "idl" / "dobot_atom"
PERIOD_US = 2000  # the streamer's period at the profile's 500 Hz


@dataclass(frozen=True)
class Floors:
    """The built programs, the markers files the relay reads and the marker tables the
    peer reads (both upper, lower, hands)."""

    relay: Path
    loop: Path
    markers: tuple[Path, ...]
    peer: Path
    tables: tuple[Path, ...]

    def relay_argv(self) -> list[str]:
        """The relay's command, at the reflex's priority: the same job, in C alone."""
        return fifo_argv([str(self.relay), *map(str, self.markers)], RELAY_PRIORITY)[0]


def _run(cmd: list[str | Path]) -> None:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=180, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}")


def build(workdir: Path) -> Floors:
    """idlc and gcc into ``workdir``; the C of ours with -Wall -Wextra -Werror."""
    idlc = shutil.which("idlc") or "/usr/bin/idlc"
    gcc = shutil.which("gcc") or "gcc"
    types = workdir / "dobot_atom"
    types.mkdir(parents=True, exist_ok=True)
    objects = []
    for name in ("motor_cmd", "upper_cmd", "lower_cmd", "hands_cmd", "amr_cmd", "emergency_state"):
        _run([idlc, "-l", "c", "-o", types, IDL / f"{name}.idl"])
        obj = workdir / f"{name}.o"
        _run([gcc, "-std=gnu11", "-O2", "-c", "-I", types, "-o", obj, types / f"{name}.c"])
        objects.append(obj)
    strict = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]
    relay = workdir / "relay"
    _run([gcc, *strict, "-I", workdir, "-I", types, "-o", relay, SOURCES / "relay.c", *objects, "-lddsc"])  # fmt: skip
    peer = workdir / "peer"
    _run([gcc, *strict, "-I", workdir, "-I", types, "-o", peer, SOURCES / "peer.c", *objects, "-lddsc"])  # fmt: skip
    loop = workdir / "loop"
    _run([gcc, *strict, "-o", loop, SOURCES / "loop.c"])
    profile = load_profile()
    interface = Interface()
    markers, tables = [], []
    for topic in STREAM_NAMES:  # as bench.robot.marker_table expects the holds to come
        lower, upper = profile.limits(topic)
        rows = [
            np.clip(marker(profile, topic, k).astype("<f4"), lower, upper) for k in range(MARKERS)
        ]
        path = workdir / f"{topic}.f32"
        np.stack(rows).astype("<f4").tofile(path)
        markers.append(path)
        # the Python peer's own table (bytes of the held q -> k), as records for the C peer
        table = workdir / f"{topic}.tab"
        with table.open("wb") as f:
            for q, k in marker_table(profile, interface, topic).items():
                f.write(q + struct.pack("=i", k))
        tables.append(table)
    floors = Floors(relay, loop, tuple(markers), peer, tuple(tables))
    Peer.use_c(floors.peer, floors.tables)  # every Peer from now on: both figures stamp alike
    return floors


class Loop:
    """The C loop running for ``seconds`` (started now); ``result()`` waits for its figures."""

    def __init__(self, floors: Floors, seconds: float, priority: int = REALTIME_PRIORITY):
        self.seconds = seconds
        self.proc = subprocess.Popen(
            [str(floors.loop), str(seconds), str(PERIOD_US), str(priority)],
            stdout=subprocess.PIPE,
            text=True,
        )

    def result(self) -> dict[str, Any]:
        out, _ = self.proc.communicate(timeout=self.seconds + 60)
        lines = out.splitlines()
        policy = lines[0].removeprefix("policy ")
        _, periods, _, missed = lines[1].split()
        lateness = [int(x) / 1e6 for x in lines[2:]]
        return {
            "scheduling": policy,
            "periods": int(periods),
            "missed": int(missed),
            "lateness_ms": summary(lateness),
            "samples": {"lateness": lateness},
        }


def run(
    events: int = 150, seconds: float = 10.0, hogs: tuple[bool, ...] = (False, True)
) -> dict[str, Any]:
    """Both floors, idle and with one CPU hog."""
    results: dict[str, Any] = {"events": events, "seconds": seconds, "conditions": {}}
    work = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    lease = dds.lease_domain()
    try:
        floors = build(work)
        for hog in hogs:
            name = "cpu hog" if hog else "idle"
            with cpu_hog(hog):
                load = loadavg()
                loop = Loop(floors, seconds)
                loop_result = loop.result()
                relay = relay_events(dict(os.environ), lease.domain, events, floors.relay_argv())
            results["conditions"][name] = {
                **{f"relay_{k}_ms": summary(v) for k, v in relay.items()},
                "loop": loop_result,
                "loadavg": load,
                "samples": {f"relay_{k}": v for k, v in relay.items()},
            }
    finally:
        lease.release()
        shutil.rmtree(work, ignore_errors=True)
    return results


def report(results: dict[str, Any]) -> str:
    rows = []
    for name, c in results["conditions"].items():
        lp = c["loop"]
        for key, what in (
            ("hold", "first hold"),
            ("hold_all", "all 3 holds"),
            ("cancel", "AMR cancel"),
        ):
            r = c[f"relay_{key}_ms"]
            rows.append([name, f"C relay: e-stop -> {what}", str(r["n"]), fmt(r["median"]), fmt(r["p99"]), fmt(r["max"]), ""])  # fmt: skip
        s = lp["lateness_ms"]
        rows.append([name, f"C loop lateness ({lp['scheduling']})", str(s["n"]), fmt(s["median"]), fmt(s["p99"]), fmt(s["max"]), f"missed {lp['missed']}"])  # fmt: skip
    return table(("condition", "floor", "n", "median ms", "p99 ms", "max ms", ""), rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--events", type=int, default=150)
        parser.add_argument("--seconds", type=float, default=10.0)
        parser.add_argument("--no-hog", action="store_true", help="only the idle condition")

    return cli(
        __doc__,
        lambda a: run(a.events, a.seconds, (False,) if a.no_hog else (False, True)),
        report,
        arguments,
    )


if __name__ == "__main__":
    sys.exit(main())
