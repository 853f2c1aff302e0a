"""The simulated GRX's robot: task protocol, walking base, faults. Pure: no zenoh, no clock.

What it models of the real robot (seed 004; ``../shared/reference/robots.md`` 3):

- the two-step task protocol: ``robot_task_command`` (and ``..._data``) is stored; only a
  map with ``flag_task_command_update`` true applies the stored command. A command without
  its flag does nothing; a flag with no command ever received does nothing. One map may
  carry both (the vendor's demos do): the command is stored first.
- task acceptance: servo_on and servo_off always (servo_off disables the motors); clear_fault
  clears the error codes; with an error code set or (m4) the e-stop on, every other task is
  refused; a motion task needs the servos on; ids the profile does not name are refused.
  ``robot_task_state`` is the last accepted id; ``flag_task_in_process`` is true for
  ``task_seconds`` after acceptance, and for as long as a continuous task (walk) runs.
- walking: in a continuous task the base integrates the virtual joystick at the rates the
  settings map onto the sticks (``max_speed`` m/s, ``max_yaw_rate`` rad/s at full
  deflection). Like the real robot as far as anyone knows, it keeps the last axes it was
  sent: stopping is the sender's job, and the tests check the executive does it.
- faults (``command``): error codes, heartbeat flag false, silence of a category, a
  malformed map, and the e-stop and battery where the schema has them.
- the joints (``body``, ``sim.body.SimBody``): held by the firmware, stepped in MuJoCo; ``joint_measured_position`` reports them in the
  schema's unit (degrees in the seed's). Without a body, every joint reads 0. The
  contacts the body reports are kept (``contacts``, ``contact_events``).

Every client map received is recorded (``received``) so a test can assert what was sent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from executive.robots.grx import interface as wire
from executive.robots.grx.settings import GrxSettings
from executive.robots.simkit.physics import ContactEvent

if TYPE_CHECKING:
    from executive.robots.grx.sim.body import SimBody

MOTION_FREE = ("servo_on", "servo_off", "clear_fault", "servo_reboot")  # need no servo on


class CommandError(ValueError):
    """A fault command the simulator does not understand (the message says what it takes)."""


HELP = """\
commands (one per line on stdin; each answers one JSON line on stdout):
  status                      the robot's state
  error CODE [INDEX]          robot_error_codes (m4: the code at INDEX, default 0); 0 clears
  clear-error                 every error code 0 (clear_fault does the same)
  heartbeat on|off            flag_heart_beat
  silence CATEGORY|all        stop publishing that category's map (comm robot task grx)
  resume [CATEGORY|all]       publish it again
  garbage CATEGORY            publish one payload that is not a msgpack map there
  estop on|off                flag_robot_emergent_stop (m4 schema only)
  battery FRACTION            robot_battery_percentage 0..1 (m4 schema only)
  refuse on|off               refuse every task command (the robot ignores them)
  quit                        stop the simulator
