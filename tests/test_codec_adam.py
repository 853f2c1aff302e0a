"""The codec on the PND Adam's types: fixed-length sequences and a string, against stock.

Stock cyclonedds-python's own serializer is the reference: our encoding must be its bytes,
and our decoder must read every encoding it writes (XCDR1 and XCDR2, both byte orders), for
every model's motor count (Pro 31, Standard 29, Lite 23) and both interface variants.
The C side (idlc -l c, no code of ours) is in tests/cadam. (No ``from __future__ import
annotations`` here: cyclonedds-python resolves the test types' annotations itself.)
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from cyclonedds.idl import IdlStruct
from cyclonedds.idl import annotations as annotate
from cyclonedds.idl import types as t
from cyclonedds.idl._support import Endianness

from executive.robots.adam.interface import (
    MOTOR_COUNTS,
    SEQUENCES,
    VARIANTS,
    AdamInterface,
    AdamVariantError,
)
from executive.wire.codec import LENGTH_FIELD, Codec, DecodeError, UnsupportedTypeError

ENCODINGS = [
    (endianness, v2) for endianness in (Endianness.Little, Endianness.Big) for v2 in (False, True)
]
COUNTS: list[int | None] = [*sorted(MOTOR_COUNTS.values())]
CASES = [
    (variant, name, motors)
    for variant in VARIANTS
    for name in AdamInterface(variant).type_names
    for motors in (COUNTS if name in SEQUENCES else [None])
]


def fill(arr: Any, rng: np.random.Generator, name: str = "") -> None:
    """Random values in every field; sequence lengths left as ``zeros()`` set them, strings
    random printable text of random length (the empty one included)."""
    dt = arr.dtype
    if dt.names:
        for n in dt.names:
            if not n.endswith(LENGTH_FIELD.format("")):
                fill(arr[n], rng, n)
    elif dt.kind == "f":
        arr[...] = rng.uniform(-1e3, 1e3, arr.shape)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        arr[...] = rng.integers(info.min, info.max, arr.shape, dtype=dt, endpoint=True)
    elif dt.kind == "S":
        n = int(rng.integers(0, dt.itemsize + 1))
        arr[...] = bytes(rng.integers(0x21, 0x7F, n, dtype=np.uint8))
    else:
        raise TypeError(f"{name}: {dt}")


def test_variants_and_their_types() -> None:
    seed, sdk = AdamInterface("seed"), AdamInterface()
    assert sdk.variant == "sdk-1.2" and seed.name == "seed"
    assert set(sdk.type_names) - set(seed.type_names) == {"BatteryData_"}
    assert "ki" in sdk.MotorCmd_.__annotations__ and "ki" not in seed.MotorCmd_.__annotations__
    for iface in (seed, sdk):
        for name in iface.type_names:
            cls = getattr(iface, name)
            assert cls.__idl_typename__ == f"pnd_adam.msg.dds_.{name}"
            assert cls.__idl_annotations__["extensibility"] == "final"
        assert iface.topic_type("rt/lowcmd") is iface.LowCmd_
    with pytest.raises(AdamVariantError, match="known: \\['sdk-1.2', 'seed'\\]"):
        AdamInterface("sdk-1.0")


@pytest.mark.parametrize(("variant", "name", "motors"), CASES)
def test_encoding_is_byte_identical_to_stock(variant: str, name: str, motors: int | None) -> None:
    codec = AdamInterface(variant).codec(name, motors)
    rng = np.random.default_rng(abs(hash((variant, name, motors))) % 2**32)
    for _ in range(8):
        record = codec.zeros()
        fill(record, rng)
        sample = codec.to_sample(record)
        if motors is not None:
            assert len(getattr(sample, SEQUENCES[name])) == motors
        stock = sample.serialize(use_version_2=False)
        assert codec.encode(record) == stock
        assert codec.decode(stock).tobytes() == record.tobytes()
        assert codec.idl_type.deserialize(stock) == sample


@pytest.mark.parametrize(("variant", "name", "motors"), CASES)
def test_decodes_every_encoding_stock_writes(variant: str, name: str, motors: int | None) -> None:
    codec = AdamInterface(variant).codec(name, motors)
    rng = np.random.default_rng(7)
    for _ in range(4):
        record = codec.zeros()
        fill(record, rng)
        sample = codec.to_sample(record)
        for endianness, v2 in ENCODINGS:
            decoded = codec.decode(sample.serialize(endianness=endianness, use_version_2=v2))
            assert decoded.dtype == codec.dtype
            assert decoded.tobytes() == record.tobytes(), (endianness, v2)


def test_wire_sizes_of_the_motor_streams() -> None:
    """LowCmd_ sdk-1.2, 31 motors: 4 header + u1 mode_pr, pad, u4 N, 31 x 32, u4 = 1008."""
    sdk, seed = AdamInterface(), AdamInterface("seed")
    assert len(sdk.codec("LowCmd_", 31).encode(sdk.codec("LowCmd_", 31).zeros())) == 1008
    assert seed.codec("LowCmd_", 31).size == 4 + 31 * 28 + 4
    assert seed.codec("LowState_", 23).size == 54 + 2 + 4 + 23 * 28 + 80 + 4
    lite = sdk.codec("LowState_", 23)
    assert not lite.fixed and lite.dtype["battery_data"]["status"] == np.dtype("S256")


def test_record_access_is_by_field_name() -> None:
    codec = AdamInterface().codec("LowCmd_", 31)
    rec = codec.zeros()
    assert int(rec["motor_cmd__len"]) == 31
    rec["motor_cmd"]["q"][:] = np.linspace(-1, 1, 31)
    rec["motor_cmd"]["mode"] = 1
    sample = codec.to_sample(rec)
    assert sample.motor_cmd[30].q == 1.0 and all(m.mode == 1 for m in sample.motor_cmd)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("encoding"), ENCODINGS)
def test_a_sample_of_another_model_is_refused_naming_both_lengths(
    variant: str, encoding: tuple[Endianness, bool]
) -> None:
    iface = AdamInterface(variant)
    for name, seq in SEQUENCES.items():
        standard = iface.codec(name, 29)
        data = standard.to_sample(standard.zeros()).serialize(
            endianness=encoding[0], use_version_2=encoding[1]
        )
        for motors in (31, 23):
            with pytest.raises(
                DecodeError, match=f"{name}.{seq}: the sample has 29 elements, .* expects {motors}"
            ):
                iface.codec(name, motors).decode(data)


def test_encode_refuses_a_record_whose_length_is_not_the_codecs() -> None:
    codec = AdamInterface().codec("LowCmd_", 31)
    with pytest.raises(ValueError, match="LowCmd_.motor_cmd: the record's length field says 0"):
        codec.encode(np.zeros((), dtype=codec.dtype))


def test_the_battery_status_string() -> None:
    iface = AdamInterface()
    codec = iface.codec("LowState_", 31, max_string=16)
    rec = codec.zeros()
    for text in ["", "a", "ok", "abc", "full", "charging", "x" * 16, "電池低"]:
        raw = text.encode()
        rec["battery_data"]["status"] = raw
        rec["reserve"] = 0xA5A5A5A5
        sample = codec.to_sample(rec)
        assert sample.battery_data.status == text and sample.reserve == 0xA5A5A5A5
        for endianness, v2 in ENCODINGS:
            got = codec.decode(sample.serialize(endianness=endianness, use_version_2=v2))
            assert got["battery_data"]["status"] == raw and got["reserve"] == 0xA5A5A5A5
    long = iface.LowState_.deserialize(codec.encode(codec.zeros()))
    long.battery_data.status = "y" * 17
    with pytest.raises(DecodeError, match="battery_data.status: a string of 17 bytes, .* 16"):
        codec.decode(long.serialize())


def test_truncated_samples_are_refused_naming_why() -> None:
    codec = AdamInterface().codec("LowState_", 29)
    rec = codec.zeros()
    rec["battery_data"]["status"] = b"discharging"
    data = codec.encode(rec)
    for cut in (10, 200, codec.size - 8, len(data) - 8, len(data) - 1):
        with pytest.raises(DecodeError, match="too short"):
            codec.decode(data[:cut])
    with pytest.raises(DecodeError, match="too short"):
        AdamInterface().codec("LowCmd_", 31).decode(data[:6])


def test_decode_ignores_the_options_bytes() -> None:
    """A CycloneDDS 0.10 C writer puts the trailing padding count there (DESIGN.md 3.2)."""
    for name in ("LowState_", "HandState_"):
        codec = AdamInterface().codec(name, 31)
        rec = codec.zeros()
        rec["reserve"] = 7
        wire = codec.encode(rec)
        for options in (b"\x00\x01", b"\x00\x03"):
            assert codec.decode(wire[:2] + options + wire[4:] + b"\0")["reserve"] == 7


def test_sequences_and_strings_need_to_be_asked_for() -> None:
    sdk = AdamInterface()
    with pytest.raises(UnsupportedTypeError, match="sequence_lengths=\\{'motor_cmd': N\\}"):
        Codec(sdk.LowCmd_)
    with pytest.raises(UnsupportedTypeError, match="StringMachine"):
        Codec(sdk.BatteryData_)
    with pytest.raises(ValueError, match="LowCmd_ has no sequence motor_state"):
        Codec(sdk.LowCmd_, sequence_lengths={"motor_cmd": 31, "motor_state": 31})
    with pytest.raises(ValueError, match="needs the motor count"):
        sdk.codec("LowState_")


# --- the general rules, on a type made to exercise them ------------------------------------


@dataclass
@annotate.final
class Inner(IdlStruct, typename="codec_test.Inner"):
    flag: t.uint8
    x: t.float32
    y: t.int16
    z: t.int16


@dataclass
@annotate.final
class Tricky(IdlStruct, typename="codec_test.Tricky"):
    """After a string: an 8-byte field (XCDR1 aligns it to 8, XCDR2 to 4), a sequence of
    structs (XCDR2: DHEADER), an array of structs (XCDR2: DHEADER), a primitive sequence,
    a second string, and a trailing odd-sized field."""

    head: t.uint8
    label: str
    stamp: t.int64
    items: t.sequence[Inner]  # type: ignore[type-arg]
    pair: t.array[Inner, 2]  # type: ignore[type-arg, valid-type]
    values: t.sequence[t.int16]  # type: ignore[type-arg]
    note: t.bounded_str[5]  # type: ignore[type-arg, valid-type]
    tail: t.uint8


@pytest.mark.parametrize("n", [1, 3])
def test_strings_shift_whatever_follows_by_their_own_alignment(n: int) -> None:
    codec = Codec(Tricky, sequence_lengths={"items": n, "values": n + 1}, max_string=12)
    assert codec.dtype["note"] == np.dtype("S5")  # the IDL bound caps the capacity
    rng = np.random.default_rng(n)
    for k in range(40):
        rec = codec.zeros()
        fill(rec, rng)
        rec["label"] = b"L" * (k % 13)
        sample = codec.to_sample(rec)
        assert codec.encode(rec) == sample.serialize()
        for endianness, v2 in ENCODINGS:
            data = sample.serialize(endianness=endianness, use_version_2=v2)
            assert codec.decode(data).tobytes() == rec.tobytes(), (k, endianness, v2)
    other = Codec(Tricky, sequence_lengths={"items": n, "values": n + 2}, max_string=12)
    with pytest.raises(DecodeError, match=f"Tricky.values: the sample has {n + 1} .* {n + 2}"):
        other.decode(sample.serialize())


@pytest.mark.dds
@pytest.mark.parametrize("variant", VARIANTS)
def test_raw_write_reaches_stock_reader_and_raw_take_reads_stock_writer(
    variant: str, participant: Any
) -> None:
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic

    from executive.wire import dds
    from executive.wire.codec import raw_take, raw_write

    iface = AdamInterface(variant)
    for name in ("LowCmd_", "LowState_"):
        codec = iface.codec(name, 31)
        rec = codec.zeros()
        fill(rec, np.random.default_rng(3))
        topic = Topic(participant, f"test/adam/{name}", getattr(iface, name))
        writer = DataWriter(participant, topic, qos=dds.EVENT_WRITER_QOS)
        stock_reader = DataReader(participant, topic, qos=dds.EVENT_READER_QOS)
        raw_reader = DataReader(participant, topic, qos=dds.EVENT_READER_QOS)
        raw_write(writer, codec.encode(rec))
        got = stock_reader.take(N=1)
        assert got and got[0] == codec.to_sample(rec)
        raws = raw_take(raw_reader)
        assert len(raws) == 1 and codec.decode(raws[0]).tobytes() == rec.tobytes()
        writer.write(codec.to_sample(rec))
        raws = raw_take(raw_reader)
        assert len(raws) == 1 and codec.decode(raws[0]).tobytes() == rec.tobytes()
