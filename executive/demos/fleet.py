"""``make demo PROFILE=fleet``: three robots, three executives, one router, one operator.

Everything runs for real on loopback, each its own process: a zenoh router (``atom-executive
router`` on a free port of 127.0.0.1), the simulated Atom, Adam and GRX with their
executives, each on its own DDS domain and on the fleet plane as atom-1, adam-1 and grx-1
(``executive.harness.fleet.three_robots``). The operator starts a mission on each through
the fleet (signed zenoh queries), the fleet view is printed while the three run, then the
Atom's e-stop is pressed (``atom-executive sim fault estop-soft``, a process on the Atom's
domain): the view must show atom-1 SAFE_STOP while adam-1 and grx-1 run on; then grx-1's
executive is killed and adam-1's stopped, and a view opened afterwards lists them lost
and left. Exit 0 only if every check held.

The plane is the secure layout, as a site would run it: ``atom-executive fleet-site``
makes a CA and a certificate for each robot and the operator in the demo's directory,
the router runs TLS with mutual authentication and access control (each robot may
publish only under its own id), the requests are signed as ever. Nothing leaves
127.0.0.1 (zenoh: tls/127.0.0.1, scouting off).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from executive.demos.kit import Demo, say
from executive.harness.fleet import (
    KINDS,
    fleet_client,
    free_port,
    secure_site,
    start_router,
    three_robots,
)
from executive.harness.stack import running_stack
from executive.operator.fleet import FleetClient, plain

MISSIONS = {  # one each, long enough to be running when the e-stop comes
    "atom-1": ("deliver_drink", {"table_tag": 4}),
    "adam-1": ("arms_wave", {"waves": 10}),
    "grx-1": ("walk_square", {"leg_seconds": 10.0}),
}


def show(client: FleetClient) -> None:
    print(plain(client.rows()) + "\n", flush=True)  # noqa: T201 - the demo talks to a person


def run(demo: Demo, scope: ExitStack, work: Path) -> None:
    port = free_port()
    key = os.urandom(32)
    site = secure_site(work / "site", port)
    say(
        f"the site's certificates (atom-executive fleet-site): a CA and one each for "
        f"{', '.join(KINDS)} and the operator, in {site.layout.directory}"
    )
    say(
        f"a zenoh router on tls/127.0.0.1:{port} (atom-executive router): TLS with mutual "
        "authentication, access control (a robot publishes only under its own id)"
    )
    router = scope.enter_context(running_stack(work / "router"))
    start_router(router, port, site=site)
    say("the simulated Atom, Adam and GRX, each with its executive on its own DDS domain")
    stacks = three_robots(scope, work, port, key, site=site)
    client = fleet_client(work, port, key=key, site=site)
    scope.callback(client.close)
    seen = client.wait_for(lambda c: set(KINDS) <= set(c.robots), 30)
    demo.check("the fleet view shows atom-1, adam-1 and grx-1", seen)
    show(client)
    say("a mission on each, started through the fleet (signed zenoh queries)")
    for robot, (mission, params) in MISSIONS.items():
        reply = client.request(robot, "start", {"mission": mission, "params": params})
        demo.check(f"{robot}: start {mission}: {reply.get('message')}", reply.get("code") == 0)
    running = client.wait_for(
        lambda c: all((c.row(r) or {}).get("state") == "RUNNING" for r in KINDS), 15
    )
    demo.check("all three RUNNING in the fleet view", running)
    time.sleep(2.0)
    show(client)
    say("the Atom's e-stop: atom-executive sim fault estop-soft (on the Atom's domain)")
    subprocess.run(
        [sys.executable, "-m", "executive.cli", "sim", "fault", "estop-soft"],
        env=stacks["atom-1"].env(),
        stdout=subprocess.DEVNULL,  # the sim's status after the fault: the view says it
        check=False,
        timeout=60,
    )
    stopped = client.wait_for(lambda c: (c.row("atom-1") or {}).get("safety") == "SAFE_STOP", 5)
    demo.check("atom-1 SAFE_STOP in the fleet view", stopped)
    time.sleep(0.5)
    others = [client.row(r) or {} for r in ("adam-1", "grx-1")]
    demo.check(
        "adam-1 and grx-1 run on",
        all(r.get("state") == "RUNNING" and r.get("safety") == "CLEAR" for r in others),
    )
    show(client)
    for robot in ("adam-1", "grx-1"):
        client.request(robot, "stop")
    stacks["atom-1"].sim.clear_all()
    say("grx-1's executive killed (-9), adam-1's stopped (SIGTERM)")
    stacks["grx-1"].stop("executive", sig=signal.SIGKILL)
    stacks["adam-1"].stop("executive")
    gone = client.wait_for(
        lambda c: (c.row("grx-1") or {}).get("condition") == "lost"
        and (c.row("adam-1") or {}).get("condition") == "left",
        15,
    )
    demo.check("the view shows grx-1 lost and adam-1 left", gone)
    later = fleet_client(work, port, site=site)  # the next shift's operator opens a view
    scope.callback(later.close)
    time.sleep(1.0)
    rows = {r["robot_id"]: r for r in later.rows()}
    demo.check(
        "a view opened afterwards lists grx-1 lost and adam-1 left, with their last status",
        rows.get("grx-1", {}).get("condition") == "lost"
        and rows.get("adam-1", {}).get("condition") == "left"
        and rows["grx-1"].get("kind") == "grx",
    )
    show(later)


def main() -> int:
    started = time.monotonic()
    demo = Demo()
    with tempfile.TemporaryDirectory(prefix="atom-fleet-demo-") as tmp, ExitStack() as scope:
        try:
            run(demo, scope, Path(tmp))
        except (TimeoutError, OSError) as e:
            demo.check(f"the fleet came up: {e}", False)
    failed = [what for what, ok in demo.checks if not ok]
    say(
        f"fleet demo: {len(demo.checks) - len(failed)}/{len(demo.checks)} checks passed "
        f"in {time.monotonic() - started:.0f} s"
    )
    return 1 if failed or not demo.checks else 0


if __name__ == "__main__":
    sys.exit(main())
