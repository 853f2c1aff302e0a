"""``make faults``: the fault matrix, each fault observed for real, as a report.

The simulated Atom and the service run as separate processes on a leased loopback
domain (``executive.harness.stack``); the service runs as systemd would start it, with a notify
socket and ``WatchdogSec`` (5 s, as ``deploy/atom-executive.service``). Each row starts
the ``busy`` mission (``bench/missions/busy.yaml``: the base driving to a far tag while
the right arm sweeps), injects its fault through the sim's fault topic while both move,
and reads what happened from outside the service:

- the reaction and its reason from the service's status (DDS) and the run's record
  (``data_dir/runs/<run_id>.jsonl``: the result, and no node left RUNNING);
- the time to hold and any motion after the trigger from the sim's command record: from
  the moment the sim applied the fault to the executive's last change of joint target
  (the hold), and every command that still pulled the joints or changed the target
  after the executive saw the trigger (its ``safe stop`` log line);
- the latch: a start is refused while latched; a reset is refused while the cause is
  present and accepted once it is cleared; then the service is IDLE and stays so, with
  no joint or base command sent (nothing resumed).

DESIGN.md section 4 fixes the expectations: every e-stop flag, a BMS alarm, the AMR's
e-stop, a servo error, stale state, a critical battery and revoked control latch
SAFE_STOP with a reason, hold motion and cancel the base. AMR FAILED and an FSM switch
never confirmed are mission failures: FAILED with the node's path, no latch. Killed and
restarted, the service comes up IDLE with nothing resumed; with its tick loop hung the
watchdog pings stop while the e-stop fast path still holds; bad requests are each
refused in words while the mission runs on. Any deviation fails the row, and the run
exits 1.

Then the Fourier GRX's rows (``bench.faults.grx``): the service against the simulated
GRX over loopback zenoh, walking when the fault hits (an error code, the heartbeat lost, a
garbage map, and the m4 schema's e-stop flag); the hold there is zero joystick axes. Last,
the service killed mid-walk and restarted (``grx-killed``), and the same for the PND Adam
mid-wave (``adam-killed``, ``bench.faults.adam``): each robot made safe within its profile's ``restart_safe_s``
(``killed`` holds the Atom to it too). *Time to hold* in those rows is from the restarted
process's first line of our code to safe, the part the bound holds (the interpreter's start
before it is the machine's); the details give it from the kill and from READY too.

    python -m bench.faults                   # every row, a few minutes
    python -m bench.faults --only estop-soft --only bad-requests
    python -m bench.faults --list
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

from bench.faults import adam, atom, grx
from bench.faults.rows import Row
from bench.harness import WATCHDOG_S, Table, command_line, save

HEADERS = (
    "fault",
    "reaction",
    "reason",
    "time to hold ms",
    "motion after",
    "latched",
    "reset while present",
    "reset after clear",
)
# each robot's rows, in this order, each section in a stack (or stacks) of its own: a
# module with KEYS, LISTING and run_rows(only, workdir, keep=...)
SECTIONS = (atom, grx, adam)
KEYS = [key for section in SECTIONS for key in section.KEYS]


def run_matrix(
    only: list[str] | None = None,
    workdir: Path | None = None,
    *,
    keep: bool = False,
    amr_speed: float = 0.5,
) -> list[Row]:
    """Run the rows (``only``: these keys; every row when none), section by section."""
    rows = atom.run_rows(only or None, workdir, keep=keep, amr_speed=amr_speed)
    for section, where in ((grx, "grx"), (adam, "adam")):
        section_dir = None if workdir is None else workdir / where
        rows += section.run_rows(only or None, section_dir, keep=keep)
    return rows


def report(rows: list[Row], elapsed: float) -> tuple[str, dict[str, Any]]:
    table = Table(HEADERS, limit=64)
    for row in rows:
        table.add(row.cells())
    lines = [table.render(), ""]
    for row in rows:
        for note in row.notes:
            lines.append(f"note: {row.fault}: {note}")
        for d in row.deviations:
            lines.append(f"DEVIATES: {row.fault}: {d}")
    bad = [r for r in rows if not r.ok]
    lines.append(
        f"{len(rows) - len(bad)}/{len(rows)} rows as DESIGN.md requires, in {elapsed:.0f} s"
    )
    data = {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
        },
        "watchdog_s": WATCHDOG_S,
        "seconds": round(elapsed, 1),
        "ok": not bad,
        "rows": [r.as_dict() for r in rows],
    }
    return "\n".join(lines), data


def main(argv: list[str] | None = None) -> int:
    p = command_line("python -m bench.faults", __doc__, "faults.json")
    p.add_argument(
        "--only",
        action="append",
        choices=KEYS,
        metavar="ROW",
        help=f"run this row (repeatable): {', '.join(KEYS)}",
    )
    p.add_argument("--list", action="store_true", help="list the rows and exit")
    p.add_argument(
        "--amr-speed",
        type=float,
        default=0.5,
        help="the sim's AMR speed, m/s (default 0.5: the base is still driving when the fault hits)",
    )
    args = p.parse_args(argv)
    if args.list:
        for section in SECTIONS:
            print("\n".join(section.LISTING))
        return 0
    started = time.monotonic()
    rows = run_matrix(args.only, args.workdir, amr_speed=args.amr_speed)
    text, data = report(rows, time.monotonic() - started)
    print()
    print(text)
    save(args.json, data, default=str)
    return 0 if data["ok"] else 1
