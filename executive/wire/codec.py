"""Precompiled XCDR1 codec for the robot's fixed-size wire types, as numpy records.

Stock cyclonedds-python (de)serializes field by field in Python: about 170 µs for one
``UpperCmd_`` here, which at 500 Hz on three streams would eat most of a core. Every hot
type on the wire is ``@final`` with fixed-size arrays only, so its encoding is a fixed
byte layout: this module derives that layout once from the binding's own serialization
machine (so it follows exactly the rules stock uses) as a numpy structured dtype. A
sample is then a numpy record, encoding is ``tobytes()``, decoding is ``frombuffer``.
Tests prove the bytes identical to stock for every supported type.

Raw I/O (``raw_write``/``raw_take``) hands those bytes to CycloneDDS directly through the
binding's C layer, skipping the Python object round trip on both ends; on the in-process
wire of simulated time (``executive.wire.loop``) it hands them to the loop's entities.

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

Sequences and strings (the PND Adam, idl/README.md "PND Adam")
---------------------------------------------------------------
A sequence whose length the caller fixes per codec (``sequence_lengths={"motor_cmd": 31}``:
a robot model's motor count) has a fixed layout again: in the record, a ``uint32`` field
``<name>__len`` (the wire's length prefix, always N: ``zeros()`` sets it, ``encode``
refuses a record where it is not N) followed by the field ``<name>`` holding the N
elements as an array, so ``rec["motor_cmd"]["q"]`` works as for an array. XCDR2's DHEADER
before a sequence of structs is a gap in the wire layout, not a field. A sample whose
sequence has another length is a ``DecodeError`` naming the field and both lengths.

Strings (opt-in: ``max_string=CAP``; without it a type with a string is unsupported, as
before) make the wire length variable. The record still holds every field: a string is a
numpy ``S{CAP}`` field (bytes, NUL-padded; ``.decode()`` it), and the fields after it sit
where they would if the string took CAP bytes. Decoding copies the bytes before the first
string in one go (they are laid out exactly as on the wire), then walks the rest field by
field with the alignment the actual string length gives; encoding does the reverse. A
string longer than CAP bytes is a ``DecodeError`` (never silently cut).
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from cyclonedds._clayer import ddspy_take, ddspy_write
from cyclonedds.idl import _machinery as mach

from executive.wire.loop import LoopReader, LoopWriter

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
    """The type has a member of variable size the codec was not told how to lay out
    (a sequence without a length, a string without ``max_string``, optional, union)."""


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


# How a fixed-length sequence's length prefix is named in the record.
LENGTH_FIELD = "{}__len"
_U4 = {"<": struct.Struct("<I"), ">": struct.Struct(">I")}


@dataclass(frozen=True)
class _Leaf:
    """One fixed-size piece of the wire, in wire order: ``off`` is its offset in the record
    (-1: an XCDR2 DHEADER, no field), ``align`` its XCDR alignment (before the version's cap)."""

    off: int
    size: int
    align: int


@dataclass(frozen=True)
class _SeqLength:
    """A sequence's length prefix: ``off`` in the record; XCDR2 DHEADER before it or not."""

    off: int
    length: int
    path: str
    dheader: bool


@dataclass(frozen=True)
class _String:
    """A string: its ``S{cap}`` field at ``off`` in the record."""

    off: int
    cap: int
    path: str


_Item = _Leaf | _SeqLength | _String


@dataclass
class _Context:
    """What the caller fixed (sequence lengths by member path, string capacity) and what a
    layout pass collects: every piece of the wire in order."""

    sequence_lengths: Mapping[str, int] = field(default_factory=dict)
    max_string: int | None = None
    items: list[_Item] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def key(self, path: str) -> str:
        """``LowState_.motor_state`` -> ``motor_state``; array indices dropped."""
        return re.sub(r"\[\d+\]", "", path.partition(".")[2])

    def sequence_length(self, machine: Any, path: str) -> int:
        key = self.key(path)
        if key not in self.sequence_lengths:
            raise UnsupportedTypeError(
                f"{path}: a sequence has no fixed layout; give its length "
                f"(Codec(..., sequence_lengths={{{key!r}: N}}))"
            )
        n = self.sequence_lengths[key]
        bound = getattr(machine, "maxlen", None) or getattr(machine, "max_length", None)
        if n < 0 or (bound is not None and n > bound):
            raise ValueError(f"{path}: sequence length {n} outside 0..{bound or 'unbounded'}")
        self.used.add(key)
        return n

    def leaf(self, off: int, size: int, align: int) -> None:
        self.items.append(_Leaf(off, size, align))


def _sequence_member(
    member: Any, name: str, cursor: int, path: str, version: _Version, ctx: _Context
) -> tuple[list[tuple[str, np.dtype[Any], int]], int, int]:
    """A fixed-length sequence as two record fields: its length and its N elements."""
    n = ctx.sequence_length(member, path)
    start = _align(cursor, 4, version)
    dheader = version.number == 2 and bool(getattr(member, "add_size_header", False))
    length_at = start + 4 if dheader else start
    ctx.items.append(_SeqLength(length_at, n, path, dheader))
    if isinstance(member, mach.PlainCdrV2SequenceOfPrimitiveMachine):
        first = _align(length_at + 4, member.alignment, version) if n else length_at + 4
        if n:
            ctx.leaf(first, member.size * n, member.alignment)
        dt = np.dtype((_CODES[member.code], (n,)))
        fields = [(LENGTH_FIELD.format(name), np.dtype("<u4"), length_at), (name, dt, first)]
        return fields, start, first + member.size * n
    if n == 0:
        raise UnsupportedTypeError(f"{path}: an empty sequence of structs has no layout")
    sub = member.submachine
    element, first, end = _layout(sub, length_at + 4, f"{path}[0]", version, ctx)
    stride = end - first
    for i in range(1, n):
        dt, s, e = _layout(sub, first + i * stride, f"{path}[{i}]", version, ctx)
        if dt != element or s != first + i * stride or e - s != stride:
            raise UnsupportedTypeError(f"{path}: sequence elements do not share one layout")
    if element.itemsize != stride:
        element = _with_itemsize(element, stride)
    fields = [
        (LENGTH_FIELD.format(name), np.dtype("<u4"), length_at),
        (name, np.dtype((element, (n,))), first),
    ]
    return fields, start, first + n * stride


def _struct_layout(
    machine: Any, pos: int, path: str, version: _Version, ctx: _Context
) -> tuple[np.dtype[Any], int, int]:
    """A struct's members at their wire offsets (sequences: two fields; strings: ``S{cap}``)."""
    names: list[str] = []
    formats: list[np.dtype[Any]] = []
    offsets: list[int] = []
    start = cursor = pos
    for name, member in machine.members_machines.items():
        member_path = f"{path}.{name}"
        if isinstance(member, mach.SequenceMachine | mach.PlainCdrV2SequenceOfPrimitiveMachine):
            fields, s, e = _sequence_member(member, name, cursor, member_path, version, ctx)
            if LENGTH_FIELD.format(name) in machine.members_machines:
                raise UnsupportedTypeError(f"{member_path}: {LENGTH_FIELD.format(name)} taken")
            first_start = s
        elif isinstance(member, mach.StringMachine) and ctx.max_string is not None:
            s = _align(cursor, 4, version)
            cap = ctx.max_string
            if member.bound:
                cap = min(cap, member.bound)
            ctx.items.append(_String(s + 4, cap, member_path))
            fields, e, first_start = [(name, np.dtype(f"S{cap}"), s + 4)], s + 4 + cap, s
        else:
            data = _skip_dheader(member, cursor, version)
            if data != cursor:  # an XCDR2 DHEADER: skipped (the walk after a string must too)
                ctx.leaf(-1, 4, 4)
            dt, s, e = _layout(member, data, member_path, version, ctx)
            fields, first_start = [(name, dt, s)], data - 4 if data != cursor else s
        if not names:
            start = first_start
        for n, dt, o in fields:
            names.append(n)
            formats.append(dt)
            offsets.append(o)
        cursor = e
    rel = [o - start for o in offsets]
    dtype = np.dtype(
        {"names": names, "formats": formats, "offsets": rel, "itemsize": cursor - start}
    )
    return dtype, start, cursor


def _layout(
    machine: Any,
    pos: int,
    path: str,
    version: _Version = XCDR1,
    ctx: _Context | None = None,
) -> tuple[np.dtype[Any], int, int]:
    """(dtype of the member, its start offset after alignment, end offset) at ``pos``."""
    if ctx is None:
        ctx = _Context()
    if isinstance(machine, mach.PrimitiveMachine):
        start = _align(pos, machine.alignment, version)
        ctx.leaf(start, machine.size, machine.alignment)
        return np.dtype(_CODES[machine.code]), start, start + machine.size
    if isinstance(machine, mach.PlainCdrV2ArrayOfPrimitiveMachine):
        start = _align(pos, machine.alignment, version)
        code = machine.code[len(str(machine.length)) :]
        ctx.leaf(start, machine.size, machine.alignment)
        return np.dtype((_CODES[code], (machine.length,))), start, start + machine.size
    if isinstance(machine, mach.EnumMachine):
        start = _align(pos, 4, version)
        ctx.leaf(start, 4, 4)
        return np.dtype("<u4"), start, start + 4
    if isinstance(machine, mach.CharMachine):
        ctx.leaf(pos, 1, 1)
        return np.dtype("S1"), pos, pos + 1
    if isinstance(machine, mach.ByteArrayMachine):
        ctx.leaf(pos, machine.size, 1)
        return np.dtype(("u1", (machine.size,))), pos, pos + machine.size
    if isinstance(machine, mach.ArrayMachine) and (
        not machine.add_size_header or version.number == 2  # (the caller skipped the DHEADER)
    ):
        first, start, end = _layout(machine.submachine, pos, f"{path}[0]", version, ctx)
        stride = end - start
        for i in range(1, machine.size):
            dt, s, e = _layout(machine.submachine, start + i * stride, f"{path}[{i}]", version, ctx)
            if dt != first or s != start + i * stride or e - s != stride:
                raise UnsupportedTypeError(f"{path}: array elements do not share one layout")
        element = first if first.itemsize == stride else _with_itemsize(first, stride)
        return np.dtype((element, (machine.size,))), start, start + machine.size * stride
    if isinstance(machine, mach.InstanceMachine):
        machine.type.__idl__.populate()
        return _layout(version.machine(machine.type.__idl__), pos, path, version, ctx)
    if isinstance(machine, mach.StructMachine):
        return _struct_layout(machine, pos, path, version, ctx)
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
    types no single numpy layout fits, the byte positions to gather into the packed dtype.

    With fixed-length sequences: ``checks``, the length prefixes at fixed offsets. With
    strings: ``prefix``, how many bytes before the first string the record shares with
    the wire, and ``tail``, the pieces from that string on, walked one by one."""

    dtype: np.dtype[Any]
    size: int  # the wire size; with strings, that of a sample whose strings are empty
    gather: npt.NDArray[np.intp] | None
    checks: tuple[_SeqLength, ...] = ()
    prefix: int | None = None
    tail: tuple[_Item, ...] = ()
    byteorder: str = "<"
    max_align: int = 8


def _wire_layout(
    idl_type: Any,
    version: _Version,
    byteorder: str,
    sequence_lengths: Mapping[str, int] | None = None,
    max_string: int | None = None,
) -> _WireLayout:
    name = idl_type.__name__
    machine = version.machine(idl_type.__idl__)
    ctx = _Context(dict(sequence_lengths or {}), max_string)
    try:
        dtype, _, size = _layout(machine, 0, name, version, ctx)
        gather = None
    except UnsupportedTypeError as e:
        if "share one layout" not in str(e) or ctx.sequence_lengths or ctx.used:
            raise
        leaves: list[tuple[int, int]] = []
        dtype, size = _packed(machine, 0, name, leaves, version)
        gather = np.concatenate([np.arange(o, o + n) for o, n in leaves])
    unused = set(ctx.sequence_lengths) - ctx.used
    if unused:
        raise ValueError(f"{name} has no sequence {', '.join(sorted(unused))}")
    if byteorder == ">":
        dtype = dtype.newbyteorder(">")
    first = next((i for i, item in enumerate(ctx.items) if isinstance(item, _String)), None)
    head = ctx.items if first is None else ctx.items[:first]
    checks = tuple(i for i in head if isinstance(i, _SeqLength))
    if first is None:
        return _WireLayout(dtype, size, gather, checks, byteorder=byteorder)
    tail = tuple(ctx.items[first:])
    prefix = tail[0].off - 4  # the string's length prefix
    size = prefix
    for item in tail:  # the wire size with every string empty (length 1: the NUL)
        if isinstance(item, _String):
            size = _align(size, 4, version) + 5
        elif isinstance(item, _SeqLength):
            size = _align(size, 4, version) + (8 if item.dheader else 4)
        else:
            size = _align(size, item.align, version) + item.size
    return _WireLayout(dtype, size, gather, checks, prefix, tail, byteorder, version.max_align)


class Codec:
    """Encoder/decoder of one ``@final`` IDL type as a numpy record.

    ``zeros()`` gives a record to fill (``rec["motor_cmd"]["q"][:] = targets``);
    ``encode`` returns exactly the bytes ``sample.serialize()`` would; ``decode`` is the
    inverse for every encapsulation listed in ``ENCAPSULATIONS``, returning a read-only
    record of ``self.dtype`` (viewing the buffer when the sample came as XCDR1
    little-endian, which is what every peer measured so far sends, and the type has no
    string; a converted copy otherwise).

    ``sequence_lengths``: the length of each sequence, by member path (``"motor_cmd"``);
    a sample with another length does not decode. ``max_string``: decode strings, up to
    that many bytes, into ``S{max_string}`` fields (module docstring).
    """

    def __init__(
        self,
        idl_type: Any,
        sequence_lengths: Mapping[str, int] | None = None,
        max_string: int | None = None,
    ) -> None:
        self.idl_type = idl_type
        self.name: str = idl_type.__name__
        self.sequence_lengths: dict[str, int] = dict(sequence_lengths or {})
        self.max_string = max_string
        if max_string is not None and max_string < 1:
            raise ValueError(f"max_string must be at least 1, not {max_string}")
        idl_type.__idl__.populate()
        machine = idl_type.__idl__.v0_machine
        if not isinstance(machine, mach.StructMachine):
            raise UnsupportedTypeError(f"{self.name} is not a struct")
        native = self._wire_layout(XCDR1, "<")
        self.dtype, self.size, self._gather = native.dtype, native.size, native.gather
        self.fixed: bool = native.prefix is None  # one wire size (no strings)
        self._native = native
        self._layouts: dict[bytes, _WireLayout] = {b"\x00\x01": native}
        template = bytearray(self.dtype.itemsize)
        for item in native.checks + native.tail:
            if isinstance(item, _SeqLength):
                template[item.off : item.off + 4] = _U4["<"].pack(item.length)
        self._template = bytes(template)
        self._length_bytes = [(c.off, _U4["<"].pack(c.length), c) for c in native.checks]

    def _wire_layout(self, version: _Version, byteorder: str) -> _WireLayout:
        return _wire_layout(
            self.idl_type, version, byteorder, self.sequence_lengths, self.max_string
        )

    def zeros(self) -> Record:
        """A writable record of zeros, sequence lengths set."""
        if not self._length_bytes and self.fixed:
            return np.zeros((), dtype=self.dtype)
        return np.frombuffer(bytearray(self._template), dtype=self.dtype).reshape(())

    def encode(self, record: Record) -> bytes:
        raw = record.tobytes()
        for off, expected, check in self._length_bytes:
            if raw[off : off + 4] != expected:
                raise ValueError(
                    f"{check.path}: the record's length field says "
                    f"{_U4['<'].unpack_from(raw, off)[0]}, this codec encodes {check.length}"
                    " (start from Codec.zeros())"
                )
        if not self.fixed:
            return self._encode_tail(raw)
        if self._gather is None:
            return HEADER + raw
        wire = np.zeros(self.size, dtype=np.uint8)
        wire[self._gather] = np.frombuffer(raw, dtype=np.uint8)
        return HEADER + wire.tobytes()

    def encoder(self, record: Record) -> Callable[[], bytes]:
        """``encode(record)`` for one record refreshed in place and written again and again
        (a simulated robot's state, 500 times a second): the same bytes, from a byte view
        of the record and, for a layout with padding, a wire buffer of its own that only
        the gather rewrites (its padding stays zero), instead of ``encode``'s copies and
        a fresh buffer each time. ``record`` must be this codec's (``zeros()``) and stay
        the same object. Not for two threads at once: they would share the buffer. A
        codec with length fields to check or strings encodes as ``encode`` does."""
        if record.dtype != self.dtype or record.shape != ():
            raise ValueError(f"{self.name}: not a record of this codec ({record.dtype})")
        if self._length_bytes or not self.fixed:
            return functools.partial(self.encode, record)
        view = record.reshape(1).view(np.uint8)  # the record's own bytes, not a copy
        if not np.shares_memory(view, record):
            raise ValueError(f"{self.name}: the record is not contiguous")
        if self._gather is None:
            tobytes = view.tobytes
            return lambda: HEADER + tobytes()
        wire = np.zeros(len(HEADER) + self.size, dtype=np.uint8)
        wire[: len(HEADER)] = np.frombuffer(HEADER, dtype=np.uint8)
        index = self._gather + len(HEADER)

        def encode() -> bytes:
            wire[index] = view
            return wire.tobytes()

        return encode

    def _encode_tail(self, raw: bytes) -> bytes:
        layout = self._native
        assert layout.prefix is not None
        out = bytearray(HEADER)
        out += raw[: layout.prefix]
        pos = layout.prefix
        u4 = _U4["<"]
        for item in layout.tail:
            if isinstance(item, _String):
                pad = -pos % 4
                text = raw[item.off : item.off + item.cap].rstrip(b"\0")
                out += b"\0" * pad + u4.pack(len(text) + 1) + text + b"\0"
                pos += pad + 4 + len(text) + 1
            elif isinstance(item, _SeqLength):
                pad = -pos % 4
                if raw[item.off : item.off + 4] != u4.pack(item.length):
                    raise ValueError(
                        f"{item.path}: the record's length field is not {item.length}"
                        " (start from Codec.zeros())"
                    )
                out += b"\0" * pad + raw[item.off : item.off + 4]
                pos += pad + 4
            else:
                pad = -pos % min(item.align, 8)
                out += b"\0" * pad + raw[item.off : item.off + item.size]
                pos += pad + item.size
        return bytes(out)

    def decode(self, data: bytes) -> Record:
        """The record in ``data``; ``DecodeError`` saying why not, for anything else."""
        rep = data[:2]
        layout = self._layouts.get(rep)
        if layout is None:
            layout = self._layout_for(data)
        for check in layout.checks:
            self._check_length(data, check, 4 + check.off, layout.byteorder)
        fixed = layout.size if layout.prefix is None else layout.prefix  # (the walk checks on)
        if len(data) < 4 + fixed:
            raise DecodeError(
                f"{len(data)} bytes is too short for {self.name} "
                f"({4 + layout.size} with the encapsulation header)"
            )
        if layout.prefix is not None:
            record: Record = self._decode_tail(data, layout)
        elif layout.gather is None:
            record = np.frombuffer(data, dtype=layout.dtype, count=1, offset=4)[0]
        else:
            wire = np.frombuffer(data, dtype=np.uint8, count=layout.size, offset=4)
            record = wire[layout.gather].view(layout.dtype)[0]
        if layout.dtype == self.dtype:
            return record
        native = np.zeros((), dtype=self.dtype)
        native[()] = record  # structured assignment: field by field, in order, byte-swapped
        native.flags.writeable = False
        return native[()]

    def _check_length(self, data: bytes, check: _SeqLength, at: int, byteorder: str) -> None:
        if len(data) < at + 4:
            raise DecodeError(
                f"{len(data)} bytes is too short for {self.name}: it ends before the length of "
                f"{check.path}"
            )
        n = _U4[byteorder].unpack_from(data, at)[0]
        if n != check.length:
            raise DecodeError(
                f"{check.path}: the sample has {n} elements, this codec expects {check.length}"
            )

    def _decode_tail(self, data: bytes, layout: _WireLayout) -> Record:
        """Bytes before the first string at once, then piece by piece (module docstring)."""
        assert layout.prefix is not None
        buf = bytearray(layout.dtype.itemsize)
        view = memoryview(data)
        buf[: layout.prefix] = view[4 : 4 + layout.prefix]
        pos = 4 + layout.prefix  # in data
        u4 = _U4[layout.byteorder]

        def short(what: str) -> DecodeError:
            return DecodeError(f"{len(data)} bytes is too short for {self.name}: it ends in {what}")

        for item in layout.tail:
            if isinstance(item, _String):
                pos += -(pos - 4) % 4
                if len(data) < pos + 4:
                    raise short(item.path)
                n = u4.unpack_from(data, pos)[0]
                if n == 0 or len(data) < pos + 4 + n:
                    raise short(item.path) if n else DecodeError(f"{item.path}: length 0")
                if n - 1 > item.cap:
                    raise DecodeError(
                        f"{item.path}: a string of {n - 1} bytes, this codec holds {item.cap}"
                        " (max_string)"
                    )
                buf[item.off : item.off + n - 1] = view[pos + 4 : pos + 3 + n]
                pos += 4 + n
                continue
            if isinstance(item, _SeqLength):
                pos += -(pos - 4) % 4 + (4 if item.dheader else 0)
                self._check_length(data, item, pos, layout.byteorder)
                size = 4
            else:
                pos += -(pos - 4) % min(item.align, layout.max_align)
                size = item.size
                if item.off < 0:  # a DHEADER: no field
                    pos += size
                    continue
            if len(data) < pos + size:
                raise short(f"the field at record offset {item.off}")
            buf[item.off : item.off + size] = view[pos : pos + size]
            pos += size
        array: Record = np.frombuffer(buf, dtype=layout.dtype)
        array.flags.writeable = False
        record: Record = array[0]
        return record

    def _layout_for(self, data: bytes) -> _WireLayout:
        rep = data[:2]
        if len(data) < 4:
            raise DecodeError(f"{len(data)} bytes is not even an encapsulation header")
        if rep in ENCAPSULATIONS:
            _, byteorder, number = ENCAPSULATIONS[rep]
            layout = self._wire_layout(XCDR1 if number == 1 else XCDR2, byteorder)
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
    if isinstance(writer, LoopWriter):
        writer.write_raw(data + b"\x00" * pad if pad else data)
        return
    ret = ddspy_write(writer._ref, data + b"\x00" * pad if pad else data)
    if ret < 0:
        from cyclonedds.core import DDSException

        raise DDSException(ret, f"raw write on {writer!r}")


def raw_take(reader: Any, n: int = 64) -> list[bytes]:
    """Take up to ``n`` samples as encoded bytes (valid data only)."""
    if isinstance(reader, LoopReader):
        return [data for data, _ in reader.take_raw(n)]
    ret = ddspy_take(reader._ref, n)
    if isinstance(ret, int):
        from cyclonedds.core import DDSException

        raise DDSException(ret, f"raw take on {reader!r}")
    return [data for data, info in ret if info.valid_data]


def raw_take_stamped(reader: Any, n: int = 64) -> list[tuple[bytes, int]]:
    """Take up to ``n`` samples as encoded bytes with their source timestamps (the
    writer's wall clock, ns), valid data only, oldest first."""
    if isinstance(reader, LoopReader):
        return reader.take_raw(n)
    ret = ddspy_take(reader._ref, n)
    if isinstance(ret, int):
        from cyclonedds.core import DDSException

        raise DDSException(ret, f"raw take on {reader!r}")
    return [(data, info.source_timestamp) for data, info in ret if info.valid_data]
