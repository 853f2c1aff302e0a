"""The service and the simulated Atom as separate processes, as they run on the robot.

SIGTERM mid-motion (systemd stopping the unit): the service holds the arm where it is,
hands upper-body control back only after that, and exits 0. The sim's record is the
witness: it shows what the service sent, not what it logged.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from executive.harness.stack import running_stack
from executive.robots.atom.sim.record import Recording

pytestmark = pytest.mark.dds


def test_sigterm_mid_reach_holds_then_releases_control_then_exits(tmp_path: Path) -> None:
    record = tmp_path / "sim-record.jsonl"
    with running_stack(tmp_path / "stack") as stack:
        stack.start_sim("--amr-speed", "3.0", "--seed", "3", "--record", str(record))
        stack.start_service()
        client = stack.client
        reply = client.request("start", {"mission": "deliver_drink", "params": {"table_tag": 4}})
        assert reply.code == 0, reply.message
        reaching = client.wait_status(lambda s: "Reach for the cup" in s.active_node, 90)
        assert reaching is not None, client.status().last_reason
        time.sleep(0.4)  # the arm is moving
        asked = time.monotonic()
        assert stack.stop("executive", signal.SIGTERM, timeout=20) == 0
        exited = time.monotonic()
        stack.stop("sim")
    rec = Recording.load(record)
    assert rec.commands("upper_cmd", after=asked - 0.5), "the arm was not being streamed"
    released = [
        e.t for e in rec.event_commands("switch_upper_control", after=asked) if not e.fields["flag"]
    ]
    assert released, "upper-body control was not handed back"
    # by send time (the sim takes joint streams by polling, events at once): the last
    # command that moved the arm left before control was handed back, and none after
    last_motion = rec.last_motion(topic="upper_cmd", clock="sent")
    assert last_motion is not None and last_motion < released[0] < exited
    rec.assert_no_motion_after(released[0], clock="sent")
