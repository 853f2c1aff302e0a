"""What every part of the kit shares: the environment, statistics, the CPU hog, the machine,
the service's scheduling and log, the tables and the command line.

Each module of ``bench/`` runs alone (``python -m bench.parts.estop --events 50``) or from
``python -m bench.run``; both call ``setup()`` first, so every DDS participant they make, in
this process or a child, stays on the loopback config (``CYCLONEDDS_URI``) and on a
domain leased for the run (``executive.wire.dds.lease_domain``).

Figures are milliseconds unless a key says otherwise; ``summary`` gives the median and
the p99 (numpy's linear interpolation) of a sample, with its size and maximum.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from executive.harness.stack import LogTail, log_time

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MISSIONS = ROOT / "bench" / "missions"  # the fault matrix's and the soak's missions
WATCHDOG_S = 5.0  # WatchdogSec of deploy/atom-executive.service
LOOPBACK_URI = (ROOT / "executive" / "resources" / "cyclonedds-loopback.xml").as_uri()


def setup() -> None:
    """Loopback DDS for this process and its children, and ``bench`` importable in both."""
    os.environ.setdefault("CYCLONEDDS_URI", LOOPBACK_URI)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if str(ROOT) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), *paths) if p)


def summary(values: Iterable[float], scale: float = 1.0) -> dict[str, float]:
    """Median, p99, max and count of ``values`` (times ``scale``); NaN when empty."""
    a = np.asarray(list(values), dtype=np.float64) * scale
    if a.size == 0:
        nan = float("nan")
        return {"n": 0, "median": nan, "p99": nan, "max": nan}
    return {
        "n": int(a.size),
        "median": float(np.median(a)),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
    }


def loadavg() -> tuple[float, float, float]:
    one, five, fifteen = os.getloadavg()
    return round(one, 2), round(five, 2), round(fifteen, 2)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": model,
        "memory_gib": round(mem_kib / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "loadavg_at_start": loadavg(),
        "cyclonedds_uri": os.environ.get("CYCLONEDDS_URI", ""),
    }


def busy_processes(limit: int = 5) -> list[str]:
    """The processes other than ours using the most CPU right now (``ps``), for the notes:
    on a shared machine they explain a noisy figure."""
    try:
        out = subprocess.run(
            ["ps", "-eo", "pcpu,pid,comm,args", "--sort=-pcpu", "--no-headers"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    mine = {os.getpid()}
    rows = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 4 or int(parts[1]) in mine or float(parts[0]) < 5.0:
            continue
        rows.append(f"{parts[0]}% {parts[3][:90]}")
    return rows[:limit]


@contextmanager
def cpu_hog(enabled: bool = True) -> Iterator[int | None]:
    """One CPU-burning process (a Python busy loop) for the duration of the block."""
    if not enabled:
        yield None
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # let the scheduler see it
        yield proc.pid
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)


def thread_cpu_s(pid: int, tid: int) -> float:
    """CPU time (user + system, s) of one thread of a process, from /proc."""
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def thread_run_s(pid: int, tid: int) -> float:
    """Time (s) one thread of a process has run on a CPU, to the nanosecond (schedstat):
    for a thread that runs a few microseconds at a time, where ``thread_cpu_s``'s clock
    ticks (10 ms) would round it to nothing; NaN where the kernel keeps no schedstat."""
    try:
        return int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        return float("nan")


def process_cpu_s(pid: int) -> float:
    """CPU time (user + system, s) of a whole process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


