"""Pauses through the real service and the simulated Atom as separate processes.

- Past the profile's ``max_pause_s`` (issue 23, 1): a profile that extends ``atom-sdk`` with
  ``max_pause_s: 2`` ends ``deliver_drink`` ABORTED, saying why, about 2 s after the pause,
  and not earlier; nothing moves the arm from the pause's rest to the end, and resume is
  refused once the run is over.
- What a pause says it holds (issue 35, 4): ``greeting_wave`` (no base task) paused
  mid-wave claims no base task, in the reply or the status, and the sim's record has no
  PAUSE_TASK; ``deliver_drink`` paused while its base drives to the bar says it paused the
  base's task, and the sim's record has the PAUSE_TASK. The reply claimed
  ``base task (PAUSE_TASK)`` for any mission on a robot with a base.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from executive.clock import wall_to_monotonic
from executive.harness.stack import Stack, running_stack
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
        took_effect = wall_to_monotonic(datetime.fromisoformat(since).timestamp())
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


BASE_TASK = "base task (PAUSE_TASK)"


def _paused_what(stack: Stack) -> list[str]:
    """What the service's status says the pause holds (waits for the paused status)."""
    paused = stack.client.wait_status(lambda s: (status_document(s) or {}).get("paused"), 5)
    assert paused is not None, stack.client.status()
    what = (status_document(paused) or {})["paused"]["what"]
    assert isinstance(what, list), what
    return [str(w) for w in what]


def _base_speed(status: object) -> float:
    motion = ((status_document(status) or {}).get("telemetry") or {}).get("motion") or {}  # type: ignore[arg-type]
    speed = motion.get("base_speed") or {}
    return abs(float(speed.get("linear") or 0.0))


def test_a_pause_claims_the_base_task_only_when_it_paused_one(tmp_path: Path) -> None:
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config()
        stack.start_sim("--amr-speed", "1.0", "--seed", "3", record=True)
        stack.start_service()
        client = stack.client

        # -- greeting_wave drives no base: its pause holds the arms and the timeouts only
        reply = client.request("start", {"mission": "greeting_wave", "params": {"waves": 5}})
        assert reply.code == 0, reply.message
        waving = client.wait_status(lambda s: "One wave" in s.active_node, 60)
        assert waving is not None, client.status()
        wave_asked = time.monotonic()
        reply = client.request("pause")
        assert reply.code == 0 and "joint stream upper" in reply.message, reply.message
        assert "base" not in reply.message, reply.message
        assert not [w for w in _paused_what(stack) if "base" in w], _paused_what(stack)
        time.sleep(1.0)  # a second paused: long enough for a resent PAUSE_TASK (0.5 s)
        assert not [w for w in _paused_what(stack) if "base" in w], _paused_what(stack)
        wave_resumed = time.monotonic()
        assert client.request("resume").code == 0
        assert client.request("stop").code == 0
        assert client.wait_status(lambda s: s.state != "RUNNING", 10) is not None

        # -- deliver_drink drives to the bar first: its pause pauses the base's task
        reply = client.request("start", {"mission": "deliver_drink", "params": {"table_tag": 4}})
        assert reply.code == 0, reply.message
        driving = client.wait_status(
            lambda s: "Drive to the bar" in s.active_node and _base_speed(s) > 0.05, 30
        )
        assert driving is not None, client.status()
        drive_asked = time.monotonic()
        reply = client.request("pause")
        assert reply.code == 0 and BASE_TASK in reply.message, reply.message
        assert BASE_TASK in _paused_what(stack)
        assert client.request("stop").code == 0
        stack.stop("executive")
        stack.stop("sim")
    record = Recording.load(stack.record_path)
    amr = [
        (e.t, e.fields.get("command_type"))
        for e in record.event_commands("amr_cmd")
        if e.fields.get("command_type") in ("PAUSE_TASK", "RESUME_TASK")
    ]
    # the sim's record's clock is this machine's monotonic one (executive.harness.stack)
    assert not [t for t, _ in amr if wave_asked - 0.1 <= t <= wave_resumed + 0.5], amr
    assert [t for t, kind in amr if kind == "PAUSE_TASK" and t >= drive_asked - 0.1], amr
