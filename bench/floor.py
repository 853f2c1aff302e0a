"""The floors of ``make bench``: what plain C gets on this machine, measured in the same run.

    python bench/floor.py [--events 150] [--seconds 10] [--no-hog]

Two C programs (``bench/floor_c/``), built here at run time (Debian's ``idlc -l c`` over the
two wire types they need, gcc, ``-lddsc``), as ``tests/wire/c_interop.py`` builds its C:

- ``relay``: CycloneDDS in C and nothing else. An ``EmergencyState_`` with a flag set in, an
  ``UpperCmd_`` out from the listener on the receive thread, its positions the marker of
  that e-stop (``bench/robot.py``). Between the same publisher and subscriber as the
  executive's e-stop figures (``relay_events``: this process publishes and stamps,
  ``bench.estop_peer holds`` receives and stamps), it is the floor of e-stop -> hold:
  two DDS hops, and C in the middle;
- ``loop``: a thread under SCHED_FIFO (the service's ``stream_priority``) waking to 2 ms
  deadlines, timed as the motion streamer times its periods, with no work in them: the
  floor of the stream's lateness and missed periods. ``Loop`` runs it beside a window of
  the service's stream, so both see the same machine.

Figures are milliseconds; ``bench/reflex.py`` divides every figure by its floor.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: python bench/floor.py
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    REALTIME_PRIORITY,
    cli,
    cpu_hog,
    fmt,
    loadavg,
    summary,
    table,
)
from bench.estop import RNG, Peer  # noqa: E402
from bench.robot import MARKERS, marker  # noqa: E402
from executive import dds  # noqa: E402
from executive.profile import load_profile  # noqa: E402
from executive.robot_io import TOPICS, RobotIO, Side  # noqa: E402
from executive.wire import Interface  # noqa: E402

SOURCES = ROOT / "bench" / "floor_c"
IDL = ROOT / "idl" / "dobot_atom"
PERIOD_US = 2000  # the streamer's period at the profile's 500 Hz


@dataclass(frozen=True)
class Floors:
    """The built programs, and the markers file the relay reads."""

    relay: Path
    loop: Path
    markers: Path


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
    for name in ("motor_cmd", "upper_cmd", "emergency_state"):
        _run([idlc, "-l", "c", "-o", types, IDL / f"{name}.idl"])
        obj = workdir / f"{name}.o"
        _run([gcc, "-std=gnu11", "-O2", "-c", "-I", types, "-o", obj, types / f"{name}.c"])
        objects.append(obj)
    strict = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"]
    relay = workdir / "relay"
    _run([gcc, *strict, "-I", workdir, "-I", types, "-o", relay, SOURCES / "relay.c", *objects, "-lddsc"])  # fmt: skip
    loop = workdir / "loop"
    _run([gcc, *strict, "-o", loop, SOURCES / "loop.c"])
    profile = load_profile()
    markers = workdir / "markers.f32"
    np.stack([marker(profile, "upper", k) for k in range(MARKERS)]).astype("<f4").tofile(markers)
    return Floors(relay, loop, markers)


def relay_events(floors: Floors, env: dict[str, str], domain: int, events: int) -> list[float]:
    """Publisher -> C ``relay`` -> ``estop_peer holds``, ``events`` times, in ``domain``: e-stop
    to hold (ms), measured as ``bench/estop.py``'s Python relay is (its loop, this relay)."""
    env = {**env, dds.DOMAIN_ENV: str(domain)}
    subscriber = Peer(env, "holds")
    relay = subprocess.Popen(
        [str(floors.relay), str(floors.markers)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    participant = dds.make_participant(domain)
    try:
        assert relay.stdout is not None
        if relay.stdout.readline().strip() != "ready":
            raise RuntimeError("the C relay did not start")
        io = RobotIO(
            participant,
            Interface(),
            side=Side.ROBOT,
            topics={"emergency_state": TOPICS["emergency_state"]},
            records=("emergency_state",),
        )
        rec = io.codec("emergency_state").zeros()
        flag = (rec.dtype.names or ())[0]
        latencies: list[float] = []
        warm = 10  # the first answers also wait for discovery: not counted
        deadline = time.monotonic() + 30
        while len(latencies) < events:
            with subscriber._cond:
                subscriber.holds.clear()
            rec[flag] = True
            sent = time.monotonic_ns()
            io.write_record("emergency_state", rec)
            if subscriber.wait(lambda: bool(subscriber.holds), 1.0):
                (hold,) = subscriber.holds.values()
                if warm:
                    warm -= 1
                else:
                    latencies.append((hold["upper"] - sent) / 1e6)
            elif time.monotonic() > deadline:
                raise RuntimeError("the C relay does not answer")
            rec[flag] = False
            io.write_record("emergency_state", rec)
            time.sleep(RNG.uniform(0.005, 0.015))
        return latencies
    finally:
        if relay.stdin is not None:
            relay.stdin.close()
        try:
            relay.wait(10)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait(5)
        subscriber.close()
        dds.close_participant(participant)


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
                relay = relay_events(floors, dict(os.environ), lease.domain, events)
            results["conditions"][name] = {
                "relay_ms": summary(relay),
                "loop": loop_result,
                "loadavg": load,
                "samples": {"relay": relay},
            }
    finally:
        lease.release()
        shutil.rmtree(work, ignore_errors=True)
    return results


def report(results: dict[str, Any]) -> str:
    rows = []
    for name, c in results["conditions"].items():
        r, lp = c["relay_ms"], c["loop"]
        rows.append(
            [
                name,
                "C relay: e-stop -> hold",
                str(r["n"]),
                fmt(r["median"]),
                fmt(r["p99"]),
                fmt(r["max"]),
                "",
            ]
        )
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
