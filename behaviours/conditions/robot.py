"""Checks of the robot's battery and the operator's gamepad."""

from __future__ import annotations

from py_trees.common import Status

from behaviours.base import RobotLeaf
from behaviours.state import latest
from executive.gamepad import BUTTONS  # wireless_remote byte and bit of each button
from executive.mission.kinds import BUTTONS as BUTTON_NAMES
from executive.mission.kinds import NAME, Field, FieldType, LeafKind, show, timeout


class CheckBattery(RobotLeaf):
    """SUCCESS if the battery is at least ``min_level`` percent, else FAILURE.

    Blackboard: reads ``/robot/upper_state``, ``/robot/lower_state`` (``bms_state``).
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

    reads = ("upper_state", "lower_state")

    def __init__(self, min_level: float, name: str | None = None) -> None:
        super().__init__(name or f"Battery >= {min_level:g} %")
        self.min_level = min_level

    def poll(self) -> Status:
        levels = [
            int(s.sample["bms_state"]["battery_level"])
            for s in (latest(self.bb, t) for t in self.reads)
            if s is not None
        ]
        if not levels:
            return self.fail("no_state", "no battery state received")
        level = min(levels)
        if level < self.min_level:
            return self.fail(
                "low_battery", f"battery at {level} %, the mission needs {self.min_level:g} %"
            )
        return Status.SUCCESS


class WaitForButton(RobotLeaf):
    """Wait until the operator presses ``button`` on the gamepad (a release-then-press edge).

    A button already held when the wait starts does not count: the operator must press
    it in answer to this step.

    Blackboard: reads ``/robot/upper_state``, ``/robot/lower_state`` (``wireless_remote``).
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

    reads = ("upper_state", "lower_state")

    def __init__(self, button: str, *, name: str | None = None, timeout: float = 60.0) -> None:
        if button not in BUTTONS:
            raise ValueError(f"unknown button {button!r}; known: {', '.join(BUTTONS)}")
        super().__init__(name or f"Wait for button {button}", timeout)
        self.button = button
        self._released = False

    def _pressed(self, topic: str) -> tuple[bool, float] | None:
        state = latest(self.bb, topic)
        if state is None:
            return None
        byte, bit = BUTTONS[self.button]
        return bool(int(state.sample["wireless_remote"][byte]) >> bit & 1), state.received

    def start(self) -> None:
        # Held when the wait starts (in the newest sample before it) does not count; a press
        # that lands in the very next sample does (a race the first version lost).
        held = [p[0] for t in self.reads if (p := self._pressed(t)) is not None]
        self._released = not any(held)
        self.feedback_message = f"press {self.button}"

    def poll(self) -> Status:
        for topic in self.reads:
            seen = self._pressed(topic)
            if seen is None or seen[1] < self.started_at:
                continue
            if not seen[0]:
                self._released = True
            elif self._released:
                return Status.SUCCESS
        return Status.RUNNING

    def timeout_message(self) -> str:
        return f"button {self.button} not pressed within {self.timeout} s"
