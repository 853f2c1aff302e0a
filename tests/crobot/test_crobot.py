"""The C robot against stock cyclonedds-python readers and writers, per interface preset.

Nothing here goes through ``executive/wire/codec.py`` or ``RobotIO``: the samples are the
generated classes of ``executive.wire.Interface`` read with plain ``DataReader.take()`` and
written with ``DataWriter.write()``, so these tests hold whatever state the executive's own
decoder is in. The topic names are hard-coded here too (DESIGN.md 3), as in ``crobot.c``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cyclonedds._clayer import ddspy_take
from cyclonedds.core import (
    InstanceState,
    Policy,
    Qos,
    ReadCondition,
    SampleState,
    ViewState,
    WaitSet,
)
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.sim.record import Recording
from executive.seam.profile import load_profile
from tests.crobot.harness import TIMEOUT, CRobot, CRobotError
from tests.sim.conftest import matched_total, wait_until

pytestmark = pytest.mark.dds

PRESETS = ["seed", "sdk-1.0.1", "sdk-1.1.0"]
PROFILE = load_profile()
JOINT_FSM = PROFILE.fsm_id("joint_control")

STATE = {  # key -> (topic, type)
    "upper_state": ("rt/upper/state", "UpperState_"),
    "lower_state": ("rt/lower/state", "LowerState_"),
    "hands_state": ("rt/hands/state", "HandsState_"),
    "amr_state": ("rt/amr/state", "AMRState_"),
    "emergency_state": ("rt/emergency/state", "EmergencyState_"),
    "main_nodes_state": ("rt/main/nodes/state", "MainNodesState_"),
}
COMMANDS = {
    "upper_cmd": ("rt/upper/cmd", "UpperCmd_"),
    "lower_cmd": ("rt/lower/cmd", "LowerCmd_"),
    "hands_cmd": ("rt/hands/cmd", "HandsCmd_"),
    "set_fsm_id": ("rt/set/fsm/id", "SetFsmId_"),
    "switch_upper_control": ("rt/switch/upper/control", "SwitchUpperControl_"),
    "clear_errors": ("rt/clear/errors", "ClearErrors_"),
    "amr_cmd": ("rt/amr/cmd", "AMRCommand_"),
    "remote_control": ("rt/remote/control", "RemoteControl_"),
}
MOTORS = {"upper_cmd": "motor_cmd", "lower_cmd": "motor_cmd", "hands_cmd": "hands"}


class Wire:
    """Stock readers on the robot's state topics, stock writers on its command topics."""

    def __init__(self, participant: DomainParticipant, variant: str, depth: int = 1) -> None:
        self.iface = Interface(Variant.parse(variant))
        # As the executive reads state: best-effort (matches any writer), keep-last.
        state_qos = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(depth))
        command_qos = Qos(
            Policy.Reliability.Reliable(duration(milliseconds=100)), Policy.History.KeepLast(16)
        )
        self.types = {k: getattr(self.iface, t) for k, (_, t) in (STATE | COMMANDS).items()}
        self.readers: dict[str, DataReader[Any]] = {}
        self.waitsets: dict[str, WaitSet] = {}
        self._keep: list[object] = []
        for key, (name, _) in STATE.items():
            reader: DataReader[Any] = DataReader(
                participant, Topic(participant, name, self.types[key]), qos=state_qos
            )
            waitset = WaitSet(participant)
            condition = ReadCondition(reader, SampleState.Any | ViewState.Any | InstanceState.Any)
            waitset.attach(condition)
            self._keep.append(condition)
            self.readers[key], self.waitsets[key] = reader, waitset
        self.writers: dict[str, DataWriter[Any]] = {
            key: DataWriter(participant, Topic(participant, name, self.types[key]), qos=command_qos)
            for key, (name, _) in COMMANDS.items()
        }

    def take(self, key: str, n: int = 4096) -> list[Any]:
        return [s for s in self.readers[key].take(N=n) if isinstance(s, self.types[key])]

    def wait(
        self, key: str, predicate: Callable[[Any], bool] = lambda s: True, timeout: float = TIMEOUT
    ) -> Any:
        """The first sample of ``key`` from now on that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            for sample in self.take(key):
                last = sample
                if predicate(sample):
                    return sample
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{key}: no sample satisfied the condition; last: {last}")
            self.waitsets[key].wait(duration(seconds=min(remaining, 0.5)))

    def fresh(self, key: str) -> Any:
        """A sample published after this call (older ones are discarded)."""
        self.take(key)
        return self.wait(key)

    def ready(self) -> None:
        """Every state topic seen and every command writer matched: nothing is lost."""
        for key in STATE:
            self.wait(key)
        for key, writer in self.writers.items():
            assert wait_until(matched(writer)), f"{key} never matched"

    def write(self, key: str, sample: Any) -> None:
        self.writers[key].write(sample)

    # -- samples ---------------------------------------------------------------------------

    def joints(self, key: str, q: list[float], kp: float | None = None, kd: float = 1.0) -> Any:
        """A joint command for ``key`` with targets ``q``, the profile's gains unless given."""
        topic = key.removesuffix("_cmd")
        default_kp, _ = PROFILE.gains(topic)
        motors = [
            self.iface.MotorCmd_(
                mode=PROFILE.motor_mode,
                q=float(qi),
                dq=0.0,
                tau=0.0,
                kp=float(default_kp[i]) if kp is None else kp,
                kd=kd,
            )
            for i, qi in enumerate(q)
        ]
        return self.types[key](**{MOTORS[key]: motors})

    def set_fsm(self, fsm_id: int) -> None:
        cls = self.types["set_fsm_id"]
        fields = cls.__dataclass_fields__
        self.write("set_fsm_id", cls(fsm_id, "") if "current_action" in fields else cls(fsm_id))

    def amr(self, kind: str, command_id: int, target_id: int = 0, theta: float = 0.0) -> None:
        self.write(
            "amr_cmd",
            self.iface.AMRCommand_(
                command_type=self.iface.AMRCommandType[kind],
                target_id=target_id,
                linear_vel=0.0,
                angular_vel=0.0,
                command_id=command_id,
                timestamp=0,
                theta=theta,
            ),
        )


