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

What we *write* is what stock writes: XCDR1 little-endian, options zero. What we *read* is
whatever a conforming peer may send for a ``@final`` type (DDS-XTypes 1.3, 7.6.3.1.2):

- XCDR1 (``CDR_BE``/``CDR_LE``, ids 0x0000/0x0001) and plain XCDR2 (``CDR2_BE``/``CDR2_LE``,
  0x0006/0x0007), either byte order. XCDR2 caps alignment at 4, which moves 8-byte members;
  each combination gets its own precomputed layout, and a decoded record always comes out
  in the one native dtype (``self.dtype``), so nothing downstream sees the difference.
- The two options bytes are ignored. A CycloneDDS 0.10 C writer puts the count of padding
  bytes at the end of the sample there (``00 01 00 01`` for the 3-byte ``EmergencyState_``,
  DESIGN.md 3.2); other implementations may set other bits. Rejecting them made the
  executive deaf to a C firmware's e-stop.
- Anything else (parameter lists and delimited XCDR2, which only mutable or appendable types
  use, or a sample shorter than the type) raises ``DecodeError`` naming what arrived.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.idl import _machinery as mach

# XCDR1 little-endian encapsulation (CDR_LE, options 0), what stock writes for these types.
HEADER = b"\x00\x01\x00\x00"
# representation identifier -> (name, byte order, XCDR version) of the encodings we decode
ENCAPSULATIONS: dict[bytes, tuple[str, str, int]] = {
    b"\x00\x00": ("CDR_BE", ">", 1),
    b"\x00\x01": ("CDR_LE", "<", 1),
    b"\x00\x06": ("CDR2_BE", ">", 2),
    b"\x00\x07": ("CDR2_LE", "<", 2),
}
_KNOWN_UNSUPPORTED = {
    b"\x00\x02": "PL_CDR_BE",
    b"\x00\x03": "PL_CDR_LE",
    b"\x00\x08": "D_CDR2_BE",
    b"\x00\x09": "D_CDR2_LE",
    b"\x00\x0a": "PL_CDR2_BE",
    b"\x00\x0b": "PL_CDR2_LE",
}
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


class DecodeError(ValueError):
    """Bytes that are not a sample of the codec's type in an encoding we can read."""


@dataclass(frozen=True)
class _Version:
    """What differs between XCDR1 and plain XCDR2 for a @final type of fixed size: the
    largest alignment (8 or 4), and XCDR2's DHEADER (a uint32 byte count) before an array
    whose elements are not primitive (DDS-XTypes 1.3, 7.4.3.5.3)."""

    number: int  # 1 or 2
    max_align: int

    def machine(self, idl: Any) -> Any:
        return idl.v0_machine if self.number == 1 else idl.v2_machine

    def has_dheader(self, member: Any) -> bool:
        return self.number == 2 and isinstance(member, mach.ArrayMachine) and member.add_size_header


XCDR1 = _Version(1, 8)
XCDR2 = _Version(2, 4)


def _align(pos: int, alignment: int, version: _Version) -> int:
    a = min(alignment, version.max_align)
    return (pos + a - 1) & ~(a - 1)


def _skip_dheader(member: Any, pos: int, version: _Version) -> int:
    """Where ``member``'s data starts: after its DHEADER, if it has one in ``version``."""
    return _align(pos, 4, version) + 4 if version.has_dheader(member) else pos


def _layout(
    machine: Any, pos: int, path: str, version: _Version = XCDR1
) -> tuple[np.dtype[Any], int, int]:
    """(dtype of the member, its start offset after alignment, end offset) at ``pos``."""
    if isinstance(machine, mach.PrimitiveMachine):
        start = _align(pos, machine.alignment, version)
        return np.dtype(_CODES[machine.code]), start, start + machine.size
    if isinstance(machine, mach.PlainCdrV2ArrayOfPrimitiveMachine):
        start = _align(pos, machine.alignment, version)
        code = machine.code[len(str(machine.length)) :]
        return np.dtype((_CODES[code], (machine.length,))), start, start + machine.size
    if isinstance(machine, mach.EnumMachine):
        start = _align(pos, 4, version)
        return np.dtype("<u4"), start, start + 4
    if isinstance(machine, mach.CharMachine):
        return np.dtype("S1"), pos, pos + 1
    if isinstance(machine, mach.ByteArrayMachine):
        return np.dtype(("u1", (machine.size,))), pos, pos + machine.size
    if isinstance(machine, mach.ArrayMachine) and (
        not machine.add_size_header or version.number == 2  # (the caller skipped the DHEADER)
    ):
        first, start, end = _layout(machine.submachine, pos, f"{path}[0]", version)
        stride = end - start
        for i in range(1, machine.size):
            dt, s, e = _layout(machine.submachine, start + i * stride, f"{path}[{i}]", version)
            if dt != first or s != start + i * stride or e - s != stride:
                raise UnsupportedTypeError(f"{path}: array elements do not share one layout")
        element = first if first.itemsize == stride else _with_itemsize(first, stride)
        return np.dtype((element, (machine.size,))), start, start + machine.size * stride
    if isinstance(machine, mach.InstanceMachine):
        machine.type.__idl__.populate()
        return _layout(version.machine(machine.type.__idl__), pos, path, version)
    if isinstance(machine, mach.StructMachine):
        names: list[str] = []
        formats: list[np.dtype[Any]] = []
        offsets: list[int] = []
        start = cursor = pos
        for name, member in machine.members_machines.items():
            data = _skip_dheader(member, cursor, version)
            dt, s, e = _layout(member, data, f"{path}.{name}", version)
            if not names:
                start = data - 4 if data != cursor else s
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
    machine: Any,
    pos: int,
    path: str,
    leaves: list[tuple[int, int]],
    version: _Version = XCDR1,
) -> tuple[np.dtype[Any], int]:
    """Packed dtype of ``machine`` and the wire (offset, size) of each of its leaves, in order.

    For types whose array elements sit at different alignments on the wire (an array of
    structs after an odd-sized member), no single numpy layout matches the wire; the record
    then uses this packed layout and encoding gathers bytes through a precomputed index.
    """
    if isinstance(machine, mach.InstanceMachine):
        machine.type.__idl__.populate()
        return _packed(version.machine(machine.type.__idl__), pos, path, leaves, version)
    if isinstance(machine, mach.StructMachine):
        names, formats = [], []
        for name, member in machine.members_machines.items():
            pos = _skip_dheader(member, pos, version)
            dt, pos = _packed(member, pos, f"{path}.{name}", leaves, version)
            names.append(name)
            formats.append(dt)
        return np.dtype({"names": names, "formats": formats}), pos
    if isinstance(machine, mach.ArrayMachine) and (
        not machine.add_size_header or version.number == 2
    ):
        element: np.dtype[Any] | None = None
        for i in range(machine.size):
            element, pos = _packed(machine.submachine, pos, f"{path}[{i}]", leaves, version)
        assert element is not None
        return np.dtype((element, (machine.size,))), pos
    dtype, start, end = _layout(machine, pos, path, version)  # a primitive or primitive array
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


