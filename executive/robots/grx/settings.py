"""What the GRX adapter and simulator need beyond a profile's common keys.

TODO(profile key ``grx:``): these are profile data, not code. Until ``executive/profile.py``
validates a ``grx:`` mapping, the defaults below are the ``grx`` profile's and an adapter
or simulator takes overrides as options (``open(profile, settings=GrxSettings(...))``).
The key each field becomes is named beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from executive.robots.grx import schema as wire

# (stick, index, sign): which joystick axis carries a rate, and its sign
Axis = tuple[str, int, float]


@dataclass(frozen=True)
class GrxSettings:
    # grx.schema: the User API table the robot's release speaks ("seed" or "m4"); also the
    # adapter's interface variant
    schema: str = "seed"
    # grx.safe_task: the fsm name sent after zero axes on a safety stop (None: zero axes only).
    # Not servo_off: that drops a standing humanoid. Never sent while the robot is in one of
    # grx.passive_tasks, where it would energise the motors.
    safe_task: str | None = "ready"
    passive_tasks: tuple[str, ...] = ("servo_off",)
    # grx.joystick_hz: the virtual joystick stream's rate (the vendor's demo: 50 Hz)
    joystick_hz: float = 50.0
    # grx.components: component (module) names -> MIDs for run_component
    components: Mapping[str, int] = field(default_factory=lambda: {"natural_arm_swing": 3407})
    # grx.component_channel: the client category a component command goes to. The seed's
    # docs say task/client; the vendor's walk demo sends it on grx/client.
    component_channel: str = "task"
    # grx.joystick_axes: forward, lateral and yaw rates on the virtual sticks. Not documented
    # (the vendor's demo passes pygame axes 0, 1 and 3 straight through): forward = left
    # stick [1], lateral = left [0], yaw = right [0], all positive as given here.
    forward: Axis = ("left", 1, 1.0)
    lateral: Axis = ("left", 0, 1.0)
    yaw: Axis = ("right", 0, 1.0)
    # grx.continuous_tasks: fsm names of tasks that stay in process until another task
    # replaces them (the simulator's model; the executive confirms them by task state alone)
    continuous_tasks: tuple[str, ...] = ("walk", "run")

    def axes(self, vx: float, vy: float, yaw: float) -> dict[str, list[float]]:
        """The two virtual sticks carrying these rates (each clamped to [-1, 1])."""
        sticks = {"left": [0.0, 0.0], "right": [0.0, 0.0]}
        for (stick, index, sign), rate in (
            (self.forward, vx),
            (self.lateral, vy),
            (self.yaw, yaw),
        ):
            sticks[stick][index] = sign * min(max(float(rate), -1.0), 1.0)
        return {wire.AXIS_LEFT: sticks["left"], wire.AXIS_RIGHT: sticks["right"]}

    def rates(self, left: list[float], right: list[float]) -> tuple[float, float, float]:
        """Forward, lateral and yaw rates from the two sticks (the inverse of ``axes``)."""
        sticks = {"left": left, "right": right}
        return tuple(  # type: ignore[return-value]
            sign * float(sticks[stick][index])
            for stick, index, sign in (self.forward, self.lateral, self.yaw)
        )
