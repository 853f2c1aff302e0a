"""The Atom's e-stop reflex: which topic trips it and what it cancels (issues 14, 22).

The reflex itself, the gate and the native stream are robot-neutral and live in the
extension (``executive.robots.native``); what is the Atom's is here:

- the e-stop topic (``emergency_state``: its type's flags are what trips the reflex);
- the cancel after the holds: a ``CANCEL_TASK`` on the base's command topic, encoded as
  ``AtomCommands.amr`` encodes it, with where its ``command_id`` and ``timestamp`` lie
  (the reflex stamps both when it writes), its ids above ``CANCEL_ID_BIT``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from executive.robots.native import Cancel, Measured, Reflex, Streamer, Trip
from executive.robots.native import install as _install
from executive.wire.robot_io import RobotIO

__all__ = ["CANCEL_ID_BIT", "ESTOP_KEY", "Reflex", "Trip", "cancel_task", "install"]

ESTOP_KEY = "emergency_state"
CANCEL_KEY = "amr_cmd"
CANCEL_ID_BIT = 1 << 31  # the reflex's CANCEL_TASK ids: AtomCommands counts up from < 2**30
HEADER = 4  # the encapsulation header before the fields' offsets


def cancel_task(io: RobotIO) -> Cancel | None:
    """A CANCEL_TASK on the base's command writer, as ``AtomCommands.amr`` encodes it, and
    where its ``command_id`` and ``timestamp`` lie. None when ``io`` has no such writer."""
    writer = io.writers.get(CANCEL_KEY)
    if writer is None:
        return None
    codec = io.codec(CANCEL_KEY)
    record = codec.zeros()
    record["command_type"] = io.interface.AMRCommandType["CANCEL_TASK"].value
    fields: dict[str, Any] = dict(codec.dtype.fields or {})
    return Cancel(
        writer,
        codec.encode(record),
        HEADER + fields["command_id"][1] if "command_id" in fields else 0,
        HEADER + fields["timestamp"][1] if "timestamp" in fields else 0,
        CANCEL_ID_BIT | (time.time_ns() // 1000) % CANCEL_ID_BIT,
    )


def install(
    io: RobotIO,
    streamer: Streamer,
    measured: Sequence[Measured],
    on_trip: Callable[[Trip], None],
) -> Reflex | None:
    """Arm the reflex on the Atom's ``io`` (``executive.robots.native.install``): tripped by
    its e-stop topic, cancelling the base's task after the holds."""
    return _install(io, streamer, measured, on_trip, estop_key=ESTOP_KEY, cancel=cancel_task(io))
