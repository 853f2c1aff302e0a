"""The missions the benchmarks write are missions the service runs: each is built by the
service's own store with the profile its benchmark uses. The memory benchmark's finger move
was refused by the speed caps for a season (a 40 ms ``duration`` from a start the mission
does not set), and ``make bench`` stopped at its first run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench import episode
from bench.parts import estop_c, grx, memory
from executive.mission.store import MissionStore
from executive.seam.profile import RobotProfile, load_profile

ATOM = load_profile()


def _memory(directory: Path, profile: RobotProfile) -> tuple[str, dict[str, Any]]:
    q = memory.write_mission(directory, profile)
    return "tiny", {"q": q + 0.03}


def _estop(directory: Path, profile: RobotProfile) -> tuple[str, dict[str, Any]]:
    episode.write_mission(directory, profile)
    return "estop_bench", {}


def _estop_c(directory: Path, profile: RobotProfile) -> tuple[str, dict[str, Any]]:
    episode.write_mission(directory, profile, estop_c.MISSION, duration=None)
    return estop_c.MISSION, {}


def _grx(directory: Path, profile: RobotProfile) -> tuple[str, dict[str, Any]]:
    grx.write_mission(directory)
    return grx.MISSION, {}


@pytest.mark.parametrize(
    ("write", "profile"),
    [(_memory, ATOM), (_estop, ATOM), (_estop_c, ATOM), (_grx, load_profile("grx"))],
    ids=["memory", "estop", "estop_c", "grx"],
)
def test_a_benchmark_s_mission_is_one_the_service_runs(
    tmp_path: Path,
    write: Callable[[Path, RobotProfile], tuple[str, dict[str, Any]]],
    profile: RobotProfile,
) -> None:
    name, params = write(tmp_path, profile)
    store = MissionStore(tmp_path, profile)
    store.reload()
    root, errors = store.build(name, params)
    assert root is not None, errors
