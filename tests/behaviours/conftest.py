"""Tick-level test kit for leaves: an injected clock, recording fakes, state on the blackboard.

No DDS and no sleeps here: the clock is advanced by hand and robot state is written to
the blackboard exactly as GatherRobotState would. The same leaves run against the
simulated Atom over real DDS in tests/integration.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import py_trees
import pytest

from behaviours.context import RobotContext
from behaviours.state import key
from executive.motion.trajectory import Trajectory
from executive.profile import STATE_TOPICS, load_profile
from executive.robot_io import TOPICS, Stamped
from executive.wire import Interface
from executive.wire.codec import Codec

PROFILE = load_profile()
IFACE = Interface()
TYPES = {topic: TOPICS[topic].type_name for topic in STATE_TOPICS}


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


@dataclass
class RecordingCommands:
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def switch_upper_control(self, on: bool) -> None:
        self.calls.append(("switch_upper_control", on))

    def set_fsm(self, fsm_id: int) -> None:
        self.calls.append(("set_fsm", fsm_id))

    def clear_errors(self) -> int:
        self.calls.append(("clear_errors",))
        return 1

    def amr(self, command: str, **kw: Any) -> int:
        self.calls.append(("amr", command, kw))
        return len(self.calls)

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == name]


@dataclass
class RecordingMotion:
    submitted: list[Trajectory] = field(default_factory=list)
    holds: list[dict[str, float]] = field(default_factory=list)
    moving: bool = False
    refuse: Exception | None = None

    def submit(self, trajectories: Sequence[Trajectory]) -> None:
        if self.refuse is not None:
            raise self.refuse
        self.submitted.extend(trajectories)
        self.moving = True

    def active(self, names: Iterable[str]) -> bool:
        return self.moving

    def hold_joints(self, positions: dict[str, float]) -> None:
        self.holds.append(dict(positions))
        self.moving = False


class Robot:
    """Writes state records to the blackboard, stamped with the fake clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.records = {t: Codec(getattr(IFACE, n)).zeros() for t, n in TYPES.items()}
        self.bb = py_trees.blackboard.Client(name="test robot")
        for t in TYPES:
            self.bb.register_key(key(t), access=py_trees.common.Access.WRITE)

    def publish(self, topic: str, **fields: Any) -> None:
        rec = self.records[topic]
        for name, value in fields.items():
            rec[name] = value
        self.bb.set(key(topic), Stamped(rec.copy(), self.clock()))

    def joints(self, **q: float) -> None:
        """Set measured positions by joint name and publish the affected state topics."""
        touched = set()
        for name, value in q.items():
            joint = PROFILE.joints[name]
            topic, arr = {
                "upper": ("upper_state", "motor_state"),
                "lower": ("lower_state", "motor_state"),
                "hands": ("hands_state", "hands"),
            }[joint.topic]
            self.records[topic][arr]["q"][joint.index] = value
            touched.add(topic)
        for topic in touched:
            self.publish(topic)


@dataclass
class Kit:
    clock: Clock
    commands: RecordingCommands
    motion: RecordingMotion
    robot: Robot
    context: RobotContext

    def setup(self, leaf: py_trees.behaviour.Behaviour) -> py_trees.behaviour.Behaviour:
        leaf.setup(context=self.context)
        return leaf

    def tick(self, leaf: py_trees.behaviour.Behaviour, dt: float = 0.0) -> py_trees.common.Status:
        self.clock.advance(dt)
        leaf.tick_once()
        return leaf.status


@pytest.fixture
def kit() -> Iterator[Kit]:
    py_trees.blackboard.Blackboard.clear()
    clock = Clock()
    commands, motion = RecordingCommands(), RecordingMotion()
    context = RobotContext(profile=PROFILE, commands=commands, motion=motion, clock=clock)
    yield Kit(clock, commands, motion, Robot(clock), context)
    py_trees.blackboard.Blackboard.clear()
