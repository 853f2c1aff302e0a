"""The shape every robot leaf shares: lifecycle, timeout, structured failure, safe terminate.

Subclasses implement ``start`` (send, in ``initialise``), ``poll`` (decide, in ``update``)
and ``abort`` (make the robot safe when preempted while RUNNING). The base class makes
``terminate`` idempotent — ``abort`` runs at most once per run, however often py_trees
calls ``terminate`` (double-terminate is the field's most common leaf bug, py_trees#439)
— and turns an expired ``timeout`` into a FAILURE with a reason.
"""

from __future__ import annotations

from typing import Any, ClassVar

import py_trees
from py_trees.common import Access, Status

from behaviours.context import Failure, RobotContext
from behaviours.state import SNAPSHOT_KEY, snapshot
from executive.language.leaf import LeafKind
from executive.seam.ports import RobotSnapshot


class RobotLeaf(py_trees.behaviour.Behaviour):
    """Base of leaves that act on the robot; they read its state from ``self.robot``.
    ``kinds`` declares the mission leaf kinds the class runs (``executive.mission.registry``
    collects them)."""

    kinds: ClassVar[tuple[LeafKind, ...]] = ()

    def __init__(self, name: str, timeout: float | None = None) -> None:
        super().__init__(name)
        self.timeout = timeout
        self.context: RobotContext | None = None
        self.failure: Failure | None = None
        self.started_at = 0.0
        self._running = False
        self.bb = self.attach_blackboard_client(name=name)
        self.bb.register_key(SNAPSHOT_KEY, access=Access.READ)

    # -- py_trees lifecycle ---------------------------------------------------------------

    def setup(self, **kwargs: Any) -> None:
        context = kwargs.get("context")
        if not isinstance(context, RobotContext):
            raise TypeError(f"{self.name}: setup needs context=RobotContext")
        self.context = context

    def initialise(self) -> None:
        self.failure = None
        self.feedback_message = ""
        self.started_at = self.ctx.clock()
        self._running = True
        self.start()

    def update(self) -> Status:
        if self.failure is not None:  # start() already failed
            return Status.FAILURE
        status = self.poll()
        if status is Status.RUNNING and self.timeout is not None and self.elapsed() > self.timeout:
            self.fail("timeout", self.timeout_message())
            self._abort_once()  # a timed-out request is abandoned: leave the robot safe
            return Status.FAILURE
        return status

    def terminate(self, new_status: Status) -> None:
        if new_status is Status.INVALID:
            self._abort_once()
        self._running = False

    def _abort_once(self) -> None:
        if self._running:
            self._running = False
            self.abort()

    # -- for subclasses -------------------------------------------------------------------

    @property
    def robot(self) -> RobotSnapshot:
        """The robot's state this tick (``behaviours.state``): the only state a leaf reads."""
        return snapshot(self.bb)

    @property
    def ctx(self) -> RobotContext:
        if self.context is None:
            raise RuntimeError(f"{self.name}: ticked before setup(context=...)")
        return self.context

    def elapsed(self) -> float:
        """Seconds since this run of the leaf started, less the mission's pauses (the one
        place timeouts and waits are measured: a pause freezes every leaf's)."""
        now = self.ctx.clock()
        return now - self.started_at - self.ctx.pauses.lost(self.started_at, now)

    def progress(self) -> tuple[float | None, float | None]:
        """(fraction done 0..1, seconds left) while RUNNING; None where the leaf cannot
        tell. Robot-neutral: status publishes it for every running leaf. By default the
        fraction is unknown and the time left is what remains of the timeout, if any."""
        if self.timeout is None:
            return None, None
        return None, max(0.0, self.timeout - self.elapsed())

    def fail(self, code: str, message: str) -> Status:
        self.failure = Failure(code, message)
        self.feedback_message = str(self.failure)
        return Status.FAILURE

    def start(self) -> None:
        """Send what the leaf asks of the robot (called once per run)."""

    def poll(self) -> Status:
        """Decide from the blackboard whether the request is done."""
        return Status.SUCCESS

    def abort(self) -> None:
        """Leave the robot safe after preemption while RUNNING (called at most once per run)."""

    def timeout_message(self) -> str:
        return f"not done within {self.timeout} s"
