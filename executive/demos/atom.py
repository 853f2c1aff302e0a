"""``make demo``: the executive running the delivery mission against the simulated Atom.

Everything runs for real on loopback DDS, as separate processes: the simulated Atom
(``atom-executive sim``) and the service (``atom-executive run``). This script plays
the operator (starting missions with signed requests, pressing the gamepad's A button
through the sim) and the trouble (an e-stop in the middle of a mission), and prints
the live tree as status arrives. It exits 0 with a summary if everything happened as
it should, and cleans up its processes whatever happens.

The Atom's demo lives with the Atom, as the Adam's and the GRX's with theirs; what every
robot's demo shares (the checks, the live tree, the dispatch by profile that ``make demo
[PROFILE=...]`` runs) is ``executive/demos/__main__.py``.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from executive.demos.kit import Demo, accepted, groot2_hints, groot2_port, realtime_report, say
from executive.harness.stack import ROOT, Stack, running_stack
from executive.robots.atom.sim.client import SimClient
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.service.client import ExecutiveClient
from executive.wire.robot_io import Side


def main(profile: str) -> int:
    """The Atom's delivery with the shipped configuration (its default profile): an Atom
    ``profile`` given to ``make demo`` chose the robot, not its interface variant."""
    started = time.monotonic()
    with running_stack() as stack:  # a leased domain: no test run or other demo shares it
        return run(Demo(), stack, started)


def run(demo: Demo, stack: Stack, started: float) -> int:
    say(f"starting the simulated Atom and the executive on loopback DDS domain {stack.domain}")
    stack.start_sim("--amr-speed", "2.5", "--seed", "1", "--record", str(record_path(stack)))
    groot2 = groot2_port()  # the running tree for Groot2 and btview (docs/missions.md)
    stack.write_config(groot2={"port": groot2})
    stack.start_service()
    sim, client = stack.sim, stack.client
    amr = AtomIO(stack.dds, side=Side.CONTROLLER, topics={"amr_state": TOPICS["amr_state"]})
    status = client.status(30)
    demo.check(
        f"executive ready: {status.state}, interface {status.interface_variant}, profile {status.profile}",
        status.state == "IDLE",
    )
    for line in realtime_report(stack):
        print(f"  {line}", flush=True)  # noqa: T201
    reply = client.request("list_missions")
    print("  missions:", reply.payload, flush=True)  # noqa: T201

    say("operator: start deliver_drink (table 4)")
    reply = client.request("start", {"mission": "deliver_drink", "params": {"table_tag": 4}})
    demo.check(f"start accepted (run {reply.message})", accepted(client, reply))
    groot2_hints(demo, groot2, "deliver_drink")
    waiting = demo.follow(
        client, lambda s: "Wait for button A" in s.active_node or s.state != "RUNNING", 120
    )
    if waiting is not None and "Wait for button A" in waiting.active_node:
        say("operator: the guest holds the cup; pressing A on the gamepad")
        for _ in range(3):  # as a person would: press again if nothing happened
            sim.inject("button", "A", duration=1.0)
            if client.wait_status(lambda s: "Wait for button A" not in s.active_node, 4.0):
                break
    done = demo.follow(client, lambda s: s.state != "RUNNING", 120)
    demo.check("deliver_drink SUCCEEDED", done is not None and done.state == "SUCCEEDED")

    estop_scene(demo, client, sim, amr, record_path(stack))
    files = pictures(demo, stack)
    files.append(export_for_groot2(demo))
    say(
        "to look at: each run's MCAP file (open it in Foxglove), its timeline, two previews, "
        "and the mission as BehaviorTree.CPP XML (open it in Groot2: File > Load)"
    )
    for path in files:
        print(f"  {path}")  # noqa: T201 - the summary stays the last line

    return demo.summary(started)


def pictures(demo: Demo, stack: Stack) -> list[Path]:
    """Each run's MCAP file copied to ``build/demo``, its timeline drawn beside it, and a
    pose and a gesture preview. The service is stopped first, as SIGTERM does it: the last
    run's MCAP file is finished then."""
    from executive.operator.posepreview import Robot, draw, find
    from executive.operator.timeline import draw as draw_timeline
    from executive.operator.timeline import load
    from executive.seam.profile import load_profile

    say("the service stops; each run's MCAP file and its timeline, a pose and a gesture")
    stack.stop("executive")
    out = ROOT / "build" / "demo"
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("*.png"), *out.glob("*.mcap")]:
        old.unlink()
    files = []
    runs = sorted((stack.data_dir / "runs").glob("*.mcap"), key=lambda p: p.stat().st_mtime)
    for n, mcap in enumerate(runs, 1):
        data = load(mcap)
        copy = out / f"run{n}-{data.mission}-{data.result or 'unfinished'}-{mcap.name}"
        shutil.copyfile(mcap, copy)
        files += [copy, draw_timeline(data, copy.with_suffix(".png"))]
    profile = load_profile()
    robot = Robot(profile)
    for name in ("right_reach_forward", "right_grasp_cup"):
        preview = find(ROOT / "missions", profile, name)
        files.append(draw(preview, profile, out / f"{preview.kind}-{name}.png", robot))
    demo.check(
        f"{len(runs)} runs' MCAP files and timelines, 2 previews in {out}",
        len(runs) == 2 and all(f.stat().st_size > 0 for f in files),
    )
    return files


