"""E-stop to hold with the e-stop published from C: the C robot against the real service.

    python -m bench.parts.estop_c [--events 30] [--variant seed] [--no-ddsperf]

Why beside ``bench/parts/estop.py``: there the robot is Python and writes its e-stop through the
executive's own codec. The firmware is C (CycloneDDS 0.10, types by idlc), and until the
C robot existed the executive was deaf to a C firmware's e-stop while every figure and
test looked fine. Here the e-stop is a ``dds_write`` of idlc's ``EmergencyState_`` by
``tests/crobot/crobot.c``, built for the variant the service's config names.

Two processes on a leased loopback domain, and this one driving them:

1. the C robot with ``--probe``: every state topic at the profile's rates; joints that do
   not follow (``--vmax 1e-9``: the measured pose stands still, as ``bench/robot.py``'s
   does) and a base task that never ends (so there is one to cancel). ``estop soft on``
   writes the e-stop at once and replies with ``written``, CLOCK_MONOTONIC just before
   the ``dds_write``; the probe's listeners, on CycloneDDS's receive thread, stamp the
   arrival of each stream's first hold and of the first CANCEL_TASK after it;
2. the service, ``atom-executive run`` (``executive.harness.stack``), running ``estop_c_bench``:
   ``navigate_to_tag`` beside one ``move_joints`` of an arm, a knee and a finger, paced by
   the speed caps, so the upper, lower and hands streams all publish at 500 Hz.

*Which command is the hold*: ``MotionStreamer.hold()`` freezes each stream at the measured
position, which is the robot's still start pose, while every trajectory point after the
first few milliseconds of the move is away from it. The probe takes the first command
within 1e-5 rad of the pose published when the e-stop was set. Afterwards the robot's
record checks every event: each stream's commands sent in the 50 ms before the e-stop
must all be more than ``AMBIGUOUS_RAD`` from that pose, or the event is *ambiguous* and
not counted (a trajectory point could have passed for the hold).

Per event: start the mission (signed); once the status shows it RUNNING, wait
``SETTLE_S`` and a random 0-20 ms (any phase of the 2 ms stream period and the 20 ms
tick); ``estop soft on``; wait for the three holds and the cancel; wait for the status to
show SAFE_STOP; ``estop soft off``; reset. Figures, ms from ``written``: *first hold*,
*all 3 holds*, *AMR cancel*. The floor is ddsperf's C ping-pong (two hops, as e-stop in
and hold out are), measured here when run alone and taken from ``bench/parts/estop.py``'s idle
condition by ``bench/run.py``.

The C robot and its build come from ``tests/crobot`` (``tests.crobot.harness``): the same
program the integration tests run, so the benchmark measures the robot they check.
"""

from __future__ import annotations

import argparse
import bisect
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bench.episode import WAIT_S, reset, write_mission
from bench.harness import cli, figure_row, floor_row, fmt, loadavg, ratio, summary, table
from bench.parts import Part, sized
from bench.parts.estop import TARGETS, ddsperf_pingpong
from bench.robot import base_pose
from executive.harness.stack import Stack, running_stack
from executive.robots.atom.interface import Variant
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.streams import STREAMS
from executive.robots.simkit.record import StreamCommand
from executive.seam.profile import load_profile
from executive.wire import dds
from tests.crobot.harness import CRobot, build_crobot, crobot_args

MISSION = "estop_c_bench"
STREAM_NAMES = tuple(STREAMS)  # upper, lower, hands
SETTLE_S = 0.3  # after RUNNING: the move is well away from the start pose by then
AMBIGUOUS_RAD = 1e-4  # a command this close to the held pose could pass for the hold
WARMUP = 3
RNG = np.random.default_rng(7)  # the phases: random, and the same every run


