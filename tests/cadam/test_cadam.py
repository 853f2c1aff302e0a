"""Our codec against a C peer built by Debian's idlc from idl/pnd_adam/, per variant.

The C side (``cadam.c``) sets and prints every field by its C name; our side encodes with
``Codec.encode`` + ``raw_write`` and decodes ``raw_take`` + ``Codec.decode``. Every field of
every sample is compared, both directions, for each model's motor count.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from executive.robots.adam.interface import MOTOR_COUNTS, VARIANTS, AdamInterface
from executive.wire.codec import DecodeError
from tests.cadam.harness import (
    SAMPLES,
    c_typeinfo,
    command_records,
    differences,
    exchange,
    flatten_json,
    flatten_record,
)
from tests.wire.c_interop import python_typeinfo

pytestmark = pytest.mark.dds

BuildFn = Callable[[str], Path]


@pytest.mark.parametrize("variant", VARIANTS)
def test_c_and_python_announce_identical_type_information(variant: str, cadam_exe: BuildFn) -> None:
    """What DDS compares to match a reader with a writer, byte for byte."""
    iface = AdamInterface(variant)
    c_side = c_typeinfo(cadam_exe(variant))
    assert sorted(c_side) == iface.type_names
    for name, entry in c_side.items():
        assert entry["typename"] == f"pnd_adam::msg::dds_::{name}"
        info, mapping = python_typeinfo(getattr(iface, name))
        assert entry["typeinfo"] == info.hex(), name
        assert entry["typemap"] == mapping.hex(), name


def _check(variant: str, motors: int, result: object, commands: dict[str, list[object]]) -> None:
    from tests.cadam.harness import Exchange

    assert isinstance(result, Exchange)
    assert result.done is not None, result.stderr
    # what C read of what our codec wrote
    for topic, records in commands.items():
        got = result.received_by_c[topic]
        assert len(got) == SAMPLES, (topic, result.done, result.stderr)
        for k, (rec, c_sample) in enumerate(zip(records, got, strict=True)):
            if topic == "rt/lowcmd":
                assert len(c_sample["motor_cmd"]) == motors
            assert differences(flatten_json(c_sample), flatten_record(rec)) == [], (topic, k)
    # what our codec read of what C wrote
    for topic, sent in result.sent_by_c.items():
        assert len(sent) == SAMPLES
        decoded = result.decoded[topic]
        assert len(decoded) == SAMPLES, (topic, result.stderr)
        for k, (c_sample, rec) in enumerate(zip(sent, decoded, strict=True)):
            flat = flatten_record(rec)
            assert differences(flatten_json(c_sample), flat) == [], (topic, k)
            if topic == "rt/lowstate":
                assert int(rec["motor_state__len"]) == motors
                assert len([p for p in flat if p.endswith("].q")]) == motors


@pytest.mark.parametrize("motors", sorted(MOTOR_COUNTS.values(), reverse=True))
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_field_crosses_both_ways(
    variant: str, motors: int, cadam_exe: BuildFn, dds_domain: int
) -> None:
    iface = AdamInterface(variant)
    commands = command_records(iface, motors, np.random.default_rng(motors))
    result = exchange(cadam_exe(variant), iface, dds_domain, motors, commands)
    _check(variant, motors, result, commands)
    # a CycloneDDS 0.10 C writer: XCDR1 little-endian (options: the trailing padding count)
    assert {d[:2] for ds in result.raw.values() for d in ds} == {b"\x00\x01"}
    if variant == "sdk-1.2":  # the battery status strings moved `reserve` to every alignment
        statuses = [s["battery_data"]["status"] for s in result.sent_by_c["rt/lowstate"]]
        assert {len(s.encode()) % 4 for s in statuses} == {0, 1, 2, 3}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_c_writer_asking_for_xcdr2_is_read_too(
    variant: str, cadam_exe: BuildFn, dds_domain: int
) -> None:
    iface = AdamInterface(variant)
    commands = command_records(iface, 31, np.random.default_rng(2))
    result = exchange(cadam_exe(variant), iface, dds_domain, 31, commands, representation="xcdr2")
    _check(variant, 31, result, commands)
    assert {d[:2] for ds in result.raw.values() for d in ds} == {b"\x00\x07"}


def test_a_standard_robot_read_with_a_pro_codec_is_refused_naming_both_lengths(
    cadam_exe: BuildFn, dds_domain: int
) -> None:
    iface = AdamInterface()
    commands = command_records(iface, 31, np.random.default_rng(3))
    result = exchange(cadam_exe("sdk-1.2"), iface, dds_domain, 31, commands, c_motors=29)
    assert len(result.raw["rt/lowstate"]) == SAMPLES, result.stderr
    pro = iface.codec("LowState_", 31)
    for data in result.raw["rt/lowstate"]:
        with pytest.raises(
            DecodeError, match="LowState_.motor_state: the sample has 29 elements, .* expects 31"
        ):
            pro.decode(data)
    standard = iface.codec("LowState_", 29)
    for c_sample, data in zip(
        result.sent_by_c["rt/lowstate"], result.raw["rt/lowstate"], strict=True
    ):
        assert differences(flatten_json(c_sample), flatten_record(standard.decode(data))) == []
