"""What every benchmark module shares: the environment, statistics, the CPU hog, the machine.

Each module of ``bench/`` runs alone (``python bench/estop.py --events 50``) or from
``bench/run.py``; both call ``setup()`` first, so every DDS participant they make, in
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
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: python bench/<module>.py
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results"
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


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table, columns as wide as their widest cell."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(out)


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


def cli(
    doc: str | None,
    run: Callable[[argparse.Namespace], dict[str, Any]],
    report: Callable[[dict[str, Any]], str],
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> int:
    """A benchmark module run alone (``python bench/tick.py``): loopback DDS, its own
    arguments and ``--json``, its table printed. ``bench/run.py`` calls ``run`` directly."""
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
