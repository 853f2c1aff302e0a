"""The fault matrix's PND Adam rows, each in a stack of its own: the service killed mid-wave
and restarted (``adam-killed``), and its interpreter blocked mid-wave (``adam-stall``).

The real service (profile ``adam-pro``, ``interface: sdk-1.2``) and the simulated Adam Pro
on a leased loopback domain, waving ``arms_wave`` when the fault hits. ``adam-killed``:
the body stream stopped with the killed instance, the restarted one starts none and sends
nothing, and the robot is safe within the profile's ``restart_safe_s`` of the restarted
process's first line (``bench.faults.rows.kill_and_restart``). ``adam-stall``: the stall
row's judgement (``bench.faults.stall``) on the Adam's streams.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from bench.faults import stall
from bench.faults.rows import TIMEOUT, Row, kill_and_restart, run_row
from bench.harness import ROOT, LogWatch
from executive.harness.stack import Stack, running_stack
from executive.motion import native
from executive.robots.adam.sim.client import client_for
from executive.robots.adam.sim.record import BODY_TOPIC, Recording
from executive.seam.profile import load_profile
from executive.service import faultpoints

MISSIONS = ROOT / "missions" / "adam"


def boot(st: Stack, *, record: bool = False) -> Any:
    """The simulated Adam Pro (``record``: its record of every command) and the service's
    config for it; the sim's client."""
    st.write_config(profile="adam-pro", interface="sdk-1.2", missions_dir=str(MISSIONS))
    st.start_sim(
        *("--profile", "adam-pro", "--interface", "sdk-1.2", "--seed", "2"),
        record=record,
        sim_ready=lambda s, pid: client_for(s.dds).wait_status(lambda x: x.pid == pid, 30)
        is not None,
    )
    return client_for(st.dds)


def killed_row(row: Row, workdir: Path | None, keep: bool) -> None:
    """The real service and the simulated Adam Pro in a stack of their own: SIGKILL mid-wave,
    restart. The body stream stopped with the killed instance (the sim receives no
    ``rt/lowcmd`` after it), the restarted one starts none and sends nothing, and its status
    reports the body still (no joint above 0.1 rad/s) within the profile's restart_safe_s
    of the restarted process's first line (time to hold); recovery made_safe with nothing
    sent."""
    bound = load_profile("adam-pro").restart_safe_s
    row.details["expected"] = (
        f"no rt/lowcmd after the kill; restarted: within {bound:g} s (restart_safe_s) of its "
        "first line its status reports the body still, no stream engaged; recovery "
        "made_safe, nothing sent"
    )
    with running_stack(workdir, keep=keep) as st:
        sim = boot(st)
        st.start_service()
        reply = st.client.request("start", {"mission": "arms_wave", "params": {"waves": 5}})
        if reply.code != 0:
            raise RuntimeError(f"start arms_wave refused: {reply.message}")
        row.expect(
            st.wait_for(lambda: sim.counters("body")["applied"] > 200, TIMEOUT),
            "the body stream never ran",
        )
        notify = st.notify_socket()
        received: list[int] = []

        def at_kill() -> None:
            time.sleep(0.5)  # the sim's status (5 Hz) has counted the last commands
            received.append(sim.counters("body")["received"])

        def still(pid: int, timeout: float) -> bool:  # recovery done, no joint moving
            def body_still(s: Any) -> bool:
                if not s.executive_id.endswith(f":{pid}") or not s.document:
                    return False
                doc = json.loads(s.document)
                done = doc.get("recovery", {}).get("outcome", "looking") != "looking"
                return done and doc["telemetry"]["motion"]["moving"] is False

            return st.client.wait_status(body_still, timeout) is not None

        restarted = kill_and_restart(
            row,
            st,
            notify,
            made_safe=still,
            bound=bound,
            sent="",
            at_kill=at_kill,
        )
        doc, old = restarted.doc, restarted.old
        if doc is not None:
            motion = doc["telemetry"]["motion"]
            row.details["motion"] = motion
            row.expect(motion["streams_engaged"] == [], f"streams engaged: {motion}")
        time.sleep(1.0)
        row.motion_after = sim.counters("body")["received"] - received[0]
        row.expect(row.motion_after == 0, f"{row.motion_after} rt/lowcmd after the kill")
        row.reaction = f"restarted {doc['state'] if doc else '?'}; nothing to send"
        found = (doc or {}).get("recovery", {}).get("found", [])
        row.reason = f"pid {old} killed; found: {'; '.join(found) or 'the body still'}"
        row.latched = bool(doc and doc["safety"]["condition"] == "SAFE_STOP")


