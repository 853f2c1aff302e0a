"""The safety watchdog: triggers, the latch, and the e-stop fast path (DESIGN.md section 4).

Three parts, so the logic can be proved apart from threads and trees:

- ``SafetyMonitor`` decides. From a snapshot of robot state it lists the causes present
  now; ``trip`` latches a SAFE-STOP with the first reasons; ``reset`` clears the latch
  only while no cause is present. Stops only escalate: further causes are added to a
  latched stop, never replace it. Thread-safe, clock injected.
- ``SafetyReaction`` acts, in the order DESIGN.md fixes: hold motion, cancel the base
  (and stop remote driving), then the tree preempts the mission.
- ``EstopFastPath`` is what the robot adapter calls on its receiving thread
  (``RobotAdapter.on_safety_event``): the moment an e-stop arrives it holds and stops the
  robot (the adapter's ``safe_stop``) without waiting for the next tick. The watchdog
  behaviour reports it on the next tick. Adapters also call it for a sample on any safety
  source that does not decode: a garbled e-stop sample may be an e-stop, and the state we
  hold for that source is no longer the robot's.

Everything here reads the robot-neutral ``RobotSnapshot`` (``executive.seam.ports``):
no robot's topic or field name appears in this module.

Silence is a fault too. Each safety source (the profile's ``safety_sources``) has a
maximum age. While a mission runs, a source older than that (or never heard) trips
``stale_state``; while idle, ``not_ready`` names the silent sources and the executive
refuses to start a mission or to reset until every one is fresh.

A silence only counts while the executive itself was running to hear: after the executive
stalled (stopped, starved, a GIL held: no evaluation for ``stall_s`` or more), a sample's
age says nothing about the robot, whose samples wait in the readers' queues meanwhile. So
ages count from the end of such a stall (``resumed``): a robot that kept publishing is
fresh again within milliseconds, one that went silent trips ``stale_state`` a limit later.
The stall itself is the runtime's ``internal`` cause (``executive.core.runtime``).

This software is defence in depth; the firmware e-stop remains the safety function.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import py_trees
import structlog
from py_trees.common import Access, Status

from behaviours.state import SNAPSHOT_KEY
from behaviours.state import snapshot as read_snapshot
from executive.seam.ports import RobotSnapshot

log = structlog.get_logger(__name__)


# s without a tick (an evaluation) after which the executive has stalled: SAFE_STOP internal
# (the runtime's supervisor), and the sources' ages count from the end of the stall
STALL_S = 1.0


@dataclass(frozen=True)
class SafetyConfig:
    """Thresholds; every one is a config key under ``safety``."""

    # s: the age beyond which a safety source is silent; None: each source's from the profile
    max_state_age: float | None = None
    battery_critical: float = 10.0  # percent: trip below
    battery_hysteresis: float = 5.0  # percent: the cause persists until above critical + this
    servo_errors: bool = True


@dataclass(frozen=True)
class Cause:
    """One reason for a SAFE-STOP: a stable code and a human message."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class Activity:
    """What the executive is doing, which decides some triggers."""

    mission_running: bool = False
    motion_engaged: bool = False  # a joint stream is being published
    control_confirmed: bool = False  # the mission holds control of the robot (seen confirmed)


@dataclass(frozen=True)
class Silence:
    """A safety source older than its maximum age (``age`` None: never received)."""

    topic: str  # the source's key (``emergency_state``)
    age: float | None
    limit: float
    name: str = ""  # on the wire (``rt/emergency/state``): what an operator can look up

    def __str__(self) -> str:
        name = self.name or self.topic
        if self.age is None:
            return f"{name} never received"
        return f"{name} silent for {self.age:.2f} s (limit {self.limit:g} s)"


