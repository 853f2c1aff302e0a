"""Moving joints and fingers to targets through the motion streamer.

One leaf serves poses and hand gestures alike: both are joint-name -> position targets
(poses name arm/head/torso joints, gestures name finger joints such as ``right_index``).
"""

from __future__ import annotations

from collections.abc import Mapping

from py_trees.common import Status

from behaviours.base import RobotLeaf
from behaviours.state import latest
from executive.motion.streamer import STREAMS, HeldError
from executive.motion.trajectory import PlanError, plan


class MoveJoints(RobotLeaf):
    """Move joints to ``targets`` on a minimum-jerk trajectory from the measured position.

    Succeeds when the trajectory has finished and every joint is measured within
    ``tolerance``; fails on timeout naming the worst joint. Preempted (or timed out),
    it holds its joints at their measured positions.

    Blackboard: reads ``/robot/upper_state``, ``/robot/lower_state``, ``/robot/hands_state``.
    """

    reads = ("upper_state", "lower_state", "hands_state")

    def __init__(
        self,
        targets: Mapping[str, float],
        *,
        name: str = "Move Joints",
        duration: float | None = None,
        speed: float | None = None,
        tolerance: float = 0.05,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(name, timeout)
        self.targets = dict(targets)
        self.duration = duration
        self.speed = speed
        self.tolerance = tolerance

    def measured(self) -> dict[str, float]:
        """Measured positions of this leaf's joints from the blackboard snapshot."""
        out: dict[str, float] = {}
        for name in self.targets:
            joint = self.ctx.profile.joints.get(name)
            if joint is None:
                continue
            _, state_key, _, state_field = STREAMS[joint.topic]
            state = latest(self.bb, state_key)
            if state is not None:
                out[name] = float(state.sample[state_field]["q"][joint.index])
        return out

    def start(self) -> None:
        try:
            trajectories = plan(
                self.ctx.profile,
                self.targets,
                self.measured(),
                self.ctx.clock(),
                duration=self.duration,
                speed=self.speed,
            )
            self.ctx.motion.submit(trajectories)
        except PlanError as e:
            self.fail("plan_error", str(e))
        except HeldError as e:
            self.fail("held", str(e))
        except ValueError as e:
            self.fail("no_state", str(e))

    def errors(self) -> dict[str, float]:
        measured = self.measured()
        return {
            n: abs(measured[n] - q) if n in measured else float("inf")
            for n, q in self.targets.items()
        }

    def poll(self) -> Status:
        if self.ctx.motion.active(self.targets):
            return Status.RUNNING
        if all(e <= self.tolerance for e in self.errors().values()):
            return Status.SUCCESS
        return Status.RUNNING

    def timeout_message(self) -> str:
        worst, err = max(self.errors().items(), key=lambda kv: kv[1])
        return f"{worst} is {err:.3f} rad from its target after {self.timeout} s (tolerance {self.tolerance})"

    def abort(self) -> None:
        self.ctx.motion.hold_joints(self.measured())
