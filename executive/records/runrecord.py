"""Run records: every run's story in ``<data_dir>/runs/<run_id>.jsonl``, line by line.

A record holds the run's state changes (RUNNING, then its result with the reason and
any safety causes) and every node transition of its tree in between (path, status,
feedback), in the order they happened. Each batch is written as it happens, so nothing
about a run is lost if the service dies; a reader can replay how the mission went
without the service.

``on_tick``/``on_change`` are called on the tick thread, which must never wait for a disk
(a full disk, a read-only remount, a data dir replaced by a file once raised there and
ended the tick loop while the process lived on). They only format lines and put them on a
bounded queue; a writer thread appends them. A write that fails, or a batch dropped
because the queue is full, is counted and logged (once, then at most every 10 s) and
reported through ``problems()`` (the status shows it); the mission goes on.

At start-up, ``close_unfinished()`` closes the record of a run a previous instance left
RUNNING (it was killed) as ABORTED, so no record claims to be running forever.

``durable()`` is the one write that must reach the disk before anyone goes on: a mission's
checkpoint (``executive.records.checkpoints``). It goes through the same queue and thread
(the tick thread still never waits on a disk), and the writer flushes and fsyncs the file
(and the directory, once, for a file it created) before it resolves the returned
``Future``; the checkpoint leaf stays RUNNING until then.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import structlog
from py_trees.common import Status

from executive.core.tree import ExecState, Executive, MissionRun, node_path
from executive.logs import RateLimitedLog

log = structlog.get_logger(__name__)

QUEUE_BATCHES = 4096  # ~80 s of a busy run's per-tick batches at 50 Hz
LOG_INTERVAL = 10.0  # s between repeated log lines about failing writes
CRASH_REASON = "crash: the service stopped without ending this run (closed at the next start)"


class RunRecorder:
    """Appends each run's events to its own JSON-lines file, from a writer thread."""

    def __init__(self, data_dir: str | Path, queue_batches: int = QUEUE_BATCHES) -> None:
        self.dir = Path(data_dir) / "runs"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._last: tuple[Any, ...] | None = None
        # the run's nodes, each with its path in the core tree (taken at start) and the
        # status last recorded: a mission's tree does not change while it runs
        self._nodes: list[tuple[Any, str]] = []
        self._statuses: list[Status] = []
        self._run_id = ""
        # (run id, lines, the Future of a durable write or None)
        self._queue: queue.Queue[tuple[str, str, Future[None] | None] | None] = queue.Queue(
            maxsize=queue_batches
        )
        # the run whose file's directory entry was fsync'd last (runs come one at a time: a
        # set of every run id would grow for the service's life)
        self._synced = ""
        self.failed = 0  # batches whose write failed
        self.dropped = 0  # batches dropped: the queue was full (the disk too slow or stuck)
        self.last_error = ""
        self._errors = RateLimitedLog(log, LOG_INTERVAL)  # the first at once, then one a while
        self._writer = threading.Thread(target=self._write_loop, name="run-records", daemon=True)
        self._writer.start()

    def path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.jsonl"

    def write(self, run_id: str, *events: dict[str, Any]) -> None:
        """Queue ``events`` for ``run_id``'s record; never blocks, never raises on I/O."""
        if not events:
            return
        ts = time.time()  # wall time: a stamp for people, never used for durations
        lines = "".join(json.dumps({"ts": ts, **e}, default=str) + "\n" for e in events)
        try:
            self._queue.put_nowait((run_id, lines, None))
        except queue.Full:
            self.dropped += 1
            self._problem(f"queue full ({self._queue.maxsize} batches): the disk is not keeping up")

    def durable(self, run_id: str, line: str) -> Future[None]:
        """Queue one whole line (``line``, newline included) for ``run_id``'s record, to be
        fsync'd; the Future resolves once it is on the disk, or with the ``OSError``. Never
        blocks: a full queue is an error at once."""
        done: Future[None] = Future()
        try:
            self._queue.put_nowait((run_id, line, done))
        except queue.Full:
            self.dropped += 1
            self._problem(f"queue full ({self._queue.maxsize} batches): the disk is not keeping up")
            done.set_exception(OSError(f"the record's queue is full ({self._queue.maxsize})"))
        return done

    def _write_loop(self) -> None:
        while (item := self._queue.get()) is not None:
            run_id, lines, done = item
            try:
                with self.path(run_id).open("a", encoding="utf-8") as f:
                    f.write(lines)
                    if done is not None:
                        f.flush()
                        os.fsync(f.fileno())
                if done is not None and run_id != self._synced:
                    _fsync_dir(self.dir)  # the file's name, not only its bytes, survives
                    self._synced = run_id
            except OSError as e:
                self.failed += 1
                self._problem(f"{self.path(run_id)}: {e.strerror or e}")
                if done is not None:
                    done.set_exception(e)
            else:
                if done is not None:
                    done.set_result(None)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def _problem(self, what: str) -> None:
        self.last_error = what
        self._errors.log(
            "error", "run record not written", error=what, failed=self.failed, dropped=self.dropped
        )

    def problems(self) -> list[str]:
        """What the status should say about the records ([] while every write succeeds)."""
        if not (self.failed or self.dropped):
            return []
        return [
            f"run records: {self.failed} writes failed, {self.dropped} dropped; last: {self.last_error}"
        ]

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued batch was written (or failed); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._queue.all_tasks_done.wait(remaining)
        return True

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued (bounded by ``timeout``: the disk may be gone) and stop."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._writer.join(timeout)

    def close_unfinished(self) -> list[str]:
        """Close every record whose last state is RUNNING as ABORTED (crash); their run ids.

        Called once at start-up, before any run of this instance: a run still RUNNING in its
        record then belongs to an instance that died without ending it.
        """
        closed = []
        for path in sorted(self.dir.glob("*.jsonl")):
            try:
                last = _last_state(path)
                if last is None or last.get("state") != "RUNNING":
                    continue
                event = {
                    "ts": time.time(),
                    "event": "state",
                    "state": "ABORTED",
                    "mission": last.get("mission", ""),
                    "result": "ABORTED",
                    "reason": CRASH_REASON,
                    "safety": [],
                }
                with path.open("a+b") as f:  # appends go to the end, wherever we read
                    end = f.seek(0, os.SEEK_END)
                    torn = end > 0 and f.seek(end - 1) >= 0 and f.read(1) != b"\n"
                    # the kill may have come mid-line: end that line before ours
                    f.write((b"\n" if torn else b"") + json.dumps(event).encode() + b"\n")
            except OSError as e:
                log.error("could not close a crashed run's record", path=str(path), error=str(e))
                continue
            closed.append(path.stem)
            log.warning(
                "a run left RUNNING by a previous instance closed as ABORTED", run_id=path.stem
            )
        return closed

    def _begin(self, run: MissionRun) -> None:
        """A new run: paths are taken while its tree sits in the slot (it is pruned at the end)."""
        self._run_id = run.run_id
        self._nodes = [(node, node_path(node)) for node in run.root.iterate()]
        self._statuses = [Status.INVALID] * len(self._nodes)

    def _transitions(self, run: MissionRun) -> list[dict[str, Any]]:
        """Node status changes since the last call for this run, depth-first (a flat walk of
        the nodes taken at its start: no recursion, no node id to hash, every tick)."""
        if run.run_id != self._run_id:
            self._begin(run)
        changes = []
        statuses = self._statuses
        for i, (node, path) in enumerate(self._nodes):
            status = node.status
            if statuses[i] is not status:
                statuses[i] = status
                changes.append(
                    {
                        "event": "node",
                        "node": path,
                        "status": status.value,
                        "feedback": node.feedback_message,
                    }
                )
        return changes

    def on_tick(self, ex: Executive) -> None:
        """After each tick: the running mission's node transitions."""
        if ex.run is not None:
            self.write(ex.run.run_id, *self._transitions(ex.run))

    def on_change(self, ex: Executive) -> None:
        """On each executive state change: the run's state, and at its end the result."""
        run = ex.run or ex.last_run
        if run is None:
            return
        key = (run.run_id, ex.state)
        if key == self._last:
            return
        self._last = key
        event: dict[str, Any] = {"event": "state", "state": ex.state.value, "mission": run.name}
        if ex.run is not None and ex.state is ExecState.RUNNING and run.meta:
            event.update(run.meta)  # file, content hash, params; recovered_from (checkpoints)
        if ex.run is None:  # ended: the last tick's transitions (or the preemption) first
            event["result"] = run.result.value if run.result else ""
            event["reason"] = run.reason
            event["safety"] = [str(c) for c in ex.monitor.reasons]
            self.write(run.run_id, *self._transitions(run), event)
        else:
            self._begin(run)
            self.write(run.run_id, event)
        log.info(
            "run",
            mission=run.name,
            run_id=run.run_id,
            state=ex.state.value,
            reason=event.get("reason", ""),
        )


def _fsync_dir(directory: Path) -> None:
    """fsync a directory, so a file created in it is found after a power cut."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _last_state(path: Path) -> dict[str, Any] | None:
    """The last ``state`` event of a record (an unfinished last line is skipped)."""
    last = None
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if '"event": "state"' not in line and '"event":"state"' not in line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict) and event.get("event") == "state":
                last = event
    return last
