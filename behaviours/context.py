"""What leaves are given to act on the robot: the profile, command ports and a clock.

Leaves receive a ``RobotContext`` in ``setup(context=...)`` (py_trees' lifecycle: the
constructor stores parameters only, so a mission can be validated and rendered with no
robot). The ports are narrow protocols: ``DdsCommands`` and the ``MotionStreamer`` are
the real implementations; tick-level tests pass recording fakes with the same shape.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from executive.motion.trajectory import Trajectory
from executive.profile import RobotProfile
from executive.robot_io import RobotIO


@dataclass(frozen=True)
class Failure:
    """Why a leaf failed, structured so status can show it: a stable code and a message."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class RobotCommands(Protocol):
    """One-shot commands to the robot (everything but the joint streams)."""

    def switch_upper_control(self, on: bool) -> None: ...
    def set_fsm(self, fsm_id: int) -> None: ...
    def clear_errors(self) -> int: ...
    def amr(
        self,
        command: str,
        *,
        target_id: int = 0,
        theta: float = 0.0,
        linear_vel: float = 0.0,
        angular_vel: float = 0.0,
    ) -> int: ...


class MotionPort(Protocol):
    """The part of the motion streamer leaves use."""

    def submit(self, trajectories: Sequence[Trajectory]) -> None: ...
    def active(self, names: Iterable[str]) -> bool: ...
    def hold_joints(self, positions: dict[str, float]) -> None: ...


class DdsCommands:
    """``RobotCommands`` over DDS through the executive's RobotIO."""

    def __init__(self, io: RobotIO, clock_ns: Callable[[], int] = time.time_ns) -> None:
        self.io = io
        self.i = io.interface
        self._ids = itertools.count(int(time.time()) % 1_000_000 * 1000)
        self._clock_ns = clock_ns
        if "amr_cmd" in io.writers:
            io.codec("amr_cmd")  # made now, not on the e-stop fast path's first cancel

    def switch_upper_control(self, on: bool) -> None:
        self.io.write("switch_upper_control", self.i.SwitchUpperControl_(flag=on))

    def set_fsm(self, fsm_id: int) -> None:
        fields = self.i.SetFsmId_.__dataclass_fields__
        if "current_action" in fields:
            self.io.write("set_fsm_id", self.i.SetFsmId_(id=fsm_id, current_action=""))
        else:  # the SDK 1.0.1 variant has the id alone
            self.io.write("set_fsm_id", self.i.SetFsmId_(id=fsm_id))

    def clear_errors(self) -> int:
        msg_id = next(self._ids) % 2**31
        self.io.write("clear_errors", self.i.ClearErrors_(msg_id=msg_id))
        return msg_id

    def amr(
        self,
        command: str,
        *,
        target_id: int = 0,
        theta: float = 0.0,
        linear_vel: float = 0.0,
        angular_vel: float = 0.0,
    ) -> int:
        command_id = next(self._ids) % 2**32
        # through the precompiled codec (byte-identical to stock, tests/test_codec.py): the
        # e-stop fast path sends CANCEL_TASK, and stock serialization is a tenth of a
        # millisecond of cold Python there. A fresh record per call: the tick thread and
        # the fast path may send at once.
        rec = self.io.codec("amr_cmd").zeros()
        rec["command_type"] = self.i.AMRCommandType[command].value
        rec["target_id"] = target_id
        rec["linear_vel"] = linear_vel
        rec["angular_vel"] = angular_vel
        rec["command_id"] = command_id
        rec["timestamp"] = self._clock_ns()
        rec["theta"] = theta
        self.io.write_record("amr_cmd", rec)
        return command_id


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
