"""The fault matrix's GRX rows: the real service against the simulated GRX over zenoh.

``python -m bench.faults`` runs these after the Atom's rows (``--only grx-error`` ...). Each row
boots, when the schema changes, the simulated GRX (``python -m executive.robots.grx.sim``)
and the service (``profile: grx``, ``zenoh_config:`` a copy of the loopback config on this
run's ports) with ``executive.harness.grx``'s helpers in an ``executive.harness.stack`` work
directory; a plain zenoh + msgpack peer (``demo.Watcher``: no schema or adapter code)
connects to the service's listening port and stamps every map the service puts on the
client keys.

Each row starts ``walk_square`` with 20 s legs, waits until the plain peer has seen
non-zero joystick axes, injects its fault through the sim's stdin, and reads what happened
from outside the service:

- the reaction and its reason from the status (DDS) and the run's record;
- *time to hold*: from the sim's answer (the fault is in its model; the sim publishes it
  within its 20 ms period) to the first all-zero joystick map at the plain peer; *motion
  after*: non-zero joystick maps after that one. The profile's safe task (``ready``, 960)
  must follow on task/client;
- the latch: a start is refused; a reset is refused while the cause is present (a garbage
  map is one map: the next decodes 20 ms later, so nothing is present at the reset, and
  the row says so) and accepted once it is cleared; then IDLE, staying so, no axes sent.

Rows: an error code mid-walk (SAFE_STOP ``servo_error``), the heartbeat lost
(``stale_state``), one garbage map on grx/server (``undecodable``), and, with the m4
schema (service ``interface: m4``, sim ``--interface m4``), the robot's e-stop flag
(``estop``).

Then ``grx-killed`` (issue 25, 1): the service killed (SIGKILL) mid-walk and started again.
The sim itself is the witness (the plain peer's link dies with the service): it must hold
zero axes and have accepted the safe task within the profile's ``restart_safe_s`` of the
restarted process's first line of our code (*time to hold*; from the kill and from READY in
the details), its pose must not change after, no non-zero axes may reach it after, and the
restarted service's ``recovery`` must say what it found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.faults.rows import (
    TIMEOUT,
    Row,
    judge_run_record,
    kill_and_restart,
    make_ready,
    run_row,
)
from bench.harness import reset_until_accepted
from executive.harness.grx import Watcher, start
from executive.harness.stack import Stack, running_stack
from executive.robots.grx.sim.process import SimProcess
from executive.seam.profile import load_profile

AXES = ("virtual_joystick_axis_left", "virtual_joystick_axis_right")
SAFE_TASK = 960  # the grx profile's safe_task: ready


@dataclass(frozen=True)
class Fault:
    key: str
    label: str
    schema: str  # the User API table the sim and the service speak
    inject: str  # the sim's stdin command
    clear: str | None  # the command that removes the cause (None: it goes by itself)
    code: str  # the SAFE_STOP cause expected


# fmt: off
FAULTS = (
    Fault("grx-error", "GRX error code mid-walk (error 0x2310)", "seed", "error 0x2310", "clear-error", "servo_error"),
    Fault("grx-heartbeat", "GRX heartbeat lost mid-walk (heartbeat off)", "seed", "heartbeat off", "heartbeat on", "stale_state"),
    Fault("grx-garbage", "GRX garbage map on grx/server (garbage grx)", "seed", "garbage grx", None, "undecodable"),
    Fault("grx-estop", "GRX e-stop flag mid-walk (estop on, m4)", "m4", "estop on", "estop off", "estop"),
)
# fmt: on
KILLED = Fault(
    "grx-killed", "GRX service killed mid-walk, restarted (SIGKILL)", "seed", "", None, ""
)
FAULTS += (KILLED,)
KEYS = [f.key for f in FAULTS]
LISTING = [f"{f.key:18s} {f.label} [grx, {f.schema}]" for f in FAULTS]
ZERO = [[0.0, 0.0], [0.0, 0.0]]


def moving(fields: dict[str, Any]) -> bool:
    return any(v for k in AXES for v in fields.get(k, ()) or ())


class GrxBench:
    """The sim, the service and the watcher, booted for one schema at a time."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.schema = ""
        self.sim: SimProcess | None = None
        self.watcher: Watcher | None = None

    def boot(self, schema: str) -> None:
        self.schema = ""
        self.shutdown()
        self.sim = sim = start(self.stack, task_seconds=0.2, interface=schema)
        assert sim.service_port is not None
        self.watcher = Watcher(sim.service_port)
        time.sleep(0.3)  # the link and its subscription
        self.schema = schema

    def shutdown(self) -> None:
        self.stack.stop("executive")
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        if self.sim is not None:
            self.sim.close()
            self.sim = None

    def walk(self, row: Row) -> str:
        """From a clean start, ``walk_square`` with 20 s legs until the plain peer sees
        non-zero joystick axes; its run id."""
        make_ready(self.stack.client)
        assert self.watcher is not None
        watcher, t_start = self.watcher, time.monotonic()
        reply = self.stack.client.request(
            "start", {"mission": "walk_square", "params": {"leg_seconds": 20.0}}
        )
        if reply.code != 0:
            raise RuntimeError(f"start walk_square refused: {reply.message}")
        walking = self.stack.wait_for(
            lambda: any(moving(f) for _, f in watcher.since(t_start, "grx")), 10
        )
        row.expect(walking, "the service never streamed non-zero axes")
        return str(reply.message)


