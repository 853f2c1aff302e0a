"""The safety watchdog: triggers, the latch, and the e-stop fast path (DESIGN.md section 4).

Three parts, so the logic can be proved apart from threads and trees:

- ``SafetyMonitor`` decides. From a snapshot of robot state it lists the causes present
  now; ``trip`` latches a SAFE-STOP with the first reasons; ``reset`` clears the latch
  only while no cause is present. Stops only escalate: further causes are added to a
  latched stop, never replace it. Thread-safe, clock injected.
- ``SafetyReaction`` acts, in the order DESIGN.md fixes: hold motion, cancel the base
  (and stop remote driving), then the tree preempts the mission.
- ``EstopFastPath`` is a DDS-listener callback on ``rt/emergency/state``: the moment an
  e-stop sample arrives it holds and cancels on CycloneDDS's receive thread, without
  waiting for the next tick. The watchdog behaviour reports it on the next tick. It is
  also called for a sample on any safety source that does not decode: a garbled e-stop
  sample may be an e-stop, and the state we hold for that topic is no longer the robot's.

Silence is a fault too. Each safety source (the profile's ``safety_sources``) has a
maximum age. While a mission runs, a source older than that (or never heard) trips
``stale_state``; while idle, ``not_ready`` names the silent sources and the executive
refuses to start a mission or to reset until every one is fresh.

This software is defence in depth; the firmware e-stop remains the safety function.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import py_trees
import structlog
from py_trees.common import Access, Status

from behaviours.context import RobotCommands
from behaviours.state import HEALTH_KEY, key, latest
from executive.profile import STATE_TOPICS
from executive.robot_io import TOPICS, ReaderHealth, Stamped

log = structlog.get_logger(__name__)


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
    control_confirmed: bool = False  # the mission holds upper-body control (seen confirmed)


def _flags(record: Any) -> list[str]:
    """Names of the true boolean fields of an EmergencyState_ record."""
    return [n for n in record.dtype.names if bool(record[n])]


DEFAULT_MAX_AGE = 0.5  # s, for a safety source the profile does not give an age


@dataclass(frozen=True)
class Silence:
    """A safety source older than its maximum age (``age`` None: never received)."""

    topic: str
    age: float | None
    limit: float

    def __str__(self) -> str:
        if self.age is None:
            return f"{topic_name(self.topic)} never received"
        return f"{topic_name(self.topic)} silent for {self.age:.2f} s (limit {self.limit:g} s)"


def topic_name(key: str) -> str:
    """``rt/emergency/state`` for ``emergency_state``: what an operator can look up."""
    spec = TOPICS.get(key)
    return spec.name if spec is not None else key


class SafetyMonitor:
    """Evaluates triggers and holds the latch.

    ``max_age``: the safety sources (state topics the triggers read) and how old each may
    be, from the profile; a source not listed is not checked for silence.
    """

    def __init__(
        self,
        config: SafetyConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_age: Mapping[str, float] | None = None,
    ) -> None:
        self.config = config or SafetyConfig()
        self.clock = clock
        ages = dict.fromkeys(STATE_TOPICS, DEFAULT_MAX_AGE) if max_age is None else max_age
        override = self.config.max_state_age
        self.max_age: dict[str, float] = {
            t: age if override is None else override for t, age in ages.items()
        }
        self._lock = threading.Lock()
        self._latched: list[Cause] = []
        self._latched_at: float | None = None
        self._battery_low = False
        self.trips = 0

    # -- evaluation --------------------------------------------------------------------

    def evaluate(
        self,
        state: Mapping[str, Stamped[Any] | None],
        activity: Activity,
        health: Mapping[str, ReaderHealth] | None = None,
    ) -> list[Cause]:
        """The causes present now. Pure apart from the battery hysteresis it remembers."""
        causes: list[Cause] = self.undecodable(health or {})
        now = self.clock()
        estop = state.get("emergency_state")
        if estop is not None and (flags := _flags(estop.sample)):
            causes.append(Cause("estop", f"emergency stop: {', '.join(flags)}"))
        for topic in ("upper_state", "lower_state"):
            s = state.get(topic)
            if s is not None and (alarms := int(s.sample["bms_state"]["bms_alarms"])):
                causes.append(Cause("bms_alarm", f"BMS alarm 0x{alarms:08x} in {topic}"))
        amr = state.get("amr_state")
        if amr is not None and bool(amr.sample["amr_event"]["emergency_stop_pressed"]):
            causes.append(Cause("amr_estop", "the base's emergency stop is pressed"))
        nodes = state.get("main_nodes_state")
        if self.config.servo_errors and nodes is not None and (bad := _servo_errors(nodes.sample)):
            causes.append(Cause("servo_error", f"servo error: {', '.join(bad)}"))
        if activity.mission_running:
            causes += [
                Cause("stale_state", f"{why} while a mission runs")
                for why in self.silent(state, now)
            ]
        level = _battery_level(state)
        if level is not None:
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
        upper = state.get("upper_state")
        if (
            activity.control_confirmed
            and upper is not None
            and not bool(upper.sample["is_upper_control"])
        ):
            causes.append(
                Cause("control_revoked", "upper-body control was revoked by someone else")
            )
        return causes

    def silent(
        self, state: Mapping[str, Stamped[Any] | None], now: float | None = None
    ) -> list[Silence]:
        """Each safety source that is older than its maximum age, or was never heard."""
        now = self.clock() if now is None else now
        out = []
        for topic, limit in self.max_age.items():
            s = state.get(topic)
            if s is None or now - s.received > limit:
                out.append(Silence(topic, None if s is None else now - s.received, limit))
        return out

    def undecodable(self, health: Mapping[str, ReaderHealth]) -> list[Cause]:
        """A cause for each safety source whose newest sample could not be decoded."""
        return [
            Cause("undecodable", f"{h.topic}: undecodable sample ({h.last_error})")
            for topic, h in health.items()
            if topic in self.max_age and h.undecodable
        ]

    def not_ready(
        self,
        state: Mapping[str, Stamped[Any] | None],
        health: Mapping[str, ReaderHealth] | None = None,
    ) -> list[str]:
        """Why no mission may start and no reset be accepted now, though nothing trips:
        the robot's safety sources are silent or not understood."""
        return [str(x) for x in self.silent(state)] + [
            c.message for c in self.undecodable(health or {})
        ]

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


