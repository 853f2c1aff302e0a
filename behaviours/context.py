"""What leaves are given to act on the robot: the profile, command ports and a clock.

Leaves receive a ``RobotContext`` in ``setup(context=...)`` (py_trees' lifecycle: the
constructor stores parameters only, so a mission can be validated and rendered with no
robot). The ports are narrow protocols: the robot adapter's ``RobotCommands``
(``executive.seam.ports``) and the ``MotionStreamer`` are the real implementations;
tick-level tests pass recording fakes with the same shape. Leaves read the robot's state
from the blackboard's snapshot (``behaviours.state``), never from the robot's wire.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from executive.motion.trajectory import Trajectory
from executive.seam.ports import RobotCommands
from executive.seam.profile import RobotProfile


@dataclass(frozen=True)
class Failure:
    """Why a leaf failed, structured so status can show it: a stable code and a message."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class MotionPort(Protocol):
    """The part of the motion streamer leaves use."""

    def submit(self, trajectories: Sequence[Trajectory]) -> None: ...
    def active(self, names: Iterable[str]) -> bool: ...
    def hold_joints(self, positions: dict[str, float]) -> None: ...


class Pauses:
    """The mission's paused time, which every timeout and wait leaves out.

    One ledger per executive (``RobotContext.pauses``): ``RobotLeaf.elapsed`` subtracts
    the time paused since a leaf started, and the builder's decorators (``timeout``,
    ``delay``) read ``mission_time``, so a pause freezes them all in one place and no leaf
    counts it. The leaves' own clock (``RobotContext.clock``) stays the monotonic clock the
    robot's samples are stamped with: a leaf compares it with ``received``. The tick thread
    pauses and resumes; anyone may read.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.since: float | None = None  # when the current pause began; None: not paused
        self._done: list[tuple[float, float]] = []  # (start, end) of this run's past pauses
        self._total = 0.0  # their total length

    @property
    def paused(self) -> bool:
        return self.since is not None

    def pause(self, now: float | None = None) -> None:
        if self.since is None:
            self.since = self.clock() if now is None else now

    def resume(self, now: float | None = None) -> float:
        """End the pause; its length in seconds (0 if not paused)."""
        if self.since is None:
            return 0.0
        end = self.clock() if now is None else now
        start, self.since = self.since, None
        self._done.append((start, end))
        self._total += end - start
        return end - start

    def clear(self) -> None:
        """A new run: no pause counts against it."""
        self.since = None
        self._done.clear()
        self._total = 0.0

    def lost(self, since: float, now: float | None = None) -> float:
        """Seconds paused between ``since`` and ``now`` (a pause going on counts to ``now``)."""
        now = self.clock() if now is None else now
        spans = [*self._done, (self.since, now)] if self.since is not None else self._done
        return sum(max(0.0, min(end, now) - max(start, since)) for start, end in spans)

    def mission_time(self) -> float:
        """The monotonic clock less every pause of this run: stands still while paused."""
        now = self.clock()
        return now - self._total - (now - self.since if self.since is not None else 0.0)


@dataclass
class RobotContext:
    """Everything a leaf may touch. ``feed`` collects ``log`` leaves' messages for status."""

    profile: RobotProfile
    commands: RobotCommands
    motion: MotionPort
    clock: Callable[[], float] = time.monotonic
    feed: list[tuple[float, str]] = field(default_factory=list)
    # set by AcquireControl, so the mission slot can release control however a mission ends
    control_acquired: bool = False
    extras: dict[str, Any] = field(default_factory=dict)
    # the run's paused time (executive.core.tree.Executive.pause): timeouts and waits leave it out
    pauses: Pauses = field(default_factory=Pauses)
