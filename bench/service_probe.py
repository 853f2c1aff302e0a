"""The real service (``atom-executive run``) with its inner timings readable from outside.

    BENCH_PROBE_OUT=F python -m bench.service_probe run --config C.yaml   # as atom-executive run

Runs ``executive.cli.main`` unchanged. Before it starts, the probe wraps two methods so a
benchmark can read, in the process where they really run (beside the tick loop, the
status publisher, the request server and the robot's state arriving at 500 Hz):

- ``Runtime.build``: keeps the runtime the service builds, for its motion streamer's
  ``StreamStats`` (each period's lateness, missed periods, time spent publishing) and the
  streamer thread's id (its CPU time, from /proc);
- ``Executive.tick`` and ``Runtime.tick``: each call's duration (``perf_counter_ns``):
  the tree's tick, and the tick loop's whole iteration (the tree, then the run record
  and the status publisher); and the iteration's CPU time on its thread
  (``thread_time_ns``: what it cost, without the waits a loaded machine adds).

``SIGUSR1`` marks a point. Every second mark closes a window, whose figures are appended
as one JSON line to ``BENCH_PROBE_OUT``: the periods, missed periods and lateness (s) of
the stream in it, the publishing time, the CPU time of the streamer thread and of the
process, and every tick's duration (s).

For diagnosis only (what ``docs/benchmarks.md`` reports as evidence), never in ``make
bench``: ``BENCH_PROBE_TRACE=1`` stamps the e-stop path inside the service (see
``bench/parts/estop.py --trace``); ``BENCH_RT=<prio>`` runs the service SCHED_FIFO,
``BENCH_NICE=<n>`` niced, ``BENCH_SWITCH_INTERVAL=<s>`` with another GIL switch interval;
``BENCH_GC=1`` records every garbage collection (generation, start, end) and every stream
period later than 0.5 ms (when, how late) on CLOCK_MONOTONIC, so ``bench/parts/stream.py`` can
say how many late periods a collection overlapped.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import ROOT, process_cpu_s, thread_cpu_s, thread_run_s
from executive import cli
from executive.core.runtime import Runtime
from executive.core.tree import Executive


class Ring:
    """The last ``size`` durations, with a running count."""

    def __init__(self, size: int = 1 << 16) -> None:
        self.values = np.zeros(size)
        self.count = 0

    def add(self, value: float) -> None:
        self.values[self.count % len(self.values)] = value
        self.count += 1

    def between(self, start: int, end: int) -> list[float]:
        """The values added from the ``start``-th to before the ``end``-th (those kept)."""
        return window(self.values, start, end)


def window(ring: Any, start: int, end: int) -> list[float]:
    """Entries ``start`` to ``end`` - 1 of a ring buffer indexed by a running count."""
    start = max(start, end - len(ring))
    return [float(ring[i % len(ring)]) for i in range(start, end)]


_built: list[Runtime] = []
_trace: list[tuple[str, int]] = []  # (point, time.monotonic_ns()) with BENCH_PROBE_TRACE
_marks: list[dict[str, Any]] = []
_tree_ticks = Ring()
_loop_ticks = Ring()
_loop_cpu = Ring()  # the same iterations' CPU time (their thread's)


def _install() -> None:
    build = Runtime.build.__func__  # type: ignore[attr-defined]
    exec_tick = Executive.tick
    loop_tick = Runtime.tick

    def note_build(cls: type[Runtime], *args: Any, **kwargs: Any) -> Runtime:
        runtime: Runtime = build(cls, *args, **kwargs)
        _built.append(runtime)
        runtime.ticker.work = runtime.tick  # bound before the wrap below existed
        return runtime

    def timed_exec_tick(self: Executive) -> None:
        t = time.perf_counter_ns()
        try:
            exec_tick(self)
        finally:
            _tree_ticks.add((time.perf_counter_ns() - t) / 1e9)

    def timed_loop_tick(self: Runtime) -> None:
        t, c = time.perf_counter_ns(), time.thread_time_ns()
        try:
            loop_tick(self)
        finally:
            _loop_cpu.add((time.thread_time_ns() - c) / 1e9)
            _loop_ticks.add((time.perf_counter_ns() - t) / 1e9)

    if os.environ.get("BENCH_PROBE_TRACE"):
        _install_trace()
    Runtime.build = classmethod(note_build)  # type: ignore[assignment, method-assign]
    Executive.tick = timed_exec_tick  # type: ignore[method-assign]
    Runtime.tick = timed_loop_tick  # type: ignore[method-assign]


def _install_trace() -> None:
    """Stamps along the e-stop path: the emergency listener's entry, the fast path's
    entry, each held stream's publish, each AMR command written, the fast path's end."""
    from executive.core.safety import EstopFastPath
    from executive.motion.streamer import MotionStreamer
    from executive.robots.atom.commands import AtomCommands
    from executive.wire.robot_io import LatestReader

    on_data, fast, publish, amr = (
        LatestReader._on_data,
        EstopFastPath.__call__,
        MotionStreamer._publish,
        AtomCommands.amr,
    )

    def traced_on_data(self: Any, reader: Any) -> None:
        t = time.monotonic_ns()
        on_data(self, reader)
        if any(getattr(cb, "__name__", "") == "on_estop" for cb in self._callbacks):
            _trace.append(("listener", t))

    def traced_fast(self: Any, code: str, message: str) -> None:
        _trace.append(("fast_path", time.monotonic_ns()))
        fast(self, code, message)
        _trace.append(("fast_path_end", time.monotonic_ns()))

    def traced_publish(self: Any, stream: Any, now: float) -> None:
        publish(self, stream, now)
        if self._held:
            _trace.append((f"held_{stream.topic}", time.monotonic_ns()))

    def traced_amr(self: Any, command: str, **kwargs: Any) -> int:
        result: int = amr(self, command, **kwargs)
        _trace.append((f"amr_{command}", time.monotonic_ns()))
        return result

    LatestReader._on_data = traced_on_data  # type: ignore[method-assign]
    EstopFastPath.__call__ = traced_fast  # type: ignore[method-assign]
    MotionStreamer._publish = traced_publish  # type: ignore[method-assign]
    AtomCommands.amr = traced_amr  # type: ignore[method-assign]


def _mark() -> dict[str, Any]:
    runtime = _built[-1]
    thread = runtime.streamer._thread
    assert thread is not None and thread.native_id is not None
    stats = runtime.streamer.stats
    return {
        "t": time.monotonic(),
        "periods": stats.periods,
        "missed": stats.missed,
        "busy": stats.busy,
        "thread_cpu": thread_cpu_s(os.getpid(), thread.native_id),
        "process_cpu": process_cpu_s(os.getpid()),
        "thread_runqueue_wait": _runqueue_wait_s(thread.native_id),
        "tick_overruns": runtime.ticker.overruns,
        "tree_ticks": _tree_ticks.count,
        "loop_ticks": _loop_ticks.count,
        "groot2_cpu": _named_thread_cpu("groot2"),  # the Groot2 publisher's thread, if on
    }


def _named_thread_cpu(name: str) -> float:
    """Run time (s, schedstat) of this process's Python thread called ``name``; NaN if
    there is none."""
    import threading

    for thread in threading.enumerate():
        if thread.name == name and thread.native_id is not None:
            return thread_run_s(os.getpid(), thread.native_id)
    return float("nan")


def _runqueue_wait_s(tid: int) -> float:
    """Time the thread has spent runnable but waiting for a CPU (schedstat), s."""
    try:
        return int(Path(f"/proc/{os.getpid()}/task/{tid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return float("nan")


_snapshots: list[Any] = []
_gc_events: list[tuple[int, float, float]] = []
_late_events: list[tuple[float, float]] = []


def _on_usr1(signum: int, frame: Any) -> None:
    _marks.append(_mark())
    import tracemalloc

    if tracemalloc.is_tracing():
        import gc

        gc.collect()  # what is still reachable, not garbage awaiting a collection
        _snapshots.append(tracemalloc.take_snapshot())
        _marks[-1]["traced_kib"] = tracemalloc.get_traced_memory()[0] / 1024
        _marks[-1]["rss_kib"] = int(
            next(
                line.split()[1]
                for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith("VmRSS:")
            )
        )
    if len(_marks) % 2:
        return
    start, end = _marks[-2:]
    stats = _built[-1].streamer.stats
    out: dict[str, Any] = {k: end[k] - start[k] for k in start}
    out["lateness"] = window(stats.lateness, start["periods"], end["periods"])
    out["tree_tick"] = _tree_ticks.between(start["tree_ticks"], end["tree_ticks"])
    out["loop_tick"] = _loop_ticks.between(start["loop_ticks"], end["loop_ticks"])
    out["loop_tick_cpu"] = _loop_cpu.between(start["loop_ticks"], end["loop_ticks"])
    if len(_snapshots) >= 2:  # what grew over the window, by where it was allocated
        diff = _snapshots[-1].compare_to(
            _snapshots[-2], os.environ.get("BENCH_TRACEMALLOC_BY", "traceback")
        )
        out["grew"] = [
            {"kib": d.size_diff / 1024, "count": d.count_diff, "where": d.traceback.format()}
            for d in diff[:12]
        ]
    out["scheduling"] = stats.scheduling
    out["gc_events"] = _gc_events[:]
    out["late_events"] = _late_events[:]
    _gc_events.clear()
    _late_events.clear()
    out["trace"] = _trace[:]
    _trace.clear()
    with Path(os.environ["BENCH_PROBE_OUT"]).open("a") as f:
        f.write(json.dumps(out) + "\n")


LATE_S = 0.0005  # a period this late is recorded with BENCH_GC


def _watch_gc_and_late_periods() -> None:
    """Record collections (``gc.callbacks``) and late stream periods on one clock."""
    import gc
    import threading

    started: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[:] = [time.monotonic()]
        elif started:
            _gc_events.append((info["generation"], started[0], time.monotonic()))

    gc.callbacks.append(on_gc)

    def wrap_record() -> None:  # once the service has built its streamer
        while not _built or _built[-1].streamer._thread is None:
            time.sleep(0.1)
        stats = _built[-1].streamer.stats
        record = stats.record

        def late_aware(late: float, busy: float) -> None:
            if late > LATE_S:
                _late_events.append((time.monotonic(), late))
            record(late, busy)

        stats.record = late_aware  # type: ignore[method-assign]

    threading.Thread(target=wrap_record, name="bench-gc-watch", daemon=True).start()


def main() -> int:
    _install()
    if os.environ.get("BENCH_TRACEMALLOC"):  # diagnosis only
        import tracemalloc

        tracemalloc.start(int(os.environ["BENCH_TRACEMALLOC"]))
    if os.environ.get("BENCH_RT"):  # diagnosis only
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(os.environ["BENCH_RT"])))
    if os.environ.get("BENCH_NICE"):  # diagnosis only
        os.nice(int(os.environ["BENCH_NICE"]))
    if os.environ.get("BENCH_SWITCH_INTERVAL"):  # diagnosis only
        import executive.core.runtime

        executive.core.runtime.SWITCH_INTERVAL_S = float(os.environ["BENCH_SWITCH_INTERVAL"])
    if os.environ.get("BENCH_GC"):  # diagnosis only
        _watch_gc_and_late_periods()
    signal.signal(signal.SIGUSR1, _on_usr1)
    return cli.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())


class ProbedService:
    """The benchmark's end: the probed service started as ``stack``'s ``executive``."""

    def __init__(self, stack: Any, env: dict[str, str] | None = None) -> None:
        import subprocess

        self.out = stack.workdir / "probe.jsonl"
        self.out.unlink(missing_ok=True)
        if not stack.config_path.exists():
            stack.write_config()
        with stack.log_path("executive").open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bench.service_probe", "run", "--config", stack.config_path],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**stack.env(), "BENCH_PROBE_OUT": str(self.out), **(env or {})},
                cwd=ROOT,
            )
        stack.procs["executive"] = self.proc  # stack.close() ends it
        pid = self.proc.pid
        if stack.client.wait_status(lambda s: s.executive_id.endswith(f":{pid}"), 30) is None:
            raise TimeoutError(f"the probed service did not come up; see {stack.workdir}")
        # the benchmarks start missions at once: wait until every safety source was heard
        ready = stack.client.wait_status(
            lambda s: s.executive_id.endswith(f":{pid}") and not s.not_ready, 30
        )
        if ready is None:
            raise TimeoutError(f"the probed service never heard the robot; see {stack.workdir}")

    def _windows(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []

    def window(self, seconds: float) -> dict[str, Any]:
        """The probe's figures over the next ``seconds``."""
        self.begin()
        time.sleep(seconds)
        return self.end()

    def begin(self) -> None:
        """Open a window."""
        self._before = len(self._windows())
        os.kill(self.proc.pid, signal.SIGUSR1)

    def end(self) -> dict[str, Any]:
        """Close the window opened by ``begin``: its figures."""
        before = self._before
        os.kill(self.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while len(lines := self._windows()) <= before:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the probe wrote no figures")
            time.sleep(0.05)
        result: dict[str, Any] = json.loads(lines[before])
        return result
