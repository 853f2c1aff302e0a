"""The GRX's body in a run's MCAP: the real service (``profile: grx``) against the simulated
GRX, whose GR-1 T2 the firmware holds in MuJoCo under gravity; the run file carries the
model and every link's transform by forward kinematics of the joints the robot reported,
where the sim holds them (not the model's zero)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from executive.harness.grx import start
from executive.harness.stack import running_stack
from executive.records import bodychannels
from executive.seam.profile import load_profile

pytestmark = pytest.mark.dds


def _rotations(message: dict[str, object]) -> dict[str, np.ndarray]:  # type: ignore[type-arg]
    out = {}
    for t in message["transforms"]:  # type: ignore[attr-defined]
        r = t["rotation"]
        out[t["child_frame_id"]] = np.array([r["x"], r["y"], r["z"], r["w"]])
    return out


def test_a_grx_run_records_the_body_where_the_sim_holds_it(tmp_path: Path) -> None:
    profile = load_profile("grx")
    with running_stack(tmp_path) as stack:
        sim = start(stack, task_seconds=0.2)
        try:
            assert sim.cmd("status")["physics"] == "mujoco"
            reply = stack.client.request("start", {"mission": "stand_up", "params": {}})
            assert reply.code == 0, reply.message
            done = stack.client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 20)
            assert done is not None and done.state == "SUCCEEDED", stack.client.status()
            held = sim.cmd("status")["joints"]  # the hold has settled: the service starts slower
            assert stack.stop("executive") == 0  # the run's file finished
        finally:
            sim.close()
    with (stack.data_dir / "runs" / f"{reply.message}.mcap").open("rb") as f:
        messages = [(c.topic, m) for _, c, m in make_reader(f).iter_messages()]
    topics = [topic for topic, _ in messages]
    assert topics.count(bodychannels.MODEL) == 1
    transforms = [json.loads(m.data) for t, m in messages if t == bodychannels.TRANSFORMS]
    assert len(transforms) > 10, topics
    recorded = _rotations(transforms[-1])

    expected = bodychannels.Frames(profile)
    expected.measured(list(profile.topics["robot"]), held)
    at_zero = bodychannels.Frames(profile)
    at_zero.measured(list(profile.topics["robot"]), np.zeros(len(held)))
    want, zero = _rotations(expected.message(0)), _rotations(at_zero.message(0))
    assert set(recorded) == set(want)
    moved = [link for link in want if np.abs(want[link] - zero[link]).max() > 2e-3]
    assert moved, "the sim's hold should sag some link off the zero pose"
    for link in want:
        assert np.abs(recorded[link] - want[link]).max() < 1e-3, link
