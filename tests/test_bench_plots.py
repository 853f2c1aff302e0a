"""``bench/plots.py``'s idle CPU and CLI wall-time figures (issue 22), drawn from results of
the shapes ``bench/parts/idle.py`` and ``bench/parts/cli.py`` write: ``make bench`` calls ``plots.make``
after an hour of measuring, so a figure that fails on its results' shape (a robot with no
C floor, a part left out) is found here, not at the end of the run. Starts nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")  # the ``bench`` extra

from bench import plots

PNG = b"\x89PNG\r\n\x1a\n"


def _figures(samples: list[float]) -> dict[str, Any]:
    """One condition's figures as ``bench/parts/idle.py``'s ``_figures`` writes them."""
    s = sorted(samples)
    return {
        "n": len(s),
        "median": s[len(s) // 2],
        "p99": s[-1],
        "max": s[-1],
        "mean": sum(s) / len(s),
        "samples": samples,
    }


def _pair(service: list[float], sim: list[float]) -> dict[str, Any]:
    return {"service": _figures(service), "sim": _figures(sim)}


def _idle() -> dict[str, Any]:
    """``bench/parts/idle.py``'s ``run``: the DDS robots shipped, before and beside their C floor;
    the GRX (zenoh) with no before and ``floor`` None."""
    dds = {
        "sim": _pair([3.0, 2.0, 2.0, 4.0], [6.0, 7.0, 7.0, 7.0]),
        "before": _pair([8.0, 8.0, 9.0, 8.0], [7.0, 7.0, 6.0, 8.0]),
        "floor": _pair([3.0, 2.0, 4.0, 2.0], [4.0, 5.0, 5.0, 4.0]),
    }
    return {
        "seconds": 4.0,
        "targets": {"service": 5.0, "sim": 10.0},
        "loadavg": [1.4, 2.1, 2.3],
        "atom": dds,
        "adam": dds,
        "grx": {"sim": _pair([3.0, 3.0, 4.0, 2.0], [1.0, 1.0, 2.0, 1.0]), "floor": None},
        "loadavg_at_end": [1.9, 2.1, 2.3],
    }


def _cli() -> dict[str, Any]:
    """``bench/parts/cli.py``'s ``run``: every run's wall time per command, the floor among them."""
    samples = {
        "python -c pass": [0.025, 0.024, 0.023],
        plots.CLI_FLOOR: [0.237, 0.194, 0.188],
        "atom-executive --help": [0.048, 0.044, 0.040],
        "atom-executive status": [0.216, 0.209, 0.210],
        "atom-executive missions": [0.301, 0.385, 0.267],
        "atom-executive watch (first frame)": [0.213, 0.209, 0.202],
    }
    return {
        "runs": 3,
        "commands": {name: name for name in samples},
        "wall_s": {name: {"median": sorted(v)[1], "max": max(v)} for name, v in samples.items()},
        "samples_s": samples,
    }


MACHINE = {"nproc": 2, "cpu": "test CPU", "loadavg_at_start": [1.4, 2.1, 2.3]}


def test_idle_and_cli_figures_are_drawn(tmp_path: Path) -> None:
    made = plots.make({"idle": _idle(), "cli": _cli(), "machine": MACHINE}, tmp_path)
    assert made == [tmp_path / "idle_cpu.png", tmp_path / "cli_wall.png"]
    for path in made:
        data = path.read_bytes()
        assert data[:8] == PNG and len(data) > 1000, (path, len(data))


def test_a_part_not_in_the_results_draws_nothing(tmp_path: Path) -> None:
    """``make bench --only cli`` has no idle part: only its figure."""
    assert plots.make({"cli": _cli(), "machine": MACHINE}, tmp_path) == [tmp_path / "cli_wall.png"]
    assert not (tmp_path / "idle_cpu.png").exists()


def test_the_cli_names_are_bench_clis() -> None:
    """plots.py names the floor and the targeted commands itself (run as a script it imports
    no harness): they are bench/parts/cli.py's."""
    from bench.parts import cli

    assert plots.CLI_FLOOR == cli.FLOOR
    assert plots.CLI_TARGETED == cli.TARGETED
    assert plots.CLI_TARGET_RATIO == cli.TARGET_RATIO
