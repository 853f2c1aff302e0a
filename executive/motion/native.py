"""The native stream: the fixed-rate joint command stream in C (issue 22).

Python waited for the GIL every 2 ms: the stream's lateness p99 was 4-5 times a C
SCHED_FIFO loop's of the same run, and a blocked interpreter stopped the stream. With
``stream_mode: native`` (the profile; ``ATOM_EXECUTIVE_STREAM`` overrides it) the
extension's thread (``executive/robots/native/stream.c``, the native streamer) samples and
writes every engaged stream each period, under the same gate as the e-stop reflex's
hold; the motion streamer hands it *plans* when they change and every ``RENEW_S``:

- per stream, a template command (mode, gains: what ``JointStream.encode`` makes), where
  each position lies in it (``q_at``: float32, or rounded counts for the Adam's hands)
  and where each feed-forward torque lies (``tau_at``, where the stream has one);
- per joint, the minimum-jerk segment that moves it (start time, duration, start, goal:
  what ``Trajectory.sample`` computes) or its fixed target; the trajectories' clock
  (paused: slowed to a stop as the Python streamer does);
- the gravity feed-forward as knots in trajectory time (``KNOT_S`` apart, from the
  renewal on past the dead man: ``knots``), each the body model's torque at the planned position,
  linearly interpolated by C: the one approximation. The torque's second derivative along
  a move is a few tens of N m/s^2, so its error between knots stays below 1e-4 N m;
- a dead man: each renewal arms it for ``deadman_s`` (the profile's
  ``stream_deadman_s``). Past it, every stream holds at the position and torque it sent
  last, and plans are refused until Python has seen that hold, as after a reflex trip.

``NativeLayout`` is what a robot's stream tells the streamer (``native_layout()``);
``member_offsets`` finds positions in an encoded sample whatever its layout. The C side
comes with the gate the adapter attaches: the reflex's (``executive.robots.native.install``), or
for a robot without an e-stop topic, a gate that only streams
(``executive.robots.native.stream_gate``); the streamer finds it as the gate's ``_core``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from executive.motion.trajectory import FloatArray

ENV = "ATOM_EXECUTIVE_STREAM"  # "native" or "python": overrides the profile's stream_mode
MODES = ("python", "native")
RENEW_S = 0.02  # Python renews the dead man and the plans this often
# with no stream engaged the dead man is disarmed (nothing to hold) and Python looks in
# this often; the first plan that engages a stream arms it at once (issue 22: idle)
IDLE_RENEW_S = 0.25
KNOT_S = 0.005  # the feed-forward's knots, trajectory time apart
MAX_KNOTS = 64  # the extension's


def knots(deadman_s: float) -> int:
    """How many knots a plan carries: enough to reach past the dead man (a late renewal
    holds before the feed-forward runs out), at most ``MAX_KNOTS`` (a longer dead man: the
    last knot's torque until Python renews)."""
    return min(MAX_KNOTS, math.ceil((deadman_s + 2 * RENEW_S) / KNOT_S) + 1)


Q_F32, Q_U32 = 0, 1  # how a position lies in a command (the extension's q_kind)


@dataclass(frozen=True)
class NativeLayout:
    """Where a stream's command takes its positions and torques, and who writes it."""

    writer: int  # the DDS writer's handle (``DataWriter._ref``)
    q_at: tuple[int, ...]  # each motor's position in an encoded sample (header included)
    q_kind: int  # Q_F32, or Q_U32 (counts, rounded and clipped by the limits)
    tau_at: tuple[int, ...] = ()  # each motor's feed-forward torque; () when none
    feedforward: Callable[[FloatArray], FloatArray] | None = None  # tau at positions q


def mode(profile_mode: str) -> str:
    """The stream's mode: the environment's ``ATOM_EXECUTIVE_STREAM`` if set, else the
    profile's. Raises ValueError naming the variable for anything else."""
    value = os.environ.get(ENV, "").strip().lower()
    if not value:
        return profile_mode
    if value not in MODES:
        raise ValueError(f"{ENV}={value!r}: must be one of {', '.join(MODES)}")
    return value


def member_offsets(
    encode: Callable[[Any], bytes], record: Any, field: str, member: str | None, kind: int
) -> list[int] | None:
    """Where each element of ``record[field]`` (its ``member``, for a struct array) lies
    in ``encode(record)``: found by encoding distinct values, so whatever the layout (as C
    peers write it). None if the values are not 4-byte ``kind`` or not each found once.
    ``record`` is changed (zero it after)."""
    array = record[field]
    target = array[member] if member is not None else array
    want = np.dtype("<f4") if kind == Q_F32 else np.dtype("<u4")
    if target.dtype != want or target.ndim != 1:
        return None
    n = target.shape[0]
    values = (1000.25 + 2.0 * np.arange(n)) if kind == Q_F32 else (3_000_017 + 7919 * np.arange(n))
    probe = values.astype(want)
    if member is not None:
        array[member] = probe
    else:
        record[field] = probe
    wire = encode(record)
    found = []
    for v in probe:
        at = wire.find(v.tobytes())
        if at < 0 or wire.find(v.tobytes(), at + 1) >= 0:
            return None
        found.append(at)
    return found
