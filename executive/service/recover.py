"""``recover``: list the runs a crash interrupted, and go on with one from its checkpoint.

``atom-executive recover`` (the ``recoverable`` request: a read, unsigned like ``status``)
lists the runs whose record a crash ended (closed as ABORTED "crash: ..." at the next start,
or still RUNNING) with their last valid checkpoint (``executive.records.checkpoints``), or
"no checkpoint: cannot be recovered".

``atom-executive recover RUN_ID`` (the ``recover`` request: signed, like ``start``) starts
that run again from its last checkpoint: a new run, with the parameters the crashed one was
started with, whose tree skips every node up to the checkpoint and runs its ``recover``
subtree first (``executive.mission.checkpoints.resume_at``). It is refused, saying why:

- no such run, a run the crash did not end, a run already recovered (its record has a
  ``recovered`` line, fsync'd before the reply), a run without a valid checkpoint;
- the mission changed since the run: a file (the mission's or one it includes) whose sha256
  differs from the one the checkpoint recorded, whether as the service loaded it or as it is
  on the disk now ("mission file changed since the run: PATH");
- a pose or gesture the recovered part moves to (its ``recover`` subtree and every node after
  the checkpoint) has other joint values, as the service loaded the library, than the run
  had: "the recovered part moves to pose 'right_carry' ('Move to pose right_carry'), changed
  since the run: right_elbow_pitch 0.1 -> 0.15" (the recovered run would put the arm holding
  the cup where the run never did);
- the executive refuses the start as it refuses any start (``Executive.start_mission``):
  a mission running, SAFE_STOP latched, the robot not heard, and, after a crash, the look
  at what the dead instance left (``executive.service.recovery``) not done yet.

A pose or gesture library file that changed otherwise (an entry the recovered part does not
reach, a comment; as loaded or on the disk) does not refuse it: the reply names the files,
and so does the new run's record (``library_changed`` in its start). A checkpoint an older
service wrote records no library: the reply says its poses were not compared.

Files are read here, on the request server's worker thread, never on the tick thread.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from executive.core.tree import Executive
from executive.language.yaml_source import SourceError, read_file
from executive.mission.checkpoints import Reach
from executive.mission.store import Prepared
from executive.records.checkpoints import Checkpoints, RunSummary, interrupted, read_run
from executive.service.protocol import Answer, Code

RUN_ID = re.compile(r"[0-9a-f]{1,64}")  # what run ids look like (a file name: nothing else)
MARK_TIMEOUT_S = 2.0  # the longest the reply waits for the "recovered" line's fsync


class Preparer(Protocol):
    """The mission store's ``prepare`` (``executive.mission.store.MissionStore``)."""

    def prepare(
        self, name: str, params: dict[str, Any], checkpoint: str | None = None
    ) -> Prepared: ...

    def names(self) -> list[str]: ...


