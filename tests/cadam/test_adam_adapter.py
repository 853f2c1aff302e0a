"""The Adam adapter's receive path reading what a C robot wrote (no Python sim), per
interface variant, and the C robot reading what the adapter's own streams write.

The C peer (``cadam.c``, built by Debian's idlc from ``idl/pnd_adam``) writes a burst of
``LowState_``/``HandState_`` samples on ``rt/lowstate``/``rt/handstate`` and then listens:
it cannot play robot long enough for the service's freshness checks, so the adapter runs
in-process (``executive.robots.adam.adapter.open``) with its readers' QoS unchanged (the C peer
publishes once its writers have matched a reader, ``CADAM_WAIT_FOR_READERS``) and its
snapshot is compared with the C side's own account of its last sample: joint positions by
profile name, hand counts, and a servo error for every motor whose ``state`` C set.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from executive.robots.adam import adapter as adam
from executive.seam.profile import load_profile
from executive.wire import dds
from tests.cadam.harness import SAMPLES

pytestmark = pytest.mark.dds


@pytest.mark.parametrize("variant", ["seed", "sdk-1.2"])
def test_adapter_snapshot_reads_the_c_robots_state(
    cadam_exe: Callable[[str], Path],
    participant: dds.DomainParticipant,
    dds_domain: int,
    variant: str,
) -> None:
    profile = load_profile("adam-pro")
    body = tuple(profile.topics["body"])
    exe = cadam_exe(variant)
    adapter = adam.open(profile, participant=participant, interface=variant)
    # read at the tick's rate, not rt/lowstate's 500 Hz: no Python per sample (issue 22)
    assert all(r.polled for r in adapter.readers.values())
    out = exe.with_name(f"adapter-{dds_domain}.out")
    with out.open("w") as stdout:
        proc = subprocess.Popen(
            [str(exe), "run", str(dds_domain), str(len(body)), str(SAMPLES), "2"],
            stdin=subprocess.PIPE,  # it listens for commands 2 s (we send none), then leaves
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "CADAM_WAIT_FOR_READERS": "1"},
        )
    try:
        deadline = time.monotonic() + 10
        snap = adapter.snapshot()
        while time.monotonic() < deadline and (
            len(snap.joints) < 2 or snap.servo_errors is None or not snap.servo_errors.sample
        ):
            time.sleep(0.05)
            snap = adapter.snapshot()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(15)
        adapter.close()
    sent = [json.loads(line) for line in out.read_text().splitlines()]
    low = [e["sample"] for e in sent if e.get("topic") == "rt/lowstate" and e["event"] == "sent"]
    hand = [e["sample"] for e in sent if e.get("topic") == "rt/handstate" and e["event"] == "sent"]
    assert len(low) == SAMPLES and len(hand) == SAMPLES
    last_low, last_hand = low[-1]["motor_state"], hand[-1]["position"]

    # the sources are fresh: both state topics were heard
    assert all(s.received is not None for s in snap.sources.values()), snap.sources
    # joint positions by name, as C wrote them (float32 exactly)
    positions = snap.joints["body"].sample
    for i, name in enumerate(body):
        joint, index = snap.layout[name]
        assert np.float32(positions[index]) == np.float32(last_low[i]["q"]), name
    np.testing.assert_array_equal(snap.joints["hands"].sample, np.asarray(last_hand, float))
    # every motor C marked with a state code is a servo error naming its joint
    assert snap.servo_errors is not None
    assert snap.servo_errors.sample == tuple(
        f"{name}=0x{m['state']:04x}" for name, m in zip(body, last_low, strict=True)
    )
    assert "right_elbow=0x" in " ".join(snap.servo_errors.sample)
