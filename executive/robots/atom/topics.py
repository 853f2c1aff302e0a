"""The Dobot Atom's topic table and its ``RobotIO``: the fourteen ``rt/*`` topics of the seeds
(DESIGN.md 3), keyed by the short names the adapter, its simulator, the reflex and the tests
use, each with its type in the interface variant and its kind (state, stream, event).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cyclonedds.domain import DomainParticipant

from executive.robots.atom.interface import Interface
from executive.robots.atom.robot import ROBOT
from executive.wire.loop import LoopBus
from executive.wire.robot_io import Kind, RobotIO, Side, TopicSpec

# The 14 topics of the seeds (DESIGN.md 3), keyed by a short name used across the code.
TOPICS: dict[str, TopicSpec] = {
    "upper_state": TopicSpec("rt/upper/state", "UpperState_", Kind.STATE),
    "lower_state": TopicSpec("rt/lower/state", "LowerState_", Kind.STATE),
    "hands_state": TopicSpec("rt/hands/state", "HandsState_", Kind.STATE),
    "amr_state": TopicSpec("rt/amr/state", "AMRState_", Kind.STATE),
    "emergency_state": TopicSpec("rt/emergency/state", "EmergencyState_", Kind.STATE),
    "main_nodes_state": TopicSpec("rt/main/nodes/state", "MainNodesState_", Kind.STATE),
    "upper_cmd": TopicSpec("rt/upper/cmd", "UpperCmd_", Kind.STREAM),
    "lower_cmd": TopicSpec("rt/lower/cmd", "LowerCmd_", Kind.STREAM),
    "hands_cmd": TopicSpec("rt/hands/cmd", "HandsCmd_", Kind.STREAM),
    "set_fsm_id": TopicSpec("rt/set/fsm/id", "SetFsmId_", Kind.EVENT),
    "switch_upper_control": TopicSpec("rt/switch/upper/control", "SwitchUpperControl_", Kind.EVENT),
    "clear_errors": TopicSpec("rt/clear/errors", "ClearErrors_", Kind.EVENT),
    "amr_cmd": TopicSpec("rt/amr/cmd", "AMRCommand_", Kind.EVENT),
    "remote_control": TopicSpec("rt/remote/control", "RemoteControl_", Kind.EVENT),
}


# the state the Atom publishes, in the spec's order (its safety sources)
STATE_TOPICS: tuple[str, ...] = ROBOT.sources


class AtomIO(RobotIO):
    """The Atom's topics (``TOPICS`` unless a subset is given) for one side of the wire, with
    the types of ``interface`` (the default preset's when None); ``polled``: the readers read
    at the reader's rate, not the topic's (``executive.wire.robot_io.LatestReader``)."""

    def __init__(
        self,
        participant: DomainParticipant | LoopBus,
        interface: Interface | None = None,
        side: Side = Side.CONTROLLER,
        topics: Mapping[str, TopicSpec] | None = None,
        records: Iterable[str] = (),
        polled: Iterable[str] = (),
    ) -> None:
        super().__init__(
            participant,
            interface if interface is not None else Interface(),
            TOPICS if topics is None else topics,
            side=side,
            records=records,
            polled=polled,
        )


__all__ = ["TOPICS", "AtomIO"]


def wire_words() -> set[str]:
    """The Atom's wire as words: its topics' names and keys, and every field of every type
    (the default variant's, as the codec lays them out): what nothing above the seam may
    name (tests/test_seam.py)."""
    from executive.wire.codec import Codec

    def fields(dtype: object) -> Iterable[str]:
        for name in getattr(dtype, "names", None) or ():
            yield name
            yield from fields(dtype[name].base)  # type: ignore[index]

    words = {spec.name for spec in TOPICS.values()} | set(TOPICS)
    atom = Interface()
    for spec in TOPICS.values():
        words |= set(fields(Codec(getattr(atom, spec.type_name), max_string=64).dtype))
    return words
