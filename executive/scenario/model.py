"""A mission's scenario, as loaded from a ``*.test.yaml`` file (``executive.scenario.load``).

Plain data: what to run (a mission, its parameters, the robot's world), what happens to it
(events: a fault, a button, an operator's request, each at a time or when a node starts
or ends) and what must come of it (expectations). Every part keeps where it was written,
so a failed expectation is reported at its own ``file:line``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from executive.language.diagnostics import Location

RESULTS = ("SUCCEEDED", "FAILED", "ABORTED", "SAFE_STOP")
WHENS = ("at", "on_start", "on_end")
ACTIONS = ("fault", "clear", "press", "request")
REQUESTS = ("pause", "resume", "stop", "reset")
DEFAULT_TIMEOUT_S = 300.0  # simulated seconds a scenario may last, unless it says
DEFAULT_TAIL_S = 1.0  # s a scenario goes on after its run ends (a hold settling, the base)
DEFAULT_STILL_WITHIN_S = 0.5  # no_motion_after: the robot is still within this of the event


@dataclass(frozen=True)
class Event:
    """``when`` (``at`` s from the run's start, or ``on_start``/``on_end`` of ``node`` and
    ``after`` s more), then one ``action`` (``fault``, ``clear``, ``press``, ``request``)
    with its ``value``."""

    index: int
    when: str
    node: str  # the node reference of on_start/on_end ("" for at)
    seconds: float  # ``at``, or ``after``
    action: str
    value: str
    where: Location

    def describe(self) -> str:
        """``events[0] (on_start 'Drive to the table' + 1 s: fault estop-soft)``."""
        if self.when == "at":
            when = f"at {self.seconds:g} s"
        else:
            after = f" + {self.seconds:g} s" if self.seconds else ""
            when = f"{self.when} {self.node!r}{after}"
        return f"events[{self.index}] ({when}: {self.action} {self.value})"


@dataclass(frozen=True)
class End:
    """Where the robot must be when the scenario ends: at a pose of the library (each of
    its joints within ``pose_within`` rad; or a gesture, each finger within it in the
    profile's units) and/or with a point of its body (``point``,
    the profile's ``body.points``) within ``point_within`` m of ``at`` (base frame), and/or
    its base (as the robot reports its pose, in its map frame) within ``base_within`` m of
    ``base`` (x, y), heading within ``heading_within`` rad of ``heading`` if given."""

    pose: str = ""
    pose_within: float = 0.02
    point: str = ""
    at: tuple[float, float, float] = (0.0, 0.0, 0.0)
    point_within: float = 0.05
    base: tuple[float, float] | None = None
    base_within: float = 0.1
    heading: float | None = None
    heading_within: float = 0.1


@dataclass(frozen=True)
class Still:
    """``no_motion_after``: from ``within`` s after event ``event`` on (until event
    ``until``, if given), the robot is told no motion."""

    event: int
    within: float = DEFAULT_STILL_WITHIN_S
    until: int | None = None


@dataclass(frozen=True)
class BodyCheck:
    """Where the robot must be when a node starts or ends (``when``: ``on_start`` or
    ``on_end`` of ``node``): the first time it does."""

    index: int
    when: str
    node: str
    end: End
    where: Location

    def describe(self) -> str:
        return f"expect.body[{self.index}] ({self.when} {self.node!r})"


@dataclass(frozen=True)
class Expect:
    """What must come of the run; ``None`` or empty: not expected. ``where`` locates each
    key that was written (``result``, ``ran``, ...)."""

    result: str | None = None
    causes: tuple[str, ...] | None = None
    ran: tuple[str, ...] = ()
    never_ran: tuple[str, ...] = ()
    failed_at: str | None = None
    no_motion_after: Still | None = None
    end: End | None = None
    body: tuple[BodyCheck, ...] = ()
    where: Mapping[str, Location] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    """One scenario file, checked against its mission and robot (``load.load_scenario``)."""

    file: Path
    test: str
    mission: str  # the mission's name
    mission_file: Path
    missions_dir: Path  # the mission's directory: its poses, gestures and subtrees
    profile: str  # as the file names it: a built-in profile's name, or a path
    params: Mapping[str, Any]
    world: Mapping[str, Any]
    events: tuple[Event, ...]
    expect: Expect
    timeout: float
    tail: float
    where: Location  # the ``test:`` line

    @property
    def base(self) -> Path:
        """Where the file's relative paths (world files) are relative to."""
        return self.file.parent
