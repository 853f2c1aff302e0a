"""After a crash: what a previous instance of the service left on the robot.

A service killed mid-mission (kill -9, a crash, the OOM killer) cannot hand back what it
took: upper-body control stays on and the base's task keeps running, driven by nobody. The
restarted service used to touch neither and say nothing. ``PreviousInstance`` looks once,
as soon as the robot's state has been heard and before any mission of this instance has
started, and acts per the config's ``previous_control``:

- ``release`` (the default, the safe choice): switch upper-body control off (the robot's
  own controller holds the arms again) and cancel the base's task;
- ``report``: leave both as they are, and say so in the log and in the status' problems
  until the executive takes control itself or the robot reports neither any more.

It runs on the tick thread (``on_tick``), where every other command is written. It waits
until the peer watch (executive/service/peers.py) has looked, and touches nothing while another
executive or controller is on the domain: control that is on may be theirs, not a dead
instance's (a second executive once released the first one's control at its first ticks).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from executive.core.tree import Executive

log = structlog.get_logger(__name__)

LOOK_FOR_S = 10.0  # after start-up; a robot not heard by then has nothing to recover


class PreviousInstance:
    """One look at the robot's control and base task left over from before this start."""

    def __init__(
        self,
        executive: Executive,
        policy: str,
        clock: Callable[[], float] = time.monotonic,
        alone: Callable[[], bool | None] = lambda: True,
    ) -> None:
        if policy not in ("release", "report"):
            raise ValueError(f"previous_control: {policy!r} is not release or report")
        self.executive = executive
        self.policy = policy
        self.clock = clock
        self.until = clock() + LOOK_FOR_S
        self.alone = alone  # no other controller on the domain? (None: not known yet)
        self.done = False
        self.found: list[str] = []

    def on_tick(self) -> None:
        if self.done:
            if self.found and self.policy == "report" and not self._still_there():
                self.found = []
            return
        ex = self.executive
        if ex.run is not None or self.clock() > self.until:
            self.done = True  # a mission of ours owns the robot now, or there was no robot
            return
        snap = ex.state_now()
        if snap.control is None and snap.base is None:
            return  # nothing heard yet (a robot that reports neither never leaves this)
        alone = self.alone()
        if alone is None:
            return  # the peer watch has not looked long enough yet
        self.done = True
        if not alone:
            log.info("another controller is on the domain: what is on the robot may be theirs")
            return
        control = (
            snap.control is not None and snap.control.sample and not ex.context.control_acquired
        )
        task = snap.base is not None and snap.base.sample.tasking
        if control:
            self.found.append("control is on and no mission of ours took it")
        if task and snap.base is not None:
            self.found.append(f"the base is running task {snap.base.sample.task_id}")
        if self.found:
            self._act(control, task)

    def _act(self, control: bool, task: bool) -> None:
        commands = self.executive.context.commands
        if self.policy == "report":
            log.warning("a previous instance left the robot commanded: reported", found=self.found)
            return
        if control:
            commands.request_control(False)
        if task:
            commands.cancel_base()
        log.warning("a previous instance left the robot commanded: released", found=self.found)
        self.found = []

    def _still_there(self) -> bool:
        ex = self.executive
        if ex.context.control_acquired:
            return False
        snap = ex.state_now()
        return bool(
            (snap.control is not None and snap.control.sample)
            or (snap.base is not None and snap.base.sample.tasking)
        )

    def problems(self) -> list[str]:
        """For the status: what was found and left as it is (policy ``report``)."""
        return [
            f"previous instance: {what} (left as it is: previous_control=report)"
            for what in self.found
        ]
