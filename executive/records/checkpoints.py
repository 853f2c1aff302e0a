"""Checkpoints in the run record: where a run may go on after a crash, kept durably.

A mission's ``checkpoint`` leaf (``behaviours/actions/checkpoint.py``) asks the service's
``Checkpoints`` (found in ``RobotContext.extras[SINK]``) to record it. The line is one JSON
object appended to the run's record (``<data_dir>/runs/<run_id>.jsonl``)::

    {"event": "checkpoint", "run_id": ..., "mission": ..., "checkpoint": "Cup in hand",
     "node": "tree.sequence.children[8].checkpoint", "file": ..., "content_hash": ...,
     "sources": {file: sha256}, "params": {...}, "resolved": {...}, "ts": ..., "check": ...}

``check`` is the sha256 of the line's other fields, serialized canonically (sorted keys, no
spaces): a line torn by a kill or a power cut mid-write, or damaged since, does not verify
and is ignored, so the checkpoint before it stands. The writer thread fsyncs the file (and
its directory, once) before the leaf's Future resolves (``RunRecorder.durable``), and the
leaf stays RUNNING until then: once it has succeeded, its line survives any crash.

``read_run`` reads one record in one pass (its start, its end, its last valid checkpoint,
whether it was recovered); ``interrupted`` lists the runs a crash interrupted, newest
first: what ``atom-executive recover`` shows. A recovered run gets a ``recovered`` line
(fsync'd too) naming the run that went on from it, so it is recovered at most once.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from executive.core.tree import MissionRun
from executive.records.runrecord import CRASH_REASON, RunRecorder

CHECK = "check"
LISTED = 50  # the newest interrupted runs ``interrupted`` looks at


def canonical(event: Mapping[str, Any]) -> bytes:
    """The bytes a line's checksum covers: every field but ``check``, canonically."""
    body = {k: v for k, v in event.items() if k != CHECK}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()


def seal(event: Mapping[str, Any]) -> str:
    """``event`` as one record line (newline included) carrying its checksum."""
    sealed = {**event, CHECK: hashlib.sha256(canonical(event)).hexdigest()}
    return json.dumps(sealed, default=str) + "\n"


def verified(event: object) -> bool:
    """Whether a parsed line carries the checksum of its own fields (not torn, not edited)."""
    if not isinstance(event, dict) or not isinstance(event.get(CHECK), str):
        return False
    return bool(hashlib.sha256(canonical(event)).hexdigest() == event[CHECK])


@dataclass
class RunSummary:
    """What one run record says about recovering it."""

    run_id: str
    mission: str = ""
    started: dict[str, Any] | None = None  # its RUNNING state event (file, hash, params)
    last: dict[str, Any] | None = None  # its last state event
    checkpoint: dict[str, Any] | None = None  # its last checkpoint line that verifies
    torn: int = 0  # checkpoint lines that did not verify (ignored)
    recovered_by: str = ""  # the run that went on from it, if any

    @property
    def state(self) -> str:
        return str(self.last.get("state", "")) if self.last else ""

    @property
    def crashed(self) -> bool:
        """Ended by a crash: closed at the next start as ABORTED (``CRASH_REASON``), or
        still RUNNING in its record (the caller leaves out the run going on now)."""
        if self.last is None:
            return False
        return self.state == "RUNNING" or (
            self.state == "ABORTED" and self.last.get("reason") == CRASH_REASON
        )


def read_run(path: Path) -> RunSummary:
    """One record, read once; lines that are not JSON (a torn last line) are skipped."""
    summary = RunSummary(path.stem)
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if '"event": "node"' in line:  # most lines: not what recovery reads
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                if '"checkpoint"' in line:
                    summary.torn += 1
                continue
            if not isinstance(event, dict):
                continue
            kind = event.get("event")
            if kind == "state":
                summary.last = event
                summary.mission = str(event.get("mission", summary.mission))
                if event.get("state") == "RUNNING" and summary.started is None:
                    summary.started = event
            elif kind == "checkpoint":
                if verified(event) and event.get("run_id") == summary.run_id:
                    summary.checkpoint = event
                else:
                    summary.torn += 1
            elif kind == "recovered" and verified(event):
                summary.recovered_by = str(event.get("by", ""))
    return summary


def interrupted(
    runs_dir: Path, current: str | None = None, limit: int = LISTED
) -> list[RunSummary]:
    """The runs a crash interrupted, newest record first (at most ``limit`` looked at among
    the newest ``limit * 4`` records: a service's data dir holds thousands after a soak),
    but ``current``, the run going on now."""
    try:
        paths = sorted(runs_dir.glob("*.jsonl"), key=_mtime, reverse=True)[: limit * 4]
    except OSError:
        return []
    out = []
    for path in paths:
        if path.stem == current:
            continue
        try:
            summary = read_run(path)
        except OSError:
            continue
        if summary.crashed:
            out.append(summary)
            if len(out) >= limit:
                break
    return out


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class Checkpoints:
    """What the checkpoint leaf records through (``RobotContext.extras[SINK]``): the
    running run's line, fsync'd by the recorder's writer thread (never the tick thread)."""

    def __init__(self, recorder: RunRecorder, run: Callable[[], MissionRun | None]) -> None:
        self.recorder = recorder
        self.run = run

    def passed(self, name: str, node: str) -> Future[None]:
        """Record that the running run passed checkpoint ``name`` (the model's ``node``
        path); the Future resolves once the line is on the disk."""
        run = self.run()
        if run is None:
            done: Future[None] = Future()
            done.set_exception(RuntimeError("no run is going on"))
            return done
        event = {
            "ts": time.time(),
            "event": "checkpoint",
            "run_id": run.run_id,
            "mission": run.name,
            "checkpoint": name,
            "node": node,
            **{k: v for k, v in run.meta.items() if k not in ("event", "ts", CHECK)},
        }
        return self.recorder.durable(run.run_id, seal(event))

    def mark_recovered(self, run_id: str, by: str) -> Future[None]:
        """Say in ``run_id``'s record that run ``by`` went on from it (fsync'd)."""
        event = {"ts": time.time(), "event": "recovered", "run_id": run_id, "by": by}
        return self.recorder.durable(run_id, seal(event))