def sample_row(label: str, s: dict[str, float], unit: str, digits: int = 1) -> list[str]:
    """A ``what, n, median, p99`` row of a sample's ``summary``, in ``unit``."""
    return [
        label,
        str(s["n"]),
        f"{fmt(s['median'], digits)} {unit}",
        f"{fmt(s['p99'], digits)} {unit}",
    ]


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    ruled: bool = False,
    limit: int | None = None,
) -> str:
    """A plain-text table, columns as wide as their widest cell; ``ruled``: the columns
    between bars (the fault matrix's and the soak's); ``limit``: the widest a cell is printed."""

    def cut(cell: Any) -> str:
        text = str(cell)
        return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"

    cells = [[cut(c) for c in row] for row in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *cells, strict=True)]
    bar, rule = (" | ", "-+-") if ruled else ("  ", "  ")
    out = [bar.join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))]
    out.append(rule.join("-" * w for w in widths))
    out += [bar.join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(out)


@dataclass
class Table:
    """A ruled table filled a row at a time (``table(..., ruled=True)``)."""

    headers: Sequence[str]
    rows: list[Sequence[str]] = field(default_factory=list)
    limit: int = 60  # widest a cell is printed

    def add(self, cells: Iterable[Any]) -> None:
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        return table(self.headers, self.rows, ruled=True, limit=self.limit)


def check(ok: bool | None) -> str:
    """A summary row's verdict: met, MISSED, or ``-`` for a figure with no target."""
    return "-" if ok is None else ("met" if ok else "MISSED")


def figure_row(
    label: str,
    condition: str,
    s: dict[str, float],
    target: str,
    ok: bool | None,
    digits: int = 3,
) -> list[str]:
    """A summary row of a sample's median and p99 against its target."""
    return [label, condition, fmt(s["median"], digits), fmt(s["p99"], digits), target, check(ok)]


def floor_row(
    label: str, condition: str, floor: dict[str, float], ratio: dict[str, float], digits: int
) -> list[str]:
    """A summary row of a floor's median and p99, and the figure above it as a ratio."""
    times = f"{ratio['median']:.{digits}f}x / {ratio['p99']:.{digits}f}x"
    return [label, condition, fmt(floor["median"]), fmt(floor["p99"]), f"hold = {times}", "-"]


def ratio(figure: dict[str, float], floor: dict[str, float]) -> dict[str, float]:
    """A figure's median and p99 over its floor's."""
    return {"median": figure["median"] / floor["median"], "p99": figure["p99"] / floor["p99"]}


REALTIME_PRIORITY = 80  # the stream_priority the service asks for by default
# the e-stop floors (issue 22): the C relay where the service's reflex runs (CycloneDDS's
# receive thread, one above the streamer), the C arrival peers below both: an instrument
# that waits for the CPU measures the machine's scheduler, not what it is pointed at
RELAY_PRIORITY = REALTIME_PRIORITY + 1
PEER_PRIORITY = 70


def fifo_argv(argv: list[str], priority: int) -> tuple[list[str], str]:
    """``argv`` under ``chrt -f priority`` (a C program: its threads inherit the policy)
    and its scheduling as said in reports; as it is, SCHED_OTHER, where this machine
    refuses SCHED_FIFO (the reason in the second item)."""
    from executive.motion.realtime import fifo_permitted

    chrt = shutil.which("chrt")
    refused = fifo_permitted(priority) if chrt else "no chrt (util-linux)"
    if refused is not None:
        return argv, f"SCHED_OTHER ({refused})"
    return [chrt, "-f", str(priority), *argv], f"SCHED_FIFO {priority}"


def service_scheduling(realtime: bool) -> tuple[dict[str, Any], dict[str, str]]:
    """The service's config overrides and environment: normal scheduling (said in the
    config: the default is SCHED_FIFO), or the motion streamer thread under SCHED_FIFO
    ``REALTIME_PRIORITY`` (``stream_priority``). Only the service's streamer gets it: the
    robot, the peers and the hog stay ordinary. Raises when this process may not grant it."""
    if not realtime:
        return {"stream_priority": None}, {}
    from executive.motion.realtime import fifo_permitted

    refused = fifo_permitted(REALTIME_PRIORITY)
    if refused is not None:
        raise PermissionError(f"the realtime conditions need SCHED_FIFO here: {refused}")
    return {"stream_priority": REALTIME_PRIORITY}, {}


def with_realtime(run: Callable[[bool], dict[str, Any]]) -> dict[str, Any]:
    """A benchmark with the service at normal scheduling, then with its streamer thread
    under SCHED_FIFO (when this machine grants it): one result, the conditions of both."""
    results = run(False)
    refused = realtime_available()
    if refused is not None:
        print(f"   realtime conditions skipped: {refused}")
        results["realtime_skipped"] = refused
        return results
    rt = run(True)
    if "conditions" in results:  # estop
        results["conditions"].update(rt["conditions"])
    else:  # stream
        results.update({k: v for k, v in rt.items() if k.endswith("realtime")})
    return results


def realtime_available() -> str | None:
    """Why the realtime conditions cannot run here, or None."""
    try:
        service_scheduling(True)
    except PermissionError as e:
        return str(e)
    return None


def thread_policies(pid: int, names: Iterable[str] = ("recv", "motion-streamer")) -> dict[str, str]:
    """The scheduling of a process's threads by kernel name (``/proc/PID/task/*/comm``), as
    ``chrt -p`` would print it: evidence that the realtime conditions were realtime."""
    wanted = set(names)
    out: dict[str, str] = {}
    kinds = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_FIFO: "SCHED_FIFO", os.SCHED_RR: "SCHED_RR"}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            if name not in wanted:
                continue
            tid = int(task.name)
            kind = os.sched_getscheduler(tid)
            prio = os.sched_getparam(tid).sched_priority
        except (OSError, ValueError):
            continue
        out[name] = kinds.get(kind, str(kind)) + (f" {prio}" if prio else "")
    return out


