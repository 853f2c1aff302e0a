"""Leaves that touch no actuator: waiting, and writing to the run's status feed."""

from __future__ import annotations

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import MAX_TIMEOUT, NAME, Field, FieldType, show
from executive.language.leaf import LeafKind


class Wait(RobotLeaf):
    """SUCCESS after ``seconds`` of the context's clock (never sleeps: the tree keeps ticking)."""

    kinds = (
        LeafKind(
            name="wait",
            doc="Succeeds after some seconds (the tree keeps ticking).",
            fields=(
                NAME,
                Field(
                    "seconds", FieldType.NUMBER, "How long.", required=True, gt=0.0, le=MAX_TIMEOUT
                ),
            ),
            args=("seconds",),
            requires=None,
            build=lambda leaf: Wait(float(leaf.args["seconds"]), name=leaf.name),
            label=lambda a: f"Wait {show(a.get('seconds'))} s",
        ),
    )

    def __init__(self, seconds: float, name: str | None = None) -> None:
        super().__init__(name or f"Wait {seconds:g} s")
        self.seconds = seconds

    def poll(self) -> Status:
        return Status.SUCCESS if self.elapsed() >= self.seconds else Status.RUNNING

    def progress(self) -> tuple[float | None, float | None]:
        elapsed = self.elapsed()
        return min(1.0, max(0.0, elapsed / self.seconds)), max(0.0, self.seconds - elapsed)


class Log(RobotLeaf):
    """Append ``message`` to the run's status feed; SUCCESS."""

    kinds = (
        LeafKind(
            name="log",
            doc="Writes a message to the run's status feed and log; succeeds.",
            fields=(
                NAME,
                Field(
                    "message",
                    FieldType.STRING,
                    "Text; ${param} is replaced by the parameter's value.",
                    required=True,
                    min_length=1,
                    max_length=500,
                ),
            ),
            args=("message",),
            requires=None,
            build=lambda leaf: Log(str(leaf.args["message"]), name=leaf.name),
            label=lambda a: _log_label(str(a.get("message"))),
        ),
    )

    def __init__(self, message: str, name: str = "Log") -> None:
        super().__init__(name)
        self.message = message

    def start(self) -> None:
        self.ctx.feed.append((self.ctx.clock(), self.message))
        self.feedback_message = self.message


def _log_label(message: str) -> str:
    return f"Log: {message[:40]}{'...' if len(message) > 40 else ''}"
