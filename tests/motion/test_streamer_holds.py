"""The streamer computes a stream's hold for the reflex only where a gate keeps holds: with
``PythonGate`` (no reflex) nothing would read it, and it was half of a Python period
(issue 31). Middleware-free: the Atom's adapter on the in-process wire."""

from __future__ import annotations

import numpy as np
import pytest

from executive.clock import SimClock
from executive.motion.gate import PythonGate
from executive.motion.streamer import MotionStreamer
from executive.motion.trajectory import plan
from executive.robots.atom import adapter as atom
from executive.robots.atom.topics import AtomIO
from executive.seam.profile import load_profile
from executive.wire.loop import LoopBus
from executive.wire.robot_io import Side

PROFILE = load_profile()


class KeepingGate(PythonGate):
    """A gate that keeps holds, as the reflex's does: records what it is given."""

    keeps_holds = True

    def __init__(self, writers: list[object]) -> None:
        super().__init__(writers)  # type: ignore[arg-type]
        self.holds: list[tuple[int, bytes | None, bool]] = []

    def store_hold(self, slot: int, data: bytes | None, fresh: bool = False) -> None:
        self.holds.append((slot, data, fresh))


@pytest.fixture
def streaming() -> tuple[MotionStreamer, SimClock]:
    clock = SimClock()
    bus = LoopBus(clock)
    robot = AtomIO(bus, side=Side.ROBOT, records=PROFILE.sources)
    adapter = atom.open(PROFILE, participant=bus)
    for key in PROFILE.sources:
        rec = robot.codec(key).zeros()
        if key in ("upper_state", "lower_state"):
            rec["bms_state"]["battery_level"] = 90
        robot.write_record(key, rec)
    streamer = MotionStreamer(adapter.streams, PROFILE, clock=clock)
    goal = {"right_elbow_pitch": 0.5}
    streamer.submit(plan(PROFILE, goal, streamer.measured_joints(goal), clock(), duration=1.0))
    return streamer, clock


def test_no_hold_is_computed_for_a_gate_that_keeps_none(
    streaming: tuple[MotionStreamer, SimClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    streamer, clock = streaming
    sent: list[float] = []
    streamer.on_publish = lambda topic, q, held: sent.append(float(q.max()))
    monkeypatch.setattr(streamer, "_hold_bytes", lambda stream: pytest.fail("computed"))
    for k in range(1, 20):
        clock.advance(k * 0.002)
        streamer.step()
    assert len(sent) == 19 and sent[-1] > sent[0]  # the arm was streamed, moving


def test_a_gate_that_keeps_holds_gets_each_periods_hold(
    streaming: tuple[MotionStreamer, SimClock],
) -> None:
    streamer, clock = streaming
    gate = KeepingGate([s.port.write for s in streamer._streams.values()])
    streamer.attach_gate(gate)
    clock.advance(0.1)
    streamer.step()
    ((slot, data, fresh),) = [h for h in gate.holds if h[1] is not None]
    assert fresh and data is not None
    upper = streamer._streams["upper"]
    assert slot == upper.slot
    assert np.allclose(upper.port.decode_q(data), 0.0, atol=1e-6)  # the measured position
