"""After a crash: what a previous instance of the service left on the robot.

A service killed mid-mission (kill -9, a crash, the OOM killer) cannot hand back what it
took: upper-body control stays on, the base's task keeps running, a walking GRX walks on
with the last axes it was sent (it keeps them: stopping is the sender's job). The restarted
service used to touch none of it and report IDLE / CLEAR. ``PreviousInstance`` looks once,
as soon as the robot says enough (``RobotAdapter.leftovers``) and before any mission of
this instance has started, and acts per the config's ``previous_control``:

- ``release`` (the default, the safe choice): the adapter makes the robot safe
  (``RobotAdapter.make_safe``: the Atom hands control back and cancels its base's task; the
  GRX gets zero axes and, if it was in a task, its safe task; the Adam has nothing to send,
  docs/robots.md "Made safe on start");
- ``report``: leave it as it is, and say so in the log and in the status' problems until
  the executive takes the robot over itself or the robot reports nothing left.

Either way what was found and what was sent are in the log and in the status document's
``recovery``. It runs on the tick thread (``on_tick``), where every other command is
written. It waits until the peer watch (executive/service/peers.py) has looked, and touches
nothing while another executive or controller is on the domain: what is on the robot may
be theirs, not a dead instance's (a second executive once released the first one's
control at its first ticks).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from executive.core.tree import Executive

log = structlog.get_logger(__name__)

LOOK_FOR_S = 10.0  # after start-up; a robot not heard by then has nothing to recover


class PreviousInstance:
    """One look at what a previous instance left commanding the robot, made safe or reported."""

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
        self.started = clock()
        self.until = self.started + LOOK_FOR_S
        self.alone = alone  # no other controller on the domain? (None: not known yet)
        self.done = False
        self.outcome = "looking"  # looking, made_safe, reported, skipped, not_heard, preempted
        self.found: list[str] = []  # what the look found (kept for the status)
        self.left: list[str] = []  # what is left as it is (report), until it is gone
        self.sent: list[str] = []  # what make_safe sent
        self.error = ""
        self.after_s: float | None = None  # from this instance's start to the look's end

    def on_tick(self) -> None:
        if self.done:
            if self.left and self._gone():
                self.left = []
            return
        ex = self.executive
        if ex.run is not None:
            self._finish("preempted")  # a mission of ours owns the robot now
            return
        if self.clock() > self.until:
            self._finish("not_heard")  # no robot to recover
            return
        try:
            found = ex.adapter.leftovers()
        except Exception as e:  # noqa: BLE001 - the adapter's bug must not stop the tick loop
            self.error = f"reading the robot: {type(e).__name__}: {e}"
            log.error("previous instance: could not read the robot", error=self.error)
            self._finish("failed")
            return
        if found is None:
            return  # not heard enough yet
        alone = self.alone()
        if alone is None:
            return  # the peer watch has not looked long enough yet
        self.found = list(found)
        if not alone:
            log.info("another controller is on the domain: what is on the robot may be theirs")
            self._finish("skipped")
            return
        if self.policy == "report":
            self.left = list(found)
            self._finish("reported")
            if found:
                log.warning("a previous instance left the robot commanded: reported", found=found)
            return
        try:
            self.sent = list(ex.adapter.make_safe())
        except Exception as e:  # noqa: BLE001 - say so; the watchdog still guards missions
            self.error = f"making the robot safe: {type(e).__name__}: {e}"
            log.error("previous instance: could not make the robot safe", error=self.error)
            self._finish("failed")
            return
        self._finish("made_safe")
        log.warning(
            "start: the robot made safe" if found else "start: nothing left commanding the robot",
            found=self.found,
            sent=self.sent,
            after_s=self.after_s,
        )

    def _finish(self, outcome: str) -> None:
        self.done = True
        self.outcome = outcome
        self.after_s = round(self.clock() - self.started, 3)

    def _gone(self) -> bool:
        """Whether what was reported is gone: a mission of ours took the robot over, or the
        robot reports nothing left."""
        ex = self.executive
        if ex.run is not None or ex.context.control_acquired:
            return True
        try:
            return not ex.adapter.leftovers()
        except Exception:  # noqa: BLE001 - keep reporting what was found
            return False

    def problems(self) -> list[str]:
        """For the status: what was found and left as it is (policy ``report``), or a look
        that failed."""
        out = [
            f"previous instance: {what} (left as it is: previous_control=report)"
            for what in self.left
        ]
        if self.error:
            out.append(f"previous instance: {self.error}")
        return out

    def document(self) -> dict[str, Any]:
        """The status document's ``recovery``: the look at start and what came of it."""
        return {
            "policy": self.policy,
            "outcome": self.outcome,
            "found": list(self.found),
            "sent": list(self.sent),
            "after_s": self.after_s,
        }
