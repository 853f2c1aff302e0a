"""What a robot kind is: ``RobotSpec``, the one thing a robot's folder declares.

A robot is a folder ``executive/robots/<name>/`` whose ``robot.py`` holds ``ROBOT``, a
``RobotSpec`` (or a package elsewhere that names its spec in the ``atom_executive.robots``
entry point group): plain data, so profiles and missions validate with no middleware
loaded. Everything else of the robot is named here as ``"module:attribute"`` and imported
only when it is needed: its adapter when a robot is opened, its simulator when one is run,
its wire's words when the seam test reads them (``executive.seam.registry``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RobotSpec:
    """What a robot kind is, for profile and mission validation, and where its parts are."""

    name: str
    description: str
    # joint stream -> motors its command carries (None: as many as the profile lists)
    streams: Mapping[str, int | None]
    # state sources (the adapter's keys), each checked for silence by the watchdog
    sources: tuple[str, ...]
    capabilities: frozenset[str]
    # one command carries every motor: moving any joint streams them all, the rest held
    whole_body: bool = False
    fsm_id_max: int = 0  # largest FSM id on the wire (0: no FSM)
    tag_max: int = 0  # largest navigation tag id on the wire (0: no navigation)
    # its parts, "module:attribute" ("" where it has none); relative to its package when
    # they start with "." (".adapter:open" is executive.robots.<name>.adapter's open)
    adapter: str = ".adapter:open"  # open(profile, **options) -> ports.RobotAdapter
    check_interface: str = ".adapter:check_interface"  # (text[, profile]) -> why not, or None
    check_options: str = ""  # (options, profile) -> ["key: message"]; "": it takes none
    sim: str = ""  # main(argv) of its simulator (``atom-executive sim --profile P``)
    # its simulator in simulated time, for mission tests (``executive.seam.lockstep``'s
    # ``LockstepPart``); "": its missions are not testable in simulated time yet
    lockstep: str = ""
    wire_words: str = ""  # () -> its topics' and fields' names (tests/test_seam.py)
    # generated wire packages (executive.wire.gen.<name>) -> folders of idl/ whose .idl
    # files (and what they include) make them (``make idl``)
    idl: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    package: str = ""  # where it was found (set by the registry)
