"""The Atom's command bytes behind the seam equal those recorded before it (issue 12, item 2).

``tests/fixtures/atom_wire_golden.json`` holds what 3d8faf2 (the last commit before the
seam) put on the wire for fixed inputs: its streamer's stream records (a period's command
and the reflex's hold) and its command writer (behaviours' ``DdsCommands``), written
through a real writer and taken raw from a reader. Here HEAD's ``AtomStream`` and
``AtomCommands`` do the same through a real writer on a leased loopback domain; the bytes
must be equal, every one of them (ids and clock fixed, so nothing is masked).
``tools/wire_compare.py --golden-only --before REV`` regenerates the file; the same tool
compares whole missions run before and after against the simulated Atom
(``docs/wire-before-after.md``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from executive.robots.atom.commands import AtomCommands
from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.streams import AtomStream
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.body import BodySpec, Gravity
from executive.seam.profile import RobotProfile, load_profile
from executive.wire import dds
from executive.wire.codec import raw_take, raw_write
from executive.wire.robot_io import Side

pytestmark = pytest.mark.dds

GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "atom_wire_golden.json").read_text())
COMMAND_KEYS = (
    "upper_cmd",
    "lower_cmd",
    "hands_cmd",
    "set_fsm_id",
    "switch_upper_control",
    "clear_errors",
    "amr_cmd",
)


def raw_readers(participant: Any, interface: Interface) -> dict[str, Any]:
    from cyclonedds.core import Policy, Qos
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    qos = Qos(
        Policy.Reliability.Reliable(duration(milliseconds=100)),
        Policy.History.KeepLast(64),
        Policy.Durability.Volatile,
        Policy.DataRepresentation(use_cdrv0_representation=True, use_xcdrv2_representation=True),
    )
    readers = {}
    for key in COMMAND_KEYS:
        spec = TOPICS[key]
        topic = Topic(participant, spec.name, getattr(interface, spec.type_name))
        readers[key] = DataReader(participant, topic, qos=qos)
    return readers


@pytest.fixture(scope="module")
def participant() -> Iterator[Any]:
    lease = dds.lease_domain()
    p = dds.make_participant(lease.domain)
    try:
        yield p
    finally:
        dds.close_participant(p)
        lease.release()


class Wire:
    """HEAD's writers for one interface variant, and a raw reader on each command topic."""

    def __init__(self, participant: Any, variant: str) -> None:
        self.interface = Interface(Variant.parse(variant))
        self.io = AtomIO(participant, self.interface, side=Side.CONTROLLER)
        self.readers = raw_readers(participant, self.interface)
        time.sleep(0.2)  # the local readers match the writers

    def sent(self, key: str, send: Callable[[], object]) -> str:
        """What ``send()`` put on ``key``'s topic, as the reader got it (hex)."""
        send()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if got := raw_take(self.readers[key], 16):
                assert len(got) == 1, f"{key}: {len(got)} samples for one send"
                return bytes(got[0]).hex()
            time.sleep(0.002)
        raise AssertionError(f"nothing arrived on {TOPICS[key].name}")


def without_feedforward(name: str) -> RobotProfile:
    """The profile as it was when the golden bytes were recorded: its commands carried no
    gravity feed-forward (``tau`` 0). HEAD's upper stream adds the body model's gravity
    torque there (``body.gravity_feedforward``), a deliberate change that
    ``test_the_upper_stream_differs_only_by_its_gravity_feedforward`` pins down."""
    profile = load_profile(name)
    body = profile.body
    assert isinstance(body, BodySpec)
    return dataclasses.replace(profile, body=dataclasses.replace(body, feedforward=frozenset()))


def test_the_upper_stream_differs_only_by_its_gravity_feedforward(participant: Any) -> None:
    """Every byte of a command is the golden's but each motor's ``tau``, which is the
    model's gravity torque at the commanded q (clipped), and only on the streams the
    profile names."""
    rows = [r for r in GOLDEN["streams"] if r["profile"] == "atom-sdk"]
    assert {r["stream"] for r in rows} >= {"upper", "lower", "hands"}
    profile = load_profile("atom-sdk")
    wire = Wire(participant, rows[0]["interface"])
    for row in rows:
        stream = AtomStream(wire.io, profile, row["stream"])
        q = np.asarray(row["q"], dtype=np.float64)
        data = stream.encode(q)
        golden = stream.codec.decode(bytes.fromhex(row["hex"]))[stream.cmd_field]
        ours = stream.codec.decode(data)[stream.cmd_field]
        for field in golden.dtype.names:
            if field != "tau":
                assert np.array_equal(ours[field], golden[field]), (row["stream"], field)
        assert not np.any(golden["tau"])
        if row["stream"] == "upper":
            expected = Gravity(profile, profile.topics["upper"])(q).astype(np.float32)
            assert np.array_equal(ours["tau"], expected)
            assert np.any(ours["tau"]) and np.all(np.abs(ours["tau"]) <= 20.0)
        else:
            assert not np.any(ours["tau"]), row["stream"]


def test_joint_streams_byte_for_byte(participant: Any) -> None:
    rows = GOLDEN["streams"]
    assert rows, "the golden file holds no stream samples"
    wires: dict[str, Wire] = {}
    streams: dict[tuple[str, str], AtomStream] = {}
    for row in rows:
        wire = wires.get(row["interface"]) or wires.setdefault(
            row["interface"], Wire(participant, row["interface"])
        )
        key = (row["profile"], row["stream"])
        if key not in streams:  # one record per stream, reused as the streamer does
            streams[key] = AtomStream(wire.io, without_feedforward(row["profile"]), row["stream"])
        stream = streams[key]
        data = stream.encode(np.asarray(row["q"], dtype=np.float64))
        got = wire.sent(stream.command_key, lambda d=data, s=stream: raw_write(s._writer, d))
        assert got == row["hex"], (
            f"{row['profile']} {TOPICS[stream.command_key].name} q={row['vector']}"
            f" hold={row['hold']}: first differing byte at "
            f"{next(i for i, (a, b) in enumerate(zip(got, row['hex'], strict=False)) if a != b) // 2}"
        )


OPS: dict[str, Callable[[AtomCommands], object]] = {
    "control_on": lambda c: c.request_control(True),
    "control_off": lambda c: c.request_control(False),
    "clear": lambda c: c.clear_faults(),
    "move_to_tag": lambda c: c.go_to_tag(4, 1.5707963267948966),
    "cancel": lambda c: c.cancel_base(),
}


def test_one_shot_commands_byte_for_byte(participant: Any) -> None:
    rows = GOLDEN["commands"]
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_variant.setdefault(row["interface"], []).append(row)
    assert len(by_variant) == 3, sorted(by_variant)
    for variant, expected in by_variant.items():
        wire = Wire(participant, variant)
        commands = AtomCommands(wire.io, clock_ns=lambda: GOLDEN["clock_ns"])
        commands._ids = itertools.count(GOLDEN["first_id"])  # as the golden run was
        for row in expected:  # in the recorded order: the ids count up across them
            op = row["op"]
            if op.startswith("set_fsm_"):
                fsm_id = int(op.removeprefix("set_fsm_"))
                send: Callable[[], object] = lambda i=fsm_id, c=commands: c.set_fsm(i)  # noqa: E731
            else:
                send = lambda op=op, c=commands: OPS[op](c)  # noqa: E731
            assert wire.sent(row["topic"], send) == row["hex"], f"{variant} {op}"
