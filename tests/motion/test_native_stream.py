"""The native stream (``executive.motion.native``) on the in-process rig: what reaches the
robot's side of the wire, read from a deep-history reader there after the fact (so a
blocked interpreter cannot hide what was sent while it was blocked).

The whole path against the simulated robots is in ``tests/integration/test_native_stall.py``.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from cyclonedds.core import Policy, Qos
from cyclonedds.sub import DataReader
from cyclonedds.util import duration

from executive.clock import wall_offset
from executive.motion import native
from executive.motion.streamer import HeldError
from executive.motion.trajectory import Trajectory, plan
from executive.robots import native as native_core
from executive.seam.body import Gravity
from executive.seam.profile import load_profile
from executive.service.faultpoints import hold_gil
from tests.rigs import Rig, make_rig

PROFILE = load_profile()
ELBOW = "left_elbow_pitch"
PERIOD = 1.0 / PROFILE.command_hz
RENEW_SLACK_S = 2 * native.RENEW_S  # the renewal thread may run after the blocked one
assert native_core.MISSING is None, f"the extension is not built: {native_core.MISSING}"


@dataclass
class Sent:
    t: float  # CLOCK_MONOTONIC s, from the source timestamp (CLOCK_REALTIME) shifted
    q: npt.NDArray[np.float64]
    tau: npt.NDArray[np.float64]


class Wire:
    """Everything sent on one command topic, kept by a reader without a listener."""

    def __init__(self, rig: Rig, key: str) -> None:
        topic = rig.robot.readers[key].reader.topic
        self.reader: DataReader[Any] = DataReader(
            rig.robot.participant,
            topic,
            qos=Qos(
                Policy.History.KeepLast(20000), Policy.Reliability.Reliable(duration(seconds=1))
            ),
        )
        self.offset = wall_offset()  # (two bare reads were off by a preemption)

    def take(self) -> list[Sent]:
        out = []
        while samples := self.reader.take(N=5000):
            for s in samples:
                info = s.sample_info
                t = info.source_timestamp / 1e9 - self.offset
                q = np.array([m.q for m in s.motor_cmd], float)
                out.append(Sent(t, q, np.array([m.tau for m in s.motor_cmd], float)))
        return out


@pytest.fixture
def streaming(dds_domain: int) -> Iterator[tuple[Rig, Wire]]:
    with make_rig(dds_domain) as rig:
        wire = Wire(rig, "upper_cmd")
        # the robot's side is in this process: its Python listeners would run on the C
        # thread's write (a local delivery) and wait for the GIL there
        diversion = native_core.divert(r.reader for r in rig.robot.readers.values())
        assert diversion is not None
        streamer = rig.ex.streamer
        # as the service runs it: SCHED_FIFO (the C thread; Python's renewals one below)
        streamer.native, streamer.priority = True, 80
        streamer.start()
        try:
            assert streamer._core is not None, "the native stream did not start"
            yield rig, wire
        finally:
            streamer.stop()
            diversion.close()


def move(rig: Rig, goal: float, duration: float) -> Trajectory:
    streamer = rig.ex.streamer
    measured = streamer.measured_joints([ELBOW])
    (traj,) = plan(PROFILE, {ELBOW: goal}, measured, time.monotonic(), duration=duration)
    streamer.submit([traj])
    return traj


def test_the_c_thread_samples_the_minimum_jerk_move_and_the_feedforward(
    streaming: tuple[Rig, Wire],
) -> None:
    rig, wire = streaming
    traj = move(rig, 0.6, 1.0)
    time.sleep(1.2)
    sent = [s for s in wire.take() if s.t >= traj.t0]
    index = int(traj.indices[0])
    assert len(sent) > 0.7 * 1.2 / PERIOD, len(sent)  # every period, from C
    gravity = Gravity(PROFILE, PROFILE.topics["upper"])
    moving = 0
    for s in sent:
        # sampled when written: the source timestamp is a few us after the sample's time
        want = float(traj.sample(s.t)[0])
        assert abs(s.q[index] - want) < 2e-3, (s.t - traj.t0, s.q[index], want)
        # the feed-forward: knots 5 ms apart, linear between; vs the model at the q sent
        np.testing.assert_allclose(s.tau, gravity(s.q), atol=2e-3)
        moving += traj.t0 < s.t < traj.t0 + traj.duration
    assert moving > 0.6 * 1.0 / PERIOD
    assert abs(sent[-1].q[index] - 0.6) < 1e-6  # arrived, held at the goal


@pytest.mark.parametrize("blocked_s", [1.0, 0.15], ids=["stall: held", "late: resumed"])
def test_a_blocked_interpreter_leaves_the_robot_holding_within_two_periods_of_the_deadline(
    streaming: tuple[Rig, Wire], blocked_s: float
) -> None:
    """The fault: one C call holds the GIL mid-move (nothing of Python runs). The C thread
    goes on streaming the move until the dead man lapses, then holds where it was: from
    the first period past the deadline on, every command is that position, until Python
    runs again. Silent for ``stall_s`` or more, Python keeps the hold; for less (it was
    late, not stalled), the move resumes from where it was frozen, without a jump."""
    rig, wire = streaming
    streamer = rig.ex.streamer
    streamer.stall_s = 0.6
    core = streamer._core
    traj = move(rig, 0.6, 2.0)
    time.sleep(0.4)
    p_block = int(core.stream_stats(1 << 62)["periods"])
    t_block = time.monotonic()
    hold_gil(blocked_s)
    t_after = time.monotonic()
    time.sleep(0.15)
    stats = core.stream_stats(p_block)
    # time the C thread was kept from waking (the machine's: its wake-ups are SCHED_FIFO),
    # apart from a period blocked in its own write or the gate, which leaves no lateness
    late = np.frombuffer(stats["lateness_ns"], np.int64) / 1e9
    kept_off = float(np.clip(late - PERIOD, 0, None).sum())
    t_free = stats["back_ns"] / 1e9  # Python's first renewal after the lapse
    sent = wire.take()
    index = int(traj.indices[0])
    # (this machine is shared: a renewal may have been late before too; this lapse is ours)
    assert t_block < stats["deadman_ns"] / 1e9 < t_free <= t_after + RENEW_SLACK_S, stats
    deadline = stats["lapsed_ns"] / 1e9
    held_at = stats["deadman_ns"] / 1e9
    assert 0 <= held_at - deadline <= 2 * PERIOD, (held_at - deadline) * 1e3
    before = [s for s in sent if t_block < s.t < deadline - 1e-3]
    frozen = [s for s in sent if held_at + 1e-3 < s.t < t_free]
    # motion was commanded up to the lapse, from C while Python was blocked
    assert before[-1].q[index] - before[0].q[index] > 0.002
    woken = f"kept off the CPU {kept_off * 1e3:.1f} ms, the latest wake {late.max() * 1e3:.1f} ms"
    assert len(before) > 0.7 * (deadline - t_block - kept_off) / PERIOD, woken
    # and none after it: one position, streamed on (never silent, never moving)
    assert len(frozen) > 0.7 * (t_free - held_at - kept_off) / PERIOD, (len(frozen), woken)
    q_hold = frozen[0].q
    for s in frozen:
        np.testing.assert_array_equal(s.q, q_hold)
    assert abs(float(traj.sample(held_at)[0]) - q_hold[index]) < 0.01  # where it was
    after = [s for s in sent if s.t > t_free]
    silent = t_free - (deadline - streamer.deadman_s)  # (the machine may stretch the block)
    if silent >= streamer.stall_s:  # a stall: Python holds on
        assert streamer.held and "dead man" in streamer._hold_reason
        for s in after:
            np.testing.assert_array_equal(s.q, q_hold)
    else:  # late: the move goes on from where it stood, one period's step at a time
        assert not streamer.held, (silent, streamer._hold_reason)
        steps = np.abs(np.diff([q_hold[index]] + [s.q[index] for s in after]))
        assert steps.max() < 0.005, steps.max()
        assert after[-1].q[index] - q_hold[index] > 0.005


def test_a_trip_holds_the_native_stream_and_refuses_what_python_computed_before(
    streaming: tuple[Rig, Wire],
) -> None:
    rig, wire = streaming
    streamer = rig.ex.streamer
    traj = move(rig, 0.6, 2.0)
    time.sleep(0.3)
    rig.state(soft_emergency_triggered=True)
    reflex = rig.ex.reflex
    assert reflex is not None
    trip = reflex.last_trip()
    assert trip is not None and trip.held == ("upper_cmd",)
    t_hold = trip.first_hold_ns / 1e9
    time.sleep(0.2)
    sent = wire.take()
    index = int(traj.indices[0])
    before = [s.q[index] for s in sent if traj.t0 < s.t < t_hold - 1e-3]
    assert max(before) - before[0] > 0.01, "nothing moved before the trip"
    # In the writer's order (one writer: the reader keeps it): the first command that is the
    # hold streamed on to the end, and nothing else after it. Its source time is the hold's
    # to within the wall/monotonic mapping (a period's sample 0.1 ms before the hold once
    # fell after ``t_hold - 1e-4`` in a loaded CI run).
    hold = sent[-1].q
    first = next(i for i, s in enumerate(sent) if s.t > t_hold - 5e-3 and np.array_equal(s.q, hold))
    assert abs(sent[first].t - t_hold) < 2e-3, (sent[first].t - t_hold) * 1e3
    after = sent[first:]
    assert len(after) > 0.15 / PERIOD
    for s in after:
        np.testing.assert_array_equal(s.q, hold)  # the hold, streamed on
    assert streamer.held
    with pytest.raises(HeldError):
        streamer.submit([traj])


def test_the_profile_names_a_bad_stream_mode_or_dead_man_and_the_environment_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from executive.seam.profile import PROFILES_DIR, ProfileError

    base = str(PROFILES_DIR / "atom-sdk.yaml")
    path = tmp_path / "p.yaml"
    path.write_text(f"extends: {base}\nstream_mode: fast\nstream_deadman_s: -1\n")
    with pytest.raises(ProfileError) as err:
        load_profile(str(path))
    assert "stream_mode: must be one of python, native, got 'fast'" in str(err.value)
    assert "stream_deadman_s" in str(err.value)
    path.write_text(f"extends: {base}\nstream_mode: native\nstream_deadman_s: 0.2\n")
    profile = load_profile(str(path))
    assert (profile.stream_mode, profile.stream_deadman_s) == ("native", 0.2)
    monkeypatch.setenv(native.ENV, "python")
    assert native.mode(profile.stream_mode) == "python"
    monkeypatch.setenv(native.ENV, "turbo")
    with pytest.raises(ValueError, match="ATOM_EXECUTIVE_STREAM='turbo'"):
        native.mode(profile.stream_mode)


@pytest.mark.parametrize("profile_name", ["atom-sdk", "adam-pro"])
def test_every_stream_layout_patches_to_the_bytes_encode_makes(
    participant: Any, profile_name: str
) -> None:
    """What the C side does each period (the template, positions and torques written at
    the layout's offsets) gives, byte for byte, what the stream's own ``encode`` gives: for
    the Atom's float positions with their gravity feed-forward and the Adam's rounded
    hand counts alike."""
    import struct

    from executive.seam.registry import open_adapter

    profile = load_profile(profile_name)
    assert profile.stream_mode == "native"  # shipped so
    adapter = open_adapter(profile, participant=participant)
    rng = np.random.default_rng(7)
    for stream in adapter.streams:
        layout = stream.native_layout()  # type: ignore[attr-defined]
        assert layout is not None, stream.name
        lower, upper = profile.limits(stream.name)
        for _ in range(5):
            q = rng.uniform(lower, upper)
            want = stream.encode(q)
            got = bytearray(stream.encode(np.zeros_like(q)))
            for at, v in zip(layout.q_at, q, strict=True):
                packed = (
                    struct.pack("<f", v)
                    if layout.q_kind == native.Q_F32
                    else struct.pack("<I", int(np.clip(np.rint(v), lower.min(), upper.max())))
                )
                got[at : at + 4] = packed
            if layout.tau_at:
                assert layout.feedforward is not None
                for at, t in zip(layout.tau_at, layout.feedforward(q), strict=True):
                    got[at : at + 4] = struct.pack("<f", t)
            assert bytes(got) == want, stream.name
    adapter.close()


def test_a_renewal_past_the_deadline_is_a_lapse_even_before_a_period_sees_it(
    streaming: tuple[Rig, Wire],
) -> None:
    """After the whole process was stopped (SIGSTOP) or starved, Python's renewal may run
    before the stream thread's next period. Re-arming then had that period sample every
    plan seconds along its trajectory (a 1 rad jump in tests/integration/test_stall.py):
    the renewal itself must count the lapse, so Python sees it and holds. Here the stream
    thread is stopped (no period sees the deadline) and the interpreter blocked past it."""
    rig, _ = streaming
    streamer = rig.ex.streamer
    core = streamer._core
    move(rig, 0.6, 2.0)
    time.sleep(0.1)
    before = int(core.stream_stats(1 << 62)["deadman"])
    core.stream_stop()  # no period runs from here: only renewals can see the deadline
    ctypes.PyDLL(None).usleep(int(3e6 * streamer.deadman_s))  # keeps the GIL: no renewal
    count = int(core.renew(streamer.deadman_s))
    assert count == before + 1, (before, count)
    stats = core.stream_stats(1 << 62)
    assert stats["lapsed_ns"] / 1e9 < stats["deadman_ns"] / 1e9 <= time.monotonic()


def test_with_nothing_engaged_the_c_thread_parks_and_a_move_wakes_it(
    streaming: tuple[Rig, Wire],
) -> None:
    """Idle (no stream engaged): no period runs and the dead man is disarmed, so an idle
    service's stream costs no wake every 2 ms nor a renewal every 20 ms (issue 22); the
    first move streams from its first period on. Timed from the engage as C stamps it
    (``engaged_ns``, under the gate): a Python clock read before ``move`` also timed this
    thread's own wait for a CPU beside a busy machine (10.7-14.8 ms with four CPU hogs,
    issue 35), which is not the stream's."""
    rig, wire = streaming
    streamer = rig.ex.streamer
    core = streamer._core
    time.sleep(2 * native.IDLE_RENEW_S)  # a renewal has seen nothing planned
    assert not streamer._armed and not streamer.engaged()
    periods = int(core.stream_stats(1 << 62)["periods"])
    time.sleep(0.3)
    assert int(core.stream_stats(1 << 62)["periods"]) == periods  # parked
    rig.state()  # the robot's state, fresh for the plan
    rig.ex.tick()
    t_move = time.monotonic()
    move(rig, 0.3, 0.5)
    time.sleep(0.3)
    t0 = int(core.stream_stats(1 << 62)["engaged_ns"]) / 1e9
    assert t0 > t_move  # this move engaged it
    sent = [s for s in wire.take() if s.t >= t0 - 1e-3]
    assert streamer._armed
    assert sent and sent[0].t - t0 < 5 * PERIOD, (sent[0].t - t0) if sent else None
    assert len(sent) > 0.7 * 0.3 / PERIOD  # every period from then on