"""


@dataclass
class Received:
    t: float
    category: str
    fields: dict[str, Any]


@dataclass
class GrxModel:
    schema: wire.Schema
    tasks: Mapping[str, int]  # fsm name -> TID (the profile's)
    settings: GrxSettings
    task_seconds: float = 0.5
    max_speed: float = 0.5  # m/s at full deflection (forward and lateral)
    max_yaw_rate: float = 0.8  # rad/s at full deflection
    n_joints: int = 32  # the GR-1 T2's joint count (profile grx)
    now: float = 0.0
    body: SimBody | None = None

    def __post_init__(self) -> None:
        self.names = {tid: name for name, tid in self.tasks.items()}
        self.task_state = self.tasks.get("servo_off", 0)
        self.task_substate = 0
        self.in_process_until = 0.0
        self.servo_on = False
        self.codes: list[int] = [0] * (4 if self.schema.error_codes_list else 1)
        self.heartbeat = True
        self.estop = False
        self.battery = 0.85
        self.refuse = False
        self.silenced: set[str] = set()
        self.garbage: set[str] = set()
        self.pending_task: int | None = None
        self.pending_component: int | None = None
        self.component_state = 0
        self.left = [0.0, 0.0]
        self.right = [0.0, 0.0]
        self.x = self.y = self.heading = 0.0
        self.accepted: list[int] = []
        self.refused: list[tuple[int, str]] = []
        self.received: list[Received] = []
        self.contacts: dict[tuple[str, str], ContactEvent] = {}  # in contact now
        self.contact_events = 0  # contacts begun since start
        if self.body is not None:
            self.n_joints = len(self.body.names)

    # -- the client side: what the user computer sends ------------------------------------

    def apply(self, category: str, fields: Mapping[str, Any]) -> None:
        """One client map, in the order the robot reads it: commands first, then flags."""
        self.received.append(Received(self.now, category, dict(fields)))
        if category in ("task", "grx"):  # the docs say task/client, the vendor's demo grx
            if wire.COMPONENT_COMMAND in fields:
                self.pending_component = _int(fields[wire.COMPONENT_COMMAND])
            if fields.get(wire.COMPONENT_UPDATE) is True and self.pending_component is not None:
                self.component_state = self.pending_component
        if category == "task":
            if wire.TASK_COMMAND in fields:
                self.pending_task = _int(fields[wire.TASK_COMMAND])
            if fields.get(wire.TASK_UPDATE) is True and self.pending_task is not None:
                self._request(self.pending_task)
        if category == "grx":
            for key, stick in ((wire.AXIS_LEFT, self.left), (wire.AXIS_RIGHT, self.right)):
                if key in fields:
                    value = _axis(fields[key])
                    if value is not None:
                        stick[:] = value

    def _request(self, tid: int) -> None:
        name = self.names.get(tid)
        why = self._refusal(tid, name)
        if why:
            self.refused.append((tid, why))
            return
        self.accepted.append(tid)
        self.task_state = tid
        self.in_process_until = self.now + self.task_seconds
        if name == "servo_on":
            self.servo_on = True
        elif name == "servo_off":
            self.servo_on = False
        elif name == "clear_fault":
            self.codes = [0] * len(self.codes)

    def _refusal(self, tid: int, name: str | None) -> str:
        if self.refuse:
            return "refusing every task (fault)"
        if name is None:
            return f"unknown task id {tid}"
        if name in ("servo_off", "clear_fault"):
            return ""
        if self.estop:
            return "emergency stop"
        if any(self.codes):
            return "error codes set"
        if name not in MOTION_FREE and not self.servo_on:
            return "servos are off"
        return ""

    # -- time ------------------------------------------------------------------------------

    @property
    def walking(self) -> bool:
        return self.servo_on and self.names.get(self.task_state) in self.settings.continuous_tasks

    @property
    def in_process(self) -> bool:
        return self.walking or self.now < self.in_process_until

    def step(self, dt: float) -> list[ContactEvent]:
        """Advance ``dt`` s: the joints, then the walk; the contacts begun or ended."""
        self.now += dt
        events = self.body.step(dt) if self.body is not None else []
        for event in events:
            key = (event.a, event.b)
            if event.action == "begin":
                self.contacts[key] = event
                self.contact_events += 1
            else:
                self.contacts.pop(key, None)
        if not self.walking or self.estop or any(self.codes):
            return events
        vx, vy, yaw = self.settings.rates(self.left, self.right)
        c, s = math.cos(self.heading), math.sin(self.heading)
        self.x += (vx * c - vy * s) * self.max_speed * dt
        self.y += (vx * s + vy * c) * self.max_speed * dt
        self.heading += yaw * self.max_yaw_rate * dt
        return events

    def joint_positions(self) -> list[float]:
        """``joint_measured_position``: the body's joints in the schema's unit."""
        if self.body is None:
            return [0.0] * self.n_joints
        q = self.body.positions()
        return [math.degrees(v) for v in q] if self.schema.joint_degrees else q

    # -- the server side: what the robot publishes -----------------------------------------

    def server_maps(self) -> dict[str, dict[str, Any]]:
        """The four state maps as the robot publishes them now (silenced ones left out)."""
        imu = self.schema.imu_prefix
        half = self.heading / 2
        maps: dict[str, dict[str, Any]] = {
            "comm": {wire.HEART_BEAT: self.heartbeat},
            "robot": {
                f"{imu}_quat_value": [0.0, 0.0, math.sin(half), math.cos(half)],
                wire.JOINT_POSITION: self.joint_positions(),
            },
            "task": {
                self.schema.task_in_process: self.in_process,
                wire.TASK_STATE: self.task_state,
                wire.TASK_SUBSTATE: self.task_substate,
            },
            "grx": {
                wire.CORE_VERSION: "sim",
                wire.GRX_VERSION: "sim",
                wire.ERROR_CODES: list(self.codes)
                if self.schema.error_codes_list
                else self.codes[0],
            },
        }
        for flag, value in ((self.schema.estop, self.estop), (self.schema.fault, any(self.codes))):
            if flag is not None:
                maps[flag[0]][flag[1]] = value
        if self.schema.battery is not None:
            maps[self.schema.battery[0]][self.schema.battery[1]] = self.battery
        return {k: v for k, v in maps.items() if k not in self.silenced}

    def status(self) -> dict[str, Any]:
        axes = [m.fields for m in self.received if m.category == "grx"]
        nonzero = [
            f
            for f in axes
            if any(v for k in (wire.AXIS_LEFT, wire.AXIS_RIGHT) for v in f.get(k, []) or [])
        ]
        return {
            "task_state": self.task_state,
            "task_name": self.names.get(self.task_state),
            "in_process": self.in_process,
            "servo_on": self.servo_on,
            "error_codes": list(self.codes),
            "heartbeat": self.heartbeat,
            "estop": self.estop,
            "pose": [round(self.x, 4), round(self.y, 4), round(self.heading, 4)],
            "axes": [list(self.left), list(self.right)],
            "accepted": list(self.accepted),
            "refused": [[t, why] for t, why in self.refused],
            "component_state": self.component_state,
            "axes_received": len(axes),
            "nonzero_axes_received": len(nonzero),
            "silenced": sorted(self.silenced),
            "physics": self.body.mode if self.body is not None else "none",
            "joints": [round(q, 5) for q in self.body.positions()] if self.body else [],
            "contacts": [e.as_dict() for e in self.contacts.values()],
            "contact_events": self.contact_events,
        }

    # -- faults ------------------------------------------------------------------------------

    def command(self, line: str) -> dict[str, Any]:
        """One fault command (see HELP); the answer; CommandError if it is not one."""
        words = line.split()
        if not words:
            raise CommandError("empty command")
        verb, args = words[0], words[1:]
        if verb == "status":
            return self.status()
        handlers: dict[str, Callable[[list[str]], object]] = {
            "error": self._error,
            "clear-error": lambda a: self._error(a, clear=True),
            "heartbeat": lambda a: setattr(self, "heartbeat", _on_off(a)),
            "silence": lambda a: self.silenced.update(_categories(a)),
            "resume": lambda a: self.silenced.difference_update(_categories(a)),
            "garbage": lambda a: self.garbage.update(_categories(a)),
            "estop": self._estop,
            "battery": self._battery,
            "refuse": lambda a: setattr(self, "refuse", _on_off(a)),
        }
        handler = handlers.get(verb)
        if handler is None:
            raise CommandError(f"unknown command {verb!r}\n{HELP}")
        handler(args)
        return {"ok": True}

    def _error(self, args: list[str], clear: bool = False) -> None:
        if clear:
            self.codes = [0] * len(self.codes)
            return
        code = _number(args, 0, int)
        index = _number(args, 1, int) if len(args) > 1 else 0
        if not 0 <= index < len(self.codes):
            raise CommandError(f"index {index} outside 0..{len(self.codes) - 1}")
        self.codes[index] = code

    def _estop(self, args: list[str]) -> None:
        if self.schema.estop is None:
            raise CommandError(f"the {self.schema.name} schema has no e-stop")
        self.estop = _on_off(args)

    def _battery(self, args: list[str]) -> None:
        if self.schema.battery is None:
            raise CommandError(f"the {self.schema.name} schema has no battery")
        self.battery = min(max(_number(args, 0, float), 0.0), 1.0)


def _categories(args: list[str]) -> set[str]:
    target = args[0] if args else "all"
    cats = set(wire.CATEGORIES) if target == "all" else {target}
    if not cats <= set(wire.CATEGORIES):
        raise CommandError(f"unknown category {target!r} (comm robot task grx all)")
    return cats


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _axis(value: object) -> list[float] | None:
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        return [min(max(float(v), -1.0), 1.0) for v in value]
    return None


def _on_off(args: list[str]) -> bool:
    if args and args[0] in ("on", "off"):
        return args[0] == "on"
    raise CommandError("expected on or off")


def _number(args: list[str], i: int, kind: type[int] | type[float]) -> Any:
    try:
        return kind(args[i], 0) if kind is int else kind(args[i])  # type: ignore[call-arg]
    except (IndexError, ValueError):
        raise CommandError(f"argument {i + 1}: expected a number") from None
