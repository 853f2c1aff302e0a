"""Control authority and firmware state: upper-body control, FSM, clearing errors.

Each re-sends its request at ``RESEND`` intervals until the robot's state confirms it:
the commands are one-shot on the wire and a firmware that missed the first one must
not leave the mission waiting for its timeout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import NAME, Field, FieldType, show, timeout
from executive.language.leaf import LeafKind
from executive.language.model import Unresolved

if TYPE_CHECKING:
    from executive.language.leaf import LeafChecker, LeafInput
    from executive.language.model import Leaf

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
    """Take control of the robot (the Atom: its upper body); confirmed by the robot.

    Reads the snapshot's ``control``. Marks the context so the mission slot
    releases control when the mission ends, however it ends.
    """

    kinds = (
        LeafKind(
            name="acquire_control",
            doc="Takes upper-body control (rt/switch/upper/control) and waits for the robot "
            "to confirm.",
            fields=(NAME, timeout("the confirmation")),
            waits=True,
            args=("timeout",),
            requires="control",
            drives=("upper-body control",),
            build=lambda leaf: AcquireControl(leaf.name, float(leaf.args["timeout"])),
            label=lambda a: "Acquire control",
        ),
    )

    def __init__(self, name: str = "Acquire Control", timeout: float = 3.0) -> None:
        super().__init__(name, timeout)

    def send(self) -> None:
        self.ctx.control_acquired = True
        self.ctx.commands.request_control(True)

    def confirmed(self) -> bool:
        control = self.robot.control
        return control is not None and control.received >= self.started_at and control.sample

    def timeout_message(self) -> str:
        return (
            f"upper-body control not confirmed within {self.timeout} s (refused, or no upper state)"
        )


class ReleaseControl(_Confirmed):
    """Hand upper-body control back; confirmed when ``is_upper_control`` is false.

    Reads the snapshot's ``control``.
    """

    kinds = (
        LeafKind(
            name="release_control",
            doc="Hands upper-body control back and waits for the robot to confirm.",
            fields=(NAME, timeout("the confirmation")),
            waits=True,
            args=("timeout",),
            requires="control",
            drives=("upper-body control",),
            build=lambda leaf: ReleaseControl(leaf.name, float(leaf.args["timeout"])),
            label=lambda a: "Release control",
        ),
    )

    def __init__(self, name: str = "Release Control", timeout: float = 3.0) -> None:
        super().__init__(name, timeout)

    def send(self) -> None:
        # Handing control back is intended from here on: the watchdog must not read the
        # flag going false as someone else revoking it.
        self.ctx.control_acquired = False
        self.ctx.commands.request_control(False)

    def confirmed(self) -> bool:
        control = self.robot.control
        return control is not None and control.received >= self.started_at and not control.sample


def _check_set_fsm(checker: LeafChecker, inp: LeafInput) -> dict[str, Any] | None:
    """The builder gets the state's id too (names were checked against the profile when
    the field was read)."""
    if "state" not in inp.vals:  # missing: reported by the field checks
        return None
    state = inp.value("state")
    fsm_id = state if isinstance(state, Unresolved) else checker.profile.fsm_id(state)
    return {"state": state, "fsm_id": fsm_id, "timeout": inp.value("timeout")}


def _build_set_fsm(leaf: Leaf) -> SetFsm:
    a = leaf.args
    state: str | int = a["state"] if a.get("fsm_id") is None else a["fsm_id"]
    return SetFsm(state, name=leaf.name, timeout=float(a["timeout"]))


class SetFsm(_Confirmed):
    """Switch the firmware state machine; confirmed by ``fsm_id`` in upper or lower state.

    Reads the snapshot's ``fsm``.
    """

    kinds = (
        LeafKind(
            name="set_fsm",
            doc="Switches the firmware state machine and waits until the robot reports the state.",
            fields=(
                NAME,
                Field(
                    "state",
                    FieldType.FSM_STATE,
                    "An FSM state name from the robot profile, or a numeric id.",
                    required=True,
                ),
                timeout("the robot to report the state"),
            ),
            waits=True,
            args=("state", "fsm_id", "timeout"),
            requires="fsm",
            drives=("the FSM",),
            check=_check_set_fsm,
            build=_build_set_fsm,
            label=lambda a: f"Set FSM {show(a.get('state'))}",
        ),
    )

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
        fsm = self.robot.fsm
        return fsm is not None and fsm.received >= self.started_at and fsm.sample == self.fsm_id

    def timeout_message(self) -> str:
        return f"fsm_id never confirmed {self.fsm_id} ({self.state}) within {self.timeout} s"


class ClearErrors(RobotLeaf):
    """Ask the firmware to clear servo errors (``rt/clear/errors``); SUCCESS once sent."""

    kinds = (
        LeafKind(
            name="clear_errors",
            doc="Asks the firmware to clear servo errors (rt/clear/errors).",
            fields=(NAME,),
            requires="clear_faults",
            build=lambda leaf: ClearErrors(leaf.name),
            label=lambda a: "Clear errors",
        ),
    )

    def __init__(self, name: str = "Clear Errors") -> None:
        super().__init__(name)

    def start(self) -> None:
        self.ctx.commands.clear_faults()