@pytest.fixture
def open_wire(participant: DomainParticipant) -> Iterator[Callable[..., Wire]]:
    yield lambda variant, depth=1: Wire(participant, variant, depth)


def q_of(state: Any, field: str = "motor_state") -> list[float]:
    return [m.q for m in getattr(state, field)]


def matched(writer: DataWriter[Any]) -> Callable[[], bool]:
    return lambda: matched_total(writer) > 0


def heartbeat_past(beat: int) -> Callable[[Any], bool]:
    return lambda s: bool(s.bms_state.heartbeat >= beat)


def flag_is(field: str, value: bool) -> Callable[[Any], bool]:
    return lambda s: bool(getattr(s, field)) == value


def wait_record(robot: CRobot, predicate: Callable[[Recording], bool]) -> Recording:
    """The robot's record once ``predicate`` holds for it (it flushes on each look)."""
    holder: list[Recording] = []

    def look() -> bool:
        holder[:] = [robot.recording()]
        return predicate(holder[0])

    assert wait_until(look, every=0.05), f"record never satisfied the condition: {holder}"
    return holder[0]


# --- state out ------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", PRESETS)
def test_every_state_topic_at_its_rate(
    variant: str, start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    robot = start_crobot(variant)
    wire = open_wire(variant, depth=4096)  # deep: every sample of the window is kept
    first = {key: wire.wait(key) for key in STATE}
    # Each topic's window runs from the end of its emptying take to the start of its
    # counting take: taking (deserialising) 500 samples of another topic takes a while.
    opened = {}
    for key in STATE:
        wire.take(key)
        opened[key] = time.monotonic()
    threading.Event().wait(1.0)  # the measurement window itself, not a wait for a condition
    samples, window = {}, {}
    for key in STATE:
        window[key] = time.monotonic() - opened[key]
        samples[key] = wire.take(key)
    for key, hz in PROFILE.state_hz.items():
        rate = len(samples[key]) / window[key]
        assert 0.6 * hz <= rate <= 1.25 * hz, f"{key}: {rate:.1f} Hz, profile says {hz} Hz"

    upper, lower = samples["upper_state"][-1], samples["lower_state"][-1]
    assert "".join(upper.robot_type).rstrip("\0") == "Atom"
    assert (upper.fsm_id, lower.fsm_id, upper.is_upper_control) == (0, 0, False)
    assert hasattr(upper, "imu_state") == (variant == "seed")
    assert lower.imu_state.quaternion[0] == 1.0
    for state in (upper, lower):
        assert state.bms_state.battery_level == 85
        assert state.bms_state.bms_alarms == 0
    # heartbeats count samples
    beats = [s.bms_state.heartbeat for s in samples["lower_state"]]
    assert beats == sorted(beats) and beats[-1] > first["lower_state"].bms_state.heartbeat
    amr = samples["amr_state"][-1]
    assert amr.basic_status.heartbeat > first["amr_state"].basic_status.heartbeat
    assert amr.basic_status.battery_level == pytest.approx(85.0)
    assert (amr.device_status.name, amr.navigation_status.name) == ("DEVIDLE", "IDLE")
    emergency = samples["emergency_state"][-1]
    assert not any(getattr(emergency, f) for f in emergency.__dataclass_fields__)
    nodes = samples["main_nodes_state"][-1]
    assert all(a.error_code == 0 and a.servo_state == 8 for a in nodes.left_arm)
    # the start pose: 0 clipped into each joint's limits (as executive/robots/atom/sim/joints.py)
    hands = samples["hands_state"][-1]
    for topic, got in (
        ("upper", q_of(upper)),
        ("lower", q_of(lower)),
        ("hands", q_of(hands, "hands")),
    ):
        lo, hi = PROFILE.limits(topic)
        assert got == pytest.approx([min(max(0.0, a), b) for a, b in zip(lo, hi, strict=True)])
    assert robot.status()["published"]["upper_state"] > 0


@pytest.mark.parametrize("variant", PRESETS)
def test_c_writer_sets_the_xcdr1_padding_bits(
    variant: str, start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    """DESIGN.md 3.2: a CycloneDDS 0.10 C writer puts the count of padding bytes at the end
    of the sample in the XCDR1 encapsulation options; stock Python writers leave them 0."""
    start_crobot(variant)
    wire = open_wire(variant)
    four_flags = variant == "sdk-1.1.0"
    expected = {  # (little-endian CDR, options)
        "emergency_state": bytes.fromhex("00010000" if four_flags else "00010001"),
        "main_nodes_state": bytes.fromhex("00010002"),
    }
    for key, header in expected.items():
        wire.wait(key)  # a sample has arrived: the next raw take has one
        raw: list[bytes] = []

        def take_raw(key: str = key, raw: list[bytes] = raw) -> bool:
            ret = ddspy_take(wire.readers[key]._ref, 1)
            raw[:] = [data for data, info in ret if info.valid_data]
            return bool(raw)

        assert wait_until(take_raw), f"no raw {key} sample"
        data = raw[0]
        assert data[:4] == header, f"{key}: header {data[:4].hex()}, expected {header.hex()}"
        pad = data[3]
        assert (len(data) - 4) % 4 == 0 and data[len(data) - pad :] == b"\0" * pad
        sample = wire.types[key].deserialize(data)  # stock Python reads it
        assert isinstance(sample, wire.types[key])


# --- joint commands ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", PRESETS)
def test_joints_obey_fsm_upper_control_and_estop(
    variant: str, start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    robot = start_crobot(variant)
    wire = open_wire(variant)
    wire.ready()
    names = list(PROFILE.topics["upper"])
    elbow = names.index("left_elbow_pitch")
    q0 = q_of(wire.fresh("upper_state"))
    target = list(q0)
    target[elbow] = q0[elbow] + 0.4
    sent_at = time.monotonic()

    # zero-torque FSM, no upper control: valid commands are ignored, nothing moves
    for _ in range(5):
        wire.write("upper_cmd", wire.joints("upper_cmd", target))
    wait_record(robot, lambda r: len(r.commands("upper_cmd")) >= 5)
    assert q_of(wire.fresh("upper_state")) == q0
    # a joint-control FSM alone is not enough for the upper body
    wire.set_fsm(JOINT_FSM)
    wire.wait("upper_state", lambda s: s.fsm_id == JOINT_FSM)
    wire.wait("lower_state", lambda s: s.fsm_id == JOINT_FSM)
    wire.write("upper_cmd", wire.joints("upper_cmd", target))
    wait_record(robot, lambda r: len(r.commands("upper_cmd")) >= 6)
    assert q_of(wire.fresh("upper_state")) == q0
    # with upper control it moves toward the target, and only the commanded joint moves
    wire.write("switch_upper_control", wire.iface.SwitchUpperControl_(True))
    wire.wait("upper_state", lambda s: s.is_upper_control)
    wire.write("upper_cmd", wire.joints("upper_cmd", target))
    moved = wire.wait("upper_state", lambda s: abs(s.motor_state[elbow].q - target[elbow]) < 1e-4)
    assert [q for i, q in enumerate(q_of(moved)) if i != elbow] == q0[:elbow] + q0[elbow + 1 :]

    # lower: obeys with the FSM; hands: always
    lower_target = q_of(wire.fresh("lower_state"))
    knee = list(PROFILE.topics["lower"]).index("left_knee")
    lower_target[knee] += 0.3
    wire.write("lower_cmd", wire.joints("lower_cmd", lower_target))
    wire.wait("lower_state", lambda s: abs(s.motor_state[knee].q - lower_target[knee]) < 1e-4)

    # e-stop: commands ignored, the joints stay where they are
    robot.fault("estop hard on")
    wire.wait("emergency_state", lambda s: s.hard_emergency_triggered)
    estop_at = time.monotonic()
    for _ in range(3):
        wire.write("upper_cmd", wire.joints("upper_cmd", q0))
    wait_record(robot, lambda r: len(r.commands("upper_cmd", after=estop_at)) >= 3)
    assert q_of(wire.fresh("upper_state"))[elbow] == pytest.approx(target[elbow], abs=1e-4)
    hands = q_of(wire.fresh("hands_state"), "hands")
    wire.write("hands_cmd", wire.joints("hands_cmd", [q + 0.1 for q in hands]))
    wait_record(robot, lambda r: len(r.commands("hands_cmd")) >= 1)
    assert q_of(wire.fresh("hands_state"), "hands") == hands
    robot.fault("clear")
    wire.wait("emergency_state", lambda s: not s.hard_emergency_triggered)
    hands_target = [q + 0.1 for q in hands]
    wire.write("hands_cmd", wire.joints("hands_cmd", hands_target))
    wire.wait("hands_state", lambda s: q_of(s, "hands") == pytest.approx(hands_target, abs=1e-4))

    # rejected whole: non-finite numbers, kp <= 0, q outside the limits
    bad_q = list(target)
    bad_q[elbow] = math.nan
    wire.write("upper_cmd", wire.joints("upper_cmd", bad_q))
    wire.write("upper_cmd", wire.joints("upper_cmd", q0, kp=0.0))
    far = list(target)
    far[elbow] = 10.0
    wire.write("upper_cmd", wire.joints("upper_cmd", far))

    rec = wait_record(
        robot, lambda r: {"non_finite", "bad_gains", "out_of_range"} <= {c.result for c in r}
    )
    assert rec.header["impl"] == "c" and rec.header["variant"] == variant
    upper = rec.commands("upper_cmd")
    assert [c.result for c in upper[:6]] == ["ignored"] * 6
    assert "applied" in {c.result for c in upper}
    assert {c.result for c in rec.commands("upper_cmd", after=estop_at, clock="t")} >= {"ignored"}
    first = upper[0]
    assert first.q == pytest.approx(target, abs=1e-6) and first.change == math.inf
    assert first.dev == pytest.approx(0.4, abs=1e-6)
    assert first.kp == pytest.approx(list(PROFILE.gains("upper")[0]))
    assert upper[1].repeat  # the same command again: "same" lines parse as repeats
    for c in rec:  # t: taken; sent: the writer's timestamp on the same monotonic clock
        assert sent_at - 0.05 <= c.sent <= c.t + 0.05 and c.t - c.sent < 2.0
    nan_cmd = next(c for c in upper if c.result == "non_finite")
    assert math.isnan(nan_cmd.dev) and math.isnan(nan_cmd.q[elbow])
    assert [e.topic for e in rec.event_commands()] == ["set_fsm_id", "switch_upper_control"]
    fsm = rec.event_commands("set_fsm_id")[0]
    assert fsm.fields["id"] == JOINT_FSM
    assert ("current_action" in fsm.fields) == (variant != "sdk-1.0.1")
    assert rec.event_commands("switch_upper_control")[0].fields == {"flag": True}
    assert [f["kind"] for _, f in rec.faults] == ["estop-hard", ""]
    # the record's analysis works on it: what we sent during the e-stop pulled 0.4 rad
    pulls = rec.motion_commands(estop_at, topic="upper_cmd")
    assert pulls and pulls[0].dev == pytest.approx(0.4, abs=1e-4)
    with pytest.raises(AssertionError, match="motion command"):
        rec.assert_no_motion_after(estop_at, topic="upper_cmd")

    assert robot.stop() == 0
    final = robot.recording()
    assert final.counters is not None
    assert final.counters["upper"]["received"] == len(final.commands("upper_cmd"))
    assert final.counters["upper"]["non_finite"] == 1


def test_sigterm_leaves_cleanly_with_the_record_flushed(
    start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    robot = start_crobot("seed")
    wire = open_wire("seed")
    wire.ready()
    wire.write("hands_cmd", wire.joints("hands_cmd", q_of(wire.fresh("hands_state"), "hands")))
    wait_record(robot, lambda r: len(r.commands("hands_cmd")) == 1)
    assert robot.terminate() == 0
    rec = Recording.load(robot.record_path)
    assert rec.counters is not None and rec.counters["hands"]["applied"] == 1
    assert "stopped (signal)" in robot.log()


# --- faults -----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", PRESETS)
def test_faults_show_in_the_state(
    variant: str, start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    robot = start_crobot(variant)
    wire = open_wire(variant)
    wire.ready()
    flags = ["soft", "hard", "amr"] + (["di"] if variant == "sdk-1.1.0" else [])
    for flag in flags:
        field = f"{flag}_emergency_triggered"
        robot.fault(f"estop {flag} on")
        s = wire.wait("emergency_state", flag_is(field, True))
        assert sum(getattr(s, f) for f in s.__dataclass_fields__) == 1
        robot.fault(f"estop {flag} off")
        wire.wait("emergency_state", flag_is(field, False))
    if "di" not in flags:
        with pytest.raises(CRobotError, match="no di flag"):
            robot.fault("estop di on")

    robot.fault("bms upper 0x4")
    robot.fault("bms lower 8")
    wire.wait("upper_state", lambda s: s.bms_state.bms_alarms == 4)
    wire.wait("lower_state", lambda s: s.bms_state.bms_alarms == 8)

    robot.fault("servo left_arm 3 0x21")
    robot.fault("servo ecat2can 1 7")
    # each fault line writes a sample at once: the first may carry only the first fault
    nodes = wire.wait(
        "main_nodes_state",
        lambda s: s.left_arm[3].error_code == 0x21 and s.ecat2can[1].error_code == 7,
    )
    assert nodes.left_arm[2].error_code == 0
    wire.write("clear_errors", wire.iface.ClearErrors_(msg_id=1))
    wire.wait(
        "main_nodes_state",
        lambda s: s.left_arm[3].error_code == 0 and s.ecat2can[1].error_code == 0,
    )

    robot.fault("amr-estop on")
    wire.wait("amr_state", lambda s: s.amr_event.emergency_stop_pressed)
    robot.fault("battery 12")
    wire.wait(
        "amr_state", lambda s: s.basic_status.battery_level == 12.0 and s.amr_event.low_battery
    )
    wire.wait("upper_state", lambda s: s.bms_state.battery_level == 12)
    wire.wait("lower_state", lambda s: s.bms_state.battery_level == 12)

    wire.write("switch_upper_control", wire.iface.SwitchUpperControl_(True))
    wire.wait("upper_state", lambda s: s.is_upper_control)
    robot.fault("revoke")
    wire.wait("upper_state", lambda s: not s.is_upper_control)
    robot.fault("refuse-control on")
    wire.write("switch_upper_control", wire.iface.SwitchUpperControl_(True))
    wait_record(robot, lambda r: len(r.event_commands("switch_upper_control")) == 2)
    assert not wire.fresh("upper_state").is_upper_control

    # silence: the topic stops while the others go on; resume: it is back
    robot.fault("silence rt/upper/state")
    for check in (False, True):  # the first round drains samples still in flight
        beat = wire.fresh("lower_state").bms_state.heartbeat
        wire.wait("lower_state", heartbeat_past(beat + 50))  # 0.1 s at 500 Hz
        taken = wire.take("upper_state")
        assert not (check and taken), "rt/upper/state still published while silenced"
    robot.fault("resume upper_state")
    wire.wait("upper_state")

    robot.fault("clear")
    s = wire.wait("upper_state", lambda s: s.bms_state.bms_alarms == 0)
    assert wire.fresh("lower_state").bms_state.bms_alarms == 0
    assert not wire.fresh("amr_state").amr_event.emergency_stop_pressed
    assert s.bms_state.battery_level == 12  # a level, not a fault: it stays

    for bad in ("estop soft maybe", "bms middle 1", "servo left_arm 7 1", "servo head 0 70000",
                "battery 101", "silence rt/nowhere", "jump"):  # fmt: skip
        with pytest.raises(CRobotError):
            robot.fault(bad)
    rec = robot.recording()
    kinds = [f["kind"] for _, f in rec.faults]
    assert {"bms-alarm", "servo-error", "amr-estop", "battery-level", "state-dropout"} <= set(kinds)
    assert any(f["source"] == "rt/clear/errors" for _, f in rec.faults)
    refused = rec.event_commands("switch_upper_control")[-1]
    assert refused.result == "refused (fault)"


# --- the wheeled base -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", [*PRESETS, "sdk-1.1.0+amr_command_type=move_to_charge"])
def test_amr_tasks_complete_cancel_and_halt(
    variant: str, start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    trip = 0.4
    robot = start_crobot(variant, amr_trip_s=trip)
    wire = open_wire(variant)
    wire.ready()

    def status(s: Any) -> tuple[str, str, int]:
        return s.device_status.name, s.navigation_status.name, s.task_id

    wire.amr("MOVE_TO_TAG", command_id=7, target_id=2, theta=0.5)
    wire.wait("amr_state", lambda s: status(s) == ("TASKING", "RUNNING", 7))
    done = wire.wait("amr_state", lambda s: status(s) == ("DEVIDLE", "COMPLETED", 7))
    assert done.position[2] == pytest.approx(0.5)

    wire.amr("MOVE_TO_TAG", command_id=8, target_id=3)
    wire.wait("amr_state", lambda s: status(s) == ("TASKING", "RUNNING", 8))
    wire.amr("MOVE_TO_TAG", command_id=9, target_id=4)  # refused: a task is active
    wire.amr("CANCEL_TASK", command_id=10)
    canceled = wire.wait("amr_state", lambda s: status(s) == ("DEVIDLE", "CANCELED", 8))
    assert canceled.position[2] == pytest.approx(0.5)  # a canceled task got nowhere

    # the base's e-stop halts the task's clock; released, the task runs to its end
    wire.amr("MOVE_TO_TAG", command_id=11, target_id=1)
    wire.wait("amr_state", lambda s: status(s) == ("TASKING", "RUNNING", 11))
    robot.fault("amr-estop on")
    halted_at = time.monotonic()
    wire.wait("amr_state", lambda s: s.amr_event.emergency_stop_pressed)
    wire.wait("amr_state", lambda s: time.monotonic() > halted_at + 2 * trip)  # 2 trips halted
    assert status(wire.fresh("amr_state")) == ("TASKING", "RUNNING", 11)
    robot.fault("amr-estop off")
    wire.wait("amr_state", lambda s: status(s) == ("DEVIDLE", "COMPLETED", 11))

    # numbered by idlc's header for the variant: START_REMOTE is 6, or 7 with MOVE_TO_CHARGE
    wire.amr("START_REMOTE", command_id=12)
    wire.wait("amr_state", lambda s: s.work_mode == 3)
    wire.amr("STOP_REMOTE", command_id=13)
    wire.wait("amr_state", lambda s: s.work_mode == 0)

    rec = wait_record(robot, lambda r: len(r.event_commands("amr_cmd")) == 7)
    events = rec.event_commands("amr_cmd")
    assert [e.fields["command_type"] for e in events] == [
        "MOVE_TO_TAG", "MOVE_TO_TAG", "MOVE_TO_TAG", "CANCEL_TASK", "MOVE_TO_TAG",
        "START_REMOTE", "STOP_REMOTE",
    ]  # fmt: skip
    assert events[0].fields["target_id"] == 2 and events[0].fields["command_id"] == 7
    assert events[2].result.startswith("refused")
    assert events[3].result == "task 8 canceled"


# --- times in the replies, and the e-stop benchmark's probe ------------------------------------


def test_a_fault_goes_out_at_once_and_its_reply_says_when(
    start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    """``written`` is when the sample carrying the fault was handed to dds_write (out of
    turn, not at the topic's next period), so a test can time a reaction from it; the
    sample's source timestamp agrees. ``silence`` says when the topic's last sample went."""
    robot = start_crobot("seed", rates={"emergency_state": 0.2})  # the next period is far off
    wire = open_wire("seed")
    wire.ready()
    wire.take("emergency_state")
    asked = time.monotonic()
    reply = robot.fault("estop soft on")
    assert asked < reply["t"] <= reply["written"] < time.monotonic()
    wire.wait("emergency_state", flag_is("soft_emergency_triggered", True), timeout=0.5)
    reply = robot.fault("bms upper 0x4")
    assert reply["t"] <= reply["written"]
    assert "written" not in robot.fault("refuse-control on")  # nothing published changed
    quiet = robot.fault("silence rt/upper/state")
    assert "written" not in quiet and quiet["t"] - 0.05 < quiet["last"] <= quiet["t"]
    with pytest.raises(CRobotError, match="without --probe"):
        robot.probe()


def test_the_probe_stamps_the_first_hold_and_cancel_after_an_estop(
    start_crobot: Callable[..., CRobot], open_wire: Callable[..., Wire]
) -> None:
    """A hold is a command at the position published when the e-stop was set; a command
    elsewhere (a trajectory point in flight) is not one. Stamps are arrival times."""
    robot = start_crobot("seed", probe=True)
    wire = open_wire("seed")
    wire.ready()
    q0 = q_of(wire.fresh("upper_state"))  # no upper control: the arm stays at q0
    lower0 = q_of(wire.fresh("lower_state"))
    reply = robot.fault("estop soft on")
    probe = robot.probe()
    assert probe["armed"] and probe["written"] == pytest.approx(reply["written"], abs=1e-6)
    assert probe["hold"] == {"upper": None, "lower": None, "hands": None}
    moving = [q + 0.05 for q in lower0]
    wire.write("lower_cmd", wire.joints("lower_cmd", moving))  # not a hold
    sent = time.monotonic()
    wire.write("upper_cmd", wire.joints("upper_cmd", q0))  # the hold
    wire.amr("CANCEL_TASK", command_id=3)
    assert wait_until(lambda: robot.probe()["cancel"] is not None)
    assert wait_until(lambda: robot.probe()["commands"]["lower"] >= 1)
    probe = robot.probe()
    assert probe["hold"]["lower"] is None and probe["hold"]["hands"] is None
    assert sent < probe["hold"]["upper"] < sent + 1.0
    assert probe["cancel"] > probe["written"]
    wire.write("upper_cmd", wire.joints("upper_cmd", q0))  # only the first hold counts
    assert wait_until(lambda: robot.probe()["commands"]["upper"] >= 2)
    assert robot.probe()["hold"]["upper"] == probe["hold"]["upper"]
