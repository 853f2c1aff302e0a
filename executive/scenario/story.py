"""What happened in a scenario's run, as both ways of running it tell it.

``RunStory`` is read from the run's own record (``executive.records.runrecord``: the
service's JSON lines), whether the service wrote it in simulated time or as its own
process, so a result, its causes and the order in which nodes ran are judged from the
same text in both (the parity test compares exactly these). ``Outcome`` is the story
with what the engine saw besides: each event (when it was applied, what came of it),
the robot's record of the commands it received, the joints at the end, the timing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from executive.scenario import nodes
from executive.scenario.model import Event

Pose = tuple[float, float, float]  # a base's x m, y m, yaw rad in its map frame


@dataclass(frozen=True)
class RunStory:
    """A run as its record tells it: ``started`` is every node that ran, by mission path,
    in the order each first left INVALID (a node that ran twice, once); nodes that first
    ran in the same tick in the tree's order (a parent before its children, siblings left
    to right), whatever order the record lists them in."""

    run_id: str
    mission: str
    result: str | None  # None: the record has no end (the run was cut off)
    reason: str
    safety: tuple[str, ...]  # the latched causes, "code: message"
    started: tuple[str, ...]
    failed: tuple[str, ...]  # nodes that ended FAILURE, by mission path, in order

    @property
    def causes(self) -> tuple[str, ...]:
        """The codes of the SAFE_STOP's causes; of a FAILED run, its failure's code."""
        if self.safety:
            return tuple(dict.fromkeys(c.split(":", 1)[0] for c in self.safety))
        if self.result == "FAILED" and (at := self.failed_at) is not None:
            rest = self.reason.removeprefix(f"{at}: ")
            if rest != self.reason and ":" in rest:
                return (rest.split(":", 1)[0],)
        return ()

    @property
    def failed_at(self) -> str | None:
        """The node whose failure ended a FAILED run (``Executive``'s reason names its
        path first), by mission path."""
        if self.result != "FAILED":
            return None
        best = None
        for path in (*self.started, *self.failed):
            if self.reason.startswith(f"{path}: ") and (best is None or len(path) > len(best)):
                best = path
        return best


def read_story(path: Path) -> RunStory:
    """The story of the run whose record is ``path`` (an unfinished last line skipped)."""
    run_id = path.stem
    mission, result, reason = "", None, ""
    safety: tuple[str, ...] = ()
    started: dict[str, None] = {}
    failed: dict[str, None] = {}
    batch: list[str] = []  # the nodes first started in one tick (one write: one ``ts``)
    batch_ts = None
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break
            event: Any = json.loads(line)
            if event.get("ts") != batch_ts:
                started.update(dict.fromkeys(tree_order(batch)))
                batch, batch_ts = [], event.get("ts")
            if event.get("event") == "node":
                where = nodes.mission_path(str(event["node"]))
                status = event.get("status")
                if status != "INVALID" and where not in started and where not in batch:
                    batch.append(where)
                if status == "FAILURE":
                    failed.setdefault(where, None)
            elif event.get("event") == "state":
                mission = str(event.get("mission", mission))
                if "result" in event:
                    result = str(event["result"]) or None
                    reason = _mission_reason(str(event.get("reason", "")))
                    safety = tuple(str(c) for c in event.get("safety", ()))
    started.update(dict.fromkeys(tree_order(batch)))
    return RunStory(run_id, mission, result, reason, safety, tuple(started), tuple(failed))


def tree_order(batch: list[str]) -> list[str]:
    """Paths of one tick's transitions (the record lists a tree children first) in the
    tree's order: each path after its ancestors, siblings as the record met them."""
    first: dict[str, int] = {}  # each prefix: where the record first met it
    for i, path in enumerate(batch):
        parts = path.split("/")
        for n in range(1, len(parts) + 1):
            first.setdefault("/".join(parts[:n]), i)

    def key(path: str) -> list[int]:
        parts = path.split("/")
        return [first["/".join(parts[:n])] for n in range(1, len(parts) + 1)]

    return sorted(batch, key=key)


def _mission_reason(reason: str) -> str:
    """A FAILED run's reason names the core tree's path (``Atom/Mission Slot/...: why``):
    from the mission's root, as scenarios name nodes."""
    head, sep, rest = reason.partition(": ")
    if sep and "/" + nodes.SLOT in head:
        return f"{nodes.mission_path(head)}: {rest}"
    return reason


@dataclass
class Fired:
    """What became of one event: when it was applied (seconds from the run's start, and
    on the robot record's clock), the executive's reply to a request, whether the robot
    was moving then (``moving``: the reasons, ``None`` unknown), or why it never fired."""

    event: Event
    at: float | None = None
    t: float | None = None
    reply: str = ""
    moving: tuple[str, ...] | None = None
    missed: str = ""


def missed(event: Event, *, started: bool) -> str:
    """Why ``event`` never fired (``started``: the run did start)."""
    if not started:
        return "the run never started"
    if event.when == "at":
        return "the scenario ended first"
    verb = "started" if event.when == "on_start" else "ended"
    return f"{event.node!r} never {verb}"


@dataclass
class Outcome:
    """A scenario's run, whichever way it ran (``simulated`` or real time)."""

    story: RunStory | None  # None: no run started (``error`` says why)
    fired: list[Fired]
    joints: Mapping[str, float]  # measured at the end, by profile joint name
    record: Path | None  # the robot's record of the commands it received
    # expect.body's checks: the joints measured when each one's node started or ended
    body: Mapping[int, Mapping[str, float]] = field(default_factory=dict)
    base: Pose | None = None  # the base's pose the robot reported last (x, y, yaw)
    body_base: Mapping[int, Pose | None] = field(default_factory=dict)  # at each check
    files: dict[str, Path] = field(default_factory=dict)  # kept on failure (--keep)
    error: str = ""  # the run could not be made (the robot never ready, a start refused)
    timed_out: str = ""  # the time limit ended it: where the mission was then
    simulated: bool = True
    duration: float = 0.0  # s of the scenario's own time (simulated, or real)
    wall: float = 0.0
    cpu: float = 0.0
