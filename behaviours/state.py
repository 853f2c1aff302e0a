"""Robot state on the blackboard: one behaviour gathers it, leaves read it.

Following py_trees_ros' data-gathering pattern, the core tree's first branch copies the
robot's newest state onto the blackboard each tick, as one robot-neutral
``RobotSnapshot`` (``executive.seam.ports``); leaves and the watchdog decide from it,
never from the robot's wire, so a tick sees one consistent snapshot, every robot shows
the same fields, and leaves can be tested tick by tick by writing the key.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import py_trees

from executive.seam.ports import RobotSnapshot

NAMESPACE = "/robot"
# Interned once and kept alive. py_trees' Client.set splits the key into a new string and
# setattr() interns it; were no interned copy alive, each write would add the key to
# CPython's interned-string table and its release take it out again: 50 times a second,
# churn that makes the table resize (a 1.9 MB step in the soak's RSS near run 600).
SNAPSHOT_KEY = sys.intern(f"{NAMESPACE}/snapshot")


class GatherRobotState(py_trees.behaviour.Behaviour):
    """Writes the robot's snapshot to the blackboard; always SUCCESS.

    Blackboard: writes ``/robot/snapshot`` (``RobotSnapshot``).
    """

    def __init__(
        self, snapshot: Callable[[], RobotSnapshot], name: str = "Gather Robot State"
    ) -> None:
        super().__init__(name)
        self.take = snapshot
        self.bb = self.attach_blackboard_client(name=name)
        self.bb.register_key(SNAPSHOT_KEY, access=py_trees.common.Access.WRITE)

    def update(self) -> py_trees.common.Status:
        self.bb.set(SNAPSHOT_KEY, self.take())
        return py_trees.common.Status.SUCCESS


EMPTY = RobotSnapshot(taken=0.0)


def snapshot(bb: py_trees.blackboard.Client) -> RobotSnapshot:
    """The snapshot on the blackboard (an empty one before the first gather).

    Every condition reads it every tick: the storage is read directly once the client is
    known to hold read access to the key (what ``bb.get`` checks, splitting and resolving
    the name each time, at several microseconds a read; issue 31), unless py_trees'
    activity stream is on, which must see every read."""
    if SNAPSHOT_KEY in bb.read and py_trees.blackboard.Blackboard.activity_stream is None:
        value = py_trees.blackboard.Blackboard.storage.get(bb.remappings[SNAPSHOT_KEY], EMPTY)
    else:
        try:  # one lookup, not exists() then get()
            value = bb.get(SNAPSHOT_KEY)
        except KeyError:
            return EMPTY
    return value if isinstance(value, RobotSnapshot) else EMPTY
