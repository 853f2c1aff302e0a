"""``make bench``'s e-stop from C kept working: three events through the same code, and its
rows in the summary table beside the Python robot's, over the same ddsperf floor."""

from __future__ import annotations

from typing import Any

import pytest

from bench import run
from bench.episode import WAIT_S
from bench.parts import estop_c


@pytest.mark.dds
def test_three_estops_from_c_are_each_held_and_the_base_canceled() -> None:
    results = estop_c.run(3, use_ddsperf=False, warmup=1)
    assert results["lost"] == 0 and results["ambiguous"] == 0, results
    for key in ("hold_ms", "hold_all_ms", "cancel_ms"):
        s = results[key]
        assert s["n"] == 3 and 0 < s["median"] <= s["max"] < WAIT_S * 1e3, (key, s)
    assert results["hold_ms"]["max"] <= results["hold_all_ms"]["max"]
    assert "e-stop from C -> first hold" in estop_c.report(results)


def _figure(median: float, p99: float, n: int = 30) -> dict[str, float]:
    return {"n": n, "median": median, "p99": p99, "max": p99}


def test_the_c_rows_follow_the_python_rows_as_a_ratio_to_the_ddsperf_floor() -> None:
    floor = {"n": 1600, "median": 0.05, "p99": 0.2, "max": 0.3}
    python_idle: dict[str, Any] = {
        "hold_ms": _figure(0.4, 1.0),
        "cancel_ms": _figure(0.5, 1.2),
        "relay_ms": _figure(0.1, 0.4),
        "hold_over_relay": {"median": 4.0, "p99": 2.5},
        "ddsperf_rtt_ms": floor,
        "hold_over_ddsperf": {"median": 8.0, "p99": 5.0},
        "lost": 0,
    }
    results: dict[str, Any] = {"estop": {"conditions": {"idle": python_idle}}}
    assert estop_c.c_floor(results) is floor
    c = {
        "variant": "seed",
        "hold_ms": _figure(0.3, 0.8),
        "cancel_ms": _figure(0.6, 1.1),
        "lost": 0,
        "ddsperf_rtt_ms": floor,
        "hold_over_ddsperf": {"median": 6.0, "p99": 4.0},
    }
    results["estop_c"] = c
    rows = run.summary_rows(results)
    names = [r[0] for r in rows]
    first_c = names.index("e-stop from C -> first hold")
    assert names.index("e-stop -> first hold") < first_c  # beside, after the Python rows
    assert rows[first_c][1:4] == ["idle, C robot (seed)", "0.300", "0.800"]
    assert rows[first_c][-1] == "met"
    ratio = next(r for r in rows if r[0] == "  over ddsperf ping-pong (C)" and "C robot" in r[1])
    assert ratio[4] == "hold = 6x / 4x"
    assert run.summary_rows({"estop_c": {**c, "lost": 1}})[0][-1] == "MISSED"
