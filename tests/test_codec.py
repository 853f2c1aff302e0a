"""The precompiled codec is byte-identical to stock cyclonedds-python, and raw I/O works."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cyclonedds.idl._support import Endianness

from executive.robots.atom.interface import PRESETS, Interface, Variant
from executive.wire import dds
from executive.wire.codec import Codec, DecodeError, UnsupportedTypeError, raw_take, raw_write

STRUCTS = [
    (preset, name)
    for preset in PRESETS
    for name in Interface(Variant(preset)).type_names
    if hasattr(getattr(Interface(Variant(preset)), name), "__dataclass_fields__")
]


def _fill(arr: Any, rng: np.random.Generator, enum_fields: dict[str, int], name: str = "") -> None:
    """Random values in every field of a record, valid for the field's type."""
    dt = arr.dtype
    if dt.names:
        for n in dt.names:
            _fill(arr[n], rng, enum_fields, n)
    elif name in enum_fields:
        arr[...] = rng.integers(0, enum_fields[name], arr.shape)
    elif dt.kind == "f":
        arr[...] = rng.uniform(-1e3, 1e3, arr.shape)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        arr[...] = rng.integers(info.min, info.max, arr.shape, dtype=dt, endpoint=True)
    elif dt.kind == "b":
        arr[...] = rng.integers(0, 2, arr.shape).astype(bool)
    elif dt.kind == "S":
        arr[...] = b"z"
    else:
        raise TypeError(dt)


def _enum_sizes(iface: Interface) -> dict[str, int]:
    return {
        "command_type": len(iface.AMRCommandType),
        "device_status": len(iface.DeviceStatus_),
        "navigation_status": len(iface.NavigationStatus_),
    }


@pytest.mark.parametrize(("preset", "name"), STRUCTS)
def test_encoding_is_byte_identical_to_stock(preset: str, name: str) -> None:
    iface = Interface(Variant(preset))
    idl_type = getattr(iface, name)
    try:
        codec = Codec(idl_type)
    except UnsupportedTypeError:
        assert name == "SetFsmId_", "only the type with a string may lack a fixed layout"
        return
    rng = np.random.default_rng(hash((preset, name)) % 2**32)
    for _ in range(5):
        record = codec.zeros()
        _fill(record, rng, _enum_sizes(iface))
        sample = codec.to_sample(record)
        stock = sample.serialize(use_version_2=False)
        assert codec.encode(record) == stock
        assert codec.decode(stock).tobytes() == record.tobytes()
        assert idl_type.deserialize(stock) == sample


@pytest.mark.parametrize(("preset", "name"), STRUCTS)
def test_a_record_s_bound_encoder_follows_it_in_place(preset: str, name: str) -> None:
    """``Codec.encoder(record)``: the bytes ``encode`` gives for the record as it is now,
    after every refresh in place (the sim's state: the same record, rewritten), padding
    between fields still zero."""
    iface = Interface(Variant(preset))
    try:
        codec = Codec(getattr(iface, name))
    except UnsupportedTypeError:
        return  # the type with a string (checked above)
    rng = np.random.default_rng(hash(("bound", preset, name)) % 2**32)
    record = codec.zeros()
    encode = codec.encoder(record)
    assert encode() == codec.encode(record)
    for _ in range(3):
        _fill(record, rng, _enum_sizes(iface))
        assert encode() == codec.encode(record)
    with pytest.raises(ValueError, match="not a record of this codec"):
        codec.encoder(np.zeros((), dtype=[("x", "<f8")]))


def test_hot_types_have_fast_layouts() -> None:
    iface = Interface()
    for name in (
        "UpperCmd_",
        "LowerCmd_",
        "HandsCmd_",
        "UpperState_",
        "LowerState_",
        "HandsState_",
    ):
        codec = Codec(getattr(iface, name))
        assert codec.size > 0
    rec = Codec(iface.UpperCmd_).zeros()
    rec["motor_cmd"]["q"][:] = np.linspace(-1, 1, 17)  # vectorised access by field name
    assert Codec(iface.UpperCmd_).to_sample(rec).motor_cmd[16].q == 1.0


@pytest.mark.parametrize(("preset", "name"), STRUCTS)
def test_decodes_every_encoding_stock_writes(preset: str, name: str) -> None:
    """XCDR1 and plain XCDR2, little- and big-endian, as stock cyclonedds-python encodes them
    (its own serializer, not our layout), decode to the same record in the native dtype."""
    iface = Interface(Variant(preset))
    idl_type = getattr(iface, name)
    try:
        codec = Codec(idl_type)
    except UnsupportedTypeError:
        return
    record = codec.zeros()
    _fill(record, np.random.default_rng(7), _enum_sizes(iface))
    sample = codec.to_sample(record)
    for endianness in (Endianness.Little, Endianness.Big):
        for version_2 in (False, True):
            data = sample.serialize(endianness=endianness, use_version_2=version_2)
            decoded = codec.decode(data)
            assert decoded.dtype == codec.dtype
            assert decoded.tobytes() == record.tobytes(), (endianness, version_2)


def test_decode_ignores_the_options_bytes() -> None:
    """A CycloneDDS 0.10 C writer puts the padding count in the options (DESIGN.md 3.2)."""
    codec = Codec(Interface().EmergencyState_)
    record = codec.zeros()
    record["hard_emergency_triggered"] = True
    wire = codec.encode(record)
    for options in (b"\x00\x01", b"\x00\x03", b"\xff\xff"):
        assert bool(codec.decode(wire[:2] + options + wire[4:] + b"\0")["hard_emergency_triggered"])


def test_decode_refuses_foreign_or_short_data_naming_why() -> None:
    codec = Codec(Interface().UpperCmd_)
    good = codec.encode(codec.zeros())
    with pytest.raises(DecodeError, match="PL_CDR_LE encapsulation is not a @final UpperCmd_"):
        codec.decode(b"\x00\x03\x00\x00" + good[4:])
    with pytest.raises(DecodeError, match="unknown encapsulation 12340000"):
        codec.decode(b"\x12\x34\x00\x00" + good[4:])
    with pytest.raises(DecodeError, match="too short"):
        codec.decode(good[:40])
    with pytest.raises(DecodeError, match="not even an encapsulation header"):
        codec.decode(b"\x00")


@pytest.mark.dds
def test_raw_write_reaches_stock_reader_and_raw_take_reads_stock_writer(dds_domain: int) -> None:
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    iface = Interface()
    codec = Codec(iface.LowerState_)  # the gather path: odd-aligned struct array
    rec = codec.zeros()
    _fill(rec, np.random.default_rng(7), _enum_sizes(iface))
    with dds.open_participant(dds_domain) as p:
        topic = Topic(p, "test/codec", iface.LowerState_)
        qos = dds.EVENT_READER_QOS
        writer = DataWriter(p, topic, qos=dds.EVENT_WRITER_QOS)
        stock_reader = DataReader(p, topic, qos=qos)
        raw_reader = DataReader(p, topic, qos=qos)
        raw_write(writer, codec.encode(rec))
        got = stock_reader.take(N=1)
        assert got and got[0] == codec.to_sample(rec)
        raws = raw_take(raw_reader)
        assert len(raws) == 1 and codec.decode(raws[0]).tobytes() == rec.tobytes()
        writer.write(codec.to_sample(rec))
        raws = raw_take(raw_reader)
        assert len(raws) == 1 and codec.decode(raws[0]).tobytes() == rec.tobytes()
