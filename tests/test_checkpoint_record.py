"""Checkpoints in the run record: fsync'd before the leaf succeeds, torn lines ignored, and
``recover``'s refusals (executive/records/checkpoints.py, executive/service/recover.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import py_trees
import pytest

from behaviours.actions.basic import Log, Wait
from behaviours.actions.checkpoint import SINK, Checkpoint
from executive.core.tree import ExecState
from executive.mission.store import MissionStore
from executive.records.checkpoints import Checkpoints, interrupted, read_run, seal, verified
from executive.records.runrecord import CRASH_REASON, RunRecorder
from executive.service.protocol import Answer, Code
from executive.service.recover import Recoveries
from executive.service.recovery import WHY
from tests.rigs import PROFILE, Rig

MISSIONS = Path(__file__).resolve().parents[1] / "missions"


def test_a_sealed_line_verifies_and_any_change_does_not() -> None:
    line = seal({"event": "checkpoint", "checkpoint": "Cup in hand", "params": {"tag": 4}})
    event = json.loads(line)
    assert line.endswith("\n") and verified(event)
    assert not verified({**event, "checkpoint": "Cup in han"})
    assert not verified({**event, "params": {"tag": 5}})
    assert not verified({k: v for k, v in event.items() if k != "check"})


def _record(path: Path, *lines: str) -> None:
    path.write_text("".join(lines), encoding="utf-8")


def _state(state: str, **more: Any) -> str:
    return json.dumps({"ts": 1.0, "event": "state", "state": state, "mission": "m", **more}) + "\n"


def _checkpoint(run_id: str, name: str, ts: float = 2.0) -> str:
    return seal(
        {"ts": ts, "event": "checkpoint", "run_id": run_id, "mission": "m", "checkpoint": name}
    )


def test_a_torn_checkpoint_line_is_ignored_and_the_one_before_stands(tmp_path: Path) -> None:
    path = tmp_path / "abc123.jsonl"
    second = _checkpoint("abc123", "Second")
    _record(
        path,
        _state("RUNNING"),
        _checkpoint("abc123", "First"),
        second[: len(second) // 2] + "\n",  # the kill came mid-write
        _state("ABORTED", result="ABORTED", reason=CRASH_REASON),
    )
    run = read_run(path)
    assert run.checkpoint is not None and run.checkpoint["checkpoint"] == "First"
    assert run.torn == 1 and run.crashed
    # a whole line whose bytes changed (a bit flipped on the disk) is no checkpoint either
    flipped = second.replace("Second", "Secoxd")
    _record(path, _state("RUNNING"), flipped, _state("ABORTED", reason=CRASH_REASON))
    run = read_run(path)
    assert run.checkpoint is None and run.torn == 1


def test_interrupted_lists_runs_a_crash_ended_not_the_others(tmp_path: Path) -> None:
    _record(tmp_path / "a1.jsonl", _state("RUNNING"), _state("SUCCEEDED", result="SUCCEEDED"))
    _record(
        tmp_path / "b2.jsonl", _state("RUNNING"), _state("ABORTED", reason="stopped by request")
    )
    _record(tmp_path / "c3.jsonl", _state("RUNNING"), _state("ABORTED", reason=CRASH_REASON))
    _record(tmp_path / "d4.jsonl", _state("RUNNING"))  # the run going on now
    _record(tmp_path / "e5.jsonl", _state("RUNNING"))  # left RUNNING, not closed yet
    assert sorted(r.run_id for r in interrupted(tmp_path, current="d4")) == ["c3", "e5"]


def test_durable_resolves_only_after_the_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Future says "on the disk" only once the file (and its directory) were fsync'd."""
    recorder = RunRecorder(tmp_path)
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the real fsync, noted
        real_fsync(fd)
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))

    monkeypatch.setattr(os, "fsync", fsync)
    recorder.write("r1", {"event": "state", "state": "RUNNING"})  # not durable: no fsync
    assert recorder.flush()
    assert synced == []
    done = recorder.durable("r1", _checkpoint("r1", "Here"))
    resolved_after: list[int] = []
    done.add_done_callback(lambda _: resolved_after.append(len(synced)))
    done.result(5)
    assert resolved_after == [2]
    assert synced == [str(recorder.path("r1")), str(recorder.dir)]
    assert read_run(recorder.path("r1")).checkpoint is not None
    recorder.durable("r1", _checkpoint("r1", "Again")).result(5)
    assert synced[2:] == [str(recorder.path("r1"))]  # the directory once per file
    recorder.close()


def test_a_failing_write_fails_the_future_and_is_reported(tmp_path: Path) -> None:
    recorder = RunRecorder(tmp_path)
    shutil.rmtree(recorder.dir)
    recorder.dir.write_text("not a directory")
    with pytest.raises(OSError):
        recorder.durable("r1", _checkpoint("r1", "Here")).result(5)
    assert recorder.problems()
    recorder.close()


def _mission(name: str) -> py_trees.behaviour.Behaviour:
    return py_trees.composites.Sequence(
        name, memory=True, children=[Log("before"), Checkpoint("Here", "tree.x"), Wait(0.05)]
    )


