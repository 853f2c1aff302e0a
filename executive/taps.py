"""Taps on what the executive sends: one-shot commands and the motion streamer's publishes.

A run's recording (``executive.runchannels``) must see every command that left, without
being in the way of any. Both taps tell their listeners *after* the command went out, on
the thread that sent it (the tick thread, the motion streamer, or CycloneDDS's receive
thread for the e-stop fast path's CANCEL_TASK), so a listener must only queue: it runs
inside the safety reaction and under the streamer's lock.

A listener that raises is counted and otherwise ignored: a recording must never be the
reason a command was not sent, nor the reason the next listener did not hear of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behaviours.context import RobotCommands
from executive.motion.streamer import MotionStreamer, PublishHook
from executive.motion.trajectory import FloatArray

# (command name, its arguments, what it returned: a message or command id, or None)
CommandListener = Callable[[str, dict[str, Any], int | None], None]


class CommandTap:
    """``RobotCommands`` that forwards every call to ``inner`` and then tells ``listeners``.

    Wrapped around ``DdsCommands`` at assembly (``Runtime.build``), so every one-shot
    command (the leaves', the executive's release, the safety reaction's cancel) passes it.
    """

    def __init__(self, inner: RobotCommands) -> None:
        self.inner = inner
        self.listeners: list[CommandListener] = []
        self.listener_errors = 0

    def _tell(self, command: str, args: dict[str, Any], result: int | None) -> None:
        for listener in self.listeners:
            try:
                listener(command, args, result)
            except Exception:  # noqa: BLE001 - the command has gone out; nothing may undo that
                self.listener_errors += 1

    def switch_upper_control(self, on: bool) -> None:
        self.inner.switch_upper_control(on)
        self._tell("switch_upper_control", {"on": on}, None)

    def set_fsm(self, fsm_id: int) -> None:
        self.inner.set_fsm(fsm_id)
        self._tell("set_fsm", {"fsm_id": fsm_id}, None)

    def clear_errors(self) -> int:
        msg_id = self.inner.clear_errors()
        self._tell("clear_errors", {}, msg_id)
        return msg_id

    def amr(
        self,
        command: str,
        *,
        target_id: int = 0,
        theta: float = 0.0,
        linear_vel: float = 0.0,
        angular_vel: float = 0.0,
    ) -> int:
        command_id = self.inner.amr(
            command,
            target_id=target_id,
            theta=theta,
            linear_vel=linear_vel,
            angular_vel=angular_vel,
        )
        args = {
            "command": command,
            "target_id": target_id,
            "theta": theta,
            "linear_vel": linear_vel,
            "angular_vel": angular_vel,
        }
        self._tell("amr", args, command_id)
        return command_id


def chain_publish(streamer: MotionStreamer, hook: PublishHook) -> None:
    """Add ``hook`` to the streamer's single ``on_publish`` attribute, keeping whoever is
    there (a test's recorder, a benchmark's probe): both hear every publish, theirs first."""
    previous = streamer.on_publish
    if previous is None:
        streamer.on_publish = hook
        return

    def both(topic: str, q: FloatArray, held: bool) -> None:
        previous(topic, q, held)
        hook(topic, q, held)

    streamer.on_publish = both
