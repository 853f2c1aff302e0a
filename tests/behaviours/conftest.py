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
from behaviours.state import SNAPSHOT_KEY
from executive.motion.trajectory import Trajectory
from executive.robots.atom.interface import Interface
from executive.robots.atom.state import AtomState
from executive.robots.atom.topics import STATE_TOPICS, TOPICS
from executive.seam.ports import Stamped
from executive.seam.profile import load_profile
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

    def request_control(self, on: bool) -> None:
        self.calls.append(("request_control", on))

    def set_fsm(self, fsm_id: int) -> None:
        self.calls.append(("set_fsm", fsm_id))

    def clear_faults(self) -> int:
        self.calls.append(("clear_faults",))
        return 1

    def go_to_tag(self, tag: int, theta: float) -> int:
        self.calls.append(("go_to_tag", tag, theta))
        return len(self.calls)

    def cancel_base(self) -> int:
        self.calls.append(("cancel_base",))
        return len(self.calls)

    def set_velocity(self, vx: float, vy: float, yaw: float, ttl: float = 0.5) -> None:
        self.calls.append(("set_velocity", vx, vy, yaw))

    def run_task(self, task_id: int) -> None:
        self.calls.append(("run_task", task_id))

    def run_component(self, component_id: int) -> None:  # the GRX's, beside the ports
        self.calls.append(("run_component", component_id))

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == name]

    def base(self) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] in ("go_to_tag", "cancel_base")]


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
    """Writes the Atom's state records to the blackboard as GatherRobotState does: the
    Atom adapter's snapshot of them (executive.robots.atom.state), stamped with the fake
    clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.records = {t: Codec(getattr(IFACE, n)).zeros() for t, n in TYPES.items()}
        self.stamped: dict[str, Stamped[Any] | None] = dict.fromkeys(TYPES)
        layout = {j.name: (j.topic, j.index) for j in PROFILE.joints.values()}
        self.atom = AtomState(IFACE, {}, layout, STATE_TOPICS, clock=clock)
        self.bb = py_trees.blackboard.Client(name="test robot")
        self.bb.register_key(SNAPSHOT_KEY, access=py_trees.common.Access.WRITE)

    def publish(self, topic: str, **fields: Any) -> None:
        rec = self.records[topic]
        for name, value in fields.items():
            rec[name] = value
        self.stamped[topic] = Stamped(rec.copy(), self.clock())
        self.bb.set(SNAPSHOT_KEY, self.atom.build(self.stamped, {}, self.clock()))

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
