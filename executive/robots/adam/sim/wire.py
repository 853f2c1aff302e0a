"""The simulated Adam's hot wire: ``LowCmd_`` in and ``LowState_`` out as numpy records.

Stock cyclonedds-python takes 300-450 µs to (de)serialize one 31-motor ``LowCmd_`` or
``LowState_`` here: at 400 Hz in and 500 Hz out that is a third of a core. Both types hold a
``sequence`` (and sdk-1.2's ``LowState_`` a ``string``), which the project codec
(``executive.wire.codec``) refuses in general; but with the motor count N fixed by the
profile, XCDR1 lays a sequence out exactly like a ``uint32`` count followed by an array of N.
So each hot type gets a fixed-size surrogate ``@final`` struct (count + array) for N, and the
project codec derives its layout from the binding's own serialization machine; sdk-1.2's
string and the ``reserve`` after it are a short hand-made tail. ``tests/adam_sim`` proves the
bytes equal to stock serialization.

A command whose sequence does not hold N motors is not decoded further: its count is read
from the header and it is rejected (``wrong_length``). Encodings other than XCDR1
little-endian (what every writer measured so far sends) go through stock deserialization.
"""

from __future__ import annotations

import struct
import types as pytypes
from dataclasses import dataclass
from typing import Any

import cyclonedds.idl.annotations as annotate
import cyclonedds.idl.types as t
import numpy as np
import numpy.typing as npt
from cyclonedds import idl

from executive.robots.adam.interface import AdamInterface
from executive.robots.simkit.joints import command_floats
from executive.wire.codec import HEADER, Codec, DecodeError, Record

_CDR_LE = b"\x00\x01"
_array: Any = t.array  # indexable at run time; its stubs say it is not


def _fixed(name: str, fields: list[tuple[str, Any]]) -> Any:
    """A ``@final`` struct with ``fields``, for the codec only (never on a topic)."""

    def body(ns: dict[str, Any]) -> None:
        ns["__annotations__"] = dict(fields)

    cls = pytypes.new_class(name, (idl.IdlStruct,), {"typename": f"adam_sim.{name}"}, body)
    return dataclass(annotate.final(cls))


@dataclass(frozen=True)
class BodyCommand:
    """One ``LowCmd_`` as the sim saw it; ``floats``/``modes`` are None unless it held N."""

    count: int  # motors in the sequence
    mode_pr: int  # 0 PR, 1 AB (sdk-1.2; 0 on the seed interface)
    modes: npt.NDArray[np.uint8] | None
    floats: npt.NDArray[np.float32] | None  # (N, 5) q, dq, tau, kp, kd