def _wait_probe(robot: CRobot) -> dict[str, Any]:
    """The probe once it has the three holds and the cancel, or as it is after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    time.sleep(0.01)  # the holds take about a millisecond: don't poll meanwhile
    while True:
        probe = robot.probe()
        done = all(probe["hold"][s] is not None for s in STREAM_NAMES)
        if (done and probe["cancel"] is not None) or time.monotonic() > deadline:
            return probe
        time.sleep(0.005)


def estop_events(stack: Stack, robot: CRobot, events: int) -> list[dict[str, Any]]:
    """``events`` e-stops from C against the running service; the probe's stamps of each."""
    out = []
    for k in range(events):
        reply = stack.client.request("start", {"mission": MISSION}, timeout=WAIT_S)
        if reply.code != 0:
            raise RuntimeError(f"start refused: {reply.message}")
        running = stack.client.wait_status(lambda s: s.state == "RUNNING", WAIT_S)
        if running is None:
            raise RuntimeError(f"event {k}: the status never showed the mission running")
        time.sleep(SETTLE_S + RNG.uniform(0.0, 0.02))
        written = float(robot.fault("estop soft on")["written"])
        probe = _wait_probe(robot)
        stopped = stack.client.wait_status(
            lambda s, seq=running.seq: s.state == "SAFE_STOP" and s.seq > seq, WAIT_S
        )
        robot.fault("estop soft off")
        if stopped is None:
            raise RuntimeError(f"event {k}: the status never showed SAFE_STOP")
        out.append({"written": written, "hold": probe["hold"], "cancel": probe["cancel"]})
        reset(stack)
    return out


def ambiguous(window: list[StreamCommand]) -> list[str]:
    """The streams with no command in ``window`` (those sent in the 50 ms before an
    e-stop), or with one within AMBIGUOUS_RAD of the measured (held) pose: there a
    trajectory point could pass for the hold. The robot stands still, so the record's
    ``dev`` (|q - measured| when taken) is that distance."""
    out = []
    for name in STREAM_NAMES:
        devs = [c.dev for c in window if c.topic == f"{name}_cmd"]
        if not devs or min(devs) <= AMBIGUOUS_RAD:
            out.append(name)
    return out


def figures(stamps: list[dict[str, Any]], rec: Recording) -> dict[str, list[Any]]:
    """Per-event latencies (ms from ``written``), and the lost and ambiguous events."""
    hold: list[float] = []
    hold_all: list[float] = []
    cancel: list[float] = []
    lost: list[int] = []
    unclear: list[int] = []
    by_sent = sorted(rec.streams, key=lambda c: c.sent)
    sent = [c.sent for c in by_sent]
    for k, ev in enumerate(stamps):
        w = ev["written"]
        window = by_sent[bisect.bisect_left(sent, w - 0.05) : bisect.bisect_right(sent, w)]
        if ambiguous(window):
            unclear.append(k)
            continue
        holds = [ev["hold"][s] for s in STREAM_NAMES]
        if None in holds or ev["cancel"] is None:
            lost.append(k)
        arrived = [t for t in holds if t is not None]
        if arrived:
            hold.append((min(arrived) - w) * 1e3)
        if len(arrived) == len(STREAM_NAMES):
            hold_all.append((max(arrived) - w) * 1e3)
        if ev["cancel"] is not None:
            cancel.append((ev["cancel"] - w) * 1e3)
    return {
        "hold": hold,
        "hold_all": hold_all,
        "cancel": cancel,
        "lost": lost,
        "ambiguous": unclear,
    }


def run(
    events: int = 30,
    variant: str = "seed",
    use_ddsperf: bool = True,
    floor: dict[str, Any] | None = None,
    warmup: int = WARMUP,
) -> dict[str, Any]:
    """Build the C robot for ``variant``, start it and the service, ``warmup`` events not
    counted, then ``events``; the figures. ``floor``: a ddsperf ping-pong result already
    measured (``bench/run.py`` passes ``bench/parts/estop.py``'s), else measured here unless
    ``use_ddsperf`` is false."""
    profile = load_profile()
    work = Path(tempfile.mkdtemp(prefix="bench-estop-c-"))
    try:
        exe = build_crobot(Variant.parse(variant), work / "build")
        missions = work / "missions"
        missions.mkdir()
        write_mission(missions, profile, MISSION, duration=None)
        with running_stack(work / "stack") as stack:
            stack.write_config(missions_dir=str(missions), interface=variant)
            initial = {t: base_pose(profile, t) for t in STREAM_NAMES}
            args = crobot_args(profile, initial=initial, vmax=1e-9, amr_trip_s=1e6, probe=True)
            robot = CRobot(exe, stack.domain, work / "crobot-record.jsonl", args)
            with robot.start():
                stack.start_service(ready=True)
                estop_events(stack, robot, warmup)
                load = loadavg()
                started = time.monotonic()
                stamps = estop_events(stack, robot, events)
                took = time.monotonic() - started
                rec = robot.recording()
            if floor is None and use_ddsperf:
                lease = dds.lease_domain()
                try:
                    floor = ddsperf_pingpong(stack.env(), lease.domain)
                finally:
                    lease.release()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    f = figures(stamps, rec)
    hold = summary(f["hold"])
    results: dict[str, Any] = {
        "events": events,
        "variant": variant,
        "hold_ms": hold,
        "hold_all_ms": summary(f["hold_all"]),
        "cancel_ms": summary(f["cancel"]),
        "lost": len(f["lost"]),
        "ambiguous": len(f["ambiguous"]),
        "ddsperf_rtt_ms": floor,
        "seconds": round(took, 1),
        "loadavg": load,
        "samples": {"hold": f["hold"], "hold_all": f["hold_all"], "cancel": f["cancel"]},
    }
    if floor:
        results["hold_over_ddsperf"] = ratio(hold, floor)
    return results


