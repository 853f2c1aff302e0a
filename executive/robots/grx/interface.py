"""The Fourier GRX "User" interface on the wire: zenoh keys, field names, encodings.

Seed 004 (``../shared/reference/robots.md`` section 3): one msgpack map with string keys
per category, published by the robot every 20 ms on ``fourier-grx/dynalink_interface/
{comm,robot,task,grx}/server``; the user computer sends maps holding any subset of the
command keys on ``.../client``. Every field name of the GRX appears here once; the adapter
and the simulator name fields through these constants.

Two schema versions, a profile choice (``SCHEMAS``):

- ``seed``: the seed's table (fourier-grx-N1 ``docs/reference/user.md``, "below 4.0.0"):
  heartbeat, IMU ``sensor_usb_imus_*``, ``flag_task_in_process``, one int
  ``robot_error_codes``; no e-stop, no battery.
- ``m4``: the newer table (fourier-grx-M4 ``docs/en/reference/user.md``): ``sensor_imus_*``,
  ``robot_error_codes`` a list, ``flag_robot_emergent_stop`` and ``flag_robot_fault`` on
  robot/server, ``robot_battery_percentage`` (0..1) on grx/server, ``flag_task_running``
  instead of ``flag_task_in_process``, and a host heartbeat the user computer must keep
  writing on comm/client (``host_heartbeat_counter``; the robot e-stops after 6 s without).

Task and component ids (TIDs, MIDs) are not here: they "vary by robot and version" (N1
``docs/tasks.md``) and are profile data (``fsm:`` names -> TIDs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgpack  # type: ignore[import-untyped]  # no stubs; pyproject pins it

PREFIX = "fourier-grx/dynalink_interface"
CATEGORIES = ("comm", "robot", "task", "grx")  # the seed's; also the spec's state sources
PERIOD = 0.02  # s, the robot's server publishing period


def server_key(category: str) -> str:
    """Where the robot publishes ``category``'s state map."""
    return f"{PREFIX}/{category}/server"


def client_key(category: str) -> str:
    """Where the robot listens for ``category``'s command maps."""
    return f"{PREFIX}/{category}/client"


# -- server fields (robot -> user computer) ------------------------------------------------

HEART_BEAT = "flag_heart_beat"  # comm: bool, true while the robot's main program runs
TASK_STATE = "robot_task_state"  # task: int, the last TID accepted
TASK_SUBSTATE = "robot_task_substate"  # task: int
CORE_VERSION = "fourier_core_version"  # grx: str
GRX_VERSION = "fourier_grx_version"  # grx: str
ERROR_CODES = "robot_error_codes"  # grx: int (seed) or int[] (m4); 0: no error
JOINT_POSITION = "joint_measured_position"  # robot: float[n], deg (< 4.0.0) or rad

# -- client fields (user computer -> robot) ------------------------------------------------

TASK_COMMAND = "robot_task_command"  # task: int TID
TASK_COMMAND_DATA = "robot_task_command_data"  # task: dict
TASK_UPDATE = "flag_task_command_update"  # task: bool, applies the last task command
COMPONENT_COMMAND = "robot_component_command"  # int MID
COMPONENT_COMMAND_DATA = "robot_component_command_data"  # dict
COMPONENT_UPDATE = "flag_component_command_update"  # bool
AXIS_LEFT = "virtual_joystick_axis_left"  # grx: [x, y] in [-1, 1]
AXIS_RIGHT = "virtual_joystick_axis_right"  # grx: [x, y] in [-1, 1]