@dataclass(frozen=True)
class _WireLayout:
    """How one encapsulation lays the type out: a dtype to view the bytes through, and for
    types no single numpy layout fits, the byte positions to gather into the packed dtype."""

    dtype: np.dtype[Any]
    size: int
    gather: npt.NDArray[np.intp] | None


def _wire_layout(idl_type: Any, version: _Version, byteorder: str) -> _WireLayout:
    name = idl_type.__name__
    machine = version.machine(idl_type.__idl__)
    try:
        dtype, _, size = _layout(machine, 0, name, version)
        gather = None
    except UnsupportedTypeError as e:
        if "share one layout" not in str(e):
            raise
        leaves: list[tuple[int, int]] = []
        dtype, size = _packed(machine, 0, name, leaves, version)
        gather = np.concatenate([np.arange(o, o + n) for o, n in leaves])
    if byteorder == ">":
        dtype = dtype.newbyteorder(">")
    return _WireLayout(dtype, size, gather)


class Codec:
    """Encoder/decoder of one fixed-size ``@final`` IDL type as a numpy record.

    ``zeros()`` gives a record to fill (``rec["motor_cmd"]["q"][:] = targets``);
    ``encode`` returns exactly the bytes ``sample.serialize()`` would; ``decode`` is the
    inverse for every encapsulation listed in ``ENCAPSULATIONS``, returning a read-only
    record of ``self.dtype`` (viewing the buffer when the sample came as XCDR1
    little-endian, which is what every peer measured so far sends; a converted copy
    otherwise).
    """

    def __init__(self, idl_type: Any) -> None:
        self.idl_type = idl_type
        self.name: str = idl_type.__name__
        idl_type.__idl__.populate()
        machine = idl_type.__idl__.v0_machine
        if not isinstance(machine, mach.StructMachine):
            raise UnsupportedTypeError(f"{self.name} is not a struct")
        native = _wire_layout(idl_type, XCDR1, "<")
        self.dtype, self.size, self._gather = native.dtype, native.size, native.gather
        self._layouts: dict[bytes, _WireLayout] = {b"\x00\x01": native}

    def zeros(self) -> Record:
        return np.zeros((), dtype=self.dtype)

    def encode(self, record: Record) -> bytes:
        if self._gather is None:
            return HEADER + record.tobytes()
        wire = np.zeros(self.size, dtype=np.uint8)
        wire[self._gather] = np.frombuffer(record.tobytes(), dtype=np.uint8)
        return HEADER + wire.tobytes()

    def decode(self, data: bytes) -> Record:
        """The record in ``data``; ``DecodeError`` saying why not, for anything else."""
        rep = data[:2]
        layout = self._layouts.get(rep)
        if layout is None:
            layout = self._layout_for(data)
        if len(data) < 4 + layout.size:
            raise DecodeError(
                f"{len(data)} bytes is too short for {self.name} "
                f"({4 + layout.size} with the encapsulation header)"
            )
        if layout.gather is None:
            record: Record = np.frombuffer(data, dtype=layout.dtype, count=1, offset=4)[0]
        else:
            wire = np.frombuffer(data, dtype=np.uint8, count=layout.size, offset=4)
            record = wire[layout.gather].view(layout.dtype)[0]
        if layout.dtype == self.dtype:
            return record
        native = np.zeros((), dtype=self.dtype)
        native[()] = record  # structured assignment: field by field, in order, byte-swapped
        native.flags.writeable = False
        return native[()]

    def _layout_for(self, data: bytes) -> _WireLayout:
        rep = data[:2]
        if len(data) < 4:
            raise DecodeError(f"{len(data)} bytes is not even an encapsulation header")
        if rep in ENCAPSULATIONS:
            _, byteorder, number = ENCAPSULATIONS[rep]
            layout = _wire_layout(self.idl_type, XCDR1 if number == 1 else XCDR2, byteorder)
            self._layouts[rep] = layout
            return layout
        known = _KNOWN_UNSUPPORTED.get(rep)
        what = f"{known} encapsulation" if known else f"unknown encapsulation {data[:4].hex()}"
        raise DecodeError(f"{what} is not a @final {self.name} (XCDR1 or plain XCDR2 expected)")

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
