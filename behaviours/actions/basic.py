"""Leaves that touch no actuator: waiting, and writing to the run's status feed."""

from __future__ import annotations

from py_trees.common import Status

from behaviours.base import RobotLeaf


class Wait(RobotLeaf):
    """SUCCESS after ``seconds`` of the context's clock (never sleeps: the tree keeps ticking)."""

    def __init__(self, seconds: float, name: str | None = None) -> None:
        super().__init__(name or f"Wait {seconds:g} s")
        self.seconds = seconds

    def poll(self) -> Status:
        return Status.SUCCESS if self.elapsed() >= self.seconds else Status.RUNNING


class Log(RobotLeaf):
    """Append ``message`` to the run's status feed; SUCCESS."""

    def __init__(self, message: str, name: str = "Log") -> None:
        super().__init__(name)
        self.message = message

    def start(self) -> None:
        self.ctx.feed.append((self.ctx.clock(), self.message))
        self.feedback_message = self.message