class BodyWire:
    """Encoder of ``LowState_`` and decoder of ``LowCmd_`` for N motors on one variant."""

    def __init__(self, iface: AdamInterface, motors: int) -> None:
        self.iface = iface
        self.motors = n = motors
        self.sdk12 = "mode_pr" in iface.LowCmd_.__annotations__
        head = [("mode_pr", t.uint8)] if self.sdk12 else []
        self._cmd = Codec(
            _fixed(
                f"LowCmdFixed{n}",
                [
                    *head,
                    ("count", t.uint32),
                    ("motor_cmd", _array[iface.MotorCmd_, n]),
                    ("reserve", t.uint32),
                ],
            )
        )
        self._count_at = 4 + (4 if self.sdk12 else 0)  # after the encapsulation (and mode_pr)
        if self.sdk12:
            battery = _fixed(
                "BatteryHead",
                [
                    ("timestamp_ms", t.int64),
                    ("voltage", t.float32),
                    ("current", t.float32),
                    ("power", t.float32),
                    ("wh_accumulated", t.float32),
                ],
            )
            state_fields = [
                ("mode_pr", t.uint8),
                ("tick", t.uint32),
                ("imu_state", iface.IMUState_),
                ("count", t.uint32),
                ("motor_state", _array[iface.MotorState_, n]),
                ("wireless_remote", _array[t.float32, 19]),
                ("battery_data", battery),
            ]
        else:
            state_fields = [
                ("imu_state", iface.IMUState_),
                ("count", t.uint32),
                ("motor_state", _array[iface.MotorState_, n]),
                ("wireless_remote", _array[t.int16, 40]),
                ("reserve", t.uint32),
            ]
        self._state = Codec(_fixed(f"LowStateFixed{n}", state_fields))
        self._status = ""
        self._tail = self._make_tail("")

    # -- state out --------------------------------------------------------------------

    def state_record(self) -> Record:
        """A writable ``LowState_`` record with the count set and the IMU at rest, upright."""
        rec = self._state.zeros()
        rec["count"] = self.motors
        imu = rec["imu_state"]
        imu["quaternion"][:] = (1.0, 0.0, 0.0, 0.0)  # w, x, y, z
        imu["accelerometer"][:] = (0.0, 0.0, 9.81)
        imu["temperature"] = 35
        return rec

    def set_status(self, status: str) -> None:
        """sdk-1.2 ``battery_data.status`` (free text on the robot)."""
        if status != self._status:
            self._status = status
            self._tail = self._make_tail(status)

    def _make_tail(self, status: str) -> bytes:
        if not self.sdk12:
            return b""
        text = status.encode() + b"\x00"
        pos = self._state.size + 4 + len(text)  # payload offset after the string
        return struct.pack("<I", len(text)) + text + b"\x00" * (-pos % 4) + b"\x00\x00\x00\x00"

    def encode_state(self, rec: Record) -> bytes:
        return self._state.encode(rec) + self._tail

    # -- commands in ------------------------------------------------------------------

    def decode_command(self, data: bytes) -> BodyCommand:
        """The command in ``data``; ``DecodeError`` if it is no ``LowCmd_`` at all."""
        if data[:2] != _CDR_LE:
            return self._decode_stock(data)
        if len(data) < self._count_at + 4:
            raise DecodeError(f"{len(data)} bytes is too short for LowCmd_")
        (count,) = struct.unpack_from("<I", data, self._count_at)
        mode_pr = data[4] if self.sdk12 else 0
        if count != self.motors:
            return BodyCommand(count, mode_pr, None, None)
        rec = self._cmd.decode(data)
        motors = rec["motor_cmd"]
        return BodyCommand(count, mode_pr, motors["mode"], command_floats(motors))

    def _decode_stock(self, data: bytes) -> BodyCommand:
        try:
            sample = self.iface.LowCmd_.deserialize(data)
        except Exception as e:  # noqa: BLE001 - the binding raises assorted errors on garbage
            raise DecodeError(f"undecodable LowCmd_ ({data[:4].hex()}): {e}") from None
        motors = sample.motor_cmd
        mode_pr = int(getattr(sample, "mode_pr", 0))
        if len(motors) != self.motors:
            return BodyCommand(len(motors), mode_pr, None, None)
        modes = np.array([m.mode for m in motors], dtype=np.uint8)
        floats = np.array([[m.q, m.dq, m.tau, m.kp, m.kd] for m in motors], dtype=np.float32)
        return BodyCommand(len(motors), mode_pr, modes, floats)


class HandWire:
    """``HandCmd_`` in and ``HandState_`` out: fixed-size, so the project codec as it is."""

    def __init__(self, iface: AdamInterface) -> None:
        self.cmd = Codec(iface.HandCmd_)
        self.state = Codec(iface.HandState_)

    def decode_command(self, data: bytes) -> npt.NDArray[np.uint32]:
        positions: npt.NDArray[np.uint32] = self.cmd.decode(data)["position"]
        return positions

    def encode_state(self, rec: Record) -> bytes:
        return self.state.encode(rec)


__all__ = ["HEADER", "BodyCommand", "BodyWire", "HandWire"]
