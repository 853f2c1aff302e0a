"""Sending the base to a tag and watching its navigation status (the snapshot's ``base``).

The sequence follows the Atom vendor's documentation (seed 000 §12), which the snapshot's
robot-neutral ``BaseState`` keeps: a new task does not cancel a running one, so a busy
base is canceled first; the task is accepted when the base is tasking and done when its
status becomes COMPLETED; FAILED and CANCELED end it. Preempted while running, it cancels.

The previous task's final status stays on show for a while after ours is sent (the base
queues a new task, and lets an ended one linger so readers see it). So while waiting for
acceptance a FAILED is a refusal of *our* task only when ``task_id`` is our command's id,
or when it was not already showing (for the same task id) when we sent ours.
"""

from __future__ import annotations

import enum
import math
from typing import TYPE_CHECKING, Any

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import MAX_TAG, NAME, Field, FieldType, show, timeout
from executive.language.leaf import LeafKind
from executive.seam.ports import BUSY, NavStatus

if TYPE_CHECKING:
    from executive.language.leaf import LeafChecker, LeafInput

# Numeric values of the wire enums (idl/dobot_atom/amr_state.idl).


class Phase(enum.Enum):
    CANCELING = "canceling the previous task"
    ACCEPTING = "waiting for the base to accept"
    RUNNING = "driving"


def _check_navigate(checker: LeafChecker, inp: LeafInput) -> dict[str, Any] | None:
    """A tag the robot's map lacks is a warning, not an error: the profile's ``tags`` is
    what the executive was told about the map, which a site may change under it (a new
    tag on the floor); the base itself refuses an unknown tag (FAILED) at run time."""
    args = {name: inp.value(name) for name in inp.kind.args}
    tag, known = args["tag"], checker.profile.tags
    if known is not None and isinstance(tag, int) and tag not in known:
        val = inp.vals["tag"]
        shown = ", ".join(str(t) for t in sorted(known)) or "none"
        checker.warning(
            val.where,
            f"{inp.path}.tag",
            f"{inp.leaf_name(args)!r}: tag {tag} is not on the robot's map (the tags of "
            f"profile {checker.profile.name}: {shown}){val.note}",
        )
    return args


class NavigateToTag(RobotLeaf):
    """MOVE_TO_TAG ``tag`` with absolute heading ``theta``.

    Reads the snapshot's ``base``.
    """

    kinds = (
        LeafKind(
            name="navigate_to_tag",
            doc="Sends the wheeled base to a tag (MOVE_TO_TAG) and waits for COMPLETED.",
            fields=(
                NAME,
                Field(
                    "tag", FieldType.TAG, "The tag id (target_id).", required=True, ge=0, le=MAX_TAG
                ),
                Field(
                    "theta",
                    FieldType.NUMBER,
                    "Absolute heading at the tag, rad.",
                    default=0.0,
                    ge=-math.pi,
                    le=math.pi,
                ),
                timeout("the base to arrive"),
            ),
            waits=True,
            args=("tag", "theta", "timeout"),
            requires="navigation",
            drives=("the base",),
            check=_check_navigate,
            build=lambda leaf: NavigateToTag(
                int(leaf.args["tag"]),
                float(leaf.args.get("theta") or 0.0),
                name=leaf.name,
                timeout=float(leaf.args["timeout"]),
            ),
            label=lambda a: f"Navigate to tag {show(a.get('tag'))}",
        ),
    )

    def __init__(
        self, tag: int, theta: float = 0.0, *, name: str | None = None, timeout: float = 60.0
    ) -> None:
        super().__init__(name or f"Navigate to tag {tag}", timeout)
        self.tag = tag
        self.theta = theta
        self.phase = Phase.ACCEPTING
        self._sent_at = 0.0
        self._command_id = -1
        self._shown_before: tuple[NavStatus, int] | None = None  # (status, task id)

    def _fresh(self) -> tuple[bool, NavStatus, int] | None:
        """(tasking, navigation status, task id) from a base state newer than our last
        command."""
        base = self.robot.base
        if base is None or base.received < self._sent_at:
            return None
        b = base.sample
        return b.tasking, b.status, b.task_id

    def _move(self) -> None:
        base = self.robot.base
        self._shown_before = None if base is None else (base.sample.status, base.sample.task_id)
        self._command_id = self.ctx.commands.go_to_tag(self.tag, self.theta)
        self._sent_at = self.ctx.clock()
        self.phase = Phase.ACCEPTING

    def _refused(self, nav: NavStatus, task_id: int) -> bool:
        """A FAILED while waiting for acceptance: ours, not the previous task's lingering."""
        return nav is NavStatus.FAILED and (
            task_id == self._command_id or self._shown_before != (NavStatus.FAILED, task_id)
        )

    def start(self) -> None:
        self._sent_at = self.started_at
        base = self.robot.base
        if base is not None and base.sample.busy:
            self.ctx.commands.cancel_base()
            self._sent_at = self.ctx.clock()
            self.phase = Phase.CANCELING
        else:
            self._move()

    def poll(self) -> Status:
        fresh = self._fresh()
        self.feedback_message = self.phase.value
        if fresh is None:
            return Status.RUNNING
        tasking, nav, task_id = fresh
        busy = tasking or nav in BUSY
        if self.phase is Phase.CANCELING:
            if not busy:
                self._move()
            return Status.RUNNING
        if self.phase is Phase.ACCEPTING:
            if busy:
                self.phase = Phase.RUNNING
            elif self._refused(nav, task_id):
                return self.fail("amr_failed", f"the base refused the task to tag {self.tag}")
            return Status.RUNNING
        if nav is NavStatus.COMPLETED:
            return Status.SUCCESS
        if nav is NavStatus.FAILED:
            return self.fail("amr_failed", f"navigation to tag {self.tag} failed")
        if nav is NavStatus.CANCELED:
            return self.fail(
                "amr_canceled", f"navigation to tag {self.tag} was canceled by someone else"
            )
        return Status.RUNNING

    def timeout_message(self) -> str:
        return f"tag {self.tag} not reached within {self.timeout} s ({self.phase.value})"

    def abort(self) -> None:
        if self.phase is not Phase.CANCELING:
            self.ctx.commands.cancel_base()