def fault_row(g: GrxBench, row: Row, fault: Fault) -> None:
    """Inject ``fault`` mid-walk; judge the stop, then the latch and the reset."""
    st, client = g.stack, g.stack.client
    assert g.sim is not None and g.watcher is not None
    row.details["expected"] = (
        f"SAFE_STOP ({fault.code}); zero axes, none non-zero after; the safe task (ready); "
        "start refused; reset refused while present, accepted after clearing; IDLE"
    )
    run_id = g.walk(row)
    g.sim.cmd(fault.inject)
    t_fault = time.monotonic()  # the sim's model has it; published within 20 ms
    status = client.wait_status(
        lambda s: s.state == "SAFE_STOP" and s.safety == "SAFE_STOP", TIMEOUT
    )
    row.details["status_ms"] = round((time.monotonic() - t_fault) * 1e3, 1)
    status = status or client.status()
    row.reaction, row.reason = status.state, status.safety_reason or status.last_reason
    row.expect(status.state == "SAFE_STOP", f"no SAFE_STOP within {TIMEOUT:g} s")
    row.expect(
        f"{fault.code}:" in status.safety_reason, f"reason is not {fault.code}: {row.reason!r}"
    )
    time.sleep(0.5)  # the zeros and the safe task in flight; the cause of a garbage map gone
    row.latched = client.status().safety == "SAFE_STOP"
    row.expect(row.latched, "the SAFE_STOP did not stay latched")
    judge_stop(g, row, t_fault)
    judge_run_record(row, st.data_dir, run_id, "SAFE_STOP")
    judge_latch(g, row, fault)


def killed_row(g: GrxBench, row: Row) -> None:
    """SIGKILL mid-walk, restart: the sim holds zero axes and accepted the safe task within
    the profile's ``restart_safe_s``, stands still after, and the status says what was found."""
    st, sim = g.stack, g.sim
    assert sim is not None and g.watcher is not None
    bound = load_profile("grx").restart_safe_s
    row.details["expected"] = (
        f"restarted: within {bound:g} s (the profile's restart_safe_s) of the restarted "
        "process's first line (time to hold) the sim holds zero axes (sent before the peer "
        "watch has looked) and has accepted the safe task (ready); it stands still after, no "
        "non-zero axes reach it; recovery made_safe, naming the walk it found"
    )
    g.walk(row)
    watcher = g.watcher
    time.sleep(0.3)
    notify = st.notify_socket()
    killed: dict[str, Any] = {}
    seen: dict[str, float | None] = {"zero_axes_seen_s": None}  # the sim first held zero axes

    def at_kill() -> None:
        killed.update(sim.cmd("status"))
        row.expect(killed["axes"] != ZERO, f"not walking when killed: {killed['axes']}")

    def safe(pid: int, timeout: float) -> bool:  # zero axes, the safe task accepted
        accepted = len(killed["accepted"])

        def held() -> bool:
            s = sim.cmd("status")
            if s["axes"] == ZERO and seen["zero_axes_seen_s"] is None:
                seen["zero_axes_seen_s"] = time.monotonic()
            return s["axes"] == ZERO and SAFE_TASK in s["accepted"][accepted:]

        return st.wait_for(held, timeout)

    restarted = kill_and_restart(
        row,
        st,
        notify,
        made_safe=safe,
        bound=bound,
        sent="safe task ready (960)",
        at_kill=at_kill,
        seen=seen,
    )
    doc, old = restarted.doc, restarted.old
    at_safe = sim.cmd("status")
    row.details["walked_after_kill_m"] = round(
        sum((a - b) ** 2 for a, b in zip(at_safe["pose"][:2], killed["pose"][:2], strict=True))
        ** 0.5,
        3,
    )
    time.sleep(1.0)
    later = sim.cmd("status")
    row.motion_after = later["nonzero_axes_received"] - at_safe["nonzero_axes_received"]
    row.expect(later["pose"] == at_safe["pose"], f"moved after safe: {later['pose']}")
    row.expect(row.motion_after == 0, f"{row.motion_after} non-zero axes after safe")
    found = (doc or {}).get("recovery", {}).get("found", [])
    row.expect(any("walk (965)" in f for f in found), f"the walk not reported: {found}")
    row.reaction = f"restarted {doc['state'] if doc else '?'}; made safe"
    row.reason = f"pid {old} killed; found: {'; '.join(found) or 'nothing'}"
    row.latched = bool(doc and doc["safety"]["condition"] == "SAFE_STOP")
    # the plain peer's link went with the killed service: a new one for the next rows
    watcher.close()
    assert sim.service_port is not None
    g.watcher = Watcher(sim.service_port)
    time.sleep(0.3)


