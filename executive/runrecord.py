"""Run records: every run's story in ``<data_dir>/runs/<run_id>.jsonl``, line by line.

A record holds the run's state changes (RUNNING, then its result with the reason and
any safety causes) and every node transition of its tree in between (path, status,
feedback), in the order they happened. Each batch is written and flushed as it
happens, so nothing about a run is lost if the service dies; a reader can replay how
the mission went without the service. Called on the tick thread only.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import structlog
from py_trees.common import Status

from executive.core import Executive, MissionRun, node_path

log = structlog.get_logger(__name__)


class RunRecorder:
    """Appends each run's events to its own JSON-lines file."""

    def __init__(self, data_dir: str | Path) -> None:
        self.dir = Path(data_dir) / "runs"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._last: tuple[Any, ...] | None = None
        self._statuses: dict[Any, Status] = {}  # node id -> status last recorded
        self._paths: dict[Any, str] = {}  # node id -> path in the core tree, taken at start
        self._run_id = ""

    def path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.jsonl"

    def write(self, run_id: str, *events: dict[str, Any]) -> None:
        if not events:
            return
        ts = time.time()  # wall time: a stamp for people, never used for durations
        lines = "".join(json.dumps({"ts": ts, **e}, default=str) + "\n" for e in events)
        with self.path(run_id).open("a", encoding="utf-8") as f:
            f.write(lines)

    def _begin(self, run: MissionRun) -> None:
        """A new run: paths are taken while its tree sits in the slot (it is pruned at the end)."""
        self._run_id, self._statuses = run.run_id, {}
        self._paths = {node.id: node_path(node) for node in run.root.iterate()}

    def _transitions(self, run: MissionRun) -> list[dict[str, Any]]:
        """Node status changes since the last call for this run, depth-first."""
        if run.run_id != self._run_id:
            self._begin(run)
        changes = []
        for node in run.root.iterate():
            if self._statuses.get(node.id, Status.INVALID) is not node.status:
                self._statuses[node.id] = node.status
                changes.append(
                    {
                        "event": "node",
                        "node": self._paths.get(node.id) or node_path(node),
                        "status": node.status.value,
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