def met(results: dict[str, Any]) -> bool:
    """The e-stop target of an idle machine (``bench/parts/estop.py``'s), for the C robot too."""
    return results["hold_ms"]["median"] <= TARGETS["median"] and not results["lost"]


def report(results: dict[str, Any]) -> str:
    name = f"idle, C robot ({results['variant']})"
    rows = []
    for label, key in (
        ("e-stop from C -> first hold", "hold_ms"),
        ("e-stop from C -> all 3 holds", "hold_all_ms"),
        ("e-stop from C -> AMR cancel", "cancel_ms"),
        ("ddsperf ping-pong (C)", "ddsperf_rtt_ms"),
    ):
        s = results.get(key)
        if s:
            rows.append([name, label, str(s["n"]), fmt(s["median"]), fmt(s["p99"]), fmt(s["max"])])
    if "hold_over_ddsperf" in results:
        ratio = results["hold_over_ddsperf"]
        rows.append(
            [name, "hold / ddsperf", "", f"{ratio['median']:.1f}x", f"{ratio['p99']:.1f}x", ""]
        )
    text = table(("condition", "path", "n", "median ms", "p99 ms", "max ms"), rows)
    return (
        f"{text}\nlost {results['lost']}, ambiguous {results['ambiguous']} of {results['events']}"
    )


def rows(e: dict[str, Any]) -> list[list[str]]:
    """The e-stop from C beside the Python robot's rows: the same target, and the ratio to
    the same floor (ddsperf's C ping-pong, as printed in the estop rows)."""
    name = f"idle, C robot ({e['variant']})"
    target = "median <= 0.5 ms" + (f"; {e['lost']} events lost" if e["lost"] else "")
    out = [
        figure_row("e-stop from C -> first hold", name, e["hold_ms"], target, met(e)),
        figure_row("e-stop from C -> AMR cancel", name, e["cancel_ms"], "", None),
    ]
    if e.get("hold_over_ddsperf"):
        out.append(floor_row("  over ddsperf ping-pong (C)", name, e["ddsperf_rtt_ms"], e["hold_over_ddsperf"], 0))  # fmt: skip
    return out


def c_floor(earlier: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ddsperf ping-pong the estop part measured idle, for the C robot's ratio."""
    conditions = (earlier.get("estop") or {}).get("conditions", {})
    floor: dict[str, Any] | None = conditions.get("idle", {}).get("ddsperf_rtt_ms")
    return floor


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    """After the estop part: its idle ddsperf figure is the floor (measured here when it
    did not run; not in the smallest form)."""
    events = options.c_events or sized(options, 30, 10, 2)
    if options.size == "smallest":
        return run(events, use_ddsperf=False, floor=c_floor(earlier), warmup=1)
    return run(events, floor=c_floor(earlier))


PART = Part("estop_c", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--events", type=int, default=30)
        parser.add_argument("--variant", default="seed", help="interface variant (preset)")
        parser.add_argument("--no-ddsperf", action="store_true")

    def run_with(args: argparse.Namespace) -> dict[str, Any]:
        return run(args.events, args.variant, not args.no_ddsperf)

    return cli(__doc__, run_with, report, arguments)


if __name__ == "__main__":
    sys.exit(main())
