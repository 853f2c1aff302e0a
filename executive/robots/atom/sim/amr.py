"""The simulated wheeled base (AMR): tags, tasks, the documented status sequence.

A ``MOVE_TO_TAG`` task is shown as ``navigation_status`` QUEUING (``device_status``
TASKING: accepted) for ``queue_time``, then RUNNING while the base turns toward the tag,
drives there at ``speed`` and turns to the commanded absolute ``theta``, then COMPLETED
with the device back to DEVIDLE. An unknown tag ends FAILED; CANCEL_TASK ends CANCELED
(and drops every queued task: a cancel is how a controller stops the base, so it must
stop all of it); PAUSE_TASK/RESUME_TASK switch PAUSED/RUNNING. As the seeds document, a
new task does not cancel the running one: it queues behind it. A finished task's final
status stays visible for at least ``linger`` before the next queued task starts, so a
reader at the state rate cannot miss it. ``task_id`` is the command_id of the task shown.

Remote driving: START_REMOTE (refused while a task is active), then REMOTE_CONTROL
velocities (``work_mode`` 3; the base stops if no REMOTE_CONTROL arrives for
``remote_timeout``, as a dead-man switch), then STOP_REMOTE.

Statuses are kept as IDL enumerator names (``"RUNNING"``) so the model does not depend on
which interface variant numbers them.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from executive.seam.profile import RobotProfile, load_profile

ACTIVE = ("QUEUING", "RUNNING", "PAUSED")
POSITION_TOLERANCE = 0.01  # m
HEADING_TOLERANCE = 0.005  # rad
ERROR_UNKNOWN_TAG = 0x0101
ERROR_FAILURE = 0x0201
ERROR_REMOTE = 0x0301


# Where the default map puts tags 1-5, and which is the charger.
_LAYOUT: dict[int, tuple[float, float]] = {
    1: (0.0, 0.0),
    2: (2.0, 0.0),
    3: (2.0, 1.5),
    4: (0.0, 1.5),
    5: (-1.0, 0.0),
}
_CHARGER = 5


class TagMapError(ValueError):
    """A tag map file that cannot be used; the message names the key."""


@dataclass(frozen=True)
class TagMap:
    """Tag id -> (x, y) in metres, where the base starts, and the charger's tag."""

    tags: dict[int, tuple[float, float]]
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    charger: int | None = None

    @classmethod
    def default(cls, profile: RobotProfile | None = None) -> TagMap:
        """The map of the robot profile's ``tags`` (the default profile's if none given), so
        the simulated site has exactly the tags validation knows about.

        Tags 1-5 sit around a 2 m x 1.5 m rectangle (tag-to-tag trips of 1-3 s at 1 m/s),
        tag 5 being the charger; any other tag of the profile is placed on a row 1 m
        beyond it, 1 m apart, in id order. A profile without ``tags`` gets tags 1-5.
        """
        if profile is None:
            profile = load_profile()
        ids = sorted(profile.tags) if profile.tags is not None else sorted(_LAYOUT)
        others = [t for t in ids if t not in _LAYOUT]
        tags = {t: _LAYOUT[t] for t in ids if t in _LAYOUT}
        tags.update({t: (float(i), -1.0) for i, t in enumerate(others)})
        return cls(tags=tags, start=(0.0, 0.0, 0.0), charger=_CHARGER if _CHARGER in tags else None)

    @classmethod
    def load(cls, path: str | Path) -> TagMap:
        """Read ``tags: {ID: {x: X, y: Y}}``, optional ``start: {x, y, yaw}`` and ``charger: ID``."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            raise TagMapError(f"{path}: cannot read the tag map: {e}") from None
        if not isinstance(data, dict) or not isinstance(data.get("tags"), dict):
            raise TagMapError(f"{path}: tags: missing or not a mapping of id to {{x, y}}")
        tags: dict[int, tuple[float, float]] = {}
        for tag_id, pos in data["tags"].items():
            tags[_int(tag_id, f"{path}: tags.{tag_id}")] = _xy(pos, f"{path}: tags.{tag_id}")
        start_raw = data.get("start") or {}
        if not isinstance(start_raw, dict):
            raise TagMapError(f"{path}: start: must be a mapping with x, y and yaw")
        x, y = _xy({"x": start_raw.get("x", 0.0), "y": start_raw.get("y", 0.0)}, f"{path}: start")
        yaw = _float(start_raw.get("yaw", 0.0), f"{path}: start.yaw")
        charger = data.get("charger")
        if charger is not None and _int(charger, f"{path}: charger") not in tags:
            raise TagMapError(f"{path}: charger: tag {charger} is not in tags")
        return cls(tags=tags, start=(x, y, yaw), charger=None if charger is None else int(charger))


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise TagMapError(f"{key}: tag ids are integers 0..2^32-1, got {value!r}")
    return int(value)


def _float(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TagMapError(f"{key}: must be a finite number, got {value!r}")
    return float(value)


def _xy(pos: Any, key: str) -> tuple[float, float]:
    if not isinstance(pos, dict) or set(pos) != {"x", "y"}:
        raise TagMapError(f"{key}: must be a mapping with exactly x and y")
    return _float(pos["x"], f"{key}.x"), _float(pos["y"], f"{key}.y")


def wrap(angle: float) -> float:
    """The angle in (-pi, pi]."""
    return math.atan2(math.sin(angle), math.cos(angle))


@dataclass
class Task:
    command_id: int
    kind: str  # "move", "rotate" or "charge"
    target_id: int = 0
    theta: float = 0.0
    status: str = "QUEUING"
    goal: tuple[float, float, float] | None = None  # x, y, yaw, set when it starts
    leg: str = "turn"  # "turn" toward the goal, "drive", "align" to theta
    queued_until: float = 0.0


class AmrSim:
    """The base's task queue and pose; ``command`` takes commands, ``step`` moves it."""

    def __init__(
        self,
        tags: TagMap,
        *,
        speed: float = 1.0,
        turn_rate: float = 2.0,
        queue_time: float = 0.1,
        linger: float = 0.15,
        remote_timeout: float = 0.5,
    ) -> None:
        if not (speed > 0 and turn_rate > 0):
            raise ValueError("AMR speed and turn rate must be > 0")
        self.tags = tags
        self.speed = speed
        self.turn_rate = turn_rate
        self.queue_time = queue_time
        self.linger = linger
        self.remote_timeout = remote_timeout
        self.x, self.y, self.yaw = tags.start
        self.current: Task | None = None  # the task shown in the state (running or last ended)
        self.queue: deque[Task] = deque()
        self.ended_at = -math.inf
        self.remote = False
        self.remote_vel = (0.0, 0.0)
        self.remote_until = 0.0
        self.charging = False
        self.error_code = 0
        self.failing = False  # AMR_FAILURE fault: every task fails

    # -- state as published ---------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.current is not None and self.current.status in ACTIVE

    @property
    def navigation_status(self) -> str:
        return "IDLE" if self.current is None else self.current.status

    @property
    def device_status(self) -> str:
        if self.failing:
            return "ERROR"
        if self.busy:
            return "TASKING"
        return "CHARGING" if self.charging else "DEVIDLE"

    @property
    def task_id(self) -> int:
        return 0 if self.current is None else self.current.command_id

    @property
    def work_mode(self) -> int:
        return 3 if self.remote else 0

    # -- commands -------------------------------------------------------------------------

    def command(self, kind: str, *, now: float, **fields: Any) -> str:
        """Apply one AMRCommand_ (``kind`` is its AMRCommandType name); returns what it did."""
        handler = self._handlers().get(kind)
        if handler is None:
            return "acknowledged (no effect in the simulation)"
        return handler(now, {**fields, "command_type": kind})

    def _handlers(self) -> dict[str, Callable[[float, dict[str, Any]], str]]:
        return {
            "MOVE_TO_TAG": self._new_task,
            "ROTATE": self._new_task,
            "MOVE_TO_CHARGE": self._new_task,
            "CANCEL_TASK": self._cancel,
            "PAUSE_TASK": self._pause,
            "RESUME_TASK": self._resume,
            "START_REMOTE": self._start_remote,
            "REMOTE_CONTROL": self._remote_control,
            "STOP_REMOTE": self._stop_remote,
            "SET_VEL": self._set_vel,
        }

    def _new_task(self, now: float, fields: dict[str, Any]) -> str:
        if self.remote:
            return "refused: remote control active (STOP_REMOTE first)"
        kinds = {"MOVE_TO_TAG": "move", "ROTATE": "rotate", "MOVE_TO_CHARGE": "charge"}
        task = Task(
            int(fields.get("command_id", 0)),
            kinds[fields["command_type"]],
            target_id=int(fields.get("target_id", 0)),
            theta=_finite(fields.get("theta", 0.0)),
        )
        self.queue.append(task)
        return "queued behind the running task" if self.busy else "accepted"

    def _cancel(self, now: float, fields: dict[str, Any]) -> str:
        dropped = len(self.queue)
        self.queue.clear()
        if self.busy:
            self._end("CANCELED", now)
            return f"canceled (and {dropped} queued)"
        return f"nothing to cancel ({dropped} queued dropped)"

    def _pause(self, now: float, fields: dict[str, Any]) -> str:
        if self.current is not None and self.current.status in ("QUEUING", "RUNNING"):
            self.current.status = "PAUSED"
            return "paused"
        return "nothing to pause"

    def _resume(self, now: float, fields: dict[str, Any]) -> str:
        if self.current is not None and self.current.status == "PAUSED":
            self.current.status = "RUNNING"
            return "resumed"
        return "nothing to resume"

    def _start_remote(self, now: float, fields: dict[str, Any]) -> str:
        if self.busy or self.queue:
            return "refused: a task is active (CANCEL_TASK first)"
        self.remote = True
        self.charging = False
        return "remote control on"

    def _remote_control(self, now: float, fields: dict[str, Any]) -> str:
        if not self.remote:
            self.error_code = ERROR_REMOTE
            return "refused: START_REMOTE first"
        lin = _finite(fields.get("linear_vel", 0.0))
        ang = _finite(fields.get("angular_vel", 0.0))
        self.remote_vel = (
            max(-self.speed, min(self.speed, lin)),
            max(-self.turn_rate, min(self.turn_rate, ang)),
        )
        self.remote_until = now + self.remote_timeout
        return "velocity set"

    def _stop_remote(self, now: float, fields: dict[str, Any]) -> str:
        self.remote = False
        self.remote_vel = (0.0, 0.0)
        return "remote control off"

    def _set_vel(self, now: float, fields: dict[str, Any]) -> str:
        lin = _finite(fields.get("linear_vel", 0.0))
        if lin > 0:
            self.speed = lin
            return f"speed {lin:g} m/s"
        return "refused: SET_VEL needs linear_vel > 0"

    def fail(self, now: float) -> None:
        """The AMR_FAILURE fault: the task shown ends FAILED (queued ones fail as they start)."""
        self.failing = True
        self.error_code = ERROR_FAILURE
        if self.busy:
            self._end("FAILED", now)

    def recover(self) -> None:
        self.failing = False
        self.error_code = 0

    def _end(self, status: str, now: float) -> None:
        assert self.current is not None
        self.current.status = status
        self.ended_at = now

    # -- motion ---------------------------------------------------------------------------

    def step(self, now: float, dt: float, *, halted: bool) -> None:
        """Advance ``dt`` seconds; ``halted`` (an e-stop) stops all motion, statuses stay."""
        if not self.busy and self.queue and now >= self.ended_at + self.linger:
            self._start(self.queue.popleft(), now)
        if self.remote:
            self._drive_remote(now, dt, halted)
            return
        task = self.current
        if task is None or halted:
            return
        if task.status == "QUEUING" and now >= task.queued_until:
            task.status = "RUNNING"
        if task.status == "RUNNING":
            self._drive_task(task, now, dt)

    def _start(self, task: Task, now: float) -> None:
        self.current = task
        self.charging = False
        self.error_code = 0
        task.queued_until = now + self.queue_time
        if self.failing:
            self.error_code = ERROR_FAILURE
            self._end("FAILED", now)
            return
        if task.kind == "rotate":
            task.goal = (self.x, self.y, wrap(self.yaw + task.theta))
            task.leg = "align"
            return
        tag_id = self.tags.charger if task.kind == "charge" else task.target_id
        if tag_id is None or tag_id not in self.tags.tags:
            self.error_code = ERROR_UNKNOWN_TAG
            self._end("FAILED", now)
            return
        gx, gy = self.tags.tags[tag_id]
        task.goal = (gx, gy, wrap(task.theta))

    def _drive_task(self, task: Task, now: float, dt: float) -> None:
        assert task.goal is not None
        gx, gy, gyaw = task.goal
        dx, dy = gx - self.x, gy - self.y
        distance = math.hypot(dx, dy)
        if task.leg in ("turn", "drive") and distance <= POSITION_TOLERANCE:
            task.leg = "align"
        if task.leg == "turn":
            if self._turn_toward(math.atan2(dy, dx), dt):
                task.leg = "drive"
            return
        if task.leg == "drive":
            travel = min(distance, self.speed * dt)
            self.x += dx / distance * travel
            self.y += dy / distance * travel
            return
        if self._turn_toward(gyaw, dt):
            self._end("COMPLETED", now)
            self.charging = task.kind == "charge"

    def _turn_toward(self, heading: float, dt: float) -> bool:
        """Rotate toward ``heading`` at the turn rate; True once there."""
        error = wrap(heading - self.yaw)
        turn = max(-self.turn_rate * dt, min(self.turn_rate * dt, error))
        self.yaw = wrap(self.yaw + turn)
        return abs(error - turn) <= HEADING_TOLERANCE

    def _drive_remote(self, now: float, dt: float, halted: bool) -> None:
        if halted or now >= self.remote_until:
            self.remote_vel = (0.0, 0.0)
        lin, ang = self.remote_vel
        self.yaw = wrap(self.yaw + ang * dt)
        self.x += lin * math.cos(self.yaw) * dt
        self.y += lin * math.sin(self.yaw) * dt


def _finite(value: Any) -> float:
    v = float(value)
    return v if math.isfinite(v) else 0.0
