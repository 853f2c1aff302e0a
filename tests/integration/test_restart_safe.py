"""Any death, any robot: the service killed (SIGKILL) mid-motion and started again makes the
robot safe before anything else, within the profile's ``restart_safe_s``, and says what it
found (issue 25, 1).

Each test runs the real service and the robot's simulator as processes on loopback, starts
a mission, sees the robot move, kills the service, and starts it again:

- the GRX (the issue's exact steps): ``walk_square`` with ``leg_seconds=20``; the sim walked
  on with the last axes ([0, 0.5]) and the next instance left them as they were. Now the sim
  sees zero axes and the safe task (ready, 960) and stands still; the status' ``recovery``
  names the walk it found;
- the Atom: upper-body control a dead instance took is released (``switch_upper_control``
  false in the sim's record), the arms stop;
- the Adam: the body stream stopped with the dead instance (the sim receives no
  ``rt/lowcmd`` after the kill) and the body holds still; nothing is sent to it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from executive.harness.stack import ROOT, Stack, running_stack
from executive.robots.adam.sim.client import client_for
from executive.robots.atom.sim.record import Recording
from executive.robots.grx.demo import start as start_grx
from executive.robots.profile import load_profile

pytestmark = pytest.mark.dds

ZERO = [[0.0, 0.0], [0.0, 0.0]]


def _document(stack: Stack, pid: int, predicate: Any, timeout: float) -> dict[str, Any] | None:
    """The first status document of the service ``pid`` for which ``predicate`` holds."""
    own = f":{pid}"
    found: list[dict[str, Any]] = []

    def check(s: Any) -> bool:
        if not s.executive_id.endswith(own) or not s.document:
            return False
        doc = json.loads(s.document)
        if predicate(doc):
            found.append(doc)
            return True
        return False

    stack.client.wait_status(check, timeout)
    return found[0] if found else None


def _start(stack: Stack, name: str, **params: Any) -> None:
    reply = stack.client.request("start", {"mission": name, "params": params})
    assert reply.code == 0, reply.message


def test_grx_killed_mid_walk_gets_zero_axes_and_the_safe_task_on_restart(tmp_path: Path) -> None:
    bound = load_profile("grx").restart_safe_s
    with running_stack(tmp_path) as stack:
        sim = start_grx(stack, task_seconds=0.2)
        try:
            _start(stack, "walk_square", leg_seconds=20)
            assert stack.wait_for(lambda: sim.cmd("status")["axes"] != ZERO, 15)
            walking = sim.cmd("status")
            assert walking["task_state"] == 965 and walking["in_process"]
            stack.procs["executive"].kill()
            stack.procs["executive"].wait(10)
            time.sleep(0.5)
            left = sim.cmd("status")
            assert left["axes"] != ZERO and left["pose"][:2] != walking["pose"][:2]  # walks on
            accepted = len(left["accepted"])
            restarted = time.monotonic()
            proc = stack.start_service()

            def safe() -> bool:
                s = sim.cmd("status")
                return s["axes"] == ZERO and 960 in s["accepted"][accepted:]

            assert stack.wait_for(safe, bound), sim.cmd("status")
            safe_after = time.monotonic() - restarted
            still = sim.cmd("status")
            time.sleep(1.0)
            assert sim.cmd("status")["pose"] == still["pose"], "the GRX moved after it was safe"
            assert safe_after <= bound

            doc = _document(
                stack, proc.pid, lambda d: d.get("recovery", {}).get("outcome") != "looking", 10
            )
            assert doc is not None
            recovery = doc["recovery"]
            assert recovery["outcome"] == "made_safe", recovery
            assert any("walk (965) in process" in f for f in recovery["found"]), recovery
            assert any("zero axes" in s for s in recovery["sent"]), recovery
            assert any("safe task ready (960)" in s for s in recovery["sent"]), recovery
            motion = doc["telemetry"]["motion"]
            assert motion["velocity_sent"]["forward"] == 0.0
            log = stack.log_path("executive").read_text()
            assert "start: the robot made safe" in log
        finally:
            sim.close()


def test_atom_killed_mid_scan_has_control_released_on_restart(tmp_path: Path) -> None:
    bound = load_profile().restart_safe_s
    with running_stack(tmp_path) as stack:
        stack.start_sim("--seed", "2", record=True)
        stack.start_service()
        _start(stack, "head_scan", sweeps=20)
        assert stack.sim.wait_status(lambda s: s.is_upper_control, 15) is not None
        time.sleep(0.5)  # the arm is moving
        stack.procs["executive"].kill()
        stack.procs["executive"].wait(10)
        assert stack.sim.status().is_upper_control  # left on by the dead instance
        restarted = time.monotonic()
        proc = stack.start_service()
        released = stack.sim.wait_status(lambda s: not s.is_upper_control, bound)
        assert released is not None, "control still on after the profile's bound"
        assert time.monotonic() - restarted <= bound
        doc = _document(
            stack, proc.pid, lambda d: d.get("recovery", {}).get("outcome") != "looking", 10
        )
        assert doc is not None
        recovery = doc["recovery"]
        assert recovery["outcome"] == "made_safe", recovery
        assert any("upper-body control is on" in f for f in recovery["found"]), recovery
        assert recovery["sent"] == ["upper-body control released"], recovery
        time.sleep(0.3)  # the sim flushes its record every 100 ms
        recording = Recording.load(stack.record_path)
        assert recording.motion_commands(-1e9, before=restarted), "nothing moved before"
        recording.assert_no_motion_after(restarted)
        flags = [
            e.fields["flag"]
            for e in recording.event_commands("switch_upper_control", after=restarted)
        ]
        assert flags == [False]


def test_adam_killed_mid_wave_holds_still_and_no_stream_restarts(tmp_path: Path) -> None:
    bound = load_profile("adam-pro").restart_safe_s
    with running_stack(tmp_path) as stack:
        stack.write_config(
            profile="adam-pro", interface="sdk-1.2", missions_dir=str(ROOT / "missions" / "adam")
        )

        def adam_ready(stack: Stack, pid: int) -> bool:
            return client_for(stack.dds).wait_status(lambda s: s.pid == pid, 30) is not None

        stack.start_sim(
            *("--profile", "adam-pro", "--interface", "sdk-1.2", "--seed", "2"),
            sim_ready=adam_ready,
        )
        sim = client_for(stack.dds)
        stack.start_service()
        _start(stack, "arms_wave", waves=5)
        assert stack.wait_for(lambda: sim.counters("body")["applied"] > 200, 15)
        stack.procs["executive"].kill()
        stack.procs["executive"].wait(10)
        time.sleep(0.5)  # the sim's status (5 Hz) counts the last commands
        received = sim.counters("body")["received"]
        restarted = time.monotonic()
        proc = stack.start_service()
        doc = _document(
            stack,
            proc.pid,
            lambda d: d.get("recovery", {}).get("outcome") != "looking"
            and d["telemetry"]["motion"]["moving"] is False,
            bound,
        )
        assert doc is not None, "the Adam was not still within the profile's bound"
        assert time.monotonic() - restarted <= bound
        assert doc["recovery"]["outcome"] == "made_safe" and doc["recovery"]["sent"] == []
        assert doc["telemetry"]["motion"]["joint_speed"]["body"]["max"] <= 0.1
        assert doc["telemetry"]["motion"]["streams_engaged"] == []
        time.sleep(1.0)
        assert sim.counters("body")["received"] == received, "a body stream after the restart"
