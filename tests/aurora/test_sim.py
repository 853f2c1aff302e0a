"""The simulated Aurora on its wire: the FSM rules, the faults, its record, the vendor's client.

The sim runs in .venv-aurora; a controller on the wire module (sim_peer.py) drives it; the
vendor's own ``AuroraClient`` (client_move.py, .venv-aurora-vendor, Fast DDS) connects to it
and moves its arm, which the sim's record shows to the last digit.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.aurora.harness import AURORA_PY, VENDOR_DIR, VENDOR_PY, Processes, run

pytestmark = pytest.mark.dds


def test_fsm_rules_groups_and_walking(aurora_procs: Processes, dds_domain: int) -> None:
    sim = aurora_procs.sim(dds_domain, "--speed", "2.0")
    rc, out, err = run(
        AURORA_PY,
        [
            "tests/aurora/sim_peer.py",
            "--domain",
            str(dds_domain),
            "--port",
            str(sim.control_port),
            "rules",
        ],
    )
    assert rc == 0, err
    assert out == {
        "fsm_start": 2,
        "moved_in_fsm2": False,
        "fsm11": True,
        "reached": True,
        "leg_moved_in_11": False,
        "held": True,
        "still_after_hold": True,
        "walked_in_11": False,
        "fsm3": True,
        "walked": True,
    }
    results = [c["result"] for c in sim.commands("robot_control_group_cmd")]
    assert results[0] == "ignored_fsm"
    assert "left_leg:refused" in results and "left_manipulator:held" in results
    velocity = [c["result"] for c in sim.commands("velocity_cmd")]
    assert velocity == ["ignored_fsm", "applied"]


def test_faults_from_the_control_port(aurora_procs: Processes, dds_domain: int) -> None:
    sim = aurora_procs.sim(dds_domain, "--speed", "0.5")
    rc, out, err = run(
        AURORA_PY,
        [
            "tests/aurora/sim_peer.py",
            "--domain",
            str(dds_domain),
            "--port",
            str(sim.control_port),
            "faults",
        ],
    )
    assert rc == 0, err
    assert out["fsm9"] and out["frozen"] and out["fsm_cmd_refused"], out
    assert out["motion_after_fsm9"] == 2
    assert out["group_error"]
    assert out["silent_samples"] == 0 and out["heard_again"]
    assert out["undecodable_raised"], out
    kinds = [line["fault"]["kind"] for line in sim.lines() if "fault" in line]
    assert kinds[:4] == ["fsm9", "all", "group_error", "silence"]
    after_fsm9 = [
        c["result"]
        for c in sim.commands("robot_control_group_cmd")
        if c["t"] > next(line["t"] for line in sim.lines() if "fault" in line)
    ]
    assert after_fsm9 == ["ignored_fsm"]


def test_the_vendor_client_connects_and_moves_its_arm(
    aurora_procs: Processes, dds_domain: int
) -> None:
    sim = aurora_procs.sim(dds_domain, "--speed", "2.0")
    rc, out, err = run(VENDOR_PY, [str(VENDOR_DIR / "client_move.py"), "--domain", str(dds_domain)])
    assert rc == 0, (out, err)
    assert out["reached"] and out["fsm"] == 11
    assert out["connect_s"] < 8.0
    fsm = sim.commands("whole_body_fsm_state_change_cmd")
    assert [c["fields"]["desired_state"] for c in fsm] == [11]
    moves = sim.commands("robot_control_group_cmd")
    assert moves, "the sim recorded no group command"
    for c in moves:
        (cmd,) = c["fields"]["group_cmd"]
        assert cmd["group_name"] == "left_manipulator"
        assert cmd["position"] == out["target"]  # exactly what the client sent
        assert cmd["group_motion_state"] == 0  # the vendor's client leaves it 0 (2.2)
    assert moves[-1]["result"] == "left_manipulator:moving"


def test_a_contact_of_the_body_is_in_the_status_and_the_record(
    aurora_procs: Processes, dds_domain: int, tmp_path: Path
) -> None:
    """The GR-3's model in MuJoCo (the default ``--physics mujoco``) with a box of a
    ``--scene`` where the left forearm hangs: the contact is in the control port's status
    and in the record, with the joint that made it."""
    scene = tmp_path / "scene.yaml"
    scene.write_text("crate: {box: {center: [0.0, 0.23, 0.12], size: [0.1, 0.1, 0.1]}}\n")
    sim = aurora_procs.sim(dds_domain, "--scene", str(scene))
    deadline = time.monotonic() + 10
    while not (status := sim.control(status=True)["status"])["contacts"]:
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    assert status["contact_events"] >= 1
    for contact in status["contacts"]:
        assert contact["a"].startswith("left_") and contact["b"] == "crate", contact
        assert contact["kind"] == "scene" and contact["distance"] < 0
    header = sim.lines()[0]["sim"]
    assert header["physics"] == "mujoco" and "left_manipulator" in header["modelled"]
    sim.stop()  # the record flushed
    contacts = [line["contact"] for line in sim.lines() if "contact" in line]
    assert contacts[0]["action"] == "begin" and contacts[0]["b"] == "crate"
    assert contacts[0]["joint"].startswith("left_")
