"""Minimum-jerk joint trajectories, planned from the measured position.

Leaves never publish motion themselves; they plan a ``Trajectory`` and hand it to the
motion streamer, which samples it every period. Planning checks everything that can be
checked before the robot moves: finite targets inside the limits, and a duration long
enough that no joint exceeds its speed cap.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from executive.seam.profile import RobotProfile

FloatArray = npt.NDArray[np.float64]

# Peak speed of a minimum-jerk move is 1.875 x its mean speed (at the midpoint).
MIN_JERK_PEAK = 1.875


class PlanError(ValueError):
    """A trajectory that must not be run; the message names the joint."""


@dataclass(frozen=True)
class Trajectory:
    """A minimum-jerk move of some joints of one topic, from ``start`` to ``goal``."""

    topic: str
    indices: npt.NDArray[np.intp]  # motor indices on the topic
    names: tuple[str, ...]
    start: FloatArray
    goal: FloatArray
    t0: float  # monotonic start time
    duration: float

    def sample(self, now: float) -> FloatArray:
        """Positions at ``now``; ``start`` before ``t0`` and ``goal`` after the end."""
        if self.duration <= 0.0:
            return self.goal
        s = min(max((now - self.t0) / self.duration, 0.0), 1.0)
        blend = s * s * s * (10.0 + s * (-15.0 + 6.0 * s))
        return self.start + (self.goal - self.start) * blend

    def done(self, now: float) -> bool:
        return now >= self.t0 + self.duration

    def without(self, indices: Collection[int]) -> Trajectory | None:
        """This trajectory minus the motors ``indices``; None if nothing is left."""
        if not indices:
            return self
        keep = np.array([i not in indices for i in self.indices.tolist()], dtype=bool)
        if not keep.any():
            return None
        return replace(
            self,
            indices=self.indices[keep],
            names=tuple(n for n, k in zip(self.names, keep.tolist(), strict=True) if k),
            start=self.start[keep],
            goal=self.goal[keep],
        )


def required_duration(
    profile: RobotProfile,
    targets: Mapping[str, float],
    start: Mapping[str, float],
    *,
    speed: float | None = None,
) -> tuple[float, str | None]:
    """(seconds, joint): the shortest minimum-jerk move from ``start`` to ``targets`` that
    keeps every joint within its speed cap (and within ``speed``, if given), and the joint
    that needs that long (None when nothing moves).

    The one computation of how long a move must take: ``plan`` runs it on the measured
    positions, and mission validation (``executive.mission.pacing``) on the positions a
    joint may be in when the move starts, so the two cannot disagree.
    """
    worst, slowest = 0.0, None
    for name, q in targets.items():
        joint = profile.joints[name]
        cap = joint.max_velocity if speed is None else min(speed, joint.max_velocity)
        need = abs(q - start[name]) * MIN_JERK_PEAK / cap
        if need > worst:
            worst, slowest = need, name
    return worst, slowest


def too_short(duration: float, need: float) -> str:
    """The message for a ``duration`` below what the caps ``need`` (seconds)."""
    return f"duration {duration:.3f} s is too short: the joints' speed caps need {need:.3f} s"


def plan(
    profile: RobotProfile,
    targets: Mapping[str, float],
    measured: Mapping[str, float],
    t0: float,
    *,
    duration: float | None = None,
    speed: float | None = None,
) -> list[Trajectory]:
    """Plan moves to ``targets`` (joint name -> rad) from ``measured``, one per topic.

    With ``speed`` (rad/s, peak) the duration is the longest any joint needs; with
    ``duration`` it is checked against every joint's cap. All joints of one call start
    and arrive together, so a pose is reached as a whole.
    """
    if not targets:
        raise PlanError("no joints to move")
    for name, q in targets.items():
        joint = profile.joints.get(name)
        if joint is None:
            raise PlanError(f"{name}: unknown joint")
        if not np.isfinite(q) or not joint.within(q):
            raise PlanError(f"{name}: target {q} outside [{joint.lower}, {joint.upper}]")
        if name not in measured or not np.isfinite(measured[name]):
            raise PlanError(f"{name}: no measured position to start from")
    worst, _ = required_duration(profile, targets, measured, speed=speed)
    if duration is None:
        duration = worst
    elif duration + 1e-9 < worst:
        raise PlanError(too_short(duration, worst))
    by_topic: dict[str, list[str]] = {}
    for name in targets:
        by_topic.setdefault(profile.joints[name].topic, []).append(name)
    return [
        Trajectory(
            topic=topic,
            indices=np.array([profile.joints[n].index for n in names], dtype=np.intp),
            names=tuple(names),
            start=np.array([measured[n] for n in names], dtype=np.float64),
            goal=np.array([targets[n] for n in names], dtype=np.float64),
            t0=t0,
            duration=float(duration),
        )
        for topic, names in by_topic.items()
    ]
