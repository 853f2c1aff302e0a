"""After a crash: what a previous instance of the service left on the robot.

A service killed mid-mission (kill -9, a crash, the OOM killer) cannot hand back what it
took: upper-body control stays on, the base's task keeps running, a walking GRX walks on
with the last axes it was sent (it keeps them: stopping is the sender's job). The restarted
service used to touch none of it and report IDLE / CLEAR. ``PreviousInstance`` makes the
robot safe in two steps, each as early as it may, and keeps every mission and every reset
out until both are done.

What may go out before anyone knows who else is on the domain
-------------------------------------------------------------
The peer watch (executive/service/peers.py) needs ``SETTLE_S`` of discovery before it
believes that no other controller is there, and what is on the robot may be another live
controller's, not a dead instance's (a second executive once released the first one's
control at its first ticks). So each act is judged by one question: could it take
something from another live controller?

- **No: sent at once** (``RobotAdapter.make_safe_now``), as soon as the adapter is open
  (``act_now``, from ``run()`` before the tick loop starts) and again when the robot is
  first heard (a send before the link is up may reach nobody). Only acts that can stop
  motion and nothing else: the GRX's zero axes. The robot keeps the last axes it received;
  zero axes end a dead instance's walk, and a live executive walking the robot puts its own
  axes again at its stream's next period, so it loses nothing it holds. The Atom and the
  Adam have no such act (a dead instance's joint streams died with it).
- **Yes: sent only once the peer watch says this executive is alone**
  (``RobotAdapter.make_safe``): releasing upper-body control (another executive's arms
  would drop to the firmware mid-move and its mission latch ``control_revoked``), canceling
  the base's task and ending remote driving (STOP_REMOTE: the task or the drive may be
  another executive's or a teleop tool's), the GRX's safe task (it ends whatever task
  another controller runs). With another controller there, nothing of this is sent
  (``skipped``); the peer watch's conflicts then refuse missions anyway.

The peer watch counts its settling time from when this process's participant was created
(discovery runs from then; its readers hand over everything already discovered) and polls
often until it knows, so on a start that took longer than ``SETTLE_S`` from DDS to the tick
loop the answer is there at the first ticks.

The look and the policy
-----------------------
The look is as soon as the robot says enough (``RobotAdapter.leftovers``), and acts per
the config's ``previous_control``:

- ``release`` (the default, the safe choice): the adapter makes the robot safe as above
  (docs/robots.md "Made safe on start");
- ``report``: nothing is sent (not even the zero axes), and what was found is in the log
  and in the status' problems until the executive takes the robot over itself or the robot
  reports nothing left.

Until the look has been made and acted on, ``Executive.recovering`` says what it waits for:
``start`` and ``reset`` are refused with it ("not ready: recovering what a previous instance
left: ..."), and the status' ``not_ready`` carries it. A mission started in that window used
to make recovery stand aside (``preempted``), the robot left as the dead instance left it.
A robot not heard within ``LOOK_FOR_S`` lifts the gate (``not_heard``: its silent safety
sources refuse missions anyway, and a robot with one source that never speaks would be held
for good), but the look goes on: a robot heard later (its network came up after this service)
is gated again, looked at and made safe as at start, unless a mission of ours has started.

Either way what was found and what was sent are in the log and in the status document's
``recovery``, with the times from this process's first line of our code
(``executive.STARTED``) to the first act and to the look's end. It runs on the tick thread
(``on_tick``), where every other command is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from executive import STARTED
from executive.core.tree import Executive

log = structlog.get_logger(__name__)

LOOK_FOR_S = 10.0  # after start-up: missions are held for the look no longer than this
# Executive.recovering's start: a refusal says "refused: not ready: " and it, the status'
# not_ready lists it (``status`` prints it after "not ready: ")
WHY = "recovering what a previous instance left: "


class PreviousInstance:
    """One look at what a previous instance left commanding the robot, made safe or reported.

    ``started``: when this process ran its first line of our code (``time.monotonic()``'s
    clock); the times in the document count from it."""

    def __init__(
        self,
        executive: Executive,
        policy: str,
        clock: Callable[[], float] = time.monotonic,
        alone: Callable[[], bool | None] = lambda: True,
        started: float = STARTED,
    ) -> None:
        if policy not in ("release", "report"):
            raise ValueError(f"previous_control: {policy!r} is not release or report")
        self.executive = executive
        self.policy = policy
        self.clock = clock
        self.started = started
        self.until = clock() + LOOK_FOR_S
        self.alone = alone  # no other controller on the domain? (None: not known yet)
        self.done = False
        self.outcome = "looking"  # looking, made_safe, reported, skipped, not_heard, preempted
        self.found: list[str] = []  # what the look found (kept for the status)
        self.left: list[str] = []  # what is left as it is (report), until it is gone
        self.sent: list[str] = []  # what make_safe_now and make_safe sent
        self.error = ""
        self.first_sent_s: float | None = None  # from ``started`` to the first act
        self.after_s: float | None = None  # from ``started`` to the look's end
        self._heard = False  # the robot said enough to look (its first leftovers)
        self._gate("the robot not heard yet")

    def _gate(self, waiting: str) -> None:
        """Say what recovery waits for: missions and resets are refused meanwhile."""
        self.executive.recovering = WHY + waiting

    def act_now(self) -> None:
        """What may go out before the peer watch has looked (the module's docstring): as soon
        as the adapter is open, and again when the robot is first heard. Any thread, before
        the tick loop starts; then the tick thread's."""
        if self.done or self.policy != "release":
            return
        try:
            sent = self.executive.adapter.make_safe_now()
        except Exception as e:  # noqa: BLE001 - say so; make_safe still comes
            self.error = f"stopping the robot at once: {type(e).__name__}: {e}"
            log.error("previous instance: could not send what stops the robot", error=self.error)
            return
        if self.error.startswith("stopping the robot at once"):
            self.error = ""  # the second try (the robot heard) went out
        if sent and self.first_sent_s is None:
            self.first_sent_s = round(self.clock() - self.started, 3)
            log.warning("start: sent at once, before the peer watch has looked", sent=list(sent))
        self.sent += [s for s in sent if s not in self.sent]

    def on_tick(self) -> None:
        if self.done:
            if self.left and self._gone():
                self.left = []
            return
        ex = self.executive
        if ex.run is not None:
            self._finish("preempted")  # cannot happen through requests: the gate refuses them
            return
        if not self._heard and self.outcome == "looking" and self.clock() > self.until:
            # not heard in time: starts are not held for it any longer (a robot not heard is
            # refused by its silent safety sources anyway), but the look goes on
            self.outcome = "not_heard"
            ex.recovering = ""
            log.warning("start: the robot not heard yet; made safe when it is", after_s=LOOK_FOR_S)
        try:
            found = ex.adapter.leftovers()
        except Exception as e:  # noqa: BLE001 - the adapter's bug must not stop the tick loop
            self.error = f"reading the robot: {type(e).__name__}: {e}"
            log.error("previous instance: could not read the robot", error=self.error)
            self._finish("failed")
            return
        if found is None:
            return  # not heard enough yet
        if not self._heard:
            self._heard = True
            self.act_now()  # the link is up now: this one reaches the robot
        if not found:
            # nothing to make safe: no act to hold for the peer watch's answer (make_safe
            # would send nothing either, and a controller that appears later is not ours
            # to act on)
            self.found = []
            self._finish("reported" if self.policy == "report" else "made_safe")
            log.info("start: nothing left commanding the robot", after_s=self.after_s)
            return
        said = "; ".join(found)
        self._gate(
            f"found {said}; waiting for the peer watch to see that no other controller is on "
            "the domain before acting on it"
        )
        alone = self.alone()
        if alone is None:
            return  # the peer watch has not looked long enough yet
        self.found = list(found)
        if not alone:
            log.info("another controller is on the domain: what is on the robot may be theirs")
            self._finish("skipped")
            return
        self._act(found)

    def _act(self, found: tuple[str, ...]) -> None:
        """Alone on the domain: make safe what was found (``release``) or report it."""
        ex = self.executive
        if self.policy == "report":
            self.left = list(found)
            self._finish("reported")
            if found:
                log.warning("a previous instance left the robot commanded: reported", found=found)
            return
        try:
            sent = ex.adapter.make_safe()
        except Exception as e:  # noqa: BLE001 - say so; the watchdog still guards missions
            self.error = f"making the robot safe: {type(e).__name__}: {e}"
            log.error("previous instance: could not make the robot safe", error=self.error)
            self._finish("failed")
            return
        if sent and self.first_sent_s is None:
            self.first_sent_s = round(self.clock() - self.started, 3)
        self.sent += list(sent)
        self._finish("made_safe")
        log.warning(
            "start: the robot made safe" if found else "start: nothing left commanding the robot",
            found=self.found,
            sent=self.sent,
            after_s=self.after_s,
            first_sent_s=self.first_sent_s,
        )

    def _finish(self, outcome: str) -> None:
        self.done = True
        self.outcome = outcome
        self.after_s = round(self.clock() - self.started, 3)
        self.executive.recovering = ""  # missions and resets may come now

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
            "first_sent_s": self.first_sent_s,
            "started": round(self.started, 6),
        }