def test_an_interpreter_blocked_as_the_first_move_engages_holds_at_the_dead_man(
    streaming: tuple[Rig, Wire],
) -> None:
    """The fault at the worst moment for a dead man armed only while something is engaged:
    the GIL held right after the first move's plan, before the renewal thread has run
    once. The plan armed the dead man itself, so the stream holds within two periods of
    ``deadman_s`` after the engage, where the move was, and streams that position."""
    rig, wire = streaming
    streamer = rig.ex.streamer
    streamer.stall_s = 0.6
    core = streamer._core
    time.sleep(2 * native.IDLE_RENEW_S)
    assert not streamer._armed, "idle: the dead man is disarmed"
    rig.state()  # the robot's state, fresh for the plan
    rig.ex.tick()
    measured = float(streamer.measured_joints([ELBOW])[ELBOW])
    t_engage = time.monotonic()
    traj = move(rig, measured + 0.3, 0.5)
    hold_gil(1.0)
    time.sleep(0.15)
    stats = core.stream_stats(1 << 62)
    deadline, held_at = stats["lapsed_ns"] / 1e9, stats["deadman_ns"] / 1e9
    assert t_engage < deadline <= t_engage + streamer.deadman_s + RENEW_SLACK_S, stats
    assert 0 <= held_at - deadline <= 2 * PERIOD, (held_at - deadline) * 1e3
    sent = wire.take()
    index = int(traj.indices[0])
    before = [s for s in sent if t_engage < s.t < deadline - 1e-3]
    t_free = stats["back_ns"] / 1e9  # Python's first renewal after the lapse
    frozen = [s for s in sent if held_at + 1e-3 < s.t < t_free]
    assert len(before) > 0.7 * (deadline - t_engage) / PERIOD, len(before)
    assert before[-1].q[index] - before[0].q[index] > 1e-3  # moving, from C
    assert len(frozen) > 0.7 * (t_free - held_at) / PERIOD, (len(frozen), t_free - held_at)
    for s in frozen:  # and no motion after: one position, streamed on
        np.testing.assert_array_equal(s.q, frozen[0].q)


