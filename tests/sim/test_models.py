"""The sim's models without DDS: faults, joints, AMR, record reader, scheduler, CLI parsing."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from executive.robots.atom import gamepad as remote
from executive.robots.atom.interface import Interface
from executive.robots.atom.sim import cli
from executive.robots.atom.sim.amr import AmrSim, TagMap, TagMapError
from executive.robots.atom.sim.faults import validate
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.sim.servos import axis_targets, node_joint, node_names
from executive.robots.simkit import cli as kit
from executive.robots.simkit.faults import (
    FaultBook,
    FaultError,
    FaultSpec,
    canonical_kind,
    parse_fault,
)
from executive.robots.simkit.joints import JointGroup, Verdict, command_floats
from executive.robots.simkit.record import Recorder
from executive.robots.simkit.scheduler import Scheduler
from executive.seam.profile import load_profile
from executive.wire.codec import Codec

PROFILE = load_profile()
AXES = axis_targets()


# -- faults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("estop-soft", FaultSpec("estop-soft")),
        ("ESTOP_HARD", FaultSpec("estop-hard")),
        ("bms-alarm:lower=4", FaultSpec("bms-alarm", "lower", 4.0)),
        ("servo-error:left_arm[3]=0x2310", FaultSpec("servo-error", "left_arm[3]", 0x2310)),
        ("dropout:upper_state@3", FaultSpec("state-dropout", "upper_state", 0.0, 3.0)),
        ("battery=12.5", FaultSpec("battery-level", "", 12.5)),
    ],
)
def test_fault_specs_parse(text: str, expected: FaultSpec) -> None:
    assert parse_fault(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("estop-sideways", "unknown fault kind"),
        ("battery=lots", "not a number"),
        ("estop-di", "four flags"),
        ("bms-alarm:middle", "upper, lower or both"),
        ("servo-error:left_tail", "known axis"),
        ("servo-error:waist=70000", "1..0xffff"),
        ("dropout:rt/nowhere", "unknown state topic"),
        ("estop-soft:upper", "takes no target"),
        ("battery=101", "0..100"),
        ("button:Z", "button needs one of"),
        ("stick:LX=2", "-1..1"),
        ("estop-soft@-1", "duration >= 0"),
    ],
)
def test_bad_fault_specs_say_why(text: str, message: str) -> None:
    with pytest.raises(FaultError, match=message):
        validate(parse_fault(text), four_flags=False, axes=AXES)


def test_validation_normalises_targets_and_defaults() -> None:
    def v(text: str) -> FaultSpec:
        return validate(parse_fault(text), four_flags=True, axes=AXES)

    assert v("servo-error:left_elbow_pitch").target == "left_arm[3]"
    assert v("servo-error:torso").target == "waist"
    assert v("servo-error:torso").value == 1.0  # an error code of 0 would be no error
    assert v("bms-alarm:both").target == ""
    assert v("dropout:rt/lower/state").target == "lower_state"
    assert v("estop-di") == FaultSpec("estop-di")
    assert v("battery=0").value == 0.0


def test_fault_book_set_replace_clear_expire() -> None:
    book = FaultBook()
    book.set(FaultSpec("bms-alarm", "upper", 1), now=0.0)
    book.set(FaultSpec("bms-alarm", "lower", 2), now=0.0)
    book.set(FaultSpec("bms-alarm", "lower", 8), now=0.0)  # replaces
    book.set(FaultSpec("state-dropout", "upper_state", 0, 2.0), now=10.0)
    assert sorted(f.value for f in book.of_kind("bms-alarm")) == [1, 8]
    assert book.has("state-dropout", "upper_state") and not book.has("state-dropout", "")
    assert book.expire(11.9) == []
    assert [f.kind for f in book.expire(12.0)] == ["state-dropout"]
    assert [f.target for f in book.clear("bms-alarm", "lower")] == ["lower"]
    assert [f.target for f in book.clear("bms-alarm")] == ["upper"]
    book.set(FaultSpec("estop-soft"), now=0.0)
    version = book.version
    assert len(book.clear_all()) == 1 and book.version == version + 1
    assert canonical_kind("dropout") == "state-dropout"


def test_gamepad_bytes() -> None:
    data = remote.encode({"A", "LT"}, {"LY": 1.0})
    assert data[3] == 0b0000_0001 and data[2] == 0b0010_0000
    assert np.frombuffer(data[16:20].tobytes(), "<f4")[0] == 1.0
    assert validate(parse_fault("button:start@0.5"), four_flags=False, axes=AXES) == FaultSpec(
        "button", "START", 0.0, 0.5
    )


def test_servo_nodes_map_to_joints() -> None:
    assert len(node_names()) == 6 + 6 + 1 + 7 + 7 + 2 + 2
    assert node_joint("left_leg[3]") == "left_knee"
    assert node_joint("waist") == "torso"
    assert node_joint("ecat2can[1]") is None
    # every body joint (not the fingers) has a servo node
    body = [n for n, j in PROFILE.joints.items() if j.group != "hands"]
    assert all(n in AXES for n in body)


# -- joints -------------------------------------------------------------------------------


def _command(q: np.ndarray, kp: float | None = None, kd: float | None = None) -> np.ndarray:
    codec = Codec(Interface().UpperCmd_)
    rec = codec.zeros()
    motors = rec["motor_cmd"]
    default_kp, default_kd = PROFILE.gains("upper")
    motors["q"] = q
    motors["kp"] = default_kp if kp is None else kp
    motors["kd"] = default_kd if kd is None else kd
    return command_floats(codec.decode(codec.encode(rec))["motor_cmd"])


def test_joints_move_with_bounded_velocity_and_settle_on_target() -> None:
    group = JointGroup(PROFILE, "upper", np.random.default_rng(0))
    assert group.settled and np.all(group.q == np.clip(0.0, group.lower, group.upper))
    target = group.q.copy()
    elbow = group.names.index("left_elbow_pitch")
    target[elbow] = 1.5
    cmd = _command(target)
    assert group.check(cmd) is Verdict.APPLIED
    group.command(cmd)
    peak = 0.0
    for _ in range(2000):
        group.step(0.002)
        peak = max(peak, abs(group.dq[elbow]))
        if group.settled:
            break
    assert group.settled
    assert group.q[elbow] == pytest.approx(1.5, abs=1e-6)
    assert peak <= group.vmax[elbow] + 1e-9  # never faster than the cap
    assert peak > 0.5 * group.vmax[elbow]  # and it did use it


def test_joint_checks_reject_whole_commands() -> None:
    group = JointGroup(PROFILE, "upper", np.random.default_rng(0))
    q = group.q.copy()
    bad_q = q.copy()
    bad_q[3] = np.nan
    assert group.check(_command(bad_q)) is Verdict.NON_FINITE
    bad_q[3] = group.upper[3] + 0.01
    assert group.check(_command(bad_q)) is Verdict.OUT_OF_RANGE
    bad_q[3] = group.upper[3] + 1e-6  # float32 rounding of a clamped target is fine
    assert group.check(_command(bad_q)) is Verdict.APPLIED
    assert group.check(_command(q, kp=0.0)) is Verdict.BAD_GAINS
    assert group.check(_command(q, kd=-0.1)) is Verdict.BAD_GAINS
    assert group.check(_command(q, kd=math.inf)) is Verdict.NON_FINITE


def test_frozen_joint_and_halt() -> None:
    group = JointGroup(PROFILE, "upper", np.random.default_rng(0))
    target = np.clip(group.q + 0.3, group.lower, group.upper)
    group.command(_command(target))
    mask = np.zeros(17, dtype=bool)
    mask[5] = True
    group.freeze(mask)
    for _ in range(1000):
        group.step(0.002)
    assert group.settled
    assert group.q[5] == pytest.approx(np.clip(0.0, group.lower[5], group.upper[5]))
    assert group.q[6] == pytest.approx(target[6], abs=1e-6)
    group.halt()
    assert group.target is None and not group.dq.any()


def test_seeded_jitter_and_noise_are_repeatable() -> None:
    def run(seed: int) -> np.ndarray:
        group = JointGroup(
            PROFILE, "hands", np.random.default_rng(seed), initial_jitter=0.01, noise=0.001
        )
        return np.array([group.measured() for _ in range(5)])

    assert np.array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))


# -- AMR ----------------------------------------------------------------------------------


def _run(amr: AmrSim, seconds: float, t0: float = 0.0, dt: float = 0.05) -> float:
    t = t0
    for _ in range(round(seconds / dt)):
        t += dt
        amr.step(t, dt, halted=False)
    return t


def test_amr_task_sequence_and_kinematics() -> None:
    amr = AmrSim(TagMap.default(), speed=1.0, turn_rate=2.0)
    assert (amr.navigation_status, amr.device_status) == ("IDLE", "DEVIDLE")
    assert amr.command("MOVE_TO_TAG", now=0.0, command_id=9, target_id=3, theta=0.0) == "accepted"
    t = _run(amr, 0.05)
    assert (amr.navigation_status, amr.device_status, amr.task_id) == ("QUEUING", "TASKING", 9)
    t = _run(amr, 0.15, t)
    assert amr.navigation_status == "RUNNING"
    t = _run(amr, 6.0, t)
    assert (amr.navigation_status, amr.device_status) == ("COMPLETED", "DEVIDLE")
    assert (amr.x, amr.y, amr.yaw) == pytest.approx((2.0, 1.5, 0.0), abs=1e-2)


def test_amr_queue_cancel_pause_and_remote() -> None:
    amr = AmrSim(TagMap.default())
    amr.command("MOVE_TO_TAG", now=0.0, command_id=1, target_id=2)
    t = _run(amr, 0.3)
    assert "queued" in amr.command("MOVE_TO_TAG", now=t, command_id=2, target_id=1)
    assert amr.task_id == 1 and amr.navigation_status == "RUNNING"
    amr.command("PAUSE_TASK", now=t)
    x = amr.x
    t = _run(amr, 0.5, t)
    assert amr.navigation_status == "PAUSED" and amr.x == x
    amr.command("RESUME_TASK", now=t)
    t = _run(amr, 0.2, t)
    assert amr.navigation_status == "RUNNING" and amr.x > x
    assert "canceled" in amr.command("CANCEL_TASK", now=t)
    t = _run(amr, 1.0, t)
    assert (amr.task_id, amr.navigation_status) == (1, "CANCELED")  # the queued one went too
    assert amr.command("REMOTE_CONTROL", now=t, linear_vel=1.0).startswith("refused")
    amr.command("START_REMOTE", now=t)
    amr.command("REMOTE_CONTROL", now=t, linear_vel=0.5, angular_vel=0.0)
    x = amr.x
    t = _run(amr, 0.2, t)
    assert amr.work_mode == 3 and amr.x == pytest.approx(x + 0.1)
    t = _run(amr, 1.0, t)  # no REMOTE_CONTROL for longer than the dead-man time: stopped
    x = amr.x
    _run(amr, 0.5, t)
    assert amr.x == x
    assert amr.command("MOVE_TO_TAG", now=t, command_id=3, target_id=1).startswith("refused")


def test_amr_failure_and_charger() -> None:
    amr = AmrSim(TagMap.default(), speed=2.0, turn_rate=4.0)
    amr.command("MOVE_TO_TAG", now=0.0, command_id=1, target_id=2)
    t = _run(amr, 0.3)
    amr.fail(t)
    assert (amr.navigation_status, amr.device_status) == ("FAILED", "ERROR")
    amr.recover()
    amr.command("MOVE_TO_CHARGE", now=t, command_id=2)
    _run(amr, 5.0, t)
    assert (amr.navigation_status, amr.device_status) == ("COMPLETED", "CHARGING")


def test_tag_map_file(tmp_path: Path) -> None:
    path = tmp_path / "tags.yaml"
    path.write_text("tags:\n  7: {x: 1, y: 2}\nstart: {x: 1, y: 2, yaw: 0.5}\ncharger: 7\n")
    tags = TagMap.load(path)
    assert tags.tags == {7: (1.0, 2.0)} and tags.start == (1.0, 2.0, 0.5) and tags.charger == 7
    path.write_text("tags:\n  7: {x: 1}\n")
    with pytest.raises(TagMapError, match=r"tags\.7"):
        TagMap.load(path)


# -- record reader ------------------------------------------------------------------------


def test_motion_is_anything_but_a_final_hold(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    rec = Recorder(path, {"seed": 1}, now=0.0)
    measured = np.zeros(17)

    def send(t: float, q: float, result: str = "applied") -> None:
        cmd = np.zeros((17, 5), dtype=np.float32)
        cmd[:, 0] = q
        cmd[:, 3] = 200.0
        rec.stream(t, t - 0.001, "upper_cmd", cmd, measured, result)

    for i in range(10):  # a slow trajectory that stays close to the measured position
        measured[:] = 0.001 * i
        send(1.0 + 0.01 * i, 0.001 * i + 0.002)
    send(2.0, 0.009)  # the hold: onto the measured position, then repeated
    send(2.01, 0.009)
    send(2.02, 0.009)
    rec.close()
    recording = Recording.load(path)
    assert recording.header == {"seed": 1}
    assert len(recording.commands("upper_cmd")) == 13
    assert recording.commands()[-1].repeat and recording.commands()[-1].kp[0] == 200.0
    recording.assert_no_motion_after(1.5)
    assert len(recording.motion_commands(0.0)) == 10
    assert recording.last_motion() == pytest.approx(1.09 - 0.001)
    with pytest.raises(AssertionError):
        recording.assert_no_motion_after(1.05)

    # a trajectory continuing after T is motion however close it tracks
    rec2 = Recorder(path, {}, now=0.0)
    for i in range(5):
        cmd = np.zeros((17, 5), dtype=np.float32)
        cmd[:, 0] = 0.001 * i
        cmd[:, 3] = 1.0
        rec2.stream(3.0 + i, 3.0 + i, "hands_cmd", cmd[:12], np.full(12, 0.001 * i), "applied")
    nan = np.zeros((12, 5), dtype=np.float32)
    nan[0, 0] = np.nan
    rec2.stream(9.0, 9.0, "hands_cmd", nan, np.zeros(12), "non_finite")
    rec2.close()
    recording = Recording.load(path)
    assert len(recording.motion_commands(3.5)) == 5  # four re-targets and the NaN
    assert math.isnan(recording.commands()[-1].dev)


def test_a_body_sagging_from_a_hold_is_not_motion_but_a_far_target_repeated_is(
    tmp_path: Path,
) -> None:
    """Under gravity a hold at the measured position is followed by the arm sagging away
    from it (simkit.physics): its repeats do not pull, whether the hold was sent in the
    window or just before it; repeats of a target that was far from the arm do."""
    path = tmp_path / "rec.jsonl"
    rec = Recorder(path, {}, now=0.0)
    measured = np.zeros(17)

    def send(t: float, q: float) -> None:
        cmd = np.zeros((17, 5), dtype=np.float32)
        cmd[:, 0] = q
        cmd[:, 3] = 200.0
        rec.stream(t, t, "upper_cmd", cmd, measured, "applied")

    send(1.0, 0.5)  # a move's last target, far ahead of the arm
    send(2.0, 0.0)  # the hold onto the measured position
    for i in range(1, 20):  # the arm sags 3 mm per period away from it
        measured[:] = -0.003 * i
        send(2.0 + 0.01 * i, 0.0)
    rec.close()
    recording = Recording.load(path)
    recording.assert_no_motion_after(1.5)  # the hold in the window
    recording.assert_no_motion_after(2.005)  # the hold just before it
    assert len(recording.motion_commands(0.5, before=1.5)) == 1  # the far target

    rec = Recorder(path, {}, now=0.0)
    measured[:] = 0.0
    send(1.0, 0.5)  # far, and only repeated: pulls every time
    send(1.01, 0.5)
    send(1.02, 0.5)
    rec.close()
    with pytest.raises(AssertionError, match="2 motion command"):
        Recording.load(path).assert_no_motion_after(1.005)


def test_recording_skips_an_unfinished_last_line(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text('{"t":1.0,"sim":{}}\n{"t":2.0,"topic":"upper_c')
    assert Recording.load(path).streams == []


# -- scheduler ----------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, dt: float) -> None:
        self.t += dt


def test_scheduler_keeps_rates_on_deadlines_and_counts_skips() -> None:
    clock = FakeClock()
    calls: list[tuple[str, float, int]] = []
    sched = Scheduler(clock=clock, sleep=clock.sleep)

    def job(name: str, cost: float = 0.0):  # type: ignore[no-untyped-def]
        def run(now: float, periods: int) -> None:
            calls.append((name, now, periods))
            clock.t += cost
            if now >= 101.0:
                sched.stop()

        return run

    sched.add("fast", 100.0, job("fast", cost=0.001))
    sched.add("slow", 10.0, job("slow"))
    sched.run()
    fast = [c for c in calls if c[0] == "fast"]
    slow = [c for c in calls if c[0] == "slow"]
    assert len(fast) == pytest.approx(101, abs=1)  # the work did not stretch the period
    assert len(slow) == pytest.approx(11, abs=1)
    assert all(p == 1 for _, _, p in fast)

    clock2 = FakeClock()
    seen: list[int] = []
    late = Scheduler(clock=clock2, sleep=clock2.sleep)

    def slow_job(now: float, periods: int) -> None:
        seen.append(periods)
        clock2.t += 0.035  # overruns three and a half 10 ms periods
        if len(seen) == 3:
            late.stop()

    late.add("overrun", 100.0, slow_job)
    late.run()
    # 35 ms late: the deadlines at +10, +20 and +30 ms have passed (+40 is borderline)
    assert seen[1] == 3 and seen[2] in (3, 4)
    assert late.stats()["overrun"]["skipped"] >= 4


# -- CLI ----------------------------------------------------------------------------------


def test_cli_parses_sim_options_and_subcommands() -> None:
    parser = cli.build_parser()
    args = parser.parse_args(
        [
            "--seed",
            "3",
            "--rate",
            "upper_state=250",
            "--fault",
            "estop-soft",
            "--fault",
            "battery=9",
        ]
    )
    assert args.handler is cli.run and args.seed == 3 and args.rate == [("upper_state", 250.0)]
    assert [f.kind for f in args.fault] == ["estop-soft", "battery-level"]
    args = parser.parse_args(["--domain", "7", "fault", "--clear", "estop-soft"])
    assert args.handler.func is kit.fault_command and args.domain == 7 and args.clear
    args = parser.parse_args(["status", "--domain", "9"])
    assert args.handler.func is kit.status_command and args.domain == 9
    with pytest.raises(SystemExit):
        parser.parse_args(["--fault", "nonsense"])


def test_help_documents_the_fault_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "KIND[:TARGET][=VALUE][@SECONDS]" in out and "--amr-speed" in out
