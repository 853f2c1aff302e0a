"""Walking by velocity: the base's ``set_velocity`` port, renewed every tick for a duration.

The rates are fractions in [-1, 1] of the robot's maximum (the GRX: its virtual joystick's
deflection). The adapter streams them at its own rate (the GRX: ``joystick_hz``) for as
long as the leaf renews them within ``TTL``: a tick loop that stalls stops the robot by
itself. The leaf sends zero at the end of its duration and when preempted; on a trip the
adapter's safe stop sends zero and refuses any rate until the executive's reset.
"""

from __future__ import annotations

from typing import Any

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import MAX_TIMEOUT, NAME, Field, FieldType, show
from executive.language.leaf import LeafKind

TTL = 0.5  # s: the stream's dead man (a few ticks at any tick rate the executive runs)


def _rate(name: str, what: str) -> Field:
    return Field(
        name,
        FieldType.NUMBER,
        f"{what} as a fraction of the robot's maximum, in [-1, 1].",
        default=0.0,
        ge=-1.0,
        le=1.0,
    )


def _label(a: Any) -> str:
    rates = ", ".join(
        f"{k} {show(a.get(k))}" for k in ("forward", "lateral", "yaw") if a.get(k) not in (None, 0)
    )
    return f"Walk {rates or 'in place'} for {show(a.get('duration'))} s"


class Walk(RobotLeaf):
    """Walk at constant forward, lateral and yaw rates for ``duration`` s, then stand.

    Reads nothing of the snapshot: the safety watchdog judges the robot's state while it
    walks, and a trip preempts the leaf.
    """

    kinds = (
        LeafKind(
            name="walk",
            doc="Walks (or drives) the base at constant forward, lateral and yaw rates "
            "(fractions of the maximum) for a duration, then sends zero.",
            fields=(
                NAME,
                _rate("forward", "Forward rate (positive: ahead)"),
                _rate("lateral", "Lateral rate (positive: to the left)"),
                _rate("yaw", "Yaw rate (positive: counter-clockwise)"),
                Field(
                    "duration",
                    FieldType.NUMBER,
                    "Seconds to walk.",
                    required=True,
                    gt=0.0,
                    le=MAX_TIMEOUT,
                ),
            ),
            args=("forward", "lateral", "yaw", "duration"),
            requires="base_velocity",
            drives=("the base",),
            build=lambda leaf: Walk(
                float(leaf.args.get("forward") or 0.0),
                float(leaf.args.get("lateral") or 0.0),
                float(leaf.args.get("yaw") or 0.0),
                float(leaf.args["duration"]),
                name=leaf.name,
            ),
            label=_label,
        ),
    )

    def __init__(
        self,
        forward: float = 0.0,
        lateral: float = 0.0,
        yaw: float = 0.0,
        duration: float = 1.0,
        *,
        name: str | None = None,
    ) -> None:
        super().__init__(
            name
            or _label({"forward": forward, "lateral": lateral, "yaw": yaw, "duration": duration})
        )
        self.rates = (forward, lateral, yaw)
        self.duration = duration

    def poll(self) -> Status:
        if self.elapsed() >= self.duration:
            self.ctx.commands.set_velocity(0.0, 0.0, 0.0)
            return Status.SUCCESS
        self.ctx.commands.set_velocity(*self.rates, ttl=TTL)
        self.feedback_message = f"{self.elapsed():.1f} of {self.duration:g} s"
        return Status.RUNNING

    def progress(self) -> tuple[float | None, float | None]:
        elapsed = self.elapsed()
        return min(1.0, max(0.0, elapsed / self.duration)), max(0.0, self.duration - elapsed)

    def abort(self) -> None:
        self.ctx.commands.set_velocity(0.0, 0.0, 0.0)
