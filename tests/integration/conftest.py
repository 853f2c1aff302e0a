"""Integration: the executive's real assembly against the simulated Atom as its own process."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from executive.core.runtime import Runtime
from executive.harness.aurora import RobotProcess
from executive.harness.aurora import start as start_aurora
from executive.harness.stack import Stack, running_stack
from executive.mission.store import MissionStore
from executive.robots.atom.interface import Interface
from executive.seam.profile import load_profile
from executive.service.config import ServiceConfig
from executive.wire import dds
from tests.crobot.harness import crobot_exe, start_crobot  # noqa: F401
from tests.sim.conftest import Sim, start_sim, wait_until  # noqa: F401 - the fixture, shared

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Live:
    sim: Sim
    runtime: Runtime
    store: MissionStore

    def start(self, name: str, **params: object) -> str:
        root, errors = self.store.build(name, dict(params))
        assert root is not None, errors
        ok, run_id = self.runtime.executive.submit(
            lambda: self.runtime.executive.start_mission(name, root)
        ).result(5)
        assert ok, run_id
        return run_id


@pytest.fixture
def live(start_sim: Callable[..., Sim], dds_domain: int) -> Iterator[Live]:  # noqa: F811
    """The sim (fast base) and the executive runtime ticking in this process, its real-time
    threads as the service runs them (the stream at the config's default stream_priority,
    CycloneDDS's receive thread one above it where the reflex arms): at normal priority, a
    loaded CI starved the receive thread and the runtime saw every topic silent at once."""
    sim = start_sim("--amr-speed", "3.0", "--seed", "3")
    profile = load_profile()
    with dds.open_participant(dds_domain) as participant:
        runtime = Runtime.build(
            profile,
            Interface(),
            participant=participant,
            stream_priority=ServiceConfig().stream_priority,
        )
        store = MissionStore(
            ROOT / "missions", profile
        )  # loaded before the start, as the service does
        runtime.start()
        # every safety source heard (a service is up long before anyone starts a mission)
        assert wait_until(lambda: not runtime.executive.not_ready()), runtime.executive.not_ready()
        try:
            yield Live(sim, runtime, store)
        finally:
            runtime.stop_supervisor()
            runtime.ticker.stop()
            runtime.streamer.stop()


@pytest.fixture
def aurora_waving(tmp_path: Path) -> Iterator[tuple[Stack, RobotProcess, float]]:
    """The service waving the simulated Aurora's left arm (moving commands arriving); when
    the wave began."""
    with running_stack(tmp_path) as stack:
        robot = start_aurora(stack)
        try:
            t0 = time.monotonic()
            reply = stack.client.request("start", {"mission": "arm_wave", "params": {"waves": 20}})
            assert reply.code == 0, reply.message
            assert stack.wait_for(lambda: len(robot.records().moving(t0)) > 10, 20)
            yield stack, robot, t0
        finally:
            robot.close()