def export_for_groot2(demo: Demo) -> Path:
    """deliver_drink as Groot2 opens it: ``atom-executive export ... --format btcpp``."""
    import subprocess
    import sys

    out = ROOT / "build" / "demo" / "deliver_drink.xml"
    mission = ROOT / "missions" / "deliver_drink.yaml"
    command = [sys.executable, "-m", "executive.cli", "export", str(mission), "--format", "btcpp"]
    done = subprocess.run([*command, "-o", str(out)], capture_output=True, text=True, check=False)
    demo.check(
        f"atom-executive export missions/deliver_drink.yaml --format btcpp -o {out.name}",
        done.returncode == 0 and out.exists() and "BTCPP_format" in out.read_text(),
    )
    return out


def record_path(stack: Stack) -> Path:
    """Where the sim writes every command it receives: the witness of what was sent."""
    return stack.workdir / "sim-record.jsonl"


def estop_scene(
    demo: Demo, client: ExecutiveClient, sim: SimClient, amr: AtomIO, record: Path
) -> None:
    """An e-stop while the base carries the cup to the table, the arm held up in its pose:
    preempt, hold, cancel, latch, refused reset, reset."""
    say("operator: start deliver_drink again; an e-stop will hit on the way to the table")
    nav_seen: set[str] = set()  # every navigation_status seen from here on
    amr.readers["amr_state"].add_callback(lambda a: nav_seen.add(a.navigation_status.name))
    # the base is at the bar (tag 3) after the first run: send it to a far tag this time
    reply = client.request(
        "start", {"mission": "deliver_drink", "params": {"bar_tag": 1, "table_tag": 2}}
    )
    demo.check(f"start accepted (run {reply.message})", accepted(client, reply))
    demo.follow(client, lambda s: "Drive to the table" in s.active_node, 90)
    deadline = time.monotonic() + 10
    while "RUNNING" not in nav_seen and time.monotonic() < deadline:  # the base is driving
        time.sleep(0.02)
    nav_seen.clear()
    say("trouble: the soft e-stop is pressed")
    sim.inject("estop-soft")
    stopped = demo.follow(client, lambda s: s.state == "SAFE_STOP", 10)
    demo.check(
        f"SAFE_STOP latched: {stopped.safety_reason if stopped else '-'}", stopped is not None
    )
    deadline = time.monotonic() + 5
    while "CANCELED" not in nav_seen and time.monotonic() < deadline:
        time.sleep(0.05)
    demo.check("the base's task was canceled (navigation_status CANCELED)", "CANCELED" in nav_seen)
    time.sleep(0.3)  # the sim flushes its record every 100 ms
    rec = Recording.load(record)
    pressed = [t for t, f in rec.faults if f["kind"] == "estop-soft" and f["action"] == "set"]
    since = pressed[-1] if pressed else 0.0
    held = rec.commands(after=since)
    demo.check(
        f"the sim's record: no joint command moved the arm after the e-stop "
        f"({len(held)} holding commands since)",
        bool(pressed) and bool(held) and rec.motion_commands(since) == [],
    )
    reply = client.request("start", {"mission": "head_scan"})
    demo.check(f"start refused while latched: {reply.message}", reply.code != 0)
    reply = client.request("reset")
    demo.check(f"reset refused while the e-stop is pressed: {reply.message}", reply.code != 0)
    say("the e-stop is released; operator: reset")
    sim.clear("estop-soft")
    time.sleep(0.5)
    demo.reset_to_idle(client)
