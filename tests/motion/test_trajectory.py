"""Minimum-jerk planning: smooth, inside limits and speed caps, refused when it cannot be."""

from __future__ import annotations

import numpy as np
import pytest

from executive.motion.trajectory import MIN_JERK_PEAK, PlanError, plan
from executive.seam.profile import load_profile

PROFILE = load_profile()


def test_min_jerk_starts_and_ends_at_rest() -> None:
    (traj,) = plan(
        PROFILE, {"left_elbow_pitch": 1.0}, {"left_elbow_pitch": 0.0}, t0=10.0, duration=2.0
    )
    assert traj.sample(9.0)[0] == 0.0 and traj.sample(13.0)[0] == 1.0
    assert traj.sample(11.0)[0] == pytest.approx(0.5)
    t = np.linspace(10.0, 12.0, 2001)
    q = np.array([traj.sample(x)[0] for x in t])
    v = np.diff(q) / np.diff(t)
    assert np.all(np.diff(q) >= -1e-12)  # monotone
    assert abs(v[0]) < 1e-3 and abs(v[-1]) < 1e-3  # at rest at both ends
    assert v.max() == pytest.approx(MIN_JERK_PEAK * 0.5, rel=1e-2)


def test_speed_sets_duration_from_slowest_joint() -> None:
    trajs = plan(
        PROFILE,
        {"head_yaw": 0.3, "left_shoulder_pitch": 1.2},
        {"head_yaw": 0.0, "left_shoulder_pitch": 0.0},
        t0=0.0,
        speed=10.0,  # above every cap: the caps decide
    )
    (traj,) = trajs  # both joints are on rt/upper/cmd
    cap = PROFILE.joints["left_shoulder_pitch"].max_velocity
    assert traj.duration == pytest.approx(1.2 * MIN_JERK_PEAK / cap)
    assert sorted(traj.names) == ["head_yaw", "left_shoulder_pitch"]
    assert set(traj.indices) == {
        PROFILE.joints["head_yaw"].index,
        PROFILE.joints["left_shoulder_pitch"].index,
    }


def test_one_trajectory_per_topic() -> None:
    trajs = plan(
        PROFILE,
        {"head_yaw": 0.1, "right_index": 1.0},
        {"head_yaw": 0.0, "right_index": 0.5},
        t0=0,
        speed=1,
    )
    assert {t.topic for t in trajs} == {"upper", "hands"}
    assert len({t.duration for t in trajs}) == 1  # a pose arrives as a whole


@pytest.mark.parametrize(
    ("targets", "measured", "kwargs", "match"),
    [
        (
            {"head_pitch": 1.0},
            {"head_pitch": 0.0},
            {"speed": 1.0},
            "head_pitch: target 1.0 outside",
        ),
        (
            {"head_pitch": float("nan")},
            {"head_pitch": 0.0},
            {"speed": 1.0},
            "head_pitch: target nan",
        ),
        ({"nose": 0.0}, {}, {"speed": 1.0}, "nose: unknown joint"),
        ({"head_yaw": 0.5}, {}, {"speed": 1.0}, "head_yaw: no measured position"),
        ({"head_yaw": 1.5}, {"head_yaw": -1.5}, {"duration": 0.5}, "too short"),
        ({}, {}, {"speed": 1.0}, "no joints"),
    ],
)
def test_plans_that_must_not_run_are_refused(
    targets: dict[str, float], measured: dict[str, float], kwargs: dict[str, float], match: str
) -> None:
    with pytest.raises(PlanError, match=match):
        plan(PROFILE, targets, measured, t0=0.0, **kwargs)
