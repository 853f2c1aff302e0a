"""What a run leaves behind for Python's cyclic collector: nothing (issue 25, 8).

A reference cycle outlives the run that made it until a full collection, which comes once
enough objects have survived (in the service, every ~100 runs). The soak's residual growth
was that: each run's tree (every py_trees node is a cycle with its own ``tick()``
generator and with its parent) and, at every status publish and recorded tree change, a
tree walker that was a nested function calling itself (function -> closure cell ->
function), holding the document it built and the ended run. They piled up between full
collections and pymalloc's arenas grew to the peak and kept it.

Here a real ``Executive`` (no DDS: the status document's test double of a robot) runs
missions back to back, with the status document and the run's recording fed after every
tick as the service does, and the collector disabled: what reference counting does not
free is counted by ``gc.collect()``.
"""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator

import py_trees
import pytest

from behaviours.actions.basic import Log, Wait
from executive.core.tree import ExecState, Executive
from executive.records.runchannels import Message, RunChannels
from executive.seam.profile import load_profile
from executive.service.status import RunningSince, status_document, tree_document
from tests.test_status_document import FakeAdapter, executive

PROFILE = load_profile()


class Sink:
    """A sink of ``RunChannels`` that keeps nothing."""

    preroll_ns = 0

    def wants(self, log_ns: int) -> bool:
        return True  # every message as it comes

    def begin(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        pass

    def end(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        pass

    def write(self, message: Message) -> None:
        pass

    def problems(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def mission(name: str) -> py_trees.behaviour.Behaviour:
    """A Parallel over a Sequence and an inverter: every kind of parent a mission has."""
    return py_trees.composites.Parallel(
        name,
        policy=py_trees.common.ParallelPolicy.SuccessOnAll(),
        children=[
            py_trees.composites.Sequence("steps", memory=True, children=[Log("hi"), Wait(0.0)]),
            py_trees.decorators.Inverter("not", py_trees.behaviours.Failure("fail")),
        ],
    )


def fresh(ex: Executive) -> None:
    """The robot heard just now (the test double's sources are stamped when made): a slow
    machine must not make a start "not ready"."""
    ex.adapter.snap = FakeAdapter().snap  # type: ignore[attr-defined]  # the test double's


def run_to_end(ex: Executive, channels: RunChannels, name: str) -> None:
    running = RunningSince()
    fresh(ex)
    ok, why = ex.start_mission(name, mission(name))
    assert ok, why
    deadline = time.monotonic() + 5.0
    while ex.state is ExecState.RUNNING:
        assert time.monotonic() < deadline, "the mission did not end"
        fresh(ex)
        ex.tick()
        running.update(ex.tree.root, ex.clock())
        status_document(ex, running_since=running.since)
        channels.on_tick(ex)
    assert ex.state is ExecState.SUCCEEDED, ex.last_run


def test_runs_back_to_back_leave_nothing_for_the_cyclic_collector(no_collector: None) -> None:
    ex, _ = executive()
    channels = RunChannels(ex, PROFILE, [Sink()])
    ex.on_change = channels.on_change
    try:
        run_to_end(ex, channels, "first")  # a first run: whatever is made once, made
        assert ex.last_run is not None
        first = [weakref.ref(node) for node in ex.last_run.root.iterate()]
        gc.collect()
        for i in range(3):
            run_to_end(ex, channels, f"run {i}")
        # refused (one is running): built for nothing, freed all the same
        fresh(ex)
        assert ex.start_mission("busy", mission("busy"))[0]
        refused = mission("refused")
        refused_nodes = [weakref.ref(node) for node in refused.iterate()]
        assert not ex.start_mission("refused", refused)[0]
        del refused
        assert all(ref() is None for ref in refused_nodes)
        ex.stop_mission()
        assert all(ref() is None for ref in first), "a finished run's tree is still alive"
        assert gc.collect() == 0
    finally:
        channels.close()


def test_the_status_tree_walk_leaves_no_cycle(no_collector: None) -> None:
    root = mission("walked")
    assert [n["depth"] for n in tree_document(root, 0.0, {})] == [0, 1, 2, 2, 1, 2]
    assert [n["path"].rsplit("/", 1)[-1] for n in tree_document(root, 0.0, {})] == [
        "walked",
        "steps",
        "Log",
        "Wait 0 s",
        "not",
        "fail",
    ]
    assert gc.collect() == 0
