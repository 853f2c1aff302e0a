"""Checks of the robot's battery and the operator's gamepad."""

from __future__ import annotations

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import BUTTONS as BUTTON_NAMES
from executive.language.kinds import NAME, Field, FieldType, show, timeout
from executive.language.leaf import LeafKind


class CheckBattery(RobotLeaf):
    """SUCCESS if the battery is at least ``min_level`` percent, else FAILURE.

    Reads the snapshot's ``battery``.
    """

    kinds = (
        LeafKind(
            name="check_battery",
            doc="Succeeds if the battery is at least `min_level` percent, else fails.",
            fields=(
                NAME,
                Field(
                    "min_level",
                    FieldType.NUMBER,
                    "Percent, 0-100.",
                    required=True,
                    ge=0.0,
                    le=100.0,
                ),
            ),
            condition=True,
            args=("min_level",),
            requires="battery",
            build=lambda leaf: CheckBattery(float(leaf.args["min_level"]), name=leaf.name),
            label=lambda a: f"Battery >= {show(a.get('min_level'))} %",
        ),
    )

    def __init__(self, min_level: float, name: str | None = None) -> None:
        super().__init__(name or f"Battery >= {min_level:g} %")
        self.min_level = min_level

    def poll(self) -> Status:
        battery = self.robot.battery
        if battery is None:
            return self.fail("no_state", "no battery state received")
        level = battery.sample
        if level < self.min_level:
            return self.fail(
                "low_battery", f"battery at {level:g} %, the mission needs {self.min_level:g} %"
            )
        return Status.SUCCESS


class WaitForButton(RobotLeaf):
    """Wait until the operator presses ``button`` on the gamepad (a release-then-press edge).

    A button already held when the wait starts does not count: the operator must press
    it in answer to this step.

    Reads the snapshot's ``buttons``.
    """

    kinds = (
        LeafKind(
            name="wait_for_button",
            doc="Waits until the operator presses a gamepad button (a fresh press, not a held "
            "one).",
            fields=(
                NAME,
                Field(
                    "button",
                    FieldType.BUTTON,
                    "One of " + ", ".join(BUTTON_NAMES) + ".",
                    required=True,
                ),
                timeout("the press"),
            ),
            waits=True,
            args=("button", "timeout"),
            requires="buttons",
            build=lambda leaf: WaitForButton(
                leaf.args["button"], name=leaf.name, timeout=float(leaf.args["timeout"])
            ),
            label=lambda a: f"Wait for button {show(a.get('button'))}",
        ),
    )

    def __init__(self, button: str, *, name: str | None = None, timeout: float = 60.0) -> None:
        if button not in BUTTON_NAMES:
            raise ValueError(f"unknown button {button!r}; known: {', '.join(BUTTON_NAMES)}")
        super().__init__(name or f"Wait for button {button}", timeout)
        self.button = button
        self._released = False

    def _pressed(self) -> tuple[bool, float] | None:
        buttons = self.robot.buttons
        if buttons is None:
            return None
        return self.button in buttons.sample, buttons.received

    def start(self) -> None:
        # Held when the wait starts (in the newest sample before it) does not count; a press
        # that lands in the very next sample does (a race the first version lost).
        seen = self._pressed()
        self._released = seen is None or not seen[0]
        self.feedback_message = f"press {self.button}"

    def poll(self) -> Status:
        seen = self._pressed()
        if seen is None or seen[1] < self.started_at:
            return Status.RUNNING
        if not seen[0]:
            self._released = True
        elif self._released:
            return Status.SUCCESS
        return Status.RUNNING

    def timeout_message(self) -> str:
        return f"button {self.button} not pressed within {self.timeout} s"
