"""The GRX's four server maps as the robot-neutral ``RobotSnapshot``: every field named here.

- fsm: ``robot_task_state`` (task/server); task: it and ``flag_task_in_process`` (m4:
  ``flag_task_running``);
- servo_errors: each non-zero ``robot_error_codes`` (grx/server), and (m4) ``flag_robot_fault``;
- estop (m4 only): ``flag_robot_emergent_stop`` (robot/server) when set;
- battery (m4 only): ``robot_battery_percentage`` x 100 (grx/server);
- joints: ``joint_measured_position`` (robot/server) in radians (the seed's degrees
  converted) as the one joint stream ``robot``, when the state was made with the profile's
  joint count; a list of another length, or of anything but finite numbers, is a map that
  makes no sense (the profile describes another robot);
- sources: one per category, received = the last map that decoded and made sense. A comm
  map whose ``flag_heart_beat`` is false does not count as heard: the robot's main program
  says it is not running, so the watchdog sees silence.

A payload that is not a msgpack map with string keys, a map whose fields the snapshot
reads have the wrong type, or a map that lacks a safety field its schema defines there
(``robot_error_codes``, ``flag_heart_beat``, m4's e-stop and fault flags and battery) is
counted and named in the source's ``ReaderHealth`` and marks it undecodable until the next
good map; ``on_problem`` is called on the receiving thread. A missing safety field is not
"no fault": read as absent it would say "no error" or "not stopped" for a robot that did
not say so. Flags are msgpack booleans or the seed's integers 0/1; m4's battery is a finite
fraction in 0..1 (NaN never compares below the critical level, and a percent read as a
fraction would be 100 times too full). ``on_problem`` never raises through here: each call
is made whatever the one before it did (one map can bring an e-stop and an error), and a
failure is logged once per interval with a count.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import structlog

from executive.logs import RateLimitedLog
from executive.robots.grx import interface as wire
from executive.seam.ports import ReaderHealth, RobotSnapshot, Source, Stamped

_log = RateLimitedLog(structlog.get_logger(__name__))  # first at once, then counted


class GrxState:
    """The newest map of each category, its health, and the snapshot made from them."""

    def __init__(
        self,
        schema: wire.Schema,
        on_problem: Callable[[str, str, str], None] = lambda c, k, m: None,
        clock: Callable[[], float] = time.monotonic,
        joints: int = 0,
        layout: Mapping[str, tuple[str, int]] | None = None,
    ) -> None:
        self.schema = schema
        self.joints = joints  # how many joint_measured_position carries (0: not read)
        self.layout = dict(layout or {})
        self._unit = math.pi / 180.0 if schema.joint_degrees else 1.0
        self.clock = clock
        self.on_problem = on_problem  # (category, code, message) on the receiving thread
        self._lock = threading.Lock()
        self.maps: dict[str, dict[str, Any]] = {}
        self.received: dict[str, float] = {}
        self.health = {c: ReaderHealth(wire.server_key(c)) for c in wire.CATEGORIES}
        self._last_errors: tuple[str, ...] | None = None
        self._last_estop = False

    # -- the receiving thread ------------------------------------------------------------

    def receive(self, category: str, payload: bytes) -> None:
        now = self.clock()
        try:
            fields = wire.decode(payload)
            self._check(category, fields)
        except wire.DecodeError as e:
            self.fail(category, str(e))
            return
        with self._lock:
            self.maps[category] = fields
            if self.health[category].undecodable:
                self.health[category] = replace(self.health[category], undecodable=False)
            if category != "comm" or fields[wire.HEART_BEAT] in (True, 1):
                self.received[category] = now
            errors, estop = self._errors(self.maps), self._estop(self.maps)
            new_errors = bool(errors) and errors != self._last_errors
            new_estop = bool(estop) and not self._last_estop
            self._last_errors, self._last_estop = errors, bool(estop)
        # the fast path, once per new fault (not at 50 Hz while it lasts)
        if new_estop and estop:
            self._report(category, "estop", f"emergency stop: {', '.join(estop)}")
        if new_errors and errors:
            self._report(category, "servo_error", f"servo error: {', '.join(errors)}")

    def _report(self, category: str, code: str, message: str) -> None:
        """``on_problem``, on the receiving thread, never raising: the next report (and the
        middleware's callback) goes on. The fault stays in the snapshot for the watchdog."""
        try:
            self.on_problem(category, code, message)
        except Exception as e:  # noqa: BLE001 - a middleware callback: never raise
            _log.log(
                "error",
                "grx on_problem failed",
                key=f"on_problem {code}",
                code=code,
                key_expr=wire.server_key(category),
                error=f"{type(e).__name__}: {e}",
            )

    def fail(self, category: str, why: str) -> None:
        """Count a map of ``category`` that could not be read and mark the source
        undecodable until the next good one; ``on_problem`` on the first of a run."""
        now = self.clock()
        with self._lock:
            h = self.health[category]
            first = not h.undecodable
            self.health[category] = replace(
                h, errors=h.errors + 1, last_error=why, last_error_at=now, undecodable=True
            )
        if first:
            self._report(
                category, "undecodable", f"{wire.server_key(category)}: undecodable sample ({why})"
            )

    def _check(self, category: str, fields: dict[str, Any]) -> None:
        """DecodeError if a field the snapshot reads has the wrong type."""

        def need(key: str, ok: Callable[[Any], bool], what: str, safety: bool = False) -> None:
            if key not in fields:
                if safety:  # never read as "no fault"
                    raise wire.DecodeError(f"no {key} (a safety field of this map)")
                return
            if not ok(fields[key]):
                raise wire.DecodeError(f"{key}: {fields[key]!r} is not {what}")

        s = self.schema
        if category == "comm":
            need(wire.HEART_BEAT, _is_flag, "a bool (or 0/1)", safety=True)
        elif category == "task":
            need(wire.TASK_STATE, _is_int, "an int")
            need(s.task_in_process, _is_flag, "a bool (or 0/1)")
        elif category == "robot" and self.joints:
            need(wire.JOINT_POSITION, self._is_joints, f"{self.joints} finite numbers")
        elif category == "grx":
            need(
                wire.ERROR_CODES,
                lambda v: wire.error_codes(v) is not None,
                "error codes",
                safety=True,
            )
        for flag in (s.estop, s.fault):
            if flag is not None and flag[0] == category:
                need(flag[1], _is_flag, "a bool (or 0/1)", safety=True)
        if s.battery is not None and s.battery[0] == category:
            need(s.battery[1], _is_fraction, "a finite fraction in 0..1", safety=True)

    # -- the tick thread -----------------------------------------------------------------

    def snapshot(self) -> RobotSnapshot:
        with self._lock:
            maps = dict(self.maps)
            received = dict(self.received)
            health = dict(self.health)
        s = self.schema
        fsm: Stamped[int] | None = None
        task: Stamped[tuple[int, bool]] | None = None
        errors: Stamped[tuple[str, ...]] | None = None
        estop: Stamped[tuple[str, ...]] | None = None
        battery: Stamped[float] | None = None
        if (t := maps.get("task")) is not None and _is_int(t.get(wire.TASK_STATE)):
            at = received.get("task", 0.0)
            state = int(t[wire.TASK_STATE])
            fsm = Stamped(state, at)
            task = Stamped((state, bool(t.get(s.task_in_process, False))), at)
        if (bad := self._errors(maps)) is not None:
            errors = Stamped(bad, received.get("grx", 0.0))
        if (flags := self._estop(maps)) is not None and s.estop is not None:
            estop = Stamped(flags, received.get(s.estop[0], 0.0))
        if s.battery is not None and (m := maps.get(s.battery[0])) is not None:
            value = m.get(s.battery[1])
            if isinstance(value, int | float) and not isinstance(value, bool):
                battery = Stamped(float(value) * 100.0, received.get(s.battery[0], 0.0))
        sources = {
            c: Source(c, wire.server_key(c), received.get(c), health[c]) for c in wire.CATEGORIES
        }
        joints = {}
        if self.joints and (r := maps.get("robot")) is not None and wire.JOINT_POSITION in r:
            q = np.asarray(r[wire.JOINT_POSITION], dtype=np.float64) * self._unit
            joints["robot"] = Stamped(q, received.get("robot", 0.0))
        return RobotSnapshot(
            taken=self.clock(),
            joints=joints,
            layout=self.layout,
            fsm=fsm,
            estop=estop,
            battery=battery,
            servo_errors=errors,
            sources=sources,
            task=task,
        )

    def _errors(self, maps: dict[str, dict[str, Any]]) -> tuple[str, ...] | None:
        """The described non-zero error codes (and m4's fault flag); None: no grx map yet."""
        g = maps.get("grx")
        codes = None if g is None else wire.error_codes(g.get(wire.ERROR_CODES, 0))
        if codes is None:
            return None
        bad = wire.describe_errors(codes, self.schema.error_codes_list)
        fault = self.schema.fault
        if fault is not None and (m := maps.get(fault[0])) is not None and m.get(fault[1]):
            bad += (fault[1],)
        return bad

    def _estop(self, maps: dict[str, dict[str, Any]]) -> tuple[str, ...] | None:
        """The e-stop flags that are on; None: the schema has none or no map yet."""
        flag = self.schema.estop
        if flag is None or (m := maps.get(flag[0])) is None:
            return None
        return (flag[1],) if m.get(flag[1]) else ()

    def _is_joints(self, v: object) -> bool:
        return (
            isinstance(v, list | tuple)
            and len(v) == self.joints
            and all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in v
            )
        )

    def latest(self, category: str) -> dict[str, Any] | None:
        with self._lock:
            return self.maps.get(category)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_flag(v: object) -> bool:
    """A msgpack boolean, or the seed's "bool 0/1" as an integer."""
    return isinstance(v, bool) or (isinstance(v, int) and v in (0, 1))


def _is_fraction(v: object) -> bool:
    """A finite number in 0..1 (m4's ``robot_battery_percentage``)."""
    return (
        isinstance(v, int | float)
        and not isinstance(v, bool)
        and math.isfinite(v)
        and 0.0 <= v <= 1.0
    )