def judge_stop(g: GrxBench, row: Row, t_fault: float) -> None:
    """Zero axes after the fault and nothing non-zero after them; the safe task; the sim
    holding zero axes."""
    assert g.sim is not None and g.watcher is not None
    axes = g.watcher.since(t_fault, "grx")
    zeros = [i for i, (_, f) in enumerate(axes) if not moving(f)]
    row.expect(bool(zeros), "no zero axes after the fault")
    if zeros:
        row.hold_ms = (axes[zeros[0]][0] - t_fault) * 1e3
        row.motion_after = sum(moving(f) for _, f in axes[zeros[0] :])
        row.expect(row.motion_after == 0, f"{row.motion_after} non-zero axes after the zeros")
        row.details["nonzero_in_flight"] = zeros[0]
    tasks = [(t, f) for t, f in g.watcher.since(t_fault, "task") if "robot_task_command" in f]
    safe = [t for t, f in tasks if f["robot_task_command"] == SAFE_TASK]
    row.expect(bool(safe), f"no safe task ({SAFE_TASK}) after the fault: {tasks}")
    if safe:
        row.details["safe_task_ms"] = round((safe[0] - t_fault) * 1e3, 1)
    row.expect(g.sim.cmd("status")["axes"] == [[0.0, 0.0], [0.0, 0.0]], "the sim keeps axes")


def judge_latch(g: GrxBench, row: Row, fault: Fault) -> None:
    """Start refused while latched; reset refused while the cause is present, accepted once
    cleared; IDLE after, staying so, with no axes sent."""
    st, client = g.stack, g.stack.client
    assert g.sim is not None and g.watcher is not None
    reply = client.request("start", {"mission": "walk_square"})
    row.expect(reply.code != 0 and "latched" in reply.message, f"start: {reply.message}")
    reply = client.request("reset")
    row.reset_present = "refused" if reply.code != 0 else "accepted"
    row.details["reset_while_present"] = reply.message
    t_reset = time.monotonic()
    if fault.clear is not None:
        row.expect(reply.code != 0, f"reset accepted with the cause present: {reply.message}")
        g.sim.cmd(fault.clear)
        accepted, attempts, t_reset = reset_until_accepted(st.client, 5.0)
        row.reset_clear = f"accepted -> IDLE ({attempts} tries)" if accepted else "REFUSED"
        row.expect(accepted, "reset refused after the cause was cleared")
    elif reply.code == 0:
        row.reset_present = "accepted*"
        row.notes.append("one garbage map: the next decodes 20 ms later, nothing is present")
        row.reset_clear = "(already reset) IDLE"
    else:
        accepted, attempts, t_reset = reset_until_accepted(st.client, 5.0)
        row.reset_clear = f"accepted -> IDLE ({attempts} tries)" if accepted else "REFUSED"
        row.expect(accepted, "reset refused after the garbage map")
    idle = client.wait_status(lambda s: s.state == "IDLE" and s.safety == "CLEAR", TIMEOUT)
    row.expect(idle is not None, f"not IDLE after the reset: {client.status().state}")
    time.sleep(1.0)
    row.expect(client.status().state == "IDLE", "something resumed after the reset")
    resumed = [f for _, f in g.watcher.since(t_reset, "grx") if moving(f)]
    row.expect(not resumed, f"{len(resumed)} non-zero axes after the reset")


def run_rows(
    only: list[str] | None, workdir: Path | None = None, *, keep: bool = False
) -> list[Row]:
    """The GRX rows (``only``: these keys; None: all), in a stack of their own."""
    selected = [f for f in FAULTS if only is None or f.key in only]
    rows: list[Row] = []
    if not selected:
        return rows
    with running_stack(workdir, keep=keep) as stack:
        g = GrxBench(stack)
        try:
            for fault in selected:
                row = Row(fault.key, fault.label)

                def attempt(fault: Fault = fault, row: Row = row) -> None:
                    if g.schema != fault.schema:
                        g.boot(fault.schema)
                    if fault is KILLED:
                        killed_row(g, row)
                    else:
                        fault_row(g, row, fault)

                rows.append(run_row(row, fault.label, attempt))
        finally:
            g.shutdown()
        if keep or workdir is not None:
            print(f"work directory (GRX logs): {stack.workdir}")
    return rows
