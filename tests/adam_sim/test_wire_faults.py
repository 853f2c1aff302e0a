"""The simulated Adam's wire (byte-equal to stock serialization) and its fault specs; no DDS."""

from __future__ import annotations

import numpy as np
import pytest

from executive.robots.adam.interface import AdamInterface
from executive.robots.adam.sim import faults
from executive.robots.adam.sim.wire import BodyWire
from executive.robots.simkit.faults import FaultError, FaultSpec


@pytest.mark.parametrize("variant", ["sdk-1.2", "seed"])
@pytest.mark.parametrize("motors", [31, 29, 23])
def test_state_bytes_equal_stock(variant: str, motors: int) -> None:
    iface = AdamInterface(variant)
    wire = BodyWire(iface, motors)
    rec = wire.state_record()
    rec["motor_state"]["q"][:] = np.arange(motors) * 0.01
    rec["motor_state"]["state"][3] = 0x21
    for status in ("", "normal", "low"):  # the string's length moves the tail's padding
        wire.set_status(status)
        data = wire.encode_state(rec)
        sample = iface.LowState_.deserialize(data)
        assert sample.serialize() == data
        assert len(sample.motor_state) == motors and sample.motor_state[3].state == 0x21


@pytest.mark.parametrize("variant", ["sdk-1.2", "seed"])
def test_commands_decode_or_name_their_length(variant: str) -> None:
    iface = AdamInterface(variant)
    wire = BodyWire(iface, 29)
    extra = {"ki": 0.5} if variant == "sdk-1.2" else {}
    head = {"mode_pr": 1} if variant == "sdk-1.2" else {}

    def cmd(n: int) -> bytes:
        motors = [
            iface.MotorCmd_(mode=1, q=0.1 * i, dq=0.0, tau=0.0, kp=5.0, kd=1.0, reserve=0, **extra)
            for i in range(n)
        ]
        return bytes(iface.LowCmd_(**head, motor_cmd=motors, reserve=0).serialize())

    ok = wire.decode_command(cmd(29))
    assert ok.count == 29 and ok.modes is not None and ok.floats is not None
    assert ok.floats[7, 0] == pytest.approx(0.7) and (ok.floats[:, 3] == 5.0).all()
    assert ok.mode_pr == (1 if variant == "sdk-1.2" else 0)
    for n in (31, 23, 0):
        wrong = wire.decode_command(cmd(n))
        assert wrong.count == n and wrong.floats is None
    sample = iface.LowCmd_.deserialize(cmd(29))  # XCDR2: the stock path, same result
    v2 = wire.decode_command(bytes(sample.serialize(use_version_2=True)))
    assert v2.floats is not None and np.array_equal(v2.floats, ok.floats)


def test_fault_specs_are_the_adams() -> None:
    joints = ["left_knee", "left_elbow"]
    spec = faults.validate(FaultSpec("servo-error", "left_elbow"), joints=joints, battery=True)
    assert spec.value == 1.0
    drop = FaultSpec("state-dropout", "rt/handstate")
    assert faults.validate(drop, joints=joints, battery=False).target == "hand_state"
    with pytest.raises(FaultError, match="no estop-soft on DDS"):
        faults.validate(FaultSpec("estop-soft"), joints=joints, battery=True)
    with pytest.raises(FaultError, match="body joint"):
        faults.validate(FaultSpec("servo-error", "nose"), joints=joints, battery=True)
    with pytest.raises(FaultError, match="sdk-1.2"):
        faults.validate(FaultSpec("battery-level", value=5), joints=joints, battery=False)
    assert faults.parse_line("  # a comment") is None
    assert faults.parse_line("clear servo-error:left_knee") == (
        "clear",
        FaultSpec("servo-error", "left_knee"),
    )
    action, parsed = faults.parse_line("set dropout:low_state@2") or ("", None)
    assert action == "set" and parsed == FaultSpec("state-dropout", "low_state", 0.0, 2.0)
