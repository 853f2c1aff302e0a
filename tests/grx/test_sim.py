"""The simulated GRX as its own process, against the adapter: the two-step protocol,
walking, faults reaching the snapshot and the fast path."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgpack
import pytest
import zenoh

from tests.grx.conftest import SimProcess, endpoint, free_port, plain_peer, wait_for

pytestmark = pytest.mark.dds  # real zenoh sessions on loopback

TASK_CLIENT = "fourier-grx/dynalink_interface/task/client"


def test_tasks_confirm_and_a_command_without_its_flag_does_nothing(sim: SimProcess, open_adapter):
    adapter = open_adapter(sim.port)
    wait_for(lambda: adapter.snapshot().fsm, what="the sim's task state")
    assert adapter.snapshot().fsm.sample == 36  # servo_off at start

    adapter.commands.set_fsm(35)
    wait_for(lambda: adapter.snapshot().fsm.sample == 35, what="servo_on confirmed")
    assert adapter.snapshot().task.sample == (35, True)  # in process for --task-seconds
    wait_for(lambda: adapter.snapshot().task.sample == (35, False), what="servo_on done")

    # a plain peer sends the command alone: the robot keeps its state
    plain = zenoh.open(plain_peer(sim.port))
    try:
        time.sleep(0.2)  # the link and the sim's subscription
        plain.put(TASK_CLIENT, msgpack.packb({"robot_task_command": 960}))
        time.sleep(0.2)
        assert sim.cmd("status")["task_state"] == 35
        plain.put(TASK_CLIENT, msgpack.packb({"flag_task_command_update": True}))
        wait_for(lambda: adapter.snapshot().fsm.sample == 960, what="the flag applies it")
    finally:
        plain.close()  # type: ignore[no-untyped-call]


def test_walks_from_the_joystick_and_stops_on_zero(sim: SimProcess, open_adapter):
    adapter = open_adapter(sim.port)
    wait_for(lambda: adapter.snapshot().fsm, what="the sim")
    adapter.commands.set_fsm(965)  # walk with the servos off: refused
    time.sleep(0.2)
    assert adapter.snapshot().fsm.sample == 36
    assert sim.cmd("status")["refused"] == [[965, "servos are off"]]
    for tid in (35, 965):
        adapter.commands.set_fsm(tid)
        wait_for(lambda tid=tid: adapter.snapshot().fsm.sample == tid, what=f"task {tid}")
    adapter.commands.set_velocity(1.0, 0.0, 0.0, ttl=1.0)
    wait_for(lambda: sim.cmd("status")["pose"][0] > 0.05, what="the sim walking forward")
    adapter.commands.set_velocity(0.0, 0.0, 0.0)
    time.sleep(0.1)
    status = sim.cmd("status")
    assert status["axes"] == [[0.0, 0.0], [0.0, 0.0]]
    x = status["pose"][0]
    time.sleep(0.1)
    assert sim.cmd("status")["pose"][0] == x  # standing


def test_faults_reach_the_snapshot_and_the_fast_path(sim: SimProcess, open_adapter):
    adapter = open_adapter(sim.port)
    events: list[tuple[str, str]] = []
    adapter.on_safety_event(lambda code, message: events.append((code, message)))
    wait_for(lambda: adapter.snapshot().servo_errors, what="the sim's grx map")

    assert sim.cmd("error 0x2310") == {"ok": True}
    wait_for(lambda: adapter.snapshot().servo_errors.sample, what="the error code")
    assert adapter.snapshot().servo_errors.sample == ("robot_error_codes=0x2310",)
    wait_for(lambda: events, what="the fast path")
    assert events == [("servo_error", "servo error: robot_error_codes=0x2310")]
    time.sleep(0.1)
    assert len(events) == 1  # once per new fault, not at 50 Hz

    adapter.commands.clear_faults()
    wait_for(lambda: adapter.snapshot().servo_errors.sample == (), what="clear_fault")
    assert adapter.snapshot().fsm.sample == 34

    # heartbeat lost: the comm source stops being heard, the others go on
    sim.cmd("heartbeat off")
    time.sleep(0.1)
    snap = adapter.snapshot()
    assert snap.sources["comm"].received is not None
    assert snap.sources["comm"].received < snap.sources["task"].received - 0.05

    sim.cmd("garbage task")
    wait_for(lambda: any(c == "undecodable" for c, _ in events), what="undecodable task map")
    assert adapter.snapshot().sources["task"].health.errors == 1


def test_m4_estop_and_battery(port, open_adapter):
    sim = SimProcess(port, "--interface", "m4")
    try:
        adapter = open_adapter(port, schema="m4")
        events: list[tuple[str, str]] = []
        adapter.on_safety_event(lambda code, message: events.append((code, message)))
        wait_for(
            lambda: (s := adapter.snapshot()).estop and s.battery, what="the m4 robot and grx maps"
        )
        snap = adapter.snapshot()
        assert snap.estop.sample == () and snap.battery.sample == 85.0
        sim.cmd("estop on")
        wait_for(lambda: adapter.snapshot().estop.sample, what="the e-stop")
        assert adapter.snapshot().estop.sample == ("flag_robot_emergent_stop",)
        wait_for(lambda: ("estop", "emergency stop: flag_robot_emergent_stop") in events)
        sim.cmd("battery 0.1")
        wait_for(lambda: adapter.snapshot().battery.sample == 10.0, what="the battery")
        assert sim.cmd("estop on") == {"ok": True}
    finally:
        sim.close()
    seed = SimProcess(free_port())
    try:
        assert seed.cmd("estop on")["ok"] is False  # the seed schema has no e-stop
    finally:
        seed.close()


def test_sim_and_adapter_on_the_shipped_symmetric_config(port, open_adapter) -> None:
    """Both ends with the shipped file (listen and connect on one port), whoever starts
    first listens: here the adapter, then the sim connects to it."""
    from executive.robots.grx import adapter as grx
    from executive.seam.profile import load_profile

    both = {
        "listen/endpoints": f'["{endpoint(port)}"]',
        "connect/endpoints": f'["{endpoint(port)}"]',
    }
    adapter = grx.open(load_profile("grx"), zenoh_overrides=both)
    try:
        sim = SimProcess(port, "--cfg", f'connect/endpoints:["{endpoint(port)}"]')
        try:
            wait_for(lambda: adapter.snapshot().fsm, what="the sim through the adapter's listener")
        finally:
            sim.close()
    finally:
        adapter.close()


def test_atom_executive_sim_profile_grx_starts_the_simulated_grx(port, open_adapter) -> None:
    """``atom-executive sim --profile grx`` (docs/operating.md) dispatched to a module the GRX's sim
    does not have, and died with ModuleNotFoundError."""
    sim = SimProcess(port, "--task-seconds", "0.2", entry=("-m", "executive.cli", "sim"))
    try:
        adapter = open_adapter(port)
        wait_for(lambda: adapter.snapshot().fsm, what="the sim's task state")
        assert adapter.snapshot().fsm.sample == 36  # servo_off at start
        wait_for(
            lambda: all(s.received is not None for s in adapter.snapshot().sources.values()),
            what="every category's map",
        )
    finally:
        sim.close()


def test_atom_executive_sim_profile_grx_from_its_config_file_runs_until_sigterm(
    tmp_path: Path, port: int
) -> None:
    """The command of docs/operating.md, the installed ``atom-executive`` script, with a
    per-test loopback ``--zenoh-config FILE`` and stdin closed (started in the background,
    under a service manager): a plain zenoh + msgpack subscriber sees all four server maps, still
    arriving a second later, until SIGTERM ends it with 0. It quit as soon as its stdin
    closed (exit 0 right after its ready line), unlike the other simulators."""
    config = tmp_path / "robot.json5"
    config.write_text(
        json.dumps(
            {
                "mode": "peer",
                "listen": {"endpoints": [endpoint(port)]},
                "connect": {"endpoints": []},
                "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
            }
        )
    )
    script = Path(sys.executable).with_name("atom-executive")
    proc = subprocess.Popen(
        [str(script), "sim", "--profile", "grx", "--zenoh-config", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    plain = zenoh.open(plain_peer(port))
    seen: list[tuple[str, object]] = []

    def heard(sample: zenoh.Sample) -> None:
        seen.append((str(sample.key_expr), msgpack.unpackb(sample.payload.to_bytes())))

    subscriber = plain.declare_subscriber("fourier-grx/dynalink_interface/*/server", heard)
    try:
        keys = {
            f"fourier-grx/dynalink_interface/{c}/server" for c in ("comm", "robot", "task", "grx")
        }
        wait_for(
            lambda: proc.poll() is not None or {k for k, _ in seen} == keys,
            timeout=15.0,
            what="the four server maps",
        )
        assert proc.poll() is None, f"the sim exited with {proc.returncode}, {len(seen)} maps seen"
        assert all(isinstance(m, dict) for _, m in seen)
        heard_before = len(seen)
        time.sleep(1.0)
        assert proc.poll() is None, "the sim exited once its stdin had closed"
        assert len(seen) - heard_before >= 4 * 25  # 50 Hz each, on a loaded machine
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert json.loads(out.splitlines()[0])["ready"] is True
    finally:
        subscriber.undeclare()  # type: ignore[no-untyped-call]
        plain.close()  # type: ignore[no-untyped-call]
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_atom_executive_sim_fault_reaches_the_grx_as_it_reaches_the_other_sims(
    sim: SimProcess,
) -> None:
    """``atom-executive sim --profile grx fault ...`` from another process (issue 25): the
    GRX sim took faults only on its own stdin, so a newcomer who started it by hand had no
    way to inject one; the Atom's and the Adam's take ``sim fault`` over their own topics."""
    peer = [
        "--cfg",
        "listen/endpoints:[]",
        "--cfg",
        f'connect/endpoints:["{endpoint(sim.port)}"]',
    ]

    def cli(*words: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "executive.cli", "sim", "--profile", "grx", *peer, *words]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)

    done = cli("fault", "error", "0x2310")
    assert done.returncode == 0 and json.loads(done.stdout) == {"ok": True}, done
    assert sim.cmd("status")["error_codes"] == [0x2310]  # the model has it
    status = cli("status")
    assert status.returncode == 0 and json.loads(status.stdout)["error_codes"] == [0x2310]
    assert cli("fault", "clear-error").returncode == 0
    assert sim.cmd("status")["error_codes"] == [0]
    refused = cli("fault", "nonsense")
    assert refused.returncode == 1 and "unknown command 'nonsense'" in refused.stdout
    assert cli("fault", "quit").returncode == 1 and sim.cmd("status")  # still there
    assert cli("fault").returncode == 2


def test_sigint_ends_the_sim_started_in_the_background(port: int) -> None:
    """A shell's background job inherits SIGINT ignored, and Python then raises no
    KeyboardInterrupt: ``kill -INT`` left the GRX sim running (the by-hand walk-through
    in docs/operating.md stops each sim so; the other sims handle SIGINT themselves)."""
    sim = [
        sys.executable,
        "-m",
        "executive.cli",
        "sim",
        "--profile",
        "grx",
        "--cfg",
        f'listen/endpoints:["{endpoint(port)}"]',
        "--cfg",
        "connect/endpoints:[]",
    ]
    proc = subprocess.Popen(  # `trap '' INT` then exec: SIGINT ignored, as `sim &` has it
        ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *sim],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["ready"] is True
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0  # closing the session takes seconds on a loaded machine
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_the_body_is_held_in_mujoco_and_read_by_name_in_radians(
    sim: SimProcess, open_adapter
) -> None:
    """The GR-1 T2's model stepped in MuJoCo: the adapter reads the joints the sim
    publishes (degrees on the seed's wire) as radians by name, in the vendor's order; the
    firmware holds them under gravity (a joint sags below the zero pose the sim starts
    at, swings about 1.5 s of simulated time at the head's gains, then stays)."""
    assert sim.cmd("status")["physics"] == "mujoco"
    adapter = open_adapter(sim.port)
    wait_for(lambda: adapter.snapshot().joints, what="the joints on robot/server")
    assert len(adapter.snapshot().joints["robot"].sample) == 32

    def settled() -> bool:  # no joint moved 0.2 mrad in 0.2 s
        before = sim.cmd("status")["joints"]
        time.sleep(0.2)
        return (
            max(abs(a - b) for a, b in zip(before, sim.cmd("status")["joints"], strict=True)) < 2e-4
        )

    wait_for(settled, timeout=15, what="the hold to settle")
    status = sim.cmd("status")["joints"]
    measured = adapter.snapshot().positions(adapter.profile.joints)
    for i, name in enumerate(adapter.profile.topics["robot"]):
        assert measured[name] == pytest.approx(status[i], abs=2e-3), name
    assert max(abs(q) for q in status) > 1e-4  # gravity against the hold: not a still list
    time.sleep(0.5)
    later = adapter.snapshot().positions(adapter.profile.joints)
    assert max(abs(later[j] - measured[j]) for j in measured) < 1e-3  # held within 1 mrad
    assert sim.cmd("status")["contact_events"] == 0  # standing: no link touches another


@pytest.mark.dds
def test_a_contact_of_the_body_is_said_and_recorded(port: int, tmp_path: Path) -> None:
    """A box of a scene where the left forearm hangs: the physics collides it as
    validation would (simkit.physics), and the sim says so, in its status and record."""
    scene = tmp_path / "scene.yaml"
    scene.write_text("crate: {box: {center: [0.0, 0.23, 0.0], size: [0.1, 0.1, 0.1]}}\n")
    record = tmp_path / "record.jsonl"
    with SimProcess(port, "--scene", str(scene), "--record", str(record)) as sim:
        wait_for(lambda: sim.cmd("status")["contacts"], what="the contact in the status")
        contact = sim.cmd("status")["contacts"][0]
        assert contact["a"].startswith("left_") and contact["b"] == "crate"
        assert contact["kind"] == "scene"
        wait_for(lambda: [e for e in sim.events if e["event"] == "contact"], what="said")
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    contacts = [line["contact"] for line in lines if "contact" in line]
    assert contacts and contacts[0]["action"] == "begin" and contacts[0]["b"] == "crate"
    assert contacts[0]["joint"].startswith("left_")
