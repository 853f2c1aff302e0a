"""The simulated Adam as its own process, seen through stock cyclonedds-python."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from executive.robots.adam.sim.client import FaultRejectedError
from tests.adam_sim.conftest import Adam, wait_until

pytestmark = pytest.mark.dds


def test_state_has_n_motors_and_commands_move_joints(start_adam: Callable[..., Adam]) -> None:
    adam = start_adam(profile="adam-pro")
    state = adam.fresh(adam.low_state)
    assert len(state.motor_state) == 31 and {m.mode for m in state.motor_state} == {1}
    assert {m.state for m in state.motor_state} == {0}
    assert state.battery_data.voltage > 0 and state.battery_data.status == "normal"
    elbow = adam.index("left_elbow")
    assert abs(state.motor_state[elbow].q) < 0.05  # before: near zero

    q = [m.q for m in state.motor_state]
    q[elbow] = -0.5
    moved = adam.stream(
        adam.body_command(q),
        lambda: abs(adam.fresh(adam.low_state).motor_state[elbow].q + 0.5) < 1e-3,
    )
    assert moved, adam.log()
    # the hands close toward the commanded counts
    adam.hand_cmd.write(adam.iface.HandCmd_(position=[500] * 12, reserve=0))
    assert wait_until(lambda: list(adam.fresh(adam.hand_state).position) == [500] * 12)
    body = adam.counters("body", lambda c: c["applied"] > 0)
    assert body["applied"] == body["received"]

    assert wait_until(lambda: len(adam.recording().commands("body_cmd")) > 0)
    rec = adam.recording()
    assert rec.header["motors"] == 31 and rec.header["streams"]["body_cmd"][elbow] == "left_elbow"
    sent = rec.commands("body_cmd")[0]
    assert sent.result == "applied" and len(sent.q) == 31
    assert sent.q[elbow] == pytest.approx(-0.5, abs=1e-6)
    assert wait_until(lambda: len(adam.recording().commands("hand_cmd")) > 0)
    assert adam.recording().commands("hand_cmd")[0].q == (500.0,) * 12


def test_wrong_length_and_disabled_motors_are_rejected(start_adam: Callable[..., Adam]) -> None:
    adam = start_adam(profile="adam-standard")
    state = adam.fresh(adam.low_state)
    assert len(state.motor_state) == 29
    knee = adam.index("left_knee")
    q = [m.q for m in state.motor_state]
    q[knee] = 1.0
    adam.low_cmd.write(adam.body_command(q, motors=31))  # a Pro's command
    adam.low_cmd.write(adam.body_command(q, mode=0))  # 29 motors, disabled
    body = adam.counters("body", lambda c: c["wrong_length"] >= 1 and c["bad_mode"] >= 1)
    assert body["applied"] == 0
    assert abs(adam.fresh(adam.low_state).motor_state[knee].q - state.motor_state[knee].q) < 1e-3

    assert wait_until(lambda: len(adam.recording().events) >= 1)
    rec = adam.recording()
    event = rec.events[0]
    assert event.result == "wrong_length" and event.fields["motors"] == 31
    assert event.fields["expected"] == 29
    assert wait_until(lambda: len(adam.recording().commands("body_cmd")) >= 1)
    assert adam.recording().commands("body_cmd")[0].result == "bad_mode"


def test_faults_show_in_motor_state(start_adam: Callable[..., Adam]) -> None:
    adam = start_adam("--stdin-faults", profile="adam-lite", interface="seed", stdin=True)
    state = adam.fresh(adam.low_state)
    assert len(state.motor_state) == 23
    elbow, knee = adam.index("left_elbow"), adam.index("right_knee")

    adam.client.inject("servo-error", "left_elbow", value=0x21)  # over DDS
    assert adam.fresh(adam.low_state).motor_state[elbow].state == 0x21
    assert adam.proc.stdin is not None
    adam.proc.stdin.write(b"servo-error:right_knee=7\n")  # on stdin
    adam.proc.stdin.flush()
    assert wait_until(lambda: adam.fresh(adam.low_state).motor_state[knee].state == 7)

    adam.client.clear("servo-error", "left_elbow")
    after = adam.fresh(adam.low_state).motor_state
    assert after[elbow].state == 0 and after[knee].state == 7
    # the seed interface has no battery on the wire: refused, with the reason
    with pytest.raises(FaultRejectedError, match="battery_data"):
        adam.client.inject("battery-level", value=10)
    adam.client.inject("state-dropout", "low_state")
    adam.low_state.take(N=256)
    hands = adam.fresh(adam.hand_state)  # hand state still flows ...
    assert hands is not None and not adam.low_state.take(N=256)  # ... low state does not


def test_atom_executive_sim_fault_reaches_the_adam(start_adam: Callable[..., Adam]) -> None:
    """``atom-executive sim --profile adam-pro fault SPEC`` as for the Atom (issue 25): the
    Adam's sim had no ``fault`` command, only faults on its stdin when started for them."""
    import json
    import subprocess
    import sys

    adam = start_adam()
    elbow = adam.index("left_elbow")

    def cli(*words: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "executive.cli", "sim", "--profile", "adam-pro", *words]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)

    done = cli("fault", "servo-error:left_elbow=0x21")
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["faults"][0]["target"] == "left_elbow"
    assert adam.fresh(adam.low_state).motor_state[elbow].state == 0x21
    status = cli("status")
    assert status.returncode == 0 and json.loads(status.stdout)["pid"] == adam.proc.pid
    assert cli("fault", "--clear-all").returncode == 0
    assert wait_until(lambda: adam.fresh(adam.low_state).motor_state[elbow].state == 0)
    refused = cli("fault", "servo-error:no_such_joint=1")
    assert refused.returncode == 1 and "no_such_joint" in refused.stderr, refused
    assert cli("fault").returncode == 2


