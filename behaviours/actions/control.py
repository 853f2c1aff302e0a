"""Control authority and firmware state: upper-body control, FSM, clearing errors.

Each re-sends its request at ``RESEND`` intervals until the robot's state confirms it:
the commands are one-shot on the wire and a firmware that missed the first one must
not leave the mission waiting for its timeout.
"""

from __future__ import annotations

from py_trees.common import Status

from behaviours.base import RobotLeaf
from behaviours.state import latest

RESEND = 0.2  # s


class _Confirmed(RobotLeaf):
    """Send, re-send every RESEND s, succeed when ``confirmed()``."""

    def __init__(self, name: str, timeout: float) -> None:
        super().__init__(name, timeout)
        self._sent_at = 0.0

    def start(self) -> None:
        self.send()
        self._sent_at = self.ctx.clock()

    def poll(self) -> Status:
        if self.confirmed():
            return Status.SUCCESS
        if self.ctx.clock() - self._sent_at >= RESEND:
            self.send()
            self._sent_at = self.ctx.clock()
        return Status.RUNNING

    def send(self) -> None:
        raise NotImplementedError

    def confirmed(self) -> bool:
        raise NotImplementedError


class AcquireControl(_Confirmed):
    """Take upper-body control; confirmed by ``UpperState_.is_upper_control``.

    Blackboard: reads ``/robot/upper_state``. Marks the context so the mission slot
    releases control when the mission ends, however it ends.
    """

    reads = ("upper_state",)

    def __init__(self, name: str = "Acquire Control", timeout: float = 3.0) -> None:
        super().__init__(name, timeout)

    def send(self) -> None:
        self.ctx.control_acquired = True
        self.ctx.commands.switch_upper_control(True)

    def confirmed(self) -> bool:
        state = latest(self.bb, "upper_state")
        return (
            state is not None
            and state.received >= self.started_at
            and bool(state.sample["is_upper_control"])
        )

    def timeout_message(self) -> str:
        return (
            f"upper-body control not confirmed within {self.timeout} s (refused, or no upper state)"
        )


class ReleaseControl(_Confirmed):
    """Hand upper-body control back; confirmed when ``is_upper_control`` is false.

    Blackboard: reads ``/robot/upper_state``.
    """

    reads = ("upper_state",)

    def __init__(self, name: str = "Release Control", timeout: float = 3.0) -> None:
        super().__init__(name, timeout)

    def send(self) -> None:
        # Handing control back is intended from here on: the watchdog must not read the
        # flag going false as someone else revoking it.
        self.ctx.control_acquired = False
        self.ctx.commands.switch_upper_control(False)

    def confirmed(self) -> bool:
        state = latest(self.bb, "upper_state")
        return (
            state is not None
            and state.received >= self.started_at
            and not state.sample["is_upper_control"]
        )


class SetFsm(_Confirmed):
    """Switch the firmware state machine; confirmed by ``fsm_id`` in upper or lower state.

    Blackboard: reads ``/robot/upper_state``, ``/robot/lower_state``.
    """

    reads = ("upper_state", "lower_state")

    def __init__(self, state: str | int, name: str | None = None, timeout: float = 3.0) -> None:
        super().__init__(name or f"Set FSM {state}", timeout)
        self.state = state
        self.fsm_id = -1

    def start(self) -> None:
        try:
            self.fsm_id = self.ctx.profile.fsm_id(self.state)
        except KeyError:
            self.fail("unknown_fsm", f"FSM state {self.state!r} is not in the robot profile")
            return
        super().start()

    def send(self) -> None:
        self.ctx.commands.set_fsm(self.fsm_id)

    def confirmed(self) -> bool:
        for topic in self.reads:
            state = latest(self.bb, topic)
            if (
                state is not None
                and state.received >= self.started_at
                and int(state.sample["fsm_id"]) == self.fsm_id
            ):
                return True
        return False

    def timeout_message(self) -> str:
        return f"fsm_id never confirmed {self.fsm_id} ({self.state}) within {self.timeout} s"


class ClearErrors(RobotLeaf):
    """Ask the firmware to clear servo errors (``rt/clear/errors``); SUCCESS once sent."""

    def __init__(self, name: str = "Clear Errors") -> None:
        super().__init__(name)

    def start(self) -> None:
        self.ctx.commands.clear_errors()
