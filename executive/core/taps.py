"""Taps on what the executive sends: one-shot commands and the motion streamer's publishes.

A run's recording (``executive.records.runchannels``) must see every command that left, without
being in the way of any. Both taps tell their listeners *after* the command went out, on
the thread that sent it (the tick thread, the motion streamer, or CycloneDDS's receive
thread for the e-stop fast path's CANCEL_TASK), so a listener must only queue: it runs
inside the safety reaction and under the streamer's lock.

A listener that raises is counted and otherwise ignored: a recording must never be the
reason a command was not sent, nor the reason the next listener did not hear of it.

The command tap passes through *every* verb of the commands it wraps, not only those of
``RobotCommands``: a robot's own verbs (the GRX's ``run_component``) are found by the
leaves with ``getattr`` on the context's commands, and a tap that hid one made the GRX's
shipped ``wave`` mission fail with "the robot has no component" (issue 25).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from executive.motion.streamer import MotionStreamer, PublishHook
from executive.motion.trajectory import FloatArray
from executive.seam.ports import RobotCommands

# (command name, its arguments, what it returned: a message or command id, or None)
CommandListener = Callable[[str, dict[str, Any], int | None], None]


class CommandTap:
    """``RobotCommands`` that forwards every call to ``inner`` and then tells ``listeners``.

    Wrapped around the robot adapter's commands at assembly (``Runtime.build``), so every one-shot
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

    def request_control(self, on: bool) -> None:
        self.inner.request_control(on)
        self._tell("request_control", {"on": on}, None)

    def set_fsm(self, fsm_id: int) -> None:
        self.inner.set_fsm(fsm_id)
        self._tell("set_fsm", {"fsm_id": fsm_id}, None)

    def clear_faults(self) -> int:
        ident = self.inner.clear_faults()
        self._tell("clear_faults", {}, ident)
        return ident

    def go_to_tag(self, tag: int, theta: float) -> int:
        ident = self.inner.go_to_tag(tag, theta)
        self._tell("go_to_tag", {"tag": tag, "theta": theta}, ident)
        return ident

    def cancel_base(self) -> int:
        ident = self.inner.cancel_base()
        self._tell("cancel_base", {}, ident)
        return ident

    def tapped_safe_stop(self, safe_stop: Callable[[], object]) -> Callable[[], None]:
        """The robot adapter's ``safe_stop`` (what a trip sends after the hold: the Atom's
        base cancel), told to the listeners as the one-shot ``safe_stop`` once it has gone."""

        def tapped() -> None:
            safe_stop()
            self._tell("safe_stop", {}, None)

        return tapped

    def set_velocity(self, vx: float, vy: float, yaw: float, ttl: float = 0.5) -> None:
        self.inner.set_velocity(vx, vy, yaw, ttl)
        self._tell("set_velocity", {"vx": vx, "vy": vy, "yaw": yaw, "ttl": ttl}, None)

    def run_task(self, task_id: int) -> None:
        self.inner.run_task(task_id)
        self._tell("run_task", {"task_id": task_id}, None)

    def __getattr__(self, name: str) -> Any:
        """Any other public verb of ``inner`` (a robot's own, beyond the ports), tapped the
        same way; what ``inner`` lacks stays missing (``AttributeError``), so a leaf's
        ``getattr(commands, verb, None)`` still tells a robot without it."""
        if name.startswith("_") or "inner" not in self.__dict__:
            raise AttributeError(name)  # private, or asked before __init__ (copy, pickle)
        verb = getattr(self.inner, name)
        if not callable(verb):
            return verb
        return self._tapped(name, verb)

    def _tapped(self, name: str, verb: Callable[..., Any]) -> Callable[..., Any]:
        try:
            signature: inspect.Signature | None = inspect.signature(verb)
        except (TypeError, ValueError):  # a builtin without one: arguments told by position
            signature = None

        def tapped(*args: Any, **kwargs: Any) -> Any:
            result = verb(*args, **kwargs)
            told: dict[str, Any]
            try:
                told = dict(signature.bind(*args, **kwargs).arguments) if signature else {}
            except TypeError:
                told = {}
            if not told and (args or kwargs):
                told = {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
            self._tell(name, told, result if isinstance(result, int) else None)
            return result

        tapped.__name__ = name
        tapped.__doc__ = verb.__doc__
        return tapped


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
