"""Precompiled XCDR1 codec for the robot's fixed-size wire types, as numpy records.

Stock cyclonedds-python (de)serializes field by field in Python: about 170 µs for one
``UpperCmd_`` here, which at 500 Hz on three streams would eat most of a core. Every hot
type on the wire is ``@final`` with fixed-size arrays only, so its encoding is a fixed
byte layout: this module derives that layout once from the binding's own serialization
machine (so it follows exactly the rules stock uses) as a numpy structured dtype. A
sample is then a numpy record, encoding is ``tobytes()``, decoding is ``frombuffer``.
Tests prove the bytes identical to stock for every supported type.

Raw I/O (``raw_write``/``raw_take``) hands those bytes to CycloneDDS directly through the
binding's C layer, skipping the Python object round trip on both ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.idl import _machinery as mach

# XCDR1 little-endian encapsulation (CDR_LE, options 0), what stock writes for these types.
HEADER = b"\x00\x01\x00\x00"
_XCDR1_MAX_ALIGN = 8
_CODES = {
    "b": "i1",
    "B": "u1",
    "h": "<i2",
    "H": "<u2",
    "i": "<i4",
    "I": "<u4",
    "q": "<i8",
    "Q": "<u8",
    "f": "<f4",
    "d": "<f8",
    "?": "?",
}

Record = npt.NDArray[np.void]


class UnsupportedTypeError(TypeError):
    """The type has a member of variable size (string, sequence, optional, union)."""


def _align(pos: int, alignment: int) -> int:
    a = min(alignment, _XCDR1_MAX_ALIGN)
    return (pos + a - 1) & ~(a - 1)


def _layout(machine: Any, pos: int, path: str) -> tuple[np.dtype[Any], int, int]:
    """(dtype of the member, its start offset after alignment, end offset) at ``pos``."""
    if isinstance(machine, mach.PrimitiveMachine):
        start = _align(pos, machine.alignment)
        return np.dtype(_CODES[machine.code]), start, start + machine.size
    if isinstance(machine, mach.PlainCdrV2ArrayOfPrimitiveMachine):
        start = _align(pos, machine.alignment)
        code = machine.code[len(str(machine.length)) :]
        return np.dtype((_CODES[code], (machine.length,))), start, start + machine.size
    if isinstance(machine, mach.EnumMachine):
        start = _align(pos, 4)
        return np.dtype("<u4"), start, start + 4
    if isinstance(machine, mach.CharMachine):
        return np.dtype("S1"), pos, pos + 1
    if isinstance(machine, mach.ByteArrayMachine):
        return np.dtype(("u1", (machine.size,))), pos, pos + machine.size
    if isinstance(machine, mach.ArrayMachine) and not machine.add_size_header:
        first, start, end = _layout(machine.submachine, pos, f"{path}[0]")
        stride = end - start
        for i in range(1, machine.size):
            dt, s, e = _layout(machine.submachine, start + i * stride, f"{path}[{i}]")
            if dt != first or s != start + i * stride or e - s != stride:
                raise UnsupportedTypeError(f"{path}: array elements do not share one layout")
        element = first if first.itemsize == stride else _with_itemsize(first, stride)
        return np.dtype((element, (machine.size,))), start, start + machine.size * stride
    if isinstance(machine, mach.InstanceMachine):
        machine.type.__idl__.populate()
        return _layout(machine.type.__idl__.v0_machine, pos, path)
    if isinstance(machine, mach.StructMachine):
        names: list[str] = []
        formats: list[np.dtype[Any]] = []
        offsets: list[int] = []
        start = cursor = pos
        for name, member in machine.members_machines.items():
            dt, s, e = _layout(member, cursor, f"{path}.{name}")
            if not names:
                start = s
            names.append(name)
            formats.append(dt)
            offsets.append(s)
            cursor = e
        rel = [o - start for o in offsets]
        dtype = np.dtype(
            {"names": names, "formats": formats, "offsets": rel, "itemsize": cursor - start}
        )
        return dtype, start, cursor
    raise UnsupportedTypeError(f"{path}: {type(machine).__name__} has no fixed layout")


def _packed(
    machine: Any, pos: int, path: str, leaves: list[tuple[int, int]]
) -> tuple[np.dtype[Any], int]:
    """Packed dtype of ``machine`` and the wire (offset, size) of each of its leaves, in order.

    For types whose array elements sit at different alignments on the wire (an array of
    structs after an odd-sized member), no single numpy layout matches the wire; the record
    then uses this packed layout and encoding gathers bytes through a precomputed index.
    """
    if isinstance(machine, mach.InstanceMachine):
        machine.type.__idl__.populate()
        return _packed(machine.type.__idl__.v0_machine, pos, path, leaves)
    if isinstance(machine, mach.StructMachine):
        names, formats = [], []
        for name, member in machine.members_machines.items():
            dt, pos = _packed(member, pos, f"{path}.{name}", leaves)
            names.append(name)
            formats.append(dt)
        return np.dtype({"names": names, "formats": formats}), pos
    if isinstance(machine, mach.ArrayMachine) and not machine.add_size_header:
        element: np.dtype[Any] | None = None
        for i in range(machine.size):
            element, pos = _packed(machine.submachine, pos, f"{path}[{i}]", leaves)
        assert element is not None
        return np.dtype((element, (machine.size,))), pos
    dtype, start, end = _layout(machine, pos, path)  # a primitive or a primitive array
    leaves.append((start, end - start))
    return dtype, end


def _with_itemsize(dtype: np.dtype[Any], itemsize: int) -> np.dtype[Any]:
    fields: dict[str, Any] = dict(dtype.fields or {})
    return np.dtype(
        {
            "names": list(fields),
            "formats": [fields[n][0] for n in fields],
            "offsets": [fields[n][1] for n in fields],
            "itemsize": itemsize,
        }
    )


class Codec:
    """Encoder/decoder of one fixed-size ``@final`` IDL type as a numpy record.

    ``zeros()`` gives a record to fill (``rec["motor_cmd"]["q"][:] = targets``);
    ``encode`` returns exactly the bytes ``sample.serialize()`` would; ``decode`` is the
    inverse, returning a read-only record viewing the buffer.
    """

    def __init__(self, idl_type: Any) -> None:
        self.idl_type = idl_type
        idl_type.__idl__.populate()
        machine = idl_type.__idl__.v0_machine
        if not isinstance(machine, mach.StructMachine):
            raise UnsupportedTypeError(f"{idl_type.__name__} is not a struct")
        self._gather: npt.NDArray[np.intp] | None = None
        try:
            self.dtype, _, self.size = _layout(machine, 0, idl_type.__name__)
        except UnsupportedTypeError as e:
            if "share one layout" not in str(e):
                raise
            leaves: list[tuple[int, int]] = []
            self.dtype, self.size = _packed(machine, 0, idl_type.__name__, leaves)
            self._gather = np.concatenate([np.arange(o, o + n) for o, n in leaves])

    def zeros(self) -> Record:
        return np.zeros((), dtype=self.dtype)

    def encode(self, record: Record) -> bytes:
        if self._gather is None:
            return HEADER + record.tobytes()
        wire = np.zeros(self.size, dtype=np.uint8)
        wire[self._gather] = np.frombuffer(record.tobytes(), dtype=np.uint8)
        return HEADER + wire.tobytes()

    def decode(self, data: bytes) -> Record:
        if data[:4] != HEADER:
            raise ValueError(f"not XCDR1 little-endian data (header {data[:4].hex()})")
        if len(data) < 4 + self.size:
            raise ValueError(f"{len(data)} bytes is too short for {self.idl_type.__name__}")
        if self._gather is None:
            record: Record = np.frombuffer(data, dtype=self.dtype, count=1, offset=4)[0]
            return record
        wire = np.frombuffer(data, dtype=np.uint8, count=self.size, offset=4)
        gathered: Record = wire[self._gather].view(self.dtype)[0]
        return gathered

    def from_sample(self, sample: Any) -> Record:
        """A writable record holding ``sample`` (slow path: for set-up and tests)."""
        return self.decode(sample.serialize(use_version_2=False)).copy()

    def to_sample(self, record: Record) -> Any:
        """The stock IDL object for ``record`` (slow path: for logs and tests)."""
        return self.idl_type.deserialize(self.encode(record))


def raw_write(writer: Any, data: bytes) -> None:
    """Write pre-encoded bytes on a DataWriter, padded to 4 as the stock writer pads."""
    pad = -len(data) % 4
    ret = ddspy_write(writer._ref, data + b"\x00" * pad if pad else data)
    if ret < 0:
        from cyclonedds.core import DDSException

        raise DDSException(ret, f"raw write on {writer!r}")


def raw_take(reader: Any, n: int = 64) -> list[bytes]:
    """Take up to ``n`` samples as encoded bytes (valid data only)."""
    ret = ddspy_take(reader._ref, n)
    if isinstance(ret, int):
        from cyclonedds.core import DDSException

        raise DDSException(ret, f"raw take on {reader!r}")
    return [data for data, info in ret if info.valid_data]