@pytest.mark.dds
def test_the_checkpoint_leaf_waits_for_its_line_then_the_record_holds_the_run(
    rig: Rig, tmp_path: Path
) -> None:
    recorder = RunRecorder(tmp_path)
    rig.ex.on_change = recorder.on_change
    sink = Checkpoints(recorder, lambda: rig.ex.run)
    rig.ex.context.extras[SINK] = sink
    meta = {"file": "m.yaml", "content_hash": "h", "sources": {"m.yaml": "s"}, "params": {"t": 4}}
    rig.state()
    ok, run_id = rig.ex.start_mission("m", _mission("m"), meta)
    assert ok, run_id
    rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING)
    assert rig.ex.state is ExecState.SUCCEEDED, rig.ex.last_run
    assert recorder.flush()
    run = read_run(recorder.path(run_id))
    assert run.started is not None and run.started["params"] == {"t": 4}  # the start says it
    cp = run.checkpoint
    assert cp is not None
    assert {
        k: cp[k] for k in ("run_id", "mission", "checkpoint", "node", "params", "content_hash")
    } == {
        "run_id": run_id,
        "mission": "m",
        "checkpoint": "Here",
        "node": "tree.x",
        "params": {"t": 4},
        "content_hash": "h",
    }
    recorder.close()


@pytest.mark.dds
def test_a_stuck_disk_does_not_hold_the_mission(rig: Rig, tmp_path: Path) -> None:
    """Never confirmed: the leaf succeeds after its 2 s, saying the checkpoint is not kept."""
    from concurrent.futures import Future

    class Stuck:
        def passed(self, name: str, node: str) -> Future[None]:
            return Future()  # never resolves

    rig.ex.context.extras[SINK] = Stuck()
    rig.state()
    root = _mission("m")
    ok, _ = rig.ex.start_mission("m", root)
    assert ok
    rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING, timeout=8)
    assert rig.ex.state is ExecState.SUCCEEDED
    leaf = root.children[1]
    assert leaf.feedback_message.startswith("checkpoint not recorded (not on the disk within 2 s)")


# -- recover's refusals, against a real store and executive ----------------------------------


@pytest.fixture
def store(tmp_path: Path) -> MissionStore:
    root = tmp_path / "missions"
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(MISSIONS / folder, root / folder)
    for name in ("deliver_drink", "head_scan"):
        shutil.copy(MISSIONS / f"{name}.yaml", root / f"{name}.yaml")
    return MissionStore(root, PROFILE)


def _crashed(
    recorder: RunRecorder, run_id: str, meta: dict[str, Any], checkpoint: str | None
) -> None:
    lines = [_state("RUNNING", mission="deliver_drink", **meta)]
    if checkpoint is not None:
        lines.append(
            seal(
                {
                    "ts": 3.0,
                    "event": "checkpoint",
                    "run_id": run_id,
                    "mission": "deliver_drink",
                    "checkpoint": checkpoint,
                    **meta,
                }
            )
        )
    lines.append(_state("ABORTED", mission="deliver_drink", reason=CRASH_REASON))
    _record(recorder.path(run_id), *lines)


@pytest.mark.dds
def test_recover_refuses_saying_why_and_starts_from_the_checkpoint(
    rig: Rig, tmp_path: Path, store: MissionStore
) -> None:
    recorder = RunRecorder(tmp_path / "data")
    sink = Checkpoints(recorder, lambda: rig.ex.run)
    rig.ex.on_change = recorder.on_change
    recoveries = Recoveries(recorder.dir, sink, rig.ex)
    meta = store.prepare("deliver_drink", {"table_tag": 4}).meta

    def on_tick(action: Any) -> Answer:  # the tick thread is this one here
        ok, message = action()
        return Answer(Code.OK if ok else Code.REFUSED, message)

    def recover(run_id: str) -> Answer:
        return recoveries.recover(run_id, store, on_tick)

    _crashed(recorder, "a1", meta, None)
    _record(recorder.path("b2"), _state("RUNNING"), _state("SUCCEEDED", result="SUCCEEDED"))
    _crashed(recorder, "c3", meta, "Cup in hand")
    listing = recoveries.listing()
    assert (
        "a1  deliver_drink" in listing.message
        and "no checkpoint: cannot be recovered" in listing.message
    )
    assert "last checkpoint 'Cup in hand'" in listing.message and "b2" not in listing.message

    assert recover("../../etc/passwd").code is Code.BAD_REQUEST
    assert recover("ffff").code is Code.NOT_FOUND
    refused = recover("a1")
    assert refused.code is Code.REFUSED
    assert (
        refused.message
        == "refused: run a1 (deliver_drink) passed no checkpoint: it cannot be recovered"
    )
    assert "was not interrupted by a crash (it ended SUCCEEDED)" in recover("b2").message

    # the robot is not ready: the same gate as start (after a crash: the look at what the dead
    # instance left, executive/service/recovery.py, comes first)
    rig.state()
    rig.ex.recovering = WHY + "the upper-body control is on"
    not_ready = recover("c3")
    assert not_ready.code is Code.REFUSED
    assert not_ready.message.startswith("refused: not ready: recovering what a previous instance")
    rig.ex.recovering = ""

    # the mission file changed since the run: refused, naming it (the store as loaded, and disk)
    path = store.directory / "deliver_drink.yaml"
    original = path.read_bytes()
    path.write_bytes(original.replace(b"min_level: 30", b"min_level: 31"))
    changed = recover("c3")
    assert changed.code is Code.REFUSED
    assert changed.message == f"refused: mission file changed since the run: {path}"
    path.write_bytes(original)

    rig.state()
    started = recover("c3")
    assert started.code is Code.OK, started.message
    new_run = started.payload["run_id"]
    assert started.message.startswith(f"run {new_run}: deliver_drink recovered from run c3")
    run = rig.ex.run
    assert run is not None and run.meta["recovered_from"] == "c3"
    leaves = [n.name for n in run.root.iterate() if not n.children]
    assert leaves[:3] == ["Acquire control", "Set FSM joint_control", "The rest at home"]
    assert "Drive to the bar" not in leaves and "Drive to the table" in leaves
    assert read_run(recorder.path("c3")).recovered_by == new_run
    assert "already recovered" in recoveries.listing().message
    rig.ex.stop_mission("test")
    assert recover("c3").message == f"refused: run c3 was already recovered (run {new_run})"
    recorder.close()


