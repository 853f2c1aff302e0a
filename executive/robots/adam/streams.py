"""The Adam's joint streams: the whole body on ``rt/lowcmd`` (one ``LowCmd_`` carries every
motor) and the hands on ``rt/handcmd`` (positions in counts), as ``JointStream`` ports.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from cyclonedds.pub import DataWriter

from executive.motion.native import Q_F32, Q_U32, NativeLayout, member_offsets
from executive.robots.adam.interface import HAND_RANGE
from executive.seam.ports import FloatArray, Stamped
from executive.seam.profile import RobotProfile
from executive.wire.codec import Codec, raw_write
from executive.wire.robot_io import LatestReader


class _Stream:
    """One of the Adam's two command streams (``ports.JointStream``)."""

    def __init__(
        self,
        name: str,
        command_key: str,
        joints: tuple[str, ...],
        codec: Codec,
        writer: DataWriter[Any],
        reader: LatestReader[Any],
    ) -> None:
        self.name = name
        self.command_key = command_key
        self.joints = joints
        self.codec = codec
        self.record = codec.zeros()
        self._writer = writer
        self._reader = reader

    def measured(self) -> Stamped[FloatArray] | None:
        stamped = self._reader.latest
        if stamped is None:
            return None
        return Stamped(self.positions(stamped.sample), stamped.received)

    def positions(self, sample: Any) -> FloatArray:
        raise NotImplementedError

    def encode(self, q: FloatArray) -> bytes:
        raise NotImplementedError

    def decode_q(self, data: bytes) -> FloatArray:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        raw_write(self._writer, data)

    def native_layout(self) -> NativeLayout | None:
        """Where the native stream puts the positions in this command (no feed-forward)."""
        return None


class BodyStream(_Stream):
    """``rt/lowcmd``: every motor, enabled, with the profile's gains."""

    def __init__(self, profile: RobotProfile, *args: Any) -> None:
        super().__init__("body", *args)
        kp, kd = profile.gains("body")
        if not (np.all(kp > 0) and np.all(kd >= 0)):
            raise ValueError("body: profile gains must have kp > 0 and kd >= 0")
        motors = self.record["motor_cmd"]
        motors["mode"] = profile.motor_mode
        motors["kp"] = kp
        motors["kd"] = kd

    def positions(self, sample: Any) -> FloatArray:
        return np.asarray(sample["motor_state"]["q"], dtype=np.float64)

    def encode(self, q: FloatArray) -> bytes:
        self.record["motor_cmd"]["q"] = q
        return self.codec.encode(self.record)

    def decode_q(self, data: bytes) -> FloatArray:
        return np.asarray(self.codec.decode(data)["motor_cmd"]["q"], dtype=np.float64)

    def native_layout(self) -> NativeLayout | None:
        q_at = member_offsets(self.codec.encode, self.codec.zeros(), "motor_cmd", "q", Q_F32)
        return None if q_at is None else NativeLayout(self._writer._ref, tuple(q_at), Q_F32)


class HandStream(_Stream):
    """``rt/handcmd``: 12 positions in counts (rounded, 0..1000)."""

    def positions(self, sample: Any) -> FloatArray:
        return np.asarray(sample["position"], dtype=np.float64)

    def encode(self, q: FloatArray) -> bytes:
        self.record["position"] = np.clip(np.rint(q), *HAND_RANGE).astype(np.uint32)
        return self.codec.encode(self.record)

    def decode_q(self, data: bytes) -> FloatArray:
        return np.asarray(self.codec.decode(data)["position"], dtype=np.float64)

    def native_layout(self) -> NativeLayout | None:
        """Counts: the native side rounds and clips them as ``encode`` does (the profile's
        limits are the hand's range)."""
        q_at = member_offsets(self.codec.encode, self.codec.zeros(), "position", None, Q_U32)
        return None if q_at is None else NativeLayout(self._writer._ref, tuple(q_at), Q_U32)
