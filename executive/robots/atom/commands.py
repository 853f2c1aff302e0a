"""The Atom's one-shot commands: control, FSM, clearing errors and the base (``rt/*``).

``AtomCommands`` is the Atom's ``ports.RobotCommands``. Navigation goes through the
precompiled codec (byte-identical to stock, tests/test_codec.py): the safety reaction
sends CANCEL_TASK from the fast path, where stock serialization is a tenth of a
millisecond of cold Python. A fresh record per call: the tick thread and the fast path
may send at once.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from executive.wire.robot_io import RobotIO


class AtomCommands:
    """``RobotCommands`` over the Atom's DDS topics, through the executive's RobotIO."""

    def __init__(self, io: RobotIO, clock_ns: Callable[[], int] = time.time_ns) -> None:
        self.io = io
        self.i = io.interface
        self._ids = itertools.count(clock_ns() // 10**9 % 1_000_000 * 1000)
        self._clock_ns = clock_ns
        # set while the base is remote-driven: the safe stop then sends STOP_REMOTE too
        self.remote_driving = False
        if "amr_cmd" in io.writers:
            io.codec("amr_cmd")  # made now, not on the e-stop fast path's first cancel

    # -- ports.RobotCommands ------------------------------------------------------------

    def request_control(self, on: bool) -> None:
        self.io.write("switch_upper_control", self.i.SwitchUpperControl_(flag=on))

    def set_fsm(self, fsm_id: int) -> None:
        fields = self.i.SetFsmId_.__dataclass_fields__
        if "current_action" in fields:
            self.io.write("set_fsm_id", self.i.SetFsmId_(id=fsm_id, current_action=""))
        else:  # the SDK 1.0.1 variant has the id alone
            self.io.write("set_fsm_id", self.i.SetFsmId_(id=fsm_id))

    def clear_faults(self) -> int:
        msg_id = next(self._ids) % 2**31
        self.io.write("clear_errors", self.i.ClearErrors_(msg_id=msg_id))
        return msg_id

    def go_to_tag(self, tag: int, theta: float) -> int:
        return self.amr("MOVE_TO_TAG", target_id=tag, theta=theta)

    def cancel_base(self) -> int:
        command_id = self.amr("CANCEL_TASK")
        if self.remote_driving:
            self.amr("STOP_REMOTE")
            self.remote_driving = False
        return command_id

    def pause_base(self) -> int:
        """Pause the base's task where it is (``PAUSE_TASK``): it stops and keeps the task,
        which ``resume_base`` continues (``atom-executive pause``)."""
        return self.amr("PAUSE_TASK")

    def resume_base(self) -> int:
        """Continue the task ``pause_base`` paused (``RESUME_TASK``)."""
        return self.amr("RESUME_TASK")

    # -- the wire -----------------------------------------------------------------------

    def amr(
        self,
        command: str,
        *,
        target_id: int = 0,
        theta: float = 0.0,
        linear_vel: float = 0.0,
        angular_vel: float = 0.0,
    ) -> int:
        """One ``AMRCommand_`` by ``AMRCommandType`` name; its command id."""
        command_id = next(self._ids) % 2**32
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
