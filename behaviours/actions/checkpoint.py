"""``checkpoint``: a point after which a mission may go on after a crash.

::

    - checkpoint:
        name: Cup in hand
        recover:            # optional: run only when a run is recovered from here
          sequence: [acquire_control: {timeout: 5}, set_fsm: {state: joint_control, timeout: 5}]

Ticked in a run, the leaf asks the run record (the service's ``Checkpoints``, found in
``RobotContext.extras["checkpoints"]``: ``executive.records.checkpoints``) to append its
line and fsync it, and stays RUNNING until the record's writer thread says the line is on
the disk: the tick thread never waits on a disk, and once the leaf has succeeded a crash
cannot lose it. If the line is not confirmed within ``SYNC_TIMEOUT_S`` (a disk stuck or
failing) the leaf still succeeds, saying in its feedback and the log that this checkpoint
was not recorded: the run records already hold that a failing disk is a problem shown in the
status, never a stop of the mission (a robot carrying a cup does not drop the delivery
for its disk); a crash after it recovers from the checkpoint before, if any.

``atom-executive recover RUN_ID`` builds the mission again with every node up to and
including the checkpoint skipped and its ``recover`` subtree run first
(``executive.mission.checkpoints``): the subtree is where the mission takes back what a
restart made safe (upper-body control, the FSM). The validator keeps checkpoints where
"go on from here" is defined: on a chain of ``memory: true`` sequences (and includes) from
the root, with names unique in the mission.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol

import structlog
from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import Field, FieldType
from executive.language.leaf import LeafKind

log = structlog.get_logger(__name__)

SINK = "checkpoints"  # the RobotContext.extras key (executive.records.checkpoints.SINK)
SYNC_TIMEOUT_S = 2.0  # the longest the leaf waits for its line to be fsync'd


class CheckpointSink(Protocol):
    """Where a checkpoint is recorded: the Future resolves once its line is on the disk."""

    def passed(self, name: str, node: str) -> Future[None]: ...


class Checkpoint(RobotLeaf):
    """Records the checkpoint durably in the run's record; SUCCESS once it is (or once it
    is known it could not be: see the module)."""

    kinds = (
        LeafKind(
            name="checkpoint",
            doc=(
                "A point after which the mission may go on after a crash "
                "(`atom-executive recover RUN_ID`); recorded durably when passed."
            ),
            fields=(
                Field(
                    "name",
                    FieldType.STRING,
                    "What holds from here (unique in the mission): shown by `recover`.",
                    required=True,
                    min_length=1,
                    max_length=80,
                    refs=False,
                ),
                Field(
                    "recover",
                    FieldType.NODE,
                    "Run only when a run is recovered from this checkpoint, before the rest: "
                    "take back what a restart made safe (control, the FSM, a pose).",
                ),
            ),
            args=("recover",),
            requires=None,
            build=lambda leaf: Checkpoint(leaf.name, leaf.path),
            label=lambda a: "Checkpoint",
        ),
    )

    def __init__(self, name: str, node: str = "") -> None:
        super().__init__(name)
        self.node = node  # the model's path of the leaf, for the record
        self._done: Future[None] | None = None

    def start(self) -> None:
        sink = self.ctx.extras.get(SINK)
        self._done = sink.passed(self.name, self.node) if sink is not None else None

    def poll(self) -> Status:
        done = self._done
        if done is None:
            self.feedback_message = "not recorded: this executive keeps no run records"
            return Status.SUCCESS
        if not done.done():
            if self.elapsed() < SYNC_TIMEOUT_S:
                return Status.RUNNING
            return self._not_recorded(f"not on the disk within {SYNC_TIMEOUT_S:g} s")
        error = done.exception()
        if error is not None:
            return self._not_recorded(str(error) or type(error).__name__)
        self.feedback_message = "recorded"
        return Status.SUCCESS

    def _not_recorded(self, why: str) -> Status:
        self.feedback_message = (
            f"checkpoint not recorded ({why}): a crash from here cannot go on from it"
        )
        log.warning("checkpoint not recorded", checkpoint=self.name, why=why)
        return Status.SUCCESS

    def abort(self) -> None:
        self._done = None
