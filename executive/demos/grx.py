"""``make demo PROFILE=grx``: the executive walking the simulated Fourier GRX over zenoh.

Everything runs for real on loopback, as separate processes: the simulated GRX
(``python -m executive.robots.grx.sim``, a zenoh peer listening on a free port of
127.0.0.1) and the service (``atom-executive run``, ``profile: grx``, ``zenoh_config:`` a
copy of the shipped loopback config pointed at that port; its operator requests and status
on loopback DDS as always). The demo runs ``walk_square`` to SUCCEEDED, then walks again
and sets an error code in the sim mid-walk: the service must SAFE_STOP, the sim must be
sent zero axes and stand still, and a reset (once the error is cleared) must bring it back
to IDLE. Exit 0 only if every check held.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from executive.harness.grx import start
from executive.harness.stack import Stack, running_stack
from executive.robots.grx.sim.process import SimProcess


def say(text: str) -> None:
    print(f"\n=== {text}", flush=True)  # noqa: T201 - the demo talks to a person


def main(profile: str = "grx") -> int:
    checks: list[tuple[str, bool]] = []

    def check(what: str, ok: bool) -> bool:
        checks.append((what, ok))
        print(f"  [{'ok' if ok else 'FAILED'}] {what}", flush=True)  # noqa: T201
        return ok

    if profile != "grx":
        print(f"the GRX demo runs profile grx, not {profile!r}", file=sys.stderr)  # noqa: T201
        return 2
    with running_stack() as stack:
        say("starting the simulated GRX (zenoh, loopback) and the executive")
        sim = start(stack)
        try:
            run(stack, sim, check)
        finally:
            sim.close()
    failed = [what for what, ok in checks if not ok]
    say(f"{len(checks) - len(failed)} of {len(checks)} checks held")
    return 1 if failed or not checks else 0


def run(stack: Stack, sim: SimProcess, check: Callable[[str, bool], bool]) -> None:
    client = stack.client

    def start_mission(name: str, **params: Any) -> bool:
        reply = client.request("start", {"mission": name, "params": params})
        return check(f"{name} started", reply.code == 0)

    def wait_state(state: str, timeout: float) -> Any:
        return client.wait_status(lambda s: s.state == state, timeout)

    say("walk_square: servo_on, ready, walk; four legs and quarter turns; ready")
    if start_mission("walk_square", leg_seconds=1.0, turn_seconds=1.96):
        done = client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
        check("walk_square SUCCEEDED", done is not None and done.state == "SUCCEEDED")
        status = sim.cmd("status")
        x, y, heading = status["pose"]
        check(
            f"the sim accepted servo_on, ready, walk, ready: {status['accepted']}",
            status["accepted"] == [35, 960, 965, 960],
        )
        check(
            f"the sim walked a closed square (pose {x:.2f}, {y:.2f}, {heading:.2f})",
            abs(x) < 0.2 and abs(y) < 0.2 and heading > 6.0,
        )
        check("the sim stands with zero axes", status["axes"] == [[0.0, 0.0], [0.0, 0.0]])

    say("walking again; an error code in the sim mid-walk")
    if start_mission("walk_square", leg_seconds=20.0):
        walking = stack.wait_for(lambda: sim.cmd("status")["nonzero_axes_received"] > 0, 10)
        check("the sim receives non-zero axes", walking)
        sim.cmd("error 0x2310")
        stopped = wait_state("SAFE_STOP", 5)
        check("SAFE_STOP on the error code", stopped is not None)
        if stopped is not None:
            check(f"cause: {stopped.safety_reason}", "servo_error" in stopped.safety_reason)
        time.sleep(0.3)
        status = sim.cmd("status")
        pose = status["pose"]
        time.sleep(0.3)
        check(
            "the sim was sent zero axes and stands still",
            status["axes"] == [[0.0, 0.0], [0.0, 0.0]] and sim.cmd("status")["pose"] == pose,
        )
        sim.cmd("clear-error")
        deadline = time.monotonic() + 5
        reply = client.request("reset")
        while reply.code != 0 and time.monotonic() < deadline:
            time.sleep(0.2)
            reply = client.request("reset")
        check("reset accepted once the error cleared", reply.code == 0)
        check("IDLE after the reset", wait_state("IDLE", 5) is not None)


if __name__ == "__main__":
    sys.exit(main())
