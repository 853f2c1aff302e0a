"""Run records: state changes and every node transition, as they happen, for each run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import py_trees
import pytest

from behaviours.actions.basic import Log, Wait
from executive.core.tree import ExecState
from executive.records.runrecord import RunRecorder
from tests.rigs import Rig
from tests.test_core import Probe

pytestmark = pytest.mark.dds


def records(recorder: RunRecorder, run_id: str) -> list[dict[str, Any]]:
    assert recorder.flush()  # written by the recorder's own thread
    return [json.loads(line) for line in recorder.path(run_id).read_text().splitlines()]


def attach(rig: Rig, tmp_path: Path) -> RunRecorder:
    recorder = RunRecorder(tmp_path)
    rig.ex.on_change = recorder.on_change
    tick = rig.ex.tick

    def tick_and_record() -> None:
        tick()
        recorder.on_tick(rig.ex)

    rig.ex.tick = tick_and_record  # type: ignore[method-assign]  # as the service's after_tick
    return recorder


def test_a_run_records_its_states_and_every_node_transition(rig: Rig, tmp_path: Path) -> None:
    recorder = attach(rig, tmp_path)
    mission = py_trees.composites.Sequence("hello", memory=True, children=[Log("hi"), Wait(0.05)])
    ok, run_id = rig.ex.start_mission("hello", mission)
    assert ok
    rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING)
    lines = records(recorder, run_id)
    assert lines[0] == {**lines[0], "event": "state", "state": "RUNNING", "mission": "hello"}
    assert lines[-1]["event"] == "state" and lines[-1]["result"] == "SUCCEEDED"
    nodes = [(e["node"], e["status"]) for e in lines if e["event"] == "node"]
    slot = "Atom/Priorities/Mission Slot/hello"
    # every node's statuses in the order they happened, the last tick's included
    assert [s for n, s in nodes if n == slot] == ["RUNNING", "SUCCESS"]
    assert [s for n, s in nodes if n == f"{slot}/{mission.children[0].name}"] == ["SUCCESS"]
    assert [s for n, s in nodes if n == f"{slot}/{mission.children[1].name}"] == [
        "RUNNING",
        "SUCCESS",
    ]
    assert all(e["ts"] > 0 for e in lines)


def test_a_preempted_run_records_which_nodes_were_stopped(rig: Rig, tmp_path: Path) -> None:
    recorder = attach(rig, tmp_path)
    probe = Probe()
    ok, run_id = rig.ex.start_mission("forever", probe)
    rig.tick_until(lambda: probe.status is py_trees.common.Status.RUNNING)
    rig.ex.stop_mission("operator")
    lines = records(recorder, run_id)
    assert [(e["node"], e["status"]) for e in lines if e["event"] == "node"] == [
        ("Atom/Priorities/Mission Slot/Probe", "RUNNING"),
        ("Atom/Priorities/Mission Slot/Probe", "INVALID"),  # stopped: its terminate() ran
    ]
    assert lines[-1]["result"] == "ABORTED" and lines[-1]["reason"] == "operator"


def test_each_run_has_its_own_record(rig: Rig, tmp_path: Path) -> None:
    recorder = attach(rig, tmp_path)
    ids = []
    for name in ("one", "two"):
        ok, run_id = rig.ex.start_mission(name, Wait(0.01, name=name))
        assert ok
        ids.append(run_id)
        rig.tick_until(lambda: rig.ex.state is not ExecState.RUNNING)
    assert ids[0] != ids[1]
    for name, run_id in zip(("one", "two"), ids, strict=True):
        lines = records(recorder, run_id)
        assert {e.get("mission") for e in lines if e["event"] == "state"} == {name}
        assert lines[-1]["result"] == "SUCCEEDED"


def test_a_failing_disk_is_counted_and_reported_never_raised(tmp_path: Path) -> None:
    """The writes happen on the recorder's thread; a failure there is a reported condition
    (once, it raised on the tick thread and ended the tick loop)."""
    recorder = RunRecorder(tmp_path)
    assert recorder.problems() == []
    (tmp_path / "runs").rmdir()
    (tmp_path / "runs").write_text("a file where the folder was\n")
    recorder.write("r1", {"event": "state", "state": "RUNNING"})
    recorder.write("r1", {"event": "node"})
    assert recorder.flush()
    assert recorder.failed == 2
    (problem,) = recorder.problems()
    assert problem.startswith("run records: 2 writes failed, 0 dropped; last: ")
    assert "Not a directory" in problem
    recorder.close()


def test_a_stuck_disk_drops_batches_instead_of_blocking_the_tick(tmp_path: Path) -> None:
    recorder = RunRecorder(tmp_path, queue_batches=2)
    recorder.close()  # the writer is gone: nothing drains the queue any more
    for _ in range(5):
        recorder.write("r1", {"event": "node"})  # returns at once, every time
    assert recorder.dropped >= 3 and "queue full" in recorder.problems()[0]


def test_a_run_left_running_by_a_killed_instance_is_closed_as_aborted(tmp_path: Path) -> None:
    old = RunRecorder(tmp_path)
    old.write("dead", {"event": "state", "state": "RUNNING", "mission": "m"}, {"event": "node"})
    old.write("done", {"event": "state", "state": "RUNNING", "mission": "m"})
    old.write("done", {"event": "state", "state": "SUCCEEDED", "result": "SUCCEEDED"})
    assert old.flush()
    with (tmp_path / "runs" / "dead.jsonl").open("a") as f:
        f.write('{"ts": 1, "event": "node", "unfinish')  # the kill came mid-line
    new = RunRecorder(tmp_path)
    assert new.close_unfinished() == ["dead"]
    last = json.loads((tmp_path / "runs" / "dead.jsonl").read_text().splitlines()[-1])
    assert last["state"] == "ABORTED" and last["reason"].startswith("crash:")
    assert new.close_unfinished() == []  # closed once
