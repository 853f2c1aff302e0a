"""What leaves are given to act on the robot: the profile, command ports and a clock.

Leaves receive a ``RobotContext`` in ``setup(context=...)`` (py_trees' lifecycle: the
constructor stores parameters only, so a mission can be validated and rendered with no
robot). The ports are narrow protocols: the robot adapter's ``RobotCommands``
(``executive.robots.ports``) and the ``MotionStreamer`` are the real implementations;
tick-level tests pass recording fakes with the same shape. Leaves read the robot's state
from the blackboard's snapshot (``behaviours.state``), never from the robot's wire.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from executive.motion.trajectory import Trajectory
from executive.robots.ports import RobotCommands
from executive.robots.profile import RobotProfile


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
