"""Pause and resume against the simulated GRX over zenoh, through the real service
(issue 23, 1): ``walk_square`` paused mid-walk sends zero axes and the sim stands still
with zero axes the whole pause (its own status), ``atom-executive status`` says PAUSED,
and after resume it walks on and SUCCEEDS."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from executive.harness.grx import Watcher
from executive.harness.stack import Stack
from executive.operator.lines import status_document
from executive.robots.grx.sim.process import SimProcess
from tests.integration.test_grx import grx, nonzero, start_mission  # noqa: F401 - the fixture

pytestmark = pytest.mark.dds

HELD_S = 2.0


def _paused(status: Any) -> dict[str, Any] | None:
    document = status_document(status)
    paused = document.get("paused") if document is not None else None
    return paused if isinstance(paused, dict) else None


def test_walk_square_paused_mid_walk_stands_with_zero_axes_then_succeeds(
    grx: tuple[Stack, SimProcess, Watcher],  # noqa: F811
) -> None:
    stack, sim, wire = grx
    t0 = time.monotonic()
    start_mission(stack, "walk_square", leg_seconds=2.5)
    assert stack.wait_for(lambda: any(map(nonzero, wire.maps(t0, "grx"))), 10)  # walking
    time.sleep(0.5)
    walking = sim.cmd("status")
    assert walking["axes"] != [[0.0, 0.0], [0.0, 0.0]], walking
    asked = time.monotonic()
    reply = stack.client.request("pause")
    assert reply.code == 0 and "base (zero velocity)" in reply.message, reply.message
    held = stack.client.wait_status(lambda s: (_paused(s) or {}).get("held_since") is not None, 5)
    assert held is not None, stack.client.status()
    rest_after = (_paused(held) or {})["rest_after_s"]
    seen = []
    started = time.monotonic()
    while time.monotonic() - started < HELD_S:
        seen.append(sim.cmd("status"))
        time.sleep(0.05)
    text = subprocess.run(
        [sys.executable, "-m", "executive.cli", "status"],
        env=stack.env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    resumed = time.monotonic()
    reply = stack.client.request("resume")
    assert reply.code == 0, reply.message
    done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
    assert done is not None and done.state == "SUCCEEDED", stack.client.status().last_reason

    assert [s["axes"] for s in seen] == [[[0.0, 0.0], [0.0, 0.0]]] * len(seen)
    poses = {tuple(s["pose"]) for s in seen}
    assert len(poses) == 1, f"the paused robot moved: {sorted(poses)}"
    # the wire: zero axes soon after the pause, then nothing but zero until resume
    during = [f for t, f in wire.since(asked, "grx") if t < resumed]
    zeros = [i for i, f in enumerate(during) if not nonzero(f)]
    assert zeros, "no zero axes after the pause"
    assert not [f for f in during[zeros[0] :] if nonzero(f)], "non-zero axes while paused"
    assert any(map(nonzero, wire.maps(resumed, "grx"))), "it did not walk on after resume"
    assert "paused: PAUSED since" in text.stdout, text.stdout + text.stderr
    print(f"GRX paused: at rest {rest_after} s after the pause; {len(seen)} sim states, zero axes")