def stall_row(row: Row, workdir: Path | None, keep: bool) -> None:
    """The real service (profile adam-pro, ``gil-hog`` armed) and the simulated Adam Pro
    in a stack of their own: the interpreter blocked for 3 s mid-wave."""
    profile = load_profile("adam-pro")
    row.details["expected"] = (
        f"rt/lowcmd and rt/handcmd streamed while blocked and held within "
        f"{stall.hold_bound_s(profile) * 1e3:.0f} ms; no motion after; SAFE_STOP (internal: the "
        "stall) once Python runs; reset accepted; IDLE"
    )
    row.details["stream_mode"] = native.mode(profile.stream_mode)
    with running_stack(workdir, keep=keep) as st:
        boot(st, record=True)
        proc = st.start_service(env={faultpoints.ENV: "gil-hog"})
        log = LogWatch(st.log_path("executive"))
        reply = st.client.request("start", {"mission": "arms_wave", "params": {"waves": 5}})
        if reply.code != 0:
            raise RuntimeError(f"start arms_wave refused: {reply.message}")

        def waving() -> bool:  # the body's target changing in the last 0.3 s sent
            rec = Recording.load(st.record_path)
            return any(not c.repeat for c in rec.commands(BODY_TOPIC, after=time.monotonic() - 0.3))

        row.expect(st.wait_for(waving, 15.0, every=0.1), "the body never moved")
        log.skip()
        t_signal = time.monotonic()
        os.kill(proc.pid, signal.SIGUSR2)
        t_blocked = log.seen("fault point: the interpreter is blocked", t_signal - 0.5, 5.0)
        t_free = log.seen("fault point: the interpreter runs again", t_signal, 10.0)
        row.expect(t_blocked is not None and t_free is not None, "the interpreter never blocked")
        status = st.client.wait_status(lambda s: s.state == "SAFE_STOP", 10.0)
        status = status or st.client.status()
        row.reaction = f"{row.details['stream_mode']} stream; {status.state} after"
        row.reason, row.latched = status.safety_reason, status.safety == "SAFE_STOP"
        time.sleep(0.5)  # the sim's record is flushed at 10 Hz
        reply = st.client.request("reset")
        row.reset_clear = "accepted" if reply.code == 0 else f"REFUSED: {reply.message}"
        row.expect(reply.code == 0, f"reset after the stall: {reply.message}")
        time.sleep(1.0)
        if t_blocked is not None and t_free is not None:
            rec = Recording.load(st.record_path)
            if stall.judge_stall(row, rec, profile, t_blocked, t_free):
                stall.latched_or_noted(row, status.state)
        row.details["log"] = [
            json.dumps(e)[:300] for e in log.events if "native" in json.dumps(e) or "held" in str(e)
        ][:8]


# key, the fault as shown, the row (each in a stack of its own, under the run's work directory)
ROWS = (
    ("adam-killed", "Adam service killed mid-wave, restarted (SIGKILL)", killed_row),
    ("adam-stall", "Adam: interpreter blocked (GIL held 3 s) mid-wave", stall_row),
)
KEYS = [key for key, *_ in ROWS]
LISTING = [f"{key:18s} {label} [adam-pro, sdk-1.2]" for key, label, _ in ROWS]


def run_rows(
    only: list[str] | None, workdir: Path | None = None, *, keep: bool = False
) -> list[Row]:
    """The Adam's rows (``only``: these keys; None: all)."""
    rows = []
    for key, label, body in ROWS:
        if only is not None and key not in only:
            continue
        row = Row(key, label)
        where = None if workdir is None else workdir / key
        rows.append(run_row(row, label, lambda b=body, r=row, w=where: b(r, w, keep)))
    return rows