class SafetyMonitor:
    """Evaluates triggers and holds the latch.

    ``max_age``: the safety sources (the robot's state sources the triggers read) and how
    old each may be, from the profile; a source not listed is not checked for silence.
    """

    def __init__(
        self,
        config: SafetyConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_age: Mapping[str, float] | None = None,
        stall_s: float = STALL_S,
    ) -> None:
        self.config = config or SafetyConfig()
        self.clock = clock
        self.stall_s = stall_s
        self._evaluated_at: float | None = None  # the last evaluate (the tick thread's)
        self._awake_since = -math.inf  # the end of the executive's last stall
        ages = {} if max_age is None else max_age
        override = self.config.max_state_age
        self.max_age: dict[str, float] = {
            t: age if override is None else override for t, age in ages.items()
        }
        self._lock = threading.Lock()
        self._latched: list[Cause] = []
        self._latched_at: float | None = None
        self._battery_low = False
        self.trips = 0
        # called (on the latching thread, after the latch) when a SAFE-STOP latches: the
        # runtime wakes the tick loop, so the state and the status follow at once
        self.on_latch: Callable[[], None] | None = None

    # -- evaluation --------------------------------------------------------------------

    def evaluate(self, snap: RobotSnapshot, activity: Activity) -> list[Cause]:
        """The causes present now. Pure apart from the battery hysteresis it remembers."""
        causes: list[Cause] = self.undecodable(snap)
        now = self.clock()
        if self._evaluated_at is not None and now - self._evaluated_at >= self.stall_s:
            self.resumed(now)  # no evaluation for that long: the executive itself stalled
        self._evaluated_at = now
        if snap.estop is not None and snap.estop.sample:
            causes.append(Cause("estop", f"emergency stop: {', '.join(snap.estop.sample)}"))
        if snap.alarms is not None:
            causes += [Cause("bms_alarm", alarm) for alarm in snap.alarms.sample]
        if snap.base is not None and snap.base.sample.estop_pressed:
            causes.append(Cause("amr_estop", "the base's emergency stop is pressed"))
        if self.config.servo_errors and snap.servo_errors is not None and snap.servo_errors.sample:
            causes.append(
                Cause("servo_error", f"servo error: {', '.join(snap.servo_errors.sample)}")
            )
        if activity.mission_running:
            causes += [
                Cause("stale_state", f"{why} while a mission runs")
                for why in self.silent(snap, now)
            ]
        if snap.battery is not None:
            level = snap.battery.sample
            limit = self.config.battery_critical + (
                self.config.battery_hysteresis if self._battery_low else 0.0
            )
            self._battery_low = level < limit
            if self._battery_low:
                causes.append(
                    Cause(
                        "battery_critical",
                        f"battery at {level:g} % (critical {self.config.battery_critical:g} %)",
                    )
                )
        if activity.control_confirmed and snap.control is not None and not snap.control.sample:
            causes.append(Cause("control_revoked", "control was revoked by someone else"))
        return causes

    def resumed(self, at: float) -> None:
        """The executive ran again at ``at`` after a stall: sources' ages count from then."""
        with self._lock:
            self._awake_since = max(self._awake_since, at)

    def silent(self, snap: RobotSnapshot, now: float | None = None) -> list[Silence]:
        """Each safety source that is older than its maximum age, or was never heard; an
        age counts from the end of the executive's own last stall at the earliest."""
        now = self.clock() if now is None else now
        awake = self._awake_since
        out = []
        for key, limit in self.max_age.items():
            source = snap.sources.get(key)
            received = None if source is None else source.received
            name = key if source is None else source.name
            if received is not None and now - max(received, awake) <= limit:
                continue
            out.append(Silence(key, None if received is None else now - received, limit, name))
        return out

    def undecodable(self, snap: RobotSnapshot) -> list[Cause]:
        """A cause for each safety source whose newest sample could not be decoded."""
        return [
            Cause("undecodable", f"{s.health.topic}: undecodable sample ({s.health.last_error})")
            for key, s in snap.sources.items()
            if key in self.max_age and s.health.undecodable
        ]

    def not_ready(self, snap: RobotSnapshot) -> list[str]:
        """Why no mission may start and no reset be accepted now, though nothing trips:
        the robot's safety sources are silent or not understood."""
        return [str(x) for x in self.silent(snap)] + [c.message for c in self.undecodable(snap)]

    # -- the latch ---------------------------------------------------------------------

    @property
    def latched(self) -> bool:
        with self._lock:
            return bool(self._latched)

    @property
    def reasons(self) -> list[Cause]:
        with self._lock:
            return list(self._latched)

    def trip(self, causes: list[Cause]) -> bool:
        """Latch (or add to) a SAFE-STOP; True if this call latched it."""
        if not causes:
            return False
        with self._lock:
            first = not self._latched
            known = {c.code for c in self._latched}
            self._latched.extend(c for c in causes if c.code not in known)
            if first:
                self._latched_at = self.clock()
                self.trips += 1
        if first:
            log.error("safe stop", reasons=[str(c) for c in causes])
            if self.on_latch is not None:
                self.on_latch()
        return first

    def reset(self, present: list[Cause]) -> tuple[bool, str]:
        """Clear the latch if no cause is present; the answer says why not otherwise."""
        with self._lock:
            if not self._latched:
                return True, "not latched"
            if present:
                return False, "refused: cause still present: " + "; ".join(map(str, present))
            self._latched.clear()
            self._latched_at = None
        log.warning("safe stop reset")
        return True, "reset; the executive is idle"


