"""What the sim and the executive share about the wire, checked against sources that share none of it.

The simulated Atom and the executive import the same topic table, codec, enums and gamepad
table, so a test between the two proves only that we agree with ourselves. Each shared
piece is checked here (or in the test named) against something we did not write:

| shared piece                                 | independent check                                    |
|----------------------------------------------|------------------------------------------------------|
| codec: bytes of every type, every encoding   | tests/wire/test_c_interop.py (C from idlc, XCDR1/2,  |
|                                              | read through the codec); tests/test_codec.py (stock  |
|                                              | serializer, both byte orders and versions)           |
| generated types (names, order, sizes)        | tests/wire/test_c_interop.py type information vs     |
|                                              | idlc's C; tests/wire/test_layout.py vs the vendor's  |
|                                              | headers as transcribed; tools/vendor_descriptors.py  |
| topic names and which type each carries      | here: DESIGN.md 3 (the seeds); tests/crobot (names   |
|                                              | hard-coded in C); tests/integration/test_c_robot.py  |
| AMR enum numbers (the Atom adapter's snapshot| here: DESIGN.md 3.3's documented numbers; the C robot |
| mapping, the sim's enum lookups)             | answers with idlc's enumerators                      |
| gamepad bytes (sim encodes, leaf decodes)    | here: seed 000's layout as DESIGN.md 3.3 gives it    |
| joint order and index per stream (profile)   | tests/test_profile.py vs reference/atom_joints.yaml; |
|                                              | test_c_robot.py's final targets by the vendor index  |
| e-stop flags per variant, padding on the wire| tests/crobot/test_crobot.py raw headers from C       |
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from executive.robots.atom import gamepad
from executive.robots.atom.interface import Interface
from executive.robots.atom.state import AtomState
from executive.robots.atom.topics import TOPICS
from executive.seam.ports import BaseState, NavStatus, Stamped
from executive.wire.codec import Codec

DESIGN = Path(__file__).resolve().parents[2] / "shared" / "DESIGN.md"
needs_design = pytest.mark.skipif(not DESIGN.exists(), reason="../shared not beside the repo")


@needs_design
def test_the_topic_table_is_the_seeds_list() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    listed = text.split("- Topics (seed 000 and 001):", 1)[1].split("\n\n", 1)[0]
    names = set(re.findall(r"`(rt/[a-z/]+)`", listed))
    assert len(names) == 14
    assert {spec.name for spec in TOPICS.values()} == names


@needs_design
def test_amr_numbers_are_the_documented_ones() -> None:
    """DESIGN.md 3.3 (seed 000 §12): accepted at TASKING (2), done at COMPLETED (3), ended by
    FAILED (4) or CANCELED (6). The Atom adapter's snapshot reads those documented numbers
    off a hand-made AMRState_ record as the robot-neutral states the navigation leaf uses."""
    text = DESIGN.read_text(encoding="utf-8")
    documented = {name: int(n) for name, n in re.findall(r"([A-Z]+) \((\d)\)", text)}
    iface = Interface()
    atom = AtomState(iface, {}, {}, ("amr_state",))
    record = Codec(iface.AMRState_).zeros()

    def base(device: int, nav: int) -> BaseState:
        record["device_status"], record["navigation_status"] = device, nav
        snap = atom.build({"amr_state": Stamped(record.copy(), 1.0)}, {}, 1.0)
        assert snap.base is not None
        return snap.base.sample

    assert base(documented["TASKING"], 0).tasking
    assert not base(documented["TASKING"] - 1, 0).tasking
    for name in ("COMPLETED", "FAILED", "CANCELED"):
        assert base(0, documented[name]).status is NavStatus[name]


def test_the_base_pose_is_the_amr_position_and_none_when_not_finite() -> None:
    """``AMRState_.position`` (float[3]: x, y, yaw, idl/dobot_atom/amr_state.idl) as the
    snapshot's base pose, from a record that went through the wire's bytes; a NaN in any
    of the three is "not reported", never a NaN in the snapshot."""
    iface = Interface()
    atom = AtomState(iface, {}, {}, ("amr_state",))
    codec = Codec(iface.AMRState_)

    def pose(position: tuple[float, float, float]) -> tuple[float, float, float] | None:
        record = codec.zeros()
        record["position"][:] = position
        decoded = codec.decode(codec.encode(record))
        snap = atom.build({"amr_state": Stamped(decoded, 1.0)}, {}, 1.0)
        assert snap.base is not None
        return snap.base.sample.pose

    assert pose((1.25, -0.5, 1.5)) == (1.25, -0.5, 1.5)  # exact in float32
    got = pose((0.1, 2.2, -3.0))
    assert got is not None and all(isinstance(v, float) for v in got)
    assert got == pytest.approx((0.1, 2.2, -3.0), abs=1e-6)
    assert pose((0.0, float("nan"), 0.0)) is None
    assert pose((float("inf"), 0.0, 0.0)) is None
    assert atom.build({}, {}, 1.0).base is None  # no AMR state yet: no base at all


# Seed 000 (DESIGN.md 3.3): byte 2 bits high->low '', '', LT, RT, SELECT, START, LB, RB;
# byte 3 LEFT, DOWN, RIGHT, UP, Y, X, B, A; bytes 4-7 LX, 8-11 RX, 12-15 RY, 16-19 LY, float32 LE.
SEED_000_BYTE_2 = ["", "", "LT", "RT", "SELECT", "START", "LB", "RB"]
SEED_000_BYTE_3 = ["LEFT", "DOWN", "RIGHT", "UP", "Y", "X", "B", "A"]
SEED_000_STICKS = {"LX": 4, "RX": 8, "RY": 12, "LY": 16}


@pytest.mark.parametrize(
    ("name", "byte", "bit"),
    [(n, 2, 7 - i) for i, n in enumerate(SEED_000_BYTE_2) if n]
    + [(n, 3, 7 - i) for i, n in enumerate(SEED_000_BYTE_3)],
)
def test_each_button_is_where_seed_000_puts_it(name: str, byte: int, bit: int) -> None:
    """A hand-made ``wireless_remote`` with one documented bit set reads as that button."""
    data = np.zeros(gamepad.SIZE, dtype=np.uint8)
    data[byte] = 1 << bit
    assert gamepad.BUTTONS[name] == (byte, bit)
    assert gamepad.encode({name}, {}).tobytes() == data.tobytes()


def test_sticks_are_little_endian_floats_where_seed_000_puts_them() -> None:
    assert gamepad.STICKS == SEED_000_STICKS
    data = gamepad.encode(set(), {"RY": -0.5})
    assert struct.unpack_from("<f", data.tobytes(), 12) == (-0.5,)
