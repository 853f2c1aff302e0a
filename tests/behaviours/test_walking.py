"""Tick tests: walk streams its rates every tick, and sends zero at the end and on preemption."""

from __future__ import annotations

from pathlib import Path

import pytest
from py_trees.common import Status

from behaviours.actions.walking import Walk
from executive.mission.loader import MissionLoader
from executive.seam.profile import RobotProfile, load_profile

from .conftest import Kit

ZERO = ("set_velocity", 0.0, 0.0, 0.0)


def test_walk_renews_its_rates_each_tick_then_sends_zero(kit: Kit) -> None:
    leaf = kit.setup(Walk(0.5, -0.25, 0.1, duration=1.0))
    assert kit.tick(leaf) is Status.RUNNING
    for _ in range(4):
        assert kit.tick(leaf, 0.2) is Status.RUNNING
    assert leaf.progress()[0] == pytest.approx(0.8)
    assert kit.commands.calls == [("set_velocity", 0.5, -0.25, 0.1)] * 5
    assert kit.tick(leaf, 0.2) is Status.SUCCESS
    assert kit.commands.calls[-1] == ZERO


def test_walk_preempted_sends_zero_once(kit: Kit) -> None:
    leaf = kit.setup(Walk(1.0, duration=5.0))
    kit.tick(leaf)
    leaf.stop(Status.INVALID)
    leaf.stop(Status.INVALID)  # py_trees may terminate twice: zero goes out once
    assert kit.commands.calls == [("set_velocity", 1.0, 0.0, 0.0), ZERO]


def test_walk_is_validated_against_the_profile(tmp_path: Path) -> None:
    grx, atom = load_profile("grx"), load_profile()

    def errors(profile: RobotProfile, leaf: str) -> list[str]:
        path = tmp_path / "m.yaml"
        path.write_text(f"mission: m\ntree:\n  sequence:\n    - {leaf}\n")
        return [str(e) for e in MissionLoader(profile, tmp_path).check(path).errors]

    assert not errors(grx, "walk: {forward: 0.5, yaw: -1, duration: 2}")
    (bad,) = errors(grx, "walk: {forward: 1.5, duration: 2}")
    assert "forward" in bad
    (refused,) = errors(atom, "walk: {forward: 0.5, duration: 2}")
    assert "walk needs the robot's 'base_velocity' capability" in refused
