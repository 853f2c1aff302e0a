"""Robot state on the blackboard: one behaviour gathers it, leaves read it.

Following py_trees_ros' data-gathering pattern, the core tree's first branch copies the
newest sample of every state topic (with its receive time) onto the blackboard each
tick; leaves decide from the blackboard, never from DDS directly, so a tick sees one
consistent snapshot and leaves can be tested tick by tick by writing the keys.

Samples are numpy records (see executive.wire.codec): ``s["fsm_id"]``,
``s["motor_state"]["q"]``.
"""

from __future__ import annotations

import sys
from typing import Any

import py_trees

from executive.profile import STATE_TOPICS
from executive.robot_io import RobotIO, Stamped

NAMESPACE = "/robot"
# Interned once and kept alive. py_trees' Client.set splits the key into a new string and
# setattr() interns it; were no interned copy alive, each write would add the key to
# CPython's interned-string table and its release take it out again: 300 times a second,
# churn that makes the table resize (a 1.9 MB step in the soak's RSS near run 600).
_KEYS = {topic: sys.intern(f"{NAMESPACE}/{topic}") for topic in STATE_TOPICS}


HEALTH_KEY = sys.intern(f"{NAMESPACE}/health")  # topic -> ReaderHealth (decode errors)


def key(topic: str) -> str:
    """Blackboard key of a state topic, e.g. ``/robot/upper_state``."""
    return _KEYS.get(topic) or f"{NAMESPACE}/{topic}"


class GatherRobotState(py_trees.behaviour.Behaviour):
    """Copies the newest state samples to the blackboard; always SUCCESS.

    Blackboard: writes ``/robot/<topic>`` (``Stamped`` or None) for every state topic,
    and ``/robot/health``: each reader's ``ReaderHealth`` (what it could not decode).
    """

    def __init__(self, io: RobotIO, name: str = "Gather Robot State") -> None:
        super().__init__(name)
        self.io = io
        self.bb = self.attach_blackboard_client(name=name)
        for topic in STATE_TOPICS:
            self.bb.register_key(key(topic), access=py_trees.common.Access.WRITE)
        self.bb.register_key(HEALTH_KEY, access=py_trees.common.Access.WRITE)

    def update(self) -> py_trees.common.Status:
        for topic in STATE_TOPICS:
            reader = self.io.readers.get(topic)
            self.bb.set(key(topic), reader.latest if reader is not None else None)
        self.bb.set(HEALTH_KEY, self.io.health())
        return py_trees.common.Status.SUCCESS


def latest(bb: py_trees.blackboard.Client, topic: str) -> Stamped[Any] | None:
    """The Stamped sample of ``topic`` on the blackboard, or None if none arrived yet."""
    try:  # one lookup, not exists() then get(): every condition reads state every tick
        value = bb.get(key(topic))
    except KeyError:
        return None
    return value if isinstance(value, Stamped) else None