def _when(ts: object) -> str:
    try:
        return datetime.fromtimestamp(float(ts), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"


def describe(run: RunSummary) -> dict[str, Any]:
    """A run the crash interrupted, as the ``recoverable`` reply lists it."""
    cp = run.checkpoint
    out: dict[str, Any] = {
        "run_id": run.run_id,
        "mission": run.mission,
        "state": run.state,
        "ended": _when(run.last.get("ts")) if run.last else "?",
        "checkpoint": None if cp is None else cp.get("checkpoint"),
        "recovered_by": run.recovered_by or None,
    }
    if cp is not None:
        out["passed"] = _when(cp.get("ts"))
        out["params"] = cp.get("params", {})
    if run.torn:
        out["torn"] = run.torn
    return out


def line(entry: dict[str, Any]) -> str:
    """One listed run, for people: ``RUN  MISSION  ended ...: last checkpoint 'X' (...)``."""
    head = f"{entry.get('run_id')}  {entry.get('mission')}  ended {entry.get('ended')}"
    if entry.get("recovered_by"):
        return f"{head}: already recovered (run {entry['recovered_by']})"
    if entry.get("checkpoint") is None:
        return f"{head}: no checkpoint: cannot be recovered"
    return f"{head}: last checkpoint {entry['checkpoint']!r} (passed {entry.get('passed')})"


class Recoveries:
    """The service's answers to ``recoverable`` and ``recover``."""

    def __init__(self, runs_dir: Path, checkpoints: Checkpoints, executive: Executive) -> None:
        self.runs_dir = runs_dir
        self.checkpoints = checkpoints
        self.executive = executive

    def _current(self) -> str | None:
        run = self.executive.run
        return run.run_id if run is not None else None

    def listing(self) -> Answer:
        entries = [describe(r) for r in interrupted(self.runs_dir, self._current())]
        if not entries:
            return Answer(Code.OK, "no run was interrupted by a crash", [])
        said = "\n".join(line(e) for e in entries)
        n = len(entries)
        return Answer(
            Code.OK, f"{n} run{'s' if n != 1 else ''} interrupted by a crash:\n{said}", entries
        )

    def recover(
        self,
        run_id: str,
        library: Preparer,
        on_tick: Callable[[Callable[[], tuple[bool, str]]], Answer],
    ) -> Answer:
        if not RUN_ID.fullmatch(run_id):
            return Answer(Code.BAD_REQUEST, "args.run_id: a run id (hex digits) is required")
        path = self.runs_dir / f"{run_id}.jsonl"
        try:
            run = read_run(path)
        except FileNotFoundError:
            return Answer(Code.NOT_FOUND, f"no run {run_id} in {self.runs_dir}")
        except OSError as e:
            return Answer(Code.REFUSED, f"refused: {path}: {e.strerror or e}")
        if run_id == self._current():
            return Answer(Code.REFUSED, f"refused: run {run_id} is running")
        if not run.crashed:
            how = f"it ended {run.state}" if run.state else "its record holds no state"
            reason = str(run.last.get("reason", "")) if run.last else ""
            return Answer(
                Code.REFUSED,
                f"refused: run {run_id} was not interrupted by a crash ({how}"
                + (f": {reason}" if reason else "")
                + ")",
            )
        if run.recovered_by:
            return Answer(
                Code.REFUSED,
                f"refused: run {run_id} was already recovered (run {run.recovered_by})",
            )
        cp = run.checkpoint
        if cp is None:
            torn = f" ({run.torn} damaged checkpoint lines ignored)" if run.torn else ""
            return Answer(
                Code.REFUSED,
                f"refused: run {run_id} ({run.mission}) passed no checkpoint{torn}: "
                "it cannot be recovered",
            )
        return self._start(run_id, cp, library, on_tick)

    def _start(
        self,
        run_id: str,
        cp: dict[str, Any],
        library: Preparer,
        on_tick: Callable[[Callable[[], tuple[bool, str]]], Answer],
    ) -> Answer:
        name, checkpoint = str(cp.get("mission", "")), str(cp.get("checkpoint", ""))
        params = cp.get("params", {})
        if name not in library.names():
            return Answer(Code.REFUSED, f"refused: mission {name!r} is not loaded now")
        if not isinstance(params, dict):
            params = {}
        prepared = library.prepare(name, params, checkpoint)
        recorded = cp.get("sources")
        if not isinstance(recorded, dict) or not recorded:
            return Answer(Code.REFUSED, "refused: the checkpoint records no mission files")
        changed = _changed(recorded, prepared.meta.get("sources", {}))
        if changed:
            return Answer(
                Code.REFUSED, f"refused: mission file changed since the run: {changed[0]}"
            )
        then = cp.get("library")
        moved = _moved(then, prepared.reaches) if isinstance(then, dict) else []
        library_changed = (
            _changed(_files(then), _files(prepared.meta.get("library"))) if then else []
        )
        if moved:
            files = f" (library changed: {', '.join(library_changed)})" if library_changed else ""
            return Answer(
                Code.REFUSED, f"refused: the recovered part moves to {'; '.join(moved)}{files}"
            )
        root = prepared.root
        if root is None:
            return Answer(Code.INVALID, "; ".join(prepared.errors) or "the mission did not build")
        meta = {**prepared.meta, "recovered_from": run_id, "recovered_at": checkpoint}
        if library_changed:
            meta["library_changed"] = library_changed
        answer = on_tick(lambda: self.executive.start_mission(name, root, meta))
        if answer.code is not Code.OK:
            return answer
        new_run = answer.message
        try:
            self.checkpoints.mark_recovered(run_id, new_run).result(MARK_TIMEOUT_S)
            marked = ""
        except Exception as e:  # noqa: BLE001 - the run goes on; a second recover is refused by the running run
            marked = f"; not marked recovered in its record ({e})"
        if not isinstance(then, dict):
            compared = "; the checkpoint records no pose library (an older service's): not compared"
        elif library_changed:
            compared = (
                f"; pose library changed since the run: {', '.join(library_changed)} "
                "(not a pose or gesture the recovered part moves to)"
            )
        else:
            compared = ""
        return Answer(
            Code.OK,
            f"run {new_run}: {name} recovered from run {run_id} at checkpoint {checkpoint!r}"
            + compared
            + marked,
            {
                "run_id": new_run,
                "recovered_from": run_id,
                "checkpoint": checkpoint,
                "library_changed": library_changed,
            },
        )


def _changed(recorded: dict[str, Any], loaded: dict[str, Any]) -> list[str]:
    """The files whose content is not what the run ran: as the service loaded them
    (``loaded``), and as they are on the disk now."""
    out = []
    for path in sorted(set(recorded) | set(loaded)):
        want = recorded.get(path)
        if want is None or loaded.get(path) != want:
            out.append(path)
            continue
        try:
            now = hashlib.sha256(read_file(Path(path), path)).hexdigest()
        except SourceError:
            out.append(path)
            continue
        if now != want:
            out.append(path)
    return out


def _files(library: object) -> dict[str, Any]:
    files = library.get("files") if isinstance(library, dict) else None
    return files if isinstance(files, dict) else {}


def _moved(then: dict[str, Any], reaches: Sequence[Reach]) -> list[str]:
    """Each pose or gesture the recovered part moves to whose joints, as loaded now, are
    not what the run had (``then``: the checkpoint's ``library``), saying how."""
    out: dict[tuple[str, str], str] = {}
    for reach in reaches:
        key = (reach.table, reach.name)
        entries = then.get(reach.table)
        had = entries.get(reach.name) if isinstance(entries, dict) else None
        what = f"{reach.table[:-1]} {reach.name!r} ({reach.node!r})"
        if key in out:
            continue
        if not isinstance(had, dict):
            out[key] = f"{what}, not in the run's library"
            continue
        diffs = [
            f"{joint} {_rad(had.get(joint))} -> {_rad(q)}"
            for joint, q in reach.joints.items()
            if had.get(joint) != q
        ]
        if diffs:
            out[key] = f"{what}, changed since the run: {', '.join(diffs)}"
    return list(out.values())


def _rad(value: object) -> str:
    return "(none)" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
