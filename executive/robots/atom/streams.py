"""The Atom's joint streams: ``rt/upper/cmd``, ``rt/lower/cmd``, ``rt/hands/cmd``.

Each stream is a ``ports.JointStream``: a command record prepared once from the profile
(``mode``, ``kp``, ``kd`` per motor), whose positions are set and encoded through the
precompiled codec each period; its measured positions come from the matching state
topic. The streamer calls these under its lock, so one record per stream is enough.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from executive.motion.native import Q_F32, NativeLayout, member_offsets
from executive.robots.native import Measured
from executive.seam.body import BodySpec, Gravity
from executive.seam.ports import FloatArray, Stamped
from executive.seam.profile import RobotProfile
from executive.wire.codec import raw_write
from executive.wire.robot_io import RobotIO

# stream -> (command key, state key, array field in the command, array field in the state)
STREAMS: dict[str, tuple[str, str, str, str]] = {
    "upper": ("upper_cmd", "upper_state", "motor_cmd", "motor_state"),
    "lower": ("lower_cmd", "lower_state", "motor_cmd", "motor_state"),
    "hands": ("hands_cmd", "hands_state", "hands", "hands"),
}


class AtomStream:
    """One of the Atom's three joint command topics."""

    def __init__(self, io: RobotIO, profile: RobotProfile, name: str) -> None:
        self.name = name
        self.command_key, self.state_key, self.cmd_field, self.state_field = STREAMS[name]
        self.joints = tuple(profile.topics[name])
        self.io = io
        self.codec = io.codec(self.command_key)
        kp, kd = profile.gains(name)
        if not (np.all(kp > 0) and np.all(kd >= 0)):
            raise ValueError(f"{name}: profile gains must have kp > 0 and kd >= 0")
        # field by field from zeros (numpy's copy() leaves the padding after ``mode``
        # uninitialised: garbage on the wire)
        self.record = self.codec.zeros()
        motors = self.record[self.cmd_field]
        motors["mode"] = profile.motor_mode
        motors["kp"] = kp
        motors["kd"] = kd
        self._writer = io.writers.get(self.command_key)
        # the model's gravity torque as feed-forward, where the profile's body asks for it
        body = profile.body
        self.gravity = (
            Gravity(profile, self.joints)
            if isinstance(body, BodySpec) and name in body.feedforward
            else None
        )

    def measured(self) -> Stamped[FloatArray] | None:
        stamped = self.io.readers[self.state_key].latest
        if stamped is None:
            return None
        q = np.asarray(stamped.sample[self.state_field]["q"], dtype=np.float64)
        return Stamped(q, stamped.received)

    def encode(self, q: FloatArray) -> bytes:
        motors = self.record[self.cmd_field]
        motors["q"] = q
        if self.gravity is not None:
            motors["tau"] = self.gravity(q)
        return self.codec.encode(self.record)

    def decode_q(self, data: bytes) -> FloatArray:
        q: Any = self.codec.decode(data)[self.cmd_field]["q"]
        return np.asarray(q, dtype=np.float64).copy()

    def write(self, data: bytes) -> None:
        if self._writer is not None:
            raw_write(self._writer, data)

    def native_layout(self) -> NativeLayout | None:
        """Where the native stream puts positions and the feed-forward in this command."""
        if self._writer is None:
            return None
        q_at = member_offsets(self.codec.encode, self.codec.zeros(), self.cmd_field, "q", Q_F32)
        tau_at = (
            member_offsets(self.codec.encode, self.codec.zeros(), self.cmd_field, "tau", Q_F32)
            if self.gravity is not None
            else []
        )
        if q_at is None or tau_at is None:
            return None
        return NativeLayout(self._writer._ref, tuple(q_at), Q_F32, tuple(tau_at), self.gravity)

    def measured_for_reflex(self, profile: RobotProfile, max_age: float) -> Measured:
        """Where the reflex finds this stream's newest measurement (it reads raw bytes)."""
        lower, upper = profile.limits(self.name)
        return Measured(
            self.state_key,
            self.cmd_field,
            self.state_field,
            lower.tolist(),
            upper.tolist(),
            max_age,
        )
