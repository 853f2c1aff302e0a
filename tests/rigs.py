"""An in-process executive rig: a robot-side AtomIO and the executive's core on real DDS."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from behaviours.context import RobotContext
from executive.core.safety import SafetyMonitor
from executive.core.tree import Executive
from executive.motion.streamer import MotionStreamer
from executive.robots.atom import adapter as atom
from executive.robots.atom.topics import AtomIO
from executive.seam.profile import load_profile
from executive.wire import dds
from executive.wire.robot_io import Side

PROFILE = load_profile()
STATE_TOPICS = PROFILE.sources


@dataclass
class Rig:
    robot: AtomIO
    ex: Executive
    participant: dds.DomainParticipant
    silent: set[str] = field(default_factory=set)  # state topics ``state()`` leaves out

    def state(self, **estop: bool) -> None:
        """Publish healthy robot state (plus any e-stop flags) once, on every state topic:
        each is a safety source, and a silent one keeps the executive from starting."""
        for key in STATE_TOPICS:
            if key in self.silent:
                continue
            rec = self.robot.codec(key).zeros()
            if key in ("upper_state", "lower_state"):
                rec["bms_state"]["battery_level"] = 90
            if key == "emergency_state":
                for flag, value in estop.items():
                    rec[flag] = value
            self.robot.write_record(key, rec)

    def tick_until(self, done: Callable[[], bool], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError("condition not reached")
            self.state()
            self.ex.tick()
            time.sleep(0.01)


@contextmanager
def make_rig(dds_domain: int) -> Iterator[Rig]:
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        robot = AtomIO(p1, side=Side.ROBOT, records=["upper_cmd", "hands_cmd", "lower_cmd"])
        adapter = atom.open(PROFILE, participant=p2)
        io = adapter.io
        streamer = MotionStreamer(adapter.streams, PROFILE)
        context = RobotContext(PROFILE, adapter.commands, streamer)
        ex = Executive(adapter, context, streamer, SafetyMonitor(max_age=PROFILE.safety_sources))
        r = Rig(robot, ex, p2)
        r.tick_until(lambda: all(io.readers[t].latest is not None for t in STATE_TOPICS))
        yield r


@pytest.fixture
def rig(dds_domain: int) -> Iterator[Rig]:
    with make_rig(dds_domain) as r:
        yield r
