"""A pause past the profile's ``max_pause_s``, through the real service and the simulated
Atom as separate processes (issue 23, 1): a profile that extends ``atom-sdk`` with
``max_pause_s: 2`` ends ``deliver_drink`` ABORTED, saying why, about 2 s after the pause,
and not earlier; nothing moves the arm from the pause's rest to the end, and resume is
refused once the run is over."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from executive.harness.stack import running_stack
from executive.operator.lines import status_document
from executive.robots.atom.sim.record import Recording

pytestmark = pytest.mark.dds

MAX_PAUSE_S = 2.0


def test_a_pause_past_max_pause_s_ends_the_run_aborted_saying_why(tmp_path: Path) -> None:
    profile = tmp_path / "short-pause.yaml"
    profile.write_text(f"extends: atom-sdk\nmax_pause_s: {MAX_PAUSE_S}\n", encoding="utf-8")
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(profile=str(profile))
        stack.start_sim("--amr-speed", "3.0", "--seed", "3", record=True)
        stack.start_service()
        client = stack.client
        reply = client.request("start", {"mission": "deliver_drink", "params": {"table_tag": 4}})
        assert reply.code == 0, reply.message
        reaching = client.wait_status(lambda s: "Reach for the cup" in s.active_node, 90)
        assert reaching is not None, client.status().last_reason
        time.sleep(0.4)  # the arm is moving
        asked = time.monotonic()
        reply = client.request("pause")
        assert reply.code == 0 and "joint stream upper" in reply.message, reply.message
        paused = client.wait_status(lambda s: (status_document(s) or {}).get("paused"), 5)
        assert paused is not None and paused.state == "RUNNING"
        since = (status_document(paused) or {})["paused"]["since"]  # when the service paused
        took_effect = datetime.fromisoformat(since).timestamp() - (time.time() - time.monotonic())
        ended = client.wait_status(lambda s: s.state != "RUNNING", MAX_PAUSE_S + 10)
        over = time.monotonic()
        assert ended is not None and ended.state == "ABORTED", client.status()
        assert f"longer than the profile's max_pause_s ({MAX_PAUSE_S:g} s)" in ended.last_reason
        assert "paused for" in ended.last_reason, ended.last_reason
        assert over - asked > MAX_PAUSE_S
        assert (status_document(ended) or {}).get("paused") is None
        refused = client.request("resume")
        assert refused.code != 0 and "no mission is paused" in refused.message, refused.message
        assert "ended ABORTED" in refused.message, refused.message
        stack.stop("executive")
        stack.stop("sim")
    record = Recording.load(stack.record_path)
    assert record.motion_commands(asked - 0.5, before=asked, topic="upper_cmd"), "not moving"
    # the pause ramps the move to a stop (0.25 s) from when the service paused (not when the
    # client asked: on a loaded machine the request may wait for a tick); after that nothing
    # moves the arm, the run's end included (it releases control where the arm is)
    assert asked - 0.05 < took_effect < asked + 2.0, took_effect - asked
    record.assert_no_motion_after(took_effect + 0.3, clock="sent")
    print(f"max_pause_s {MAX_PAUSE_S:g}: ended {over - asked:.2f} s after the pause")
