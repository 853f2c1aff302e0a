"""zenoh user/password authentication, configured the zenoh way (issue 13: newer GRX releases
authenticate every session): the simulated GRX takes a JSON5 config whose ``transport.auth.usrpwd``
accepts one user, and the adapter is opened from a JSON5 file as the service's ``zenoh_config:``
gives it. Right credentials: the robot's maps reach the snapshot and a task command reaches the
robot. Wrong or missing ones: zenoh refuses the session, nothing arrives either way, and the
GRX's sources stay silent (which the safety monitor treats as stale), never a half-open link.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.robots.grx import adapter as grx
from tests.grx.conftest import PROFILE, SimProcess, connect_to, wait_for

pytestmark = pytest.mark.dds  # real zenoh sessions on loopback

ROBOT_USER, ROBOT_PASSWORD = "fourier-grx", "not-the-default"


def _config(path: Path, auth: dict[str, str] | None) -> Path:
    """A loopback zenoh config (scouting off) with ``auth`` as its usrpwd block."""
    body: dict[str, object] = {
        "mode": "peer",
        "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
    }
    if auth is not None:
        body["transport"] = {"auth": {"usrpwd": auth}}
    path.write_text("// written by tests/grx/test_auth.py\n" + json.dumps(body, indent=2))
    return path


@pytest.fixture
def robot(tmp_path: Path, port: int) -> Iterator[SimProcess]:
    credentials = tmp_path / "credentials.txt"  # what the robot accepts: its credentials.txt
    credentials.write_text(f"{ROBOT_USER}:{ROBOT_PASSWORD}\n")
    credentials.chmod(0o600)
    config = _config(
        tmp_path / "robot.json5",
        {"user": ROBOT_USER, "password": ROBOT_PASSWORD, "dictionary_file": str(credentials)},
    )
    sim = SimProcess(port, "--zenoh-config", str(config), "--task-seconds", "0.2")
    yield sim
    sim.close()


def _adapter(path: Path, port: int) -> grx.GrxAdapter:
    return grx.open(PROFILE, zenoh_config=str(path), zenoh_overrides=connect_to(port))


def test_the_right_password_connects(robot: SimProcess, tmp_path: Path, port: int) -> None:
    cfg = _config(tmp_path / "exec.json5", {"user": ROBOT_USER, "password": ROBOT_PASSWORD})
    adapter = _adapter(cfg, port)
    try:
        wait_for(lambda: adapter.snapshot().fsm, what="the robot's task state over auth")
        adapter.commands.set_fsm(35)  # servo_on: command then flag, both through the session
        wait_for(lambda: adapter.snapshot().fsm.sample == 35, what="servo_on confirmed")
    finally:
        adapter.close()


@pytest.mark.parametrize(
    "auth",
    [
        {"user": ROBOT_USER, "password": "wrong"},
        {"user": "intruder", "password": ROBOT_PASSWORD},
        None,
    ],
    ids=["wrong-password", "unknown-user", "no-auth"],
)
def test_refused_credentials_deliver_nothing_either_way(
    robot: SimProcess, tmp_path: Path, port: int, auth: dict[str, str] | None
) -> None:
    adapter = _adapter(_config(tmp_path / "exec.json5", auth), port)
    try:
        adapter.commands.set_fsm(35)
        time.sleep(1.5)  # a link would be up and the robot's 50 Hz maps arriving by now
        snap = adapter.snapshot()
        assert snap.fsm is None and snap.task is None, "a map crossed a refused session"
        assert all(s.received is None for s in snap.sources.values()), snap.sources
        assert robot.cmd("status")["task_state"] == 36, "a command crossed a refused session"
    finally:
        adapter.close()
