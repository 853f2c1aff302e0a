"""The GRX's commands: tasks by id (two puts), components, and the virtual joystick stream.

A task request is ``{"robot_task_command": TID}`` then ``{"flag_task_command_update": true}``
on task/client, as the seed prescribes; the robot confirms with ``robot_task_state``. Both
puts go out reliably and blocking (``CongestionControl.BLOCK``) on one publisher, so zenoh
keeps their order and never drops the command while delivering its flag (a lone flag would
re-apply whatever command the robot last stored).

Walking is the virtual joystick on grx/client, streamed by one thread at ``joystick_hz``
while a velocity is set: the vendor's publisher settings (REAL_TIME, DROP, best effort),
since a late axis sample is worth nothing. The stream is a dead man: without a renewal
within its ``ttl`` it sends zero axes and stops. Zero axes also go out, reliably, on
``set_velocity(0, 0, 0)``, on ``stop`` and on close. Every joystick put happens under one
lock, so nothing the thread read before a stop can reach the wire after the stop's zeros.

``stop(latch=True)`` (the adapter's safe stop) also latches the stick at zero: a leaf
ticked between a trip and the tree's preemption of it cannot start the stream again.
``unlatch`` (the executive's reset) frees it.

On the in-process zenoh of simulated time (``executive.wire.zenoh_loop``) there is no
stream thread: the loop's driver runs each period of the stream on the simulated clock,
so the axes after a ``set_velocity`` go out at the next period rather than at once.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import zenoh

from executive.robots.grx import interface as wire
from executive.robots.grx.settings import GrxSettings
from executive.seam.ports import NoCommands, Stamped, Velocity
from executive.wire.zenoh_loop import LoopSession

HEARTBEAT_S = 0.5  # s between host heartbeats (m4: the robot e-stops after 6 s without)
ZERO_REPEATS = 3  # zero-axis maps after a walk: one lost best-effort sample cannot leave it walking


class GrxCommands(NoCommands):
    """``RobotCommands`` over the GRX's client keys (control and navigation: NoCommands)."""

    robot = "the Fourier GRX"

    def __init__(
        self,
        session: zenoh.Session,
        schema: wire.Schema,
        settings: GrxSettings,
        tasks: Mapping[str, int],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.schema = schema
        self.settings = settings
        self.tasks = dict(tasks)
        self.clock = clock
        reliable: dict[str, Any] = {
            "congestion_control": zenoh.CongestionControl.BLOCK,
            "reliability": zenoh.Reliability.RELIABLE,
            "priority": zenoh.Priority.REAL_TIME,
        }
        self._task = session.declare_publisher(wire.client_key("task"), **reliable)
        channel = settings.component_channel
        self._component = (
            self._task
            if channel == "task"
            else session.declare_publisher(wire.client_key(channel), **reliable)
        )
        self._joystick = session.declare_publisher(
            wire.client_key("grx"),
            congestion_control=zenoh.CongestionControl.DROP,
            reliability=zenoh.Reliability.BEST_EFFORT,
            priority=zenoh.Priority.REAL_TIME,
        )
        self._session = session
        self._heartbeat = (
            session.declare_publisher(wire.client_key(schema.host_heartbeat[0]))
            if schema.host_heartbeat is not None
            else None
        )
        self._task_lock = threading.Lock()  # command and flag of one request stay together
        self._stick = threading.Condition()
        self._target = (0.0, 0.0, 0.0)
        self._until = 0.0  # monotonic: the dead man's deadline
        self._zeros_due = 0  # zero-axis maps still to stream after a walk
        self._closed = False
        self.latched = False  # zero axes only, until unlatch (a trip until the reset)
        self.sent_axes = 0  # joystick maps put (for status and tests)
        self.last_sent: Stamped[Velocity] | None = None  # the rates of the last axes put
        self._beats = 0
        self._next_heartbeat = 0.0
        self._thread: threading.Thread | None = None
        if isinstance(session, LoopSession):  # simulated time: the loop's clock and periods
            self.clock = session.loop.clock
            session.loop.every("grx-joystick", settings.joystick_hz, self._loop_period)
        else:
            self._thread = threading.Thread(target=self._stream, name="grx-joystick", daemon=True)
            self._thread.start()

    # -- ports.RobotCommands ----------------------------------------------------------------

    def set_fsm(self, fsm_id: int) -> None:
        self.run_task(fsm_id)

    def run_task(self, task_id: int, data: Mapping[str, Any] | None = None) -> None:
        """Task ``task_id`` (a TID): the command (with its data, if any), then the flag."""
        command: dict[str, Any] = {wire.TASK_COMMAND: int(task_id)}
        if data is not None:
            command[wire.TASK_COMMAND_DATA] = dict(data)
        with self._task_lock:
            self._task.put(wire.encode(command))
            self._task.put(wire.encode({wire.TASK_UPDATE: True}))

    def run_component(self, component_id: int, data: Mapping[str, Any] | None = None) -> None:
        """Component (module) ``component_id`` (a MID), the same two steps. The seed's server
        maps report no component state: nothing confirms it."""
        command: dict[str, Any] = {wire.COMPONENT_COMMAND: int(component_id)}
        if data is not None:
            command[wire.COMPONENT_COMMAND_DATA] = dict(data)
        with self._task_lock:
            self._component.put(wire.encode(command))
            self._component.put(wire.encode({wire.COMPONENT_UPDATE: True}))

    def clear_faults(self) -> int:
        """The profile's clear_fault task; its TID."""
        tid = self.tasks["clear_fault"]
        self.run_task(tid)
        return tid

    def set_velocity(self, vx: float, vy: float, yaw: float, ttl: float = 0.5) -> None:
        rates = tuple(min(max(float(r), -1.0), 1.0) for r in (vx, vy, yaw))
        if not all(math.isfinite(r) for r in rates):
            raise ValueError(f"velocity must be finite, got {(vx, vy, yaw)}")
        if not any(rates):
            self.stop()
            return
        with self._stick:
            if self.latched:
                return  # tripped: the safe stop's zeros stand until the reset
            self._target = rates  # type: ignore[assignment]
            self._until = self.clock() + max(ttl, 0.0)
            self._zeros_due = ZERO_REPEATS
            self._stick.notify()

    def stop(self, latch: bool = False) -> None:
        """Zero axes now, reliably, and end the stream (from any thread); with ``latch``,
        keep every later rate at zero until ``unlatch``."""
        with self._stick:
            self.latched = self.latched or latch
            self._target = (0.0, 0.0, 0.0)
            self._until = 0.0
            self._zeros_due = 0
            self._session.put(
                wire.client_key("grx"),
                wire.encode(self.settings.axes(0.0, 0.0, 0.0)),
                congestion_control=zenoh.CongestionControl.BLOCK,
                priority=zenoh.Priority.REAL_TIME,  # the stream's: one queue, zenoh keeps order
            )
            self.sent_axes += 1
            self.last_sent = Stamped(Velocity(0.0, 0.0, 0.0), self.clock())

    def unlatch(self) -> None:
        with self._stick:
            self.latched = False

    @property
    def streaming(self) -> bool:
        with self._stick:
            return self._until > self.clock()

    def close(self) -> None:
        if self._closed:
            return
        self.stop()
        with self._stick:
            self._closed = True
            self._stick.notify()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    # -- the stream thread -------------------------------------------------------------------

    def _stream(self) -> None:
        period = 1.0 / self.settings.joystick_hz
        deadline = self.clock()
        with self._stick:
            while not self._closed:
                if not self._period(self.clock()):
                    self._stick.wait()  # idle until a velocity is set or the adapter closes
                    deadline = self.clock()
                    continue
                deadline += period
                delay = deadline - self.clock()
                if delay < 0:
                    deadline = self.clock()  # overrun: no burst to catch up
                else:
                    self._stick.wait(delay)

    def _loop_period(self, now: float, periods: int) -> None:
        """One period, run by the in-process zenoh's driver (simulated time)."""
        with self._stick:
            if not self._closed:
                self._period(now)

    def _period(self, now: float) -> bool:
        """One period of the stream, under the stick's lock: the axes while a velocity is
        set, zeros after it, the host heartbeat when due; whether there is more to send."""
        if self._until > now:
            self._put_axes(self._target)
        elif self._zeros_due > 0:  # the dead man, or the end of a walk
            self._zeros_due -= 1
            self._put_axes((0.0, 0.0, 0.0))
        if self._heartbeat is not None and now >= self._next_heartbeat:
            self._beats += 1
            key = self.schema.host_heartbeat[1]  # type: ignore[index]
            self._heartbeat.put(wire.encode({key: self._beats}))
            self._next_heartbeat = now + HEARTBEAT_S
        return self._until > now or self._zeros_due > 0 or self._heartbeat is not None

    def _put_axes(self, rates: tuple[float, float, float]) -> None:
        self._joystick.put(wire.encode(self.settings.axes(*rates)))
        self.sent_axes += 1
        self.last_sent = Stamped(Velocity(*rates), self.clock())