def test_a_python_thread_waiting_for_the_gil_never_holds_the_gate(
    streaming: tuple[Rig, Wire],
) -> None:
    """The fault: the GIL held for 20 ms at a time (a C call that keeps it) while another
    Python thread renews in a loop and so, now and then, finds the stream thread in the
    gate. Before, that thread took the gate and then waited for the GIL holding it, and
    the stream (SCHED_FIFO) waited behind whichever Python thread had the GIL: 20 ms of
    missed periods (half of them, here). Now it waits for the gate without the GIL and
    takes it only with the GIL in hand: no period is missed for a GIL hold."""
    rig, _ = streaming
    streamer = rig.ex.streamer
    core = streamer._core
    rig.state()
    rig.ex.tick()
    move(rig, float(streamer.measured_joints([ELBOW])[ELBOW]) + 0.3, 3.0)  # engaged
    time.sleep(0.1)
    stop = threading.Event()
    renewals = [0]

    def renew() -> None:
        while not stop.is_set():
            core.renew(10.0)
            renewals[0] += 1

    thread = threading.Thread(target=renew, name="renewing")
    before = core.stream_stats(1 << 62)
    t0 = time.monotonic()
    thread.start()
    usleep = ctypes.PyDLL(None).usleep
    try:
        for _ in range(100):  # 2 s of 20 ms GIL holds, the renewing thread in between
            usleep(20_000)
            time.sleep(0)
    finally:
        stop.set()
        thread.join(5)
    took = time.monotonic() - t0
    after = core.stream_stats(1 << 62)
    periods, missed = (int(after[k]) - int(before[k]) for k in ("periods", "missed"))
    assert renewals[0] > 100, renewals  # the gate was contended, often
    # a period blocked in the gate is not late itself: the ones after it are missed
    assert missed <= 2 and periods > 0.9 * took / PERIOD, (missed, periods, took, renewals)
