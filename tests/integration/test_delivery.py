"""The delivery mission against the simulated Atom over DDS: success, and preemption.

Preempted mid-navigation the base's task is canceled; preempted mid-reach the arm
holds its measured position: the sim's record shows no motion command after the stop.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from executive.core.tree import ExecState
from executive.robots.atom.sim.record import Recording
from tests.integration.conftest import Live

pytestmark = pytest.mark.dds


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def active(live: Live) -> str:
    from executive.service.status import active_node

    ex = live.runtime.executive
    return active_node(ex.tree.root) if ex.run else ""


def test_delivery_runs_to_success(live: Live) -> None:
    ex = live.runtime.executive
    live.start("deliver_drink", table_tag=4)
    assert wait_for(
        lambda: "Wait for button A" in active(live) or ex.state is not ExecState.RUNNING, 90
    ), (
        ex.state,
        ex.last_run,
    )
    assert ex.state is ExecState.RUNNING, ex.last_run
    live.sim.client.inject("button", "A", duration=0.5)
    assert wait_for(lambda: ex.state is not ExecState.RUNNING, 90)
    assert ex.state is ExecState.SUCCEEDED, ex.last_run
    assert not ex.context.control_acquired  # released at the end
    assert live.sim.state("upper_state")["is_upper_control"] == 0


def test_preempted_mid_navigation_cancels_the_base(live: Live) -> None:
    ex = live.runtime.executive
    live.start("deliver_drink", table_tag=4)
    assert wait_for(lambda: "Drive to the bar" in active(live), 30)
    live.sim.wait_state("amr_state", lambda s: int(s["navigation_status"]) == 2)  # RUNNING
    assert ex.submit(lambda: ex.stop_mission("test preempts")).result(5)[0]
    assert ex.state is ExecState.ABORTED
    live.sim.wait_state("amr_state", lambda s: int(s["navigation_status"]) == 6)  # CANCELED


def test_preempted_mid_reach_holds_the_arm(live: Live) -> None:
    ex = live.runtime.executive
    live.start("deliver_drink", table_tag=4)
    assert wait_for(lambda: "Reach for the cup" in active(live), 60), (ex.state, ex.last_run)
    time.sleep(0.5)  # mid-reach
    stopped_at = time.monotonic()
    assert ex.submit(lambda: ex.stop_mission("test preempts")).result(5)[0]
    time.sleep(1.0)
    live.sim.stop()
    assert live.sim.record_path is not None
    record = Recording.load(live.sim.record_path)
    record.assert_no_motion_after(stopped_at + 0.05, topic="upper_cmd", clock="t")