def _servo_errors(record: Any) -> list[str]:
    bad = []
    for group in ("left_leg", "right_leg", "waist", "left_arm", "right_arm", "head"):
        codes = np.atleast_1d(record[group]["error_code"])
        bad += [
            f"{group}[{i}]=0x{int(c):04x}" if codes.size > 1 else f"{group}=0x{int(c):04x}"
            for i, c in enumerate(codes)
            if c
        ]
    return bad


def _battery_level(state: Mapping[str, Stamped[Any] | None]) -> float | None:
    levels = [
        float(s.sample["bms_state"]["battery_level"])
        for t in ("upper_state", "lower_state")
        if (s := state.get(t))
    ]
    return min(levels) if levels else None


class Hold(Protocol):
    """``MotionStreamer.hold``: True if this call started the hold; ``quiet``: do not log."""

    def __call__(self, reason: str, *, quiet: bool = ...) -> bool: ...


class SafetyReaction:
    """What a trip does, in DESIGN.md's order: hold, cancel the base, (tree) preempt.

    On the e-stop fast path this runs on CycloneDDS's receive thread, right after a
    sleep, when every line of Python costs ten times what it costs warm: the hold and
    the cancel go out first, and only then is the hold logged.
    """

    def __init__(self, hold: Hold, commands: RobotCommands) -> None:
        self.hold = hold
        self.commands = commands
        self.remote_driving = False  # set by whoever starts remote driving

    def __call__(self, reason: str) -> None:
        first = self.hold(reason, quiet=True)
        try:
            self.commands.amr("CANCEL_TASK")
            if self.remote_driving:
                self.commands.amr("STOP_REMOTE")
                self.remote_driving = False
        finally:
            if first:
                log.warning("motion held", reason=reason)


class EstopFastPath:
    """DDS callback on rt/emergency/state: trips and reacts without waiting for a tick.

    ``undecodable(topic)`` gives the callback for a safety source's undecodable samples.
    """

    def __init__(self, monitor: SafetyMonitor, react: Callable[[str], None]) -> None:
        self.monitor = monitor
        self.react = react

    def __call__(self, sample: Any) -> None:
        flags = _flags(sample)
        if not flags:
            return
        self._stop(Cause("estop", f"emergency stop: {', '.join(flags)}"))

    def undecodable(self, topic: str) -> Callable[[str], None]:
        def on_undecodable(why: str) -> None:
            self._stop(Cause("undecodable", f"{topic_name(topic)}: undecodable sample ({why})"))

        return on_undecodable

    def _stop(self, cause: Cause) -> None:
        try:
            self.react(cause.message)  # hold first: nothing else may delay it
        finally:
            self.monitor.trip([cause])


class SafetyWatchdog(py_trees.behaviour.Behaviour):
    """Top-priority branch of the core tree's selector.

    FAILURE while all is clear (the selector moves on to the mission slot); RUNNING while
    a SAFE-STOP is latched, which preempts the mission slot below it. A mission is built
    under the slot, so it cannot remove, reorder or weaken this node.

    Blackboard: reads ``/robot/<topic>`` for every state topic, and ``/robot/health``.
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
        for topic in STATE_TOPICS:
            self.bb.register_key(key(topic), access=Access.READ)
        self.bb.register_key(HEALTH_KEY, access=Access.READ)

    def snapshot(self) -> dict[str, Stamped[Any] | None]:
        return {t: latest(self.bb, t) for t in STATE_TOPICS}

    def health(self) -> Mapping[str, ReaderHealth]:
        try:
            value = self.bb.get(HEALTH_KEY)
        except KeyError:
            return {}
        return value if isinstance(value, Mapping) else {}

    def update(self) -> Status:
        self.present = self.monitor.evaluate(self.snapshot(), self.activity(), self.health())
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