@dataclass(frozen=True)
class Schema:
    """The fields that differ between GRX releases; ``None``: this release has no such field."""

    name: str
    imu_prefix: str
    task_in_process: str  # task/server: bool, a task is running
    error_codes_list: bool  # robot_error_codes is int[] (else one int)
    estop: tuple[str, str] | None = None  # (category, field): bool, e-stopped
    fault: tuple[str, str] | None = None  # (category, field): bool, robot fault
    battery: tuple[str, str] | None = None  # (category, field): float 0..1
    host_heartbeat: tuple[str, str] | None = None  # (client category, field): int, keep writing
    # joint_measured_position's unit: degrees below fourier-grx 4.0.0 (the seed's table says
    # 角度), radians from it (robots.md 3.1, seed errata)
    joint_degrees: bool = False

    @property
    def has_estop(self) -> bool:
        return self.estop is not None

    @property
    def has_battery(self) -> bool:
        return self.battery is not None


SCHEMAS: dict[str, Schema] = {
    "seed": Schema(
        name="seed",
        imu_prefix="sensor_usb_imus",
        task_in_process="flag_task_in_process",
        error_codes_list=False,
        joint_degrees=True,
    ),
    "m4": Schema(
        name="m4",
        imu_prefix="sensor_imus",
        task_in_process="flag_task_running",
        error_codes_list=True,
        estop=("robot", "flag_robot_emergent_stop"),
        fault=("robot", "flag_robot_fault"),
        battery=("grx", "robot_battery_percentage"),
        host_heartbeat=("comm", "host_heartbeat_counter"),
    ),
}


def schema(name: str) -> Schema:
    """The schema called ``name``; KeyError naming the known ones."""
    try:
        return SCHEMAS[name]
    except KeyError:
        raise KeyError(f"unknown GRX schema {name!r}; known: {', '.join(SCHEMAS)}") from None


# -- encoding ------------------------------------------------------------------------------


class DecodeError(ValueError):
    """A payload that is not one msgpack map with string keys."""


def encode(fields: Mapping[str, Any]) -> bytes:
    """One map as the vendor's code packs it (``msgpack.packb(dict)``: str keys, bin type)."""
    data: bytes = msgpack.packb(dict(fields), use_bin_type=True)
    return data


def decode(payload: bytes) -> dict[str, Any]:
    """The map in ``payload``; DecodeError saying what it is instead."""
    try:
        value = msgpack.unpackb(payload, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException) as e:  # ExtraData, FormatError...
        raise DecodeError(f"not msgpack: {str(e) or type(e).__name__}") from None
    if not isinstance(value, dict):
        raise DecodeError(f"not a map: a msgpack {type(value).__name__}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise DecodeError(f"map key {bad[0]!r} is not a string")
    return value


def error_codes(value: object) -> tuple[int, ...] | None:
    """``robot_error_codes`` as a tuple of ints (one for the seed's int); None if malformed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (value,)
    if isinstance(value, list | tuple) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return tuple(value)
    return None


def describe_errors(codes: tuple[int, ...], as_list: bool) -> tuple[str, ...]:
    """``robot_error_codes=0x0010`` (seed) or ``robot_error_codes[3]=0x0010`` per non-zero code."""
    if not as_list:
        return tuple(f"{ERROR_CODES}=0x{c & 0xFFFFFFFF:04x}" for c in codes if c)
    return tuple(f"{ERROR_CODES}[{i}]=0x{c & 0xFFFFFFFF:04x}" for i, c in enumerate(codes) if c)


def check_interface(text: str) -> str | None:
    """Why ``text`` is not a GRX interface variant (a schema name)."""
    return None if text in SCHEMAS else f"unknown GRX schema {text!r}; known: {', '.join(SCHEMAS)}"


def wire_words() -> set[str]:
    """The GRX's wire as words: its keys and every field name (this module's string
    constants and the schemas' names): what nothing above the seam may name
    (tests/test_seam.py)."""
    words = {server_key(c) for c in CATEGORIES} | {client_key(c) for c in CATEGORIES}
    for name, value in globals().items():
        if name.isupper() and isinstance(value, str):
            words.add(value)
    for schema in SCHEMAS.values():
        for value in vars(schema).values():
            words |= {
                v for v in (value if isinstance(value, tuple) else (value,)) if isinstance(v, str)
            }
    return words
