"""The GRX's adapter: ``open(profile)`` opens a zenoh session on its "User" API and gives
the seam's ports (``GrxAdapter``).

The interface variant is the schema (``seed`` or ``m4``). There is no joint stream, no
control authority and no reflex: the safe stop is zero axes, then the profile's safe task.

Motion (``motion``): the robot reports its task and whether it is in process, nothing about
the axes it walks on, and it keeps the last axes it received (stopping is the sender's job).
So a continuous task (``continuous_tasks``: walk) in process is motion unless the newest
axes known here, the ones this adapter sent or the ones it saw on grx/client from anyone,
are zero. After a restart none are known: a robot found walking may be walking on whatever
a dead instance last sent, so ``make_safe_now`` sends zero axes as soon as the adapter is
open, and ``make_safe``, once no other controller is on the domain, the safe task.

The session may be the in-process stand-in of simulated time (``executive.wire.zenoh_loop``,
``executive.robots.grx.lockstep``): everything is the same, on the loop's simulated clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog
import zenoh

from executive.logs import RateLimitedLog
from executive.robots.grx import interface as wire
from executive.robots.grx.commands import GrxCommands
from executive.robots.grx.interface import check_interface
from executive.robots.grx.settings import GrxSettings, settings_of
from executive.robots.grx.state import GrxState
from executive.seam.ports import Motion, RobotSnapshot, SafetyEvent, Stamped, TaskMotion, Velocity
from executive.seam.profile import RobotProfile
from executive.wire.zenoh_loop import LoopSession, ZenohLoop
from executive.wire.zenoh_session import ConfigSource, close_session, load_config, open_session

log = structlog.get_logger(__name__)
_errors = RateLimitedLog(log)  # first at once, then one line per interval with a count


class JoystickLatch:
    """``ports.Reflex`` for the GRX: the reset frees the joystick the safe stop latched."""

    def __init__(self, commands: GrxCommands) -> None:
        self.commands = commands

    def reset(self) -> None:
        self.commands.unlatch()


class GrxAdapter:
    """The GRX on one zenoh session (the executive's side of the User API)."""

    name = "grx"
    streams = ()
    command_topics: frozenset[str] = (
        frozenset()
    )  # not DDS: executive.service.peers has nothing to watch

    def __init__(
        self, profile: RobotProfile, session: zenoh.Session, settings: GrxSettings
    ) -> None:
        self.profile = profile
        self.settings = settings
        self.schema = wire.schema(settings.schema)
        self.interface_name = self.schema.name
        self.capabilities = profile.capabilities
        self._session = session
        self._callbacks: list[SafetyEvent] = []
        self._lock = threading.Lock()
        self.state = GrxState(
            self.schema,
            self._problem,
            joints=len(profile.topics.get("robot", ())),
            layout={j.name: (j.topic, j.index) for j in profile.joints.values()},
        )
        tasks = {name: s.id for name, s in profile.fsm.items()}
        self.commands = GrxCommands(session, self.schema, settings, tasks)
        self._task_names = {s.id: name for name, s in profile.fsm.items()}
        self._seen_sticks: dict[str, list[float]] = {}  # the axes last seen on grx/client
        self._seen: Stamped[Velocity] | None = None
        self._subscribers = [
            session.declare_subscriber(wire.server_key(c), self._receiver(c))
            for c in wire.CATEGORIES
        ]
        # the joystick key as the robot hears it: our puts and any other client's
        self._subscribers.append(session.declare_subscriber(wire.client_key("grx"), self._on_axes))
        self._closed = False
        if isinstance(session, LoopSession):  # simulated time: maps stamped on its clock
            self.state.clock = session.loop.clock

    def _receiver(self, category: str) -> Callable[[zenoh.Sample], None]:
        """zenoh's callback for one category. Nothing raises through it (zenoh would print
        a traceback to stderr and go on): a failure to read a map is that source's
        undecodable sample, a fault on a safety source."""

        def receive(sample: zenoh.Sample) -> None:
            try:
                self.state.receive(category, sample.payload.to_bytes())
            except Exception as e:  # noqa: BLE001 - a middleware callback: never raise
                self._failed("reading a map", category, e)
                try:
                    self.state.fail(category, f"{type(e).__name__}: {e}")
                except Exception as again:  # noqa: BLE001
                    self._failed("marking a map undecodable", category, again)

        return receive

    def _on_axes(self, sample: zenoh.Sample) -> None:
        """zenoh's callback for a map on grx/client: the axes in it are what the robot now
        walks on (it keeps each stick until told otherwise). Never raises: a map we cannot
        read is counted and logged, the axes seen stay as they were."""
        try:
            fields = wire.decode(sample.payload.to_bytes())
            sticks = {
                key: [float(v) for v in fields[key]]
                for key in (wire.AXIS_LEFT, wire.AXIS_RIGHT)
                if isinstance(fields.get(key), list | tuple) and len(fields[key]) == 2
            }
            if not sticks:
                return
            with self._lock:
                self._seen_sticks.update(sticks)
                left = self._seen_sticks.get(wire.AXIS_LEFT, [0.0, 0.0])
                right = self._seen_sticks.get(wire.AXIS_RIGHT, [0.0, 0.0])
                self._seen = Stamped(
                    Velocity(*self.settings.rates(left, right)), self.state.clock()
                )
        except Exception as e:  # noqa: BLE001 - a middleware callback: never raise
            self._failed("reading the axes seen", "grx", e)

    def _problem(self, category: str, code: str, message: str) -> None:
        """From the receiving thread: an undecodable map on a safety source, an e-stop or a
        new error code goes to the fast path. Each callback is called whatever an earlier
        one did: one that raises must not keep the next from holding."""
        if code == "undecodable" and category not in self.profile.safety_sources:
            return
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(code, message)
            except Exception as e:  # noqa: BLE001 - on zenoh's thread: never raise
                self._failed("a safety callback", category, e)

    def _failed(self, what: str, category: str, e: Exception) -> None:
        _errors.log(
            "error",
            "grx callback failed",
            key=what,
            what=what,
            key_expr=wire.server_key(category),
            error=f"{type(e).__name__}: {e}",
        )

    # -- ports.RobotAdapter ------------------------------------------------------------------

    def snapshot(self) -> RobotSnapshot:
        return self.state.snapshot()

    def wire_mismatches(self) -> list[str] | None:
        """Schemaless maps announce no type; a wrong field shows as undecodable instead."""
        return None

    def on_safety_event(self, callback: SafetyEvent) -> None:
        with self._lock:
            self._callbacks.append(callback)

    def safe_stop(self) -> None:
        """Zero axes (the stream ends, latched at zero until the reset), then the profile's
        safe task unless the robot is in a passive task, where the safe task would energise
        it. Never raises (it runs on zenoh's thread from the fast path): a step that fails
        is logged and the next one is still sent."""
        try:
            self.commands.stop(latch=True)
        except Exception as e:  # noqa: BLE001
            _errors.log("error", "grx safe stop: zero axes failed", error=f"{e!r}")
        try:
            tid = self._safe_task()
            if tid is not None:
                self.commands.run_task(tid)
        except Exception as e:  # noqa: BLE001
            _errors.log("error", "grx safe stop: the safe task failed", error=f"{e!r}")

    def _safe_task(self) -> int | None:
        name = self.settings.safe_task
        if name is None or name not in self.profile.fsm:
            return None
        passive = {
            self.profile.fsm[n].id for n in self.settings.passive_tasks if n in self.profile.fsm
        }
        fsm = self.state.snapshot().fsm
        if fsm is not None and fsm.sample in passive:
            return None
        return self.profile.fsm[name].id

    def motion(self) -> Motion:
        """The task the robot reports and whether it walks: a continuous task in process
        drives the robot on the newest axes known here (sent or seen), or on unknown ones."""
        snap = self.state.snapshot()
        with self._lock:
            seen = self._seen
        sent = self.commands.last_sent
        if snap.task is None:
            return Motion(None, (), None, sent, seen)
        tid, in_process = snap.task.sample
        name = self._task_names.get(tid)
        drives = name is not None and name in self.settings.continuous_tasks
        task = Stamped(TaskMotion(tid, name, in_process, drives), snap.task.received)
        label = f"task {name or 'unnamed'} ({tid})"
        known = [v for v in (sent, seen) if v is not None]
        axes = max(known, key=lambda v: v.received) if known else None
        if drives and in_process:
            if axes is None:
                why = (
                    f"{label} in process: it walks on the last axes it was sent, which the "
                    "robot does not report and this instance did not send"
                )
                return Motion(True, (why,), task, sent, seen)
            v = axes.sample
            if v.zero:
                return Motion(False, (), task, sent, seen)
            why = (
                f"{label} in process, axes forward {v.forward:+.2f} lateral {v.lateral:+.2f} "
                f"yaw {v.yaw:+.2f}"
            )
            return Motion(True, (why,), task, sent, seen)
        if in_process:
            return Motion(True, (f"{label} in process",), task, sent, seen)
        return Motion(False, (), task, sent, seen)

    def leftovers(self) -> tuple[str, ...] | None:
        """A task the robot is still running; None until the robot's task map has been heard.

        Judged on the task alone, not on the axes: at start this instance has walked nothing,
        and the zero axes it sends at once (``make_safe_now``) stop a walk without ending the
        task a previous controller left it in (the safe task, ``make_safe``, does)."""
        motion = self.motion()
        if motion.task is None:
            return None
        task = motion.task.sample
        if not task.in_process:
            return ()
        label = f"task {task.name or 'unnamed'} ({task.id}) in process"
        if task.drives:
            return (
                f"{label}: it walks on the last axes it was sent, which the robot does not "
                "report (zero axes are sent at start)",
            )
        return (label,)

    def make_safe_now(self) -> tuple[str, ...]:
        """Zero axes, at once on start: the robot keeps the last axes it received and cannot
        say which, so a walk a dead instance left goes on (and a later walk task would set
        off on them). Zero axes only stop: if another executive is walking the robot, its
        stream puts its own axes again at its next period, so nothing is taken from it."""
        self.commands.stop()
        return (
            "zero axes sent (the robot keeps the last axes it received and does not report them)",
        )

    def make_safe(self) -> tuple[str, ...]:
        """The profile's safe task if the robot is in a task in process or a driving one
        (never from a passive task, never over a robot at rest: the safe task stands a robot
        up). Only once this executive is the robot's one controller: the safe task ends
        whatever task another controller runs. Zero axes went out before (``make_safe_now``)."""
        motion = self.motion()
        done: list[str] = []
        task = motion.task.sample if motion.task is not None else None
        safe = self._safe_task()
        if task is not None and (task.in_process or task.drives) and safe not in (None, task.id):
            assert safe is not None
            self.commands.run_task(safe)
            done.append(f"safe task {self.settings.safe_task} ({safe}) sent")
        return tuple(done)

    def install_reflex(self, streamer: Any, on_trip: Callable[[Any], None]) -> JoystickLatch:
        """No native e-stop reflex (the robot's own e-stop, m4, acts on the robot). What the
        executive's reset clears is the joystick's latch at zero after a safe stop."""
        return JoystickLatch(self.commands)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.commands.close()
        finally:
            close_session(self._session)


def open(  # the name executive.seam.registry.open_adapter calls
    profile: RobotProfile,
    *,
    zenoh_config: ConfigSource = None,
    zenoh_overrides: Mapping[str, str] | Iterable[str] = (),
    interface: str | None = None,
    settings: GrxSettings | None = None,
    participant: object = None,
    **_: Any,
) -> GrxAdapter:
    """The GRX adapter for ``profile`` on a new zenoh session from ``zenoh_config`` (a JSON5
    file's path, as the service config's ``zenoh_config:`` gives it, a ``zenoh.Config``, or
    None: the shipped loopback config) with ``zenoh_overrides`` applied. The settings are
    the profile's ``grx:`` options unless given; ``interface`` picks the schema (``seed``,
    ``m4``) over theirs. A ``participant`` that is the in-process zenoh of simulated time
    (``ZenohLoop``) is where the session opens instead; other keyword arguments (a DDS
    participant...) are not the GRX's."""
    settings = settings or settings_of(profile)
    if interface is not None:
        if (why := check_interface(interface)) is not None:
            raise ValueError(why)
        settings = replace(settings, schema=interface)
    if isinstance(participant, ZenohLoop):
        session: Any = participant.open()  # what of zenoh.Session the adapter uses
        return GrxAdapter(profile, session, settings)
    config = load_config(
        Path(zenoh_config) if isinstance(zenoh_config, str) else zenoh_config, zenoh_overrides
    )
    return GrxAdapter(profile, open_session(config), settings)