def walkthrough() -> dict[str, dict[str, str]]:
    """The by-hand table of docs/operating.md (``| | Atom | Adam | GRX |``): row -> robot ->
    cell."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "operating.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    head = next(i for i, line in enumerate(rows) if line.replace(" ", "") == "||Atom|Adam|GRX|")
    robots = ["Atom", "Adam", "GRX"]
    table: dict[str, dict[str, str]] = {}
    for line in rows[head + 1 :]:
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0].startswith("--"):
            break
        table[cells[0]] = dict(zip(robots, cells[1:], strict=True))
    return table


def test_the_walkthrough_s_adam_fault_and_clear_reach_the_adam(
    start_adam: Callable[..., Adam],
) -> None:
    """The by-hand Adam fault line (docs/operating.md), run as written: it was
    ``atom-executive sim fault servo-error:left_elbow=0x21``, which asks the simulated Atom
    (none there) and fails without ``--profile adam-pro`` (issue 35, 7)."""
    import shlex
    import subprocess
    import sys

    table = walkthrough()
    sim, fault, clear = (table[row]["Adam"] for row in ("sim", "fault", "clear it"))
    assert sim == "atom-executive sim --profile adam-pro", sim
    adam = start_adam(profile="adam-pro")
    elbow = adam.index("left_elbow")

    def run(line: str) -> subprocess.CompletedProcess[str]:
        words = shlex.split(line)
        assert words[:2] == ["atom-executive", "sim"], line
        argv = [sys.executable, "-m", "executive.cli", *words[1:]]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)

    done = run(fault)
    assert done.returncode == 0, done
    assert adam.fresh(adam.low_state).motor_state[elbow].state == 0x21
    done = run(clear)
    assert done.returncode == 0, done
    assert wait_until(lambda: adam.fresh(adam.low_state).motor_state[elbow].state == 0)
    # the other robots' lines name their own sims the same way
    for robot, flag in (("Atom", ""), ("GRX", "--profile grx ")):
        for row in ("fault", "clear it"):
            assert table[row][robot].startswith(f"atom-executive sim {flag}fault "), table[row]
