"""One thread, many periodic jobs, monotonic deadlines.

Every state topic of a simulated robot has its own rate, but they all run on one thread:
the jobs share the simulated robot, so running them one after another needs no locks,
and one thread wakes less often than six. Each job's next deadline advances by whole
periods from its first one (never "sleep a period after the work"), so rates do not drift
with the cost of the work; when a job falls behind by more than a period, it skips the
missed deadlines, is told how many periods elapsed, and the skips are counted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

Job = Callable[[float, int], None]  # (now, periods elapsed since the previous run)


@dataclass
class _Entry:
    name: str
    period: float
    job: Job
    deadline: float
    runs: int = 0
    skipped: int = 0
    busy: float = 0.0  # seconds spent in the job (thread CPU and waits alike)


class Scheduler:
    """Runs jobs at fixed rates until ``stop()``; ``before_each`` runs on every wake-up.

    ``before_each`` is where work handed over by other threads (commands taken off DDS by
    listener threads) is applied, so it reaches the robot model within one period of the
    fastest job.
    """

    def __init__(
        self,
        before_each: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._jobs: list[_Entry] = []
        self._before_each = before_each
        self._clock = clock
        self._sleep = sleep
        self._stopping = False
        self.wakeups = 0
        self.busy_before_each = 0.0

    def add(self, name: str, hz: float, job: Job, *, phase: float = 0.0) -> None:
        """Run ``job`` at ``hz``; ``phase`` (seconds) delays its first deadline."""
        if not (math.isfinite(hz) and hz > 0):
            raise ValueError(f"{name}: rate must be a positive number of Hz, got {hz}")
        self._jobs.append(_Entry(name, 1.0 / hz, job, self._clock() + phase))

    def stop(self) -> None:
        """Ask ``run`` to return after the current wake-up; safe from a signal handler."""
        self._stopping = True

    @property
    def stopping(self) -> bool:
        return self._stopping

    def stats(self) -> dict[str, dict[str, float]]:
        """Per job: runs, skipped deadlines and mean time per run in microseconds."""
        out: dict[str, dict[str, float]] = {
            e.name: {
                "runs": e.runs,
                "skipped": e.skipped,
                "mean_us": round(1e6 * e.busy / e.runs, 1) if e.runs else 0.0,
            }
            for e in self._jobs
        }
        out["(before_each)"] = {
            "runs": self.wakeups,
            "skipped": 0,
            "mean_us": round(1e6 * self.busy_before_each / self.wakeups, 1)
            if self.wakeups
            else 0.0,
        }
        return out

    def run(self) -> None:
        """Run due jobs until ``stop()``. A job's exception propagates and ends the run."""
        clock, sleep = self._clock, self._sleep
        while not self._stopping:
            due = self.run_due(clock())
            if not self._jobs:
                sleep(0.05)
                continue
            delay = due - clock()
            if delay > 0:
                sleep(delay)

    def due(self) -> float:
        """The earliest deadline of any job (inf with no jobs)."""
        return min((e.deadline for e in self._jobs), default=math.inf)

    def run_due(self, now: float) -> float:
        """One wake-up at ``now``: ``before_each``, then every job due by ``now``; the next
        deadline. ``run`` calls it each time it wakes; a simulated clock's driver
        (``executive.scenario``) calls it at each ``due()``, so the jobs run in simulated
        time, in the order and at the rates they run in real time."""
        timer = time.perf_counter
        self.wakeups += 1
        before_each = self._before_each
        if before_each is not None:
            t0 = timer()
            before_each(now)
            self.busy_before_each += timer() - t0
        due = math.inf  # the next deadline, found on the way (a wake-up runs 500 a second)
        for entry in self._jobs:
            deadline = entry.deadline
            if now >= deadline:
                periods = 1 + int((now - deadline) / entry.period)
                entry.skipped += periods - 1
                entry.runs += 1
                t0 = timer()
                entry.job(now, periods)
                entry.busy += timer() - t0
                deadline += periods * entry.period
                entry.deadline = deadline
            due = min(due, deadline)
        return due
