"""The sim as a process: its record file, seeded determinism, clean exit, the fault CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import pytest

from executive.robots.atom.sim.record import Recording
from tests.sim.conftest import ROOT, TIMEOUT, Sim, wait_until

pytestmark = pytest.mark.dds


def test_record_file_holds_every_command_and_answers_no_motion_after(
    start_sim: Callable[..., Sim],
) -> None:
    sim = start_sim()
    sim.set_fsm("joint_control")
    sim.upper_control(True)
    sim.wait_state("upper_state", lambda s: bool(s["is_upper_control"]))

    # A slow trajectory on the upper body, then a hold at the measured position.
    names = list(sim.profile.topics["upper"])
    shoulder = names.index("left_shoulder_pitch")
    start = sim.q("upper")
    rec = sim.command_record("upper_cmd", start)
    t_start = time.monotonic()
    sent = 0
    while time.monotonic() - t_start < 0.6:
        q = start.copy()
        q[shoulder] += 0.3 * np.sin(2.0 * (time.monotonic() - t_start))
        rec["motor_cmd"]["q"] = q
        sim.ctl.write_record("upper_cmd", rec)
        sent += 1
        time.sleep(0.005)
    t_hold = time.monotonic()
    rec["motor_cmd"]["q"] = sim.q("upper")
    sim.stream("upper_cmd", rec, seconds=0.4)
    sim.client.inject("estop-soft")
    t_end = time.monotonic()

    # Flushed while running: everything sent is in the file within a moment.
    def loaded() -> Recording:
        return Recording.load(sim.record_path)  # type: ignore[arg-type]

    assert wait_until(lambda: len(loaded().commands("upper_cmd", after=t_hold)) > 10)
    assert wait_until(lambda: any(f["kind"] == "estop-soft" for _, f in loaded().faults))
    recording = loaded()
    assert recording.header["joints"]["upper"] == names
    assert recording.header["seed"] == 0
    trajectory = recording.commands("upper_cmd", after=t_start - 1e-3)
    assert len(trajectory) >= sent
    assert all(c.result == "applied" for c in trajectory)
    # taken after it was sent; ``sent`` is the writer's wall-clock stamp mapped onto the
    # monotonic clock, which is a few ms off on a loaded machine (measured 1-3 ms)
    assert all(c.t >= c.sent - 0.01 for c in trajectory)
    assert trajectory[0].kp == pytest.approx(tuple(sim.profile.gains("upper")[0]))

    # The hold after t_hold is not motion; the trajectory before it is.
    recording.assert_no_motion_after(t_hold, before=t_end)
    moving = recording.motion_commands(t_start, before=t_end)
    assert moving and all(c.sent < t_hold for c in moving)
    assert recording.last_motion() == pytest.approx(moving[-1].sent)
    with pytest.raises(AssertionError, match="motion command"):
        recording.assert_no_motion_after(t_start + 0.1, before=t_end)

    events = recording.event_commands()
    assert [e.topic for e in events][:2] == ["set_fsm_id", "switch_upper_control"]
    assert events[0].fields["id"] == sim.profile.fsm_id("joint_control")
    assert events[1].fields == {"flag": True} and events[1].result == "upper control on"

    assert sim.stop("INT") == 0
    final = loaded()
    assert final.counters is not None
    assert final.counters["upper"]["applied"] == len(final.commands("upper_cmd"))
    assert '"sim stopped"' in sim.log()


def test_same_seed_same_start_pose(start_sim: Callable[..., Sim]) -> None:
    """Two runs with one seed start in the same (jittered) pose, to the last bit.

    (That another seed gives another pose is tested on the model: test_models.py.)
    """
    poses = []
    for seed in ("5", "5"):
        # the lag: with the body the pose sags from the start until it is read
        sim = start_sim("--seed", seed, "--physics", "kinematic", record=False)
        poses.append(np.array(sim.fresh_state("upper_state")["motor_state"]["q"]))
        assert sim.stop() == 0
    assert np.array_equal(poses[0], poses[1])
    assert np.abs(poses[0] - np.clip(0.0, *sim.profile.limits("upper"))).max() > 0


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "executive.robots.atom.sim", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=2 * TIMEOUT,
        env=os.environ.copy(),
        check=False,
    )


def test_fault_and_status_subcommands(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)
    done = _cli("fault", "estop-soft", "bms-alarm:upper=2")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert sorted(f["kind"] for f in status["faults"]) == ["BMS_ALARM", "ESTOP_SOFT"]
    sim.wait_state("emergency_state", lambda s: bool(s["soft_emergency_triggered"]))
    done = _cli("fault", "--clear", "estop-soft")
    assert done.returncode == 0, done.stderr
    sim.wait_state("emergency_state", lambda s: not s["soft_emergency_triggered"])
    done = _cli("status")
    assert done.returncode == 0, done.stderr
    assert [f["kind"] for f in json.loads(done.stdout)["faults"]] == ["BMS_ALARM"]
    assert json.loads(done.stdout)["pid"] == sim.proc.pid
    done = _cli("fault", "servo-error:nowhere")
    assert done.returncode == 1 and "known axis" in done.stderr


def test_bad_options_stop_start_up_with_a_message() -> None:
    done = _cli("--profile", "no-such-profile", "--domain", "1")
    assert done.returncode == 2 and "no-such-profile" in done.stderr
    done = _cli("--fault", "estop-sideways")
    assert done.returncode == 2 and "unknown fault kind" in done.stderr


def test_a_controller_leaving_does_not_disturb_the_sim(
    start_sim: Callable[..., Sim], dds_domain: int
) -> None:
    """A writer going away reaches readers as an invalid sample; the sim must shrug it off."""
    from executive.robots.atom.sim.client import SimClient
    from executive.robots.atom.topics import AtomIO
    from executive.wire import dds
    from executive.wire.robot_io import Side

    sim = start_sim(record=False)
    with dds.open_participant(dds_domain) as other:
        io = AtomIO(other, side=Side.CONTROLLER)
        i = io.interface
        assert wait_until(lambda: sim.client.status() is not None)
        SimClient(other).inject("estop-amr")  # a fault writer that leaves too
        for _ in range(50):  # until this writer's sample got through
            io.write("set_fsm_id", i.SetFsmId_(2, ""))
            if sim.client.wait_status(lambda s: s.fsm_id == 2, timeout=0.1) is not None:
                break
    sim.set_fsm("joint_control")  # still obeying after the other controller left
    sim.client.clear("estop-amr")
    assert sim.fresh_state("upper_state")["fsm_id"] == sim.profile.fsm_id("joint_control")
    assert sim.proc.poll() is None
