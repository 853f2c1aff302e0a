"""A PND Adam on another interface variant is named, not silently unheard (real processes).

The simulated Adam Pro runs as its own process on one variant and the Adam adapter is
opened in this process on the other, as the service would with a wrong ``interface:``. The
variants' ``LowState_`` and ``LowCmd_`` differ (sdk-1.2 adds ``mode_pr``, ``tick``, ``ki``,
``battery_data`` and another ``wireless_remote``), so DDS never matches those reader and
writer pairs and says nothing: the adapter's ``rt/lowstate`` reader receives nothing while
``rt/handstate`` (the hand types are both variants') arrives. The type watch of
``executive.wire.typewatch`` is what names it: ``wire_mismatches()`` says which topics
differ and which variant the robot's type matches. The service refuses missions meanwhile.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from executive.harness.stack import ROOT, Stack, running_stack
from executive.robots.adam import adapter as adam
from executive.robots.adam.interface import TOPICS
from executive.robots.adam.sim.client import client_for
from executive.seam.profile import load_profile

pytestmark = pytest.mark.dds

PROFILE = load_profile("adam-pro")


def start_adam(stack: Stack, interface: str) -> None:
    """The simulated Adam Pro speaking ``interface``, up (its own status seen from here)."""

    def ready(stack: Stack, pid: int) -> bool:
        return client_for(stack.dds).wait_status(lambda s: s.pid == pid, 30) is not None

    stack.start_sim("--profile", "adam-pro", "--interface", interface, sim_ready=ready)


def heard(adapter: adam.AdamAdapter, source: str) -> bool:
    return adapter.snapshot().sources[source].received is not None


def watch_all_topics(adapter: adam.AdamAdapter, timeout: float = 15.0) -> list[str]:
    """Poll ``wire_mismatches()`` as the service does until discovery has shown the sim on
    all four of the Adam's topics; the last list it returned (every mismatch), or []."""
    found: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        if (mismatches := adapter.wire_mismatches()) is not None:
            found = mismatches
        watch = adapter._types  # the port says what differs; when it has looked is the watch's
        if watch is not None and set(TOPICS) <= watch.seen:
            return found
        assert time.monotonic() < deadline, (
            f"never discovered {set(TOPICS) - set(watch.seen if watch else ())}"
        )
        time.sleep(0.05)


def test_an_adapter_on_another_variant_hears_nothing_and_is_told_why(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        start_adam(stack, "sdk-1.2")
        adapter = adam.open(PROFILE, participant=stack.dds, interface="seed")
        # the silent failure: the hands' state arrives, the body's never does
        assert stack.wait_for(lambda: heard(adapter, "hand_state"), 15), "no rt/handstate"
        time.sleep(1.0)  # the sim writes rt/lowstate with rt/handstate, at a higher rate
        snap = adapter.snapshot()
        assert snap.sources["low_state"].received is None, "a seed reader heard sdk-1.2"
        assert "body" not in snap.joints and "hands" in snap.joints
        # what the watch says about it
        found = {m.split(":", 1)[0]: m for m in watch_all_topics(adapter)}
        assert set(found) == {"rt/lowstate", "rt/lowcmd"}, found
        assert found["rt/lowstate"] == (
            "rt/lowstate: the robot announces a different LowState_ than interface 'seed' "
            "speaks; it matches interface sdk-1.2 (set `interface:` in the config)"
        )
        assert "different LowCmd_" in found["rt/lowcmd"]
        assert "it matches interface sdk-1.2 " in found["rt/lowcmd"]
        assert adapter.wire_mismatches() is None  # nothing new since
        adapter.close()


def test_the_same_variant_is_no_mismatch(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        start_adam(stack, "sdk-1.2")
        adapter = adam.open(PROFILE, participant=stack.dds, interface="sdk-1.2")
        assert stack.wait_for(lambda: heard(adapter, "low_state"), 15), "no rt/lowstate"
        assert watch_all_topics(adapter) == []
        assert adapter.wire_mismatches() is None
        adapter.close()


def test_the_service_refuses_missions_naming_the_mismatch(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        stack.write_config(
            profile="adam-pro", interface="seed", missions_dir=str(ROOT / "missions" / "adam")
        )
        start_adam(stack, "sdk-1.2")
        stack.start_service(ready=False)  # speaks seed: it never hears rt/lowstate
        status = stack.client.wait_status(
            lambda s: "different LowState_" in s.not_ready and "different LowCmd_" in s.not_ready,
            20,
        )
        assert status is not None, stack.client.status().not_ready
        reply = stack.client.request("start", {"mission": "hands_open_close"})
        assert reply.code != 0
        assert reply.message.startswith("refused: interface mismatch: rt/"), reply.message
        status = stack.client.status()
        for text in (reply.message, status.not_ready):
            assert "rt/lowcmd: the robot announces a different LowCmd_" in text, text
            assert "rt/lowstate: the robot announces a different LowState_" in text, text
            assert "it matches interface sdk-1.2" in text, text
        assert status.state == "IDLE"