def _edit_pose(root: Path, pose: str, joint: str, before: str, after: str) -> bytes:
    """Change one joint of ``pose`` in the copy's poses/arms.yaml; the file as it was."""
    path = root / "poses" / "arms.yaml"
    original = path.read_bytes()
    text = original.decode()
    at = text.index(f"\n  {pose}:\n")
    line = text.index(f"{joint}: {before}\n", at)
    path.write_text(
        text[:line] + f"{joint}: {after}\n" + text[line + len(f"{joint}: {before}\n") :]
    )
    return original


@pytest.mark.dds
def test_recover_after_a_library_edit_names_it_and_refuses_a_changed_pose_it_reaches(
    rig: Rig, tmp_path: Path, store: MissionStore
) -> None:
    """Issue 35, 5: a pose edited after the crash was taken silently, and the arm holding the
    cup went to the new pose. Now: right_carry (the recover subtree's) changed: refused,
    saying how; right_reach_forward (before the checkpoint) changed: recovered, the file
    named in the reply and in the new run's record; a checkpoint from an older service (no
    library): recovered, saying its poses were not compared."""
    recorder = RunRecorder(tmp_path / "data")
    sink = Checkpoints(recorder, lambda: rig.ex.run)
    rig.ex.on_change = recorder.on_change
    recoveries = Recoveries(recorder.dir, sink, rig.ex)
    meta = store.prepare("deliver_drink", {"table_tag": 4}).meta
    arms = str(store.directory.resolve() / "poses" / "arms.yaml")
    assert meta["library"]["files"].keys() >= {arms}
    assert meta["library"]["poses"]["right_carry"]["right_elbow_pitch"] == 0.1
    assert "right_grasp_cup" in meta["library"]["gestures"]

    def on_tick(action: Any) -> Answer:
        ok, message = action()
        return Answer(Code.OK if ok else Code.REFUSED, message)

    _crashed(recorder, "c3", meta, "Cup in hand")
    rig.state()

    # the recover subtree moves the arm to right_carry: its new value is refused
    original = _edit_pose(store.directory, "right_carry", "right_elbow_pitch", "0.1", "0.15")
    assert store.reload()[0] and "deliver_drink" in store.names()
    refused = recoveries.recover("c3", store, on_tick)
    assert refused.code is Code.REFUSED, refused.message
    assert refused.message == (
        "refused: the recovered part moves to pose 'right_carry' ('Move to pose right_carry'), "
        f"changed since the run: right_elbow_pitch 0.1 -> 0.15 (library changed: {arms})"
    )
    assert rig.ex.run is None

    # right_reach_forward is before the checkpoint: recovered, the file named
    (store.directory / "poses" / "arms.yaml").write_bytes(original)
    _edit_pose(store.directory, "right_reach_forward", "right_elbow_pitch", "0.45", "0.47")
    assert store.reload()[0] and "deliver_drink" in store.names()
    started = recoveries.recover("c3", store, on_tick)
    assert started.code is Code.OK, started.message
    assert started.message.endswith(
        f"; pose library changed since the run: {arms} "
        "(not a pose or gesture the recovered part moves to)"
    )
    assert started.payload["library_changed"] == [arms]
    run = rig.ex.run
    assert run is not None
    rig.ex.stop_mission("test")

    # a checkpoint an older service wrote: no library to compare, said so
    _crashed(recorder, "d4", {k: v for k, v in meta.items() if k != "library"}, "Cup in hand")
    rig.state()
    older = recoveries.recover("d4", store, on_tick)
    assert older.code is Code.OK, older.message
    assert "the checkpoint records no pose library (an older service's): not compared" in (
        older.message
    )
    rig.ex.stop_mission("test")
    recorder.close()
    begun = read_run(recorder.path(run.run_id)).started
    assert begun is not None and begun["library_changed"] == [arms], begun
