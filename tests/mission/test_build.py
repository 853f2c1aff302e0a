"""From the validated model to py_trees: composite types, memory flags, decorators, guards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import py_trees
import pytest
from py_trees.common import Status

from executive.language.model import Leaf, Mission
from executive.mission.build import (
    BuildError,
    ClockTimeout,
    Placeholder,
    build,
    placeholder_builders,
)
from executive.mission.loader import MissionLoader
from executive.mission.registry import LEAF_KINDS, check_builders
from tests.mission.conftest import MISSIONS, PROFILE, Workspace


def _mission(ws: Workspace, text: str) -> Mission:
    result = ws.check(text)
    assert result.ok and result.mission is not None, [str(d) for d in result.diagnostics]
    return result.mission


class Scripted(py_trees.behaviour.Behaviour):
    """A leaf that returns the statuses it is given, one per tick, then its last one."""

    def __init__(self, leaf: Leaf, script: Iterator[Status]) -> None:
        super().__init__(leaf.name)
        self.script = script
        self.last = Status.RUNNING
        self.terminated: list[Status] = []

    def update(self) -> Status:
        self.last = next(self.script, self.last)
        return self.last

    def terminate(self, new_status: Status) -> None:
        self.terminated.append(new_status)


def test_composites_map_to_py_trees_with_their_memory(ws: Workspace) -> None:
    mission = _mission(
        ws,
        """
        mission: a
        tree:
          sequence:
            name: Root
            children:
              - fallback: {memory: false, children: [{check_battery: {min_level: 5}}, clear_errors]}
              - fallback: [clear_errors]
              - parallel: {policy: success_on_one, children: [clear_errors, {wait: {seconds: 1}}]}
              - parallel: {memory: false, children: [{check_battery: {min_level: 5}}, clear_errors]}
              - parallel: [clear_errors]
        """,
    )
    root = build(mission, placeholder_builders())
    assert isinstance(root, py_trees.composites.Sequence) and root.memory is True
    assert root.name == "Root"
    reactive, remembering, one, all_resync, all_sync = root.children
    assert isinstance(reactive, py_trees.composites.Selector) and reactive.memory is False
    assert isinstance(remembering, py_trees.composites.Selector) and remembering.memory is True
    assert isinstance(one, py_trees.composites.Parallel)
    assert isinstance(one.policy, py_trees.common.ParallelPolicy.SuccessOnOne)
    assert isinstance(all_resync.policy, py_trees.common.ParallelPolicy.SuccessOnAll)
    assert all_resync.policy.synchronise is False
    assert isinstance(all_sync.policy, py_trees.common.ParallelPolicy.SuccessOnAll)
    assert all_sync.policy.synchronise is True


def test_decorators_map_to_py_trees(ws: Workspace) -> None:
    mission = _mission(
        ws,
        """
        mission: a
        tree:
          sequence:
            - retry: {attempts: 3, child: clear_errors}
            - repeat: {times: 4, child: clear_errors}
            - timeout: {seconds: 2.5, child: clear_errors}
            - inverter: {child: {check_battery: {min_level: 5}}}
            - delay: {seconds: 1.5, child: clear_errors}
            - guard: {condition: {check_battery: {min_level: 5}}, child: clear_errors}
        """,
    )
    retry, repeat, timeout, inverter, delay, guard = build(mission, placeholder_builders()).children
    assert isinstance(retry, py_trees.decorators.Retry) and retry.num_failures == 3
    assert isinstance(repeat, py_trees.decorators.Repeat) and repeat.num_success == 4
    assert isinstance(timeout, ClockTimeout) and timeout.duration == 2.5
    assert isinstance(inverter, py_trees.decorators.Inverter)
    assert isinstance(delay, py_trees.composites.Sequence) and delay.memory is True
    wait, child = delay.children
    assert isinstance(wait, Placeholder) and wait.kind == "wait" and wait.args == {"seconds": 1.5}
    assert isinstance(child, Placeholder) and child.kind == "clear_errors"
    assert isinstance(guard, py_trees.composites.Sequence) and guard.memory is False
    condition, guarded = guard.children
    assert isinstance(condition, Placeholder) and condition.kind == "check_battery"


def test_includes_build_their_tree_under_the_include_name(ws: Workspace) -> None:
    ws.write(
        "subtrees/one.yaml",
        "subtree: one\ntree:\n  sequence: {name: Inner, children: [clear_errors]}\n",
    )
    mission = _mission(
        ws,
        "mission: a\ntree:\n  sequence:\n    - include: {file: subtrees/one.yaml, name: Step one}\n    - include: subtrees/one.yaml\n",
    )
    first, second = build(mission, placeholder_builders()).children
    assert isinstance(first, py_trees.composites.Sequence)
    assert first.name == "Step one" and second.name == "Inner"


def test_placeholders_carry_the_validated_args(ws: Workspace) -> None:
    mission = _mission(
        ws, "mission: a\ntree:\n  move_joints: {pose: look_left, speed: 0.5, timeout: 5}\n"
    )
    leaf = build(mission, placeholder_builders())
    assert isinstance(leaf, Placeholder)
    assert leaf.kind == "move_joints"
    assert leaf.args["targets"] == {"head_yaw": 0.9, "head_pitch": 0.1}
    assert leaf.name == "Move to pose look_left"
    leaf.tick_once()
    assert leaf.status is Status.FAILURE  # a placeholder never pretends to act


def test_every_leaf_kind_builds_with_exactly_its_args() -> None:
    loader = MissionLoader(PROFILE)
    seen: dict[str, set[str]] = {}

    def recorder(leaf: Leaf) -> py_trees.behaviour.Behaviour:
        seen.setdefault(leaf.kind, set()).update(leaf.args)
        return Placeholder(leaf)

    builders = dict.fromkeys(LEAF_KINDS, recorder)
    for path in sorted(MISSIONS.glob("*.yaml")):
        build(loader.load(path), builders)
    from executive.mission.registry import KINDS

    for kind, keys in seen.items():
        assert keys == set(KINDS[kind].args), kind


def test_builders_must_cover_the_registry_exactly(ws: Workspace) -> None:
    mission = _mission(ws, "mission: a\ntree: clear_errors\n")
    partial = placeholder_builders()
    del partial["wait"]
    with pytest.raises(BuildError, match="no builder for leaf kind 'wait'"):
        build(mission, partial)
    extra = {**placeholder_builders(), "teleport": Placeholder}
    assert check_builders(extra) == ["'teleport' is not a leaf kind of the mission language"]
    with pytest.raises(BuildError):
        build(mission, extra)


def test_a_subtree_with_unset_parameters_builds_for_display_only(mission_dir: Path) -> None:
    path = mission_dir / "subtrees" / "serve_at_table.yaml"
    mission = MissionLoader(PROFILE, mission_dir).check(path).mission
    assert mission is not None and not mission.complete
    with pytest.raises(BuildError, match="parameters without values"):
        build(mission, placeholder_builders())
    assert (
        build(mission, placeholder_builders(), for_display=True).name == "Serve at tag ${table_tag}"
    )


def test_constructors_do_no_io(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    mission = MissionLoader(PROFILE).load(MISSIONS / "deliver_drink.yaml")

    def no_io(*args: object, **kwargs: object) -> None:
        raise AssertionError("I/O during build")

    monkeypatch.setattr("builtins.open", no_io)
    monkeypatch.setattr(Path, "read_bytes", no_io)
    build(mission, placeholder_builders())


# -- ticking the built structure -----------------------------------------------------------


def test_guard_stops_the_running_child_when_its_condition_fails(ws: Workspace) -> None:
    mission = _mission(
        ws,
        "mission: a\ntree:\n  guard: {condition: {check_battery: {min_level: 5}}, child: {wait: {seconds: 9}}}\n",
    )
    conditions = iter([Status.SUCCESS, Status.SUCCESS, Status.FAILURE])
    child_script = iter([Status.RUNNING, Status.RUNNING, Status.RUNNING])
    made: dict[str, Scripted] = {}

    def make(leaf: Leaf) -> py_trees.behaviour.Behaviour:
        script = conditions if leaf.kind == "check_battery" else child_script
        made[leaf.kind] = Scripted(leaf, script)
        return made[leaf.kind]

    root = build(mission, dict.fromkeys(LEAF_KINDS, make))
    root.tick_once()
    root.tick_once()
    assert root.status is Status.RUNNING and made["wait"].status is Status.RUNNING
    root.tick_once()  # the condition fails: the child is stopped, the guard fails
    assert root.status is Status.FAILURE
    assert made["wait"].status is Status.INVALID
    assert made["wait"].terminated == [Status.INVALID]


def test_timeout_uses_the_injected_clock(ws: Workspace) -> None:
    mission = _mission(
        ws, "mission: a\ntree:\n  timeout: {seconds: 2, child: {wait: {seconds: 9}}}\n"
    )
    now = [100.0]
    made: list[Scripted] = []

    def make(leaf: Leaf) -> py_trees.behaviour.Behaviour:
        made.append(Scripted(leaf, iter([])))
        return made[-1]

    root = build(mission, dict.fromkeys(LEAF_KINDS, make), clock=lambda: now[0])
    root.tick_once()
    now[0] = 101.9
    root.tick_once()
    assert root.status is Status.RUNNING
    now[0] = 102.1
    root.tick_once()
    assert root.status is Status.FAILURE
    assert made[0].status is Status.INVALID


def test_retry_reruns_its_child_after_a_failure(ws: Workspace) -> None:
    mission = _mission(ws, "mission: a\ntree:\n  retry: {attempts: 2, child: clear_errors}\n")
    script = iter([Status.FAILURE, Status.SUCCESS])
    root = build(mission, dict.fromkeys(LEAF_KINDS, lambda leaf: Scripted(leaf, script)))
    root.tick_once()
    assert root.status is Status.RUNNING
    root.tick_once()
    assert root.status is Status.SUCCESS
