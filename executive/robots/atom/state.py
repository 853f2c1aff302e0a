"""The Atom's state as the robot-neutral ``RobotSnapshot``: every field named here, once.

The six state topics (DESIGN.md 3) map onto the snapshot so:

- joints: ``rt/upper/state`` and ``rt/lower/state`` ``motor_state[].q``, ``rt/hands/state``
  ``hands[].q``, by stream (``upper``, ``lower``, ``hands``) in wire order;
- control: ``UpperState_.is_upper_control``; fsm: ``fsm_id`` of the newer of upper and
  lower state (the firmware reports the same machine in both);
- e-stop: the true flags of ``EmergencyState_`` (three or four, by interface variant);
- battery: the lower ``bms_state.battery_level`` of upper and lower state; alarms: their
  non-zero ``bms_alarms``;
- servo errors: non-zero ``error_code`` in ``rt/main/nodes/state``;
- base: ``AMRState_`` (``device_status`` TASKING, ``navigation_status`` by name,
  ``task_id``, the base's own e-stop button, and ``position`` as the pose: x, y, yaw;
  None when any of the three is not finite);
- buttons: the gamepad bytes of the newer of upper and lower state (executive.robots.atom.gamepad).

Numbers of the AMR enums come from the interface's generated enums, not literals.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from executive.robots.atom.gamepad import BUTTONS
from executive.robots.atom.interface import Interface
from executive.robots.atom.topics import TOPICS
from executive.seam.ports import (
    BaseState,
    NavStatus,
    ReaderHealth,
    RobotSnapshot,
    Source,
    Stamped,
)
from executive.wire.robot_io import LatestReader

# stream -> (state topic key, motor array field of the state)
JOINT_STATE: dict[str, tuple[str, str]] = {
    "upper": ("upper_state", "motor_state"),
    "lower": ("lower_state", "motor_state"),
    "hands": ("hands_state", "hands"),
}
WORK_MODE_REMOTE = 3  # AMRState_.work_mode: 0 task, 3 remote control, 4 maintenance (no enum)
_SERVO_GROUPS = ("left_leg", "right_leg", "waist", "left_arm", "right_arm", "head")


def estop_flags(record: Any) -> tuple[str, ...]:
    """Names of the true boolean fields of an ``EmergencyState_`` record."""
    return tuple(n for n in record.dtype.names if bool(record[n]))


def servo_errors(record: Any) -> tuple[str, ...]:
    """``left_arm[2]=0x0010`` for each servo with a non-zero error code."""
    bad: list[str] = []
    for group in _SERVO_GROUPS:
        codes = np.atleast_1d(record[group]["error_code"])
        bad += [
            f"{group}[{i}]=0x{int(c):04x}" if codes.size > 1 else f"{group}=0x{int(c):04x}"
            for i, c in enumerate(codes)
            if c
        ]
    return tuple(bad)


def base_pose(position: Any) -> tuple[float, float, float] | None:
    """``AMRState_.position`` (float[3]: x m, y m, yaw rad) as a pose; None if any of
    the three is not finite (a base that has not localised, a garbled sample): the
    snapshot says "not reported" rather than carry a NaN into status and records."""
    x, y, yaw = (float(v) for v in np.asarray(position, dtype=np.float64)[:3])
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(yaw)):
        return None
    return (x, y, yaw)


class BaseSpeed:
    """The base's speed from its reported pose (``AMRState_`` has no velocity): the distance
    and turn from the oldest kept pose to the newest, over the time between them, keeping
    just enough poses that the oldest is about ``span`` s old. Thread-safe (the tick thread
    and the stalled loop's supervisor both build status)."""

    def __init__(self, span: float = 0.2) -> None:
        self.span = span
        self._lock = threading.Lock()
        self._poses: deque[Stamped[tuple[float, float, float]]] = deque()

    def update(self, base: Stamped[BaseState] | None) -> Stamped[tuple[float, float]] | None:
        """(m/s, rad/s) as of ``base``'s pose; None without two poses ``span`` apart."""
        with self._lock:
            poses = self._poses
            if base is not None and base.sample.pose is not None:
                if not poses or base.received > poses[-1].received:
                    poses.append(Stamped(base.sample.pose, base.received))
                while len(poses) > 2 and poses[-1].received - poses[1].received >= self.span:
                    poses.popleft()
            if len(poses) < 2:
                return None
            old, new = poses[0], poses[-1]
        dt = new.received - old.received
        if dt < self.span:
            return None
        (x0, y0, a0), (x1, y1, a1) = old.sample, new.sample
        turn = math.remainder(a1 - a0, math.tau)
        return Stamped((math.hypot(x1 - x0, y1 - y0) / dt, abs(turn) / dt), new.received)


def pressed(wireless_remote: Any) -> frozenset[str]:
    """The gamepad buttons held in a ``wireless_remote[40]`` array."""
    return frozenset(
        name for name, (byte, bit) in BUTTONS.items() if int(wireless_remote[byte]) >> bit & 1
    )


class AtomState:
    """Builds snapshots from the executive's readers (the tick thread and the fast path)."""

    def __init__(
        self,
        interface: Interface,
        readers: Mapping[str, LatestReader[Any]],
        layout: Mapping[str, tuple[str, int]],
        sources: tuple[str, ...],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.readers = readers
        self.layout = dict(layout)
        self.sources = sources
        self.clock = clock
        nav = interface.NavigationStatus_
        self._nav = {nav[s.name].value: s for s in NavStatus if s.name in nav.__members__}
        self._tasking = interface.DeviceStatus_.TASKING.value
        # a record's bytes -> what it says: a slow topic (10-20 Hz) is not read anew at
        # each of the tick's 50 snapshots a second (one attribute each: set atomically)
        self._servo_memo: tuple[bytes, tuple[str, ...]] = (b"", ())
        self._base_memo: tuple[bytes, BaseState | None] = (b"", None)

    def latest(self, key: str) -> Stamped[Any] | None:
        reader = self.readers.get(key)
        return None if reader is None else reader.latest

    def joint_speeds(self) -> dict[str, Stamped[float]]:
        """The largest measured ``|dq|`` (rad/s) of each joint stream, as the robot reports it."""
        out: dict[str, Stamped[float]] = {}
        for stream, (key, field) in JOINT_STATE.items():
            s = self.latest(key)
            if s is not None:
                dq = np.abs(np.asarray(s.sample[field]["dq"], dtype=np.float64))
                out[stream] = Stamped(float(np.nanmax(dq)) if dq.size else 0.0, s.received)
        return out

    def remote_driving(self) -> Stamped[bool] | None:
        """Whether the base is in remote-drive mode (``AMRState_.work_mode`` 3, the IDL's
        "0 task, 3 remote control, 4 maintenance": START_REMOTE was accepted and no
        STOP_REMOTE followed); None before the base is heard. In that mode the base takes
        velocities from whoever sends REMOTE_CONTROL and refuses tasks."""
        amr = self.latest("amr_state")
        if amr is None:
            return None
        return Stamped(int(amr.sample["work_mode"]) == WORK_MODE_REMOTE, amr.received)

    def base(self, amr: Stamped[Any] | None) -> Stamped[BaseState] | None:
        if amr is None:
            return None
        s = amr.sample
        raw = s.tobytes()
        memo = self._base_memo
        if memo[0] == raw and memo[1] is not None:
            return Stamped(memo[1], amr.received)
        state = BaseState(
            tasking=int(s["device_status"]) == self._tasking,
            status=self._nav.get(int(s["navigation_status"]), NavStatus.NONE),
            task_id=int(s["task_id"]),
            estop_pressed=bool(s["amr_event"]["emergency_stop_pressed"]),
            pose=base_pose(s["position"]),
        )
        self._base_memo = (raw, state)
        return Stamped(state, amr.received)

    def servo_errors(self, record: Any) -> tuple[str, ...]:
        """``servo_errors`` of ``record``, once per distinct record."""
        raw = record.tobytes()
        memo = self._servo_memo
        if memo[0] != raw:
            memo = (raw, servo_errors(record))
            self._servo_memo = memo
        return memo[1]

    def snapshot(self) -> RobotSnapshot:
        """The newest state of every source. Polled readers are polled here: their
        undecodable samples reach the fast path from this thread (the tick's)."""
        state: dict[str, Stamped[Any] | None] = {}
        health: dict[str, ReaderHealth] = {}
        for key in self.sources:
            reader = self.readers.get(key)
            if reader is None:
                state[key] = None
                health[key] = ReaderHealth(TOPICS[key].name if key in TOPICS else key)
                continue
            reader.poll()
            state[key], health[key] = reader.peek()
        return self.build(state, health, self.clock())

    def build(
        self,
        state: Mapping[str, Stamped[Any] | None],
        health: Mapping[str, ReaderHealth],
        now: float,
    ) -> RobotSnapshot:
        """The snapshot of these samples (pure: tests build snapshots from records)."""
        joints = {}
        for stream, (key, field) in JOINT_STATE.items():
            s = state.get(key)
            if s is not None:
                q = np.asarray(s.sample[field]["q"], dtype=np.float64)
                joints[stream] = Stamped(q, s.received)
        upper, lower = state.get("upper_state"), state.get("lower_state")
        bodies = [s for s in (upper, lower) if s is not None]
        newest = max(bodies, key=lambda s: s.received) if bodies else None
        alarms = tuple(
            f"BMS alarm 0x{a:08x} in {key}"
            for key, s in (("upper_state", upper), ("lower_state", lower))
            if s is not None and (a := int(s.sample["bms_state"]["bms_alarms"]))
        )
        estop, nodes = state.get("emergency_state"), state.get("main_nodes_state")
        return RobotSnapshot(
            taken=now,
            joints=joints,
            layout=self.layout,
            control=None
            if upper is None
            else Stamped(bool(upper.sample["is_upper_control"]), upper.received),
            fsm=None if newest is None else Stamped(int(newest.sample["fsm_id"]), newest.received),
            estop=None if estop is None else Stamped(estop_flags(estop.sample), estop.received),
            battery=None
            if not bodies
            else Stamped(
                min(float(s.sample["bms_state"]["battery_level"]) for s in bodies),
                min(s.received for s in bodies),
            ),
            alarms=None if newest is None else Stamped(alarms, newest.received),
            servo_errors=None
            if nodes is None
            else Stamped(self.servo_errors(nodes.sample), nodes.received),
            base=self.base(state.get("amr_state")),
            buttons=None
            if newest is None
            else Stamped(pressed(newest.sample["wireless_remote"]), newest.received),
            sources={
                key: Source(
                    key,
                    TOPICS[key].name if key in TOPICS else key,
                    None if s is None else s.received,
                    health.get(key) or ReaderHealth(TOPICS[key].name if key in TOPICS else key),
                )
                for key, s in state.items()
            },
        )