def reset_until_accepted(
    client: Any, timeout: float, *, every: float = 0.1, reply_timeout: float = 10.0
) -> tuple[bool, int, float]:
    """Reset, again every ``every`` s while refused: (accepted, attempts, send time of the
    last). The first refusals after a cause is cleared are the executive still seeing it
    in the last state it had."""
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        sent = time.monotonic()
        if client.request("reset", timeout=reply_timeout).code == 0:
            return True, attempts, sent
        if time.monotonic() >= deadline:
            return False, attempts, sent
        time.sleep(every)


class LogWatch:
    """The service's log as it grows (``LogTail``): when it logged an event."""

    def __init__(self, path: Path) -> None:
        self.tail = LogTail(path)
        self.events: list[dict[str, Any]] = []

    def skip(self) -> None:
        """From here on: only what the service logs after this."""
        self.tail.skip()
        self.events = []

    def line(
        self, event: str, after: float | None = None, timeout: float = 5.0, every: float = 0.05
    ) -> dict[str, Any] | None:
        """The first line ``event`` (logged after ``after``, monotonic, when given) since
        the last ``skip``, once the service has written it; None if not in ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            self.events.extend(self.tail.read())
            for e in self.events:
                t = log_time(e)
                if e.get("event") == event and (after is None or (t is not None and t > after)):
                    return e
            if time.monotonic() >= deadline:
                return None
            time.sleep(every)

    def seen(
        self, event: str, after: float, timeout: float = 5.0, every: float = 0.05
    ) -> float | None:
        """When the service logged ``event`` (first time after ``after``), monotonic."""
        found = self.line(event, after, timeout, every)
        return None if found is None else log_time(found)


def command_line(prog: str, doc: str | None, results: str) -> argparse.ArgumentParser:
    """The command line of a make target that reports rows (``make faults``, ``make soak``):
    its description, ``--json`` (``bench/results/<results>`` unless given) and ``--workdir``."""
    parser = argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=RESULTS / results,
        help=f"where to write the results (default bench/results/{results})",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="keep logs and records here (default: a temporary directory, removed)",
    )
    return parser


def save(path: Path, data: Any, default: Callable[[Any], Any] | None = None) -> None:
    """Write ``data`` as JSON to ``path`` (its directory made) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=default) + "\n")
    print(f"results: {path}")


def cli(
    doc: str | None,
    run: Callable[[argparse.Namespace], dict[str, Any]],
    report: Callable[[dict[str, Any]], str],
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> int:
    """A benchmark module run alone (``python -m bench.parts.tick``): loopback DDS, its own
    arguments and ``--json``, its table printed. ``bench.run`` calls its part instead."""
    setup()
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    arguments(parser)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    results = run(args)
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0