class Hold(Protocol):
    """``MotionStreamer.hold``: True if this call started the hold; ``quiet``: do not log."""

    def __call__(self, reason: str, *, quiet: bool = ...) -> bool: ...


class SafetyReaction:
    """What a trip does, in DESIGN.md's order: hold, the robot's safe stop (the Atom:
    cancel the base's task and remote driving), then the tree preempts the mission.

    On the e-stop fast path this runs on the adapter's receiving thread, right after a
    sleep, when every line of Python costs ten times what it costs warm: the hold and
    the safe stop go out first, and only then is the hold logged.
    """

    def __init__(self, hold: Hold, safe_stop: Callable[[], object]) -> None:
        self.hold = hold
        self.safe_stop = safe_stop

    def __call__(self, reason: str) -> None:
        first = self.hold(reason, quiet=True)
        try:
            self.safe_stop()
        finally:
            if first:
                log.warning("motion held", reason=reason)


class EstopFastPath:
    """The adapter's safety event (``on_safety_event``): reacts and trips without waiting
    for a tick, on the thread that received it.

    ``trip_lock`` (the executive's): held from the hold to the latch, so that a mission
    start or a reset, which judge "not latched" and then release the hold, cannot release
    between this hold and this latch (latched, not held). Uncontended but for that moment.
    """

    def __init__(
        self,
        monitor: SafetyMonitor,
        react: Callable[[str], None],
        trip_lock: threading.RLock | None = None,
    ) -> None:
        self.monitor = monitor
        self.react = react
        self.trip_lock = trip_lock or threading.RLock()

    def __call__(self, code: str, message: str) -> None:
        with self.trip_lock:
            try:
                self.react(message)  # hold first: nothing else may delay it
            finally:
                self.monitor.trip([Cause(code, message)])


class SafetyWatchdog(py_trees.behaviour.Behaviour):
    """Top-priority branch of the core tree's selector.

    FAILURE while all is clear (the selector moves on to the mission slot); RUNNING while
    a SAFE-STOP is latched, which preempts the mission slot below it. A mission is built
    under the slot, so it cannot remove, reorder or weaken this node.

    Blackboard: reads ``/robot/snapshot``.
    """

    def __init__(
        self,
        monitor: SafetyMonitor,
        react: Callable[[str], None],
        activity: Callable[[], Activity],
        name: str = "Safety Watchdog",
    ) -> None:
        super().__init__(name)
        self.monitor = monitor
        self.react = react
        self.activity = activity
        self.present: list[Cause] = []
        self.bb = self.attach_blackboard_client(name=name)
        self.bb.register_key(SNAPSHOT_KEY, access=Access.READ)

    def snapshot(self) -> RobotSnapshot:
        return read_snapshot(self.bb)

    def update(self) -> Status:
        self.present = self.monitor.evaluate(self.snapshot(), self.activity())
        if self.present:
            try:
                if not self.monitor.latched:  # (the fast path may have latched already)
                    # Hold and cancel first, then latch, as the fast path does: the latch
                    # is stamped and logged only once no motion command can leave.
                    self.react("; ".join(map(str, self.present)))
            finally:
                self.monitor.trip(self.present)  # latches, or adds causes to the latch
        if self.monitor.latched:
            self.feedback_message = "SAFE_STOP: " + "; ".join(map(str, self.monitor.reasons))
            return Status.RUNNING
        self.feedback_message = "clear"
        return Status.FAILURE
