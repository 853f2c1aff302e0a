"""A scenario's expectations against what came of its run: each failure named, located and
said with the node it concerns.

Every expectation is judged from what both ways of running tell alike: the run's record
(``story.RunStory``: its result, causes, the nodes that ran), the robot's record of the
commands it received (``LockstepPart.motion_after``), the joints the executive measured at
the end (forward kinematics of the profile's body for a point of it), the base's pose the
robot reported.

``no_motion_after: I`` (or ``{event: I, within: S}``) is the project's safety test in a
scenario's words: from ``S`` seconds (0.5 unless said) after event ``I`` on (until event
``until``, if given), the robot received no command that moves it, joints or base (a hold
repeated is no motion; a pause slows its moves to a stop over 0.25 s, an e-stop holds at
once). A robot that was neither moving when the event came (its adapter's ``motion()``)
nor told to move in the second before proves nothing: that is a failure too, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from executive.language.diagnostics import Location
from executive.mission.loader import MissionLoader
from executive.scenario import nodes
from executive.scenario.model import BodyCheck, End, Scenario, Still
from executive.scenario.story import Outcome, Pose, RunStory
from executive.seam.lockstep import LockstepPart
from executive.seam.profile import RobotProfile

MOVING_BEFORE_S = 1.0  # no_motion_after: the robot must have moved within this before the event


@dataclass(frozen=True)
class Failure:
    """One expectation not met: where it is written, which, why; the node concerned."""

    where: Location
    what: str
    message: str
    node: str = ""

    def __str__(self) -> str:
        return f"{self.where}: {self.what}: {self.message}"


def judge(
    scenario: Scenario, outcome: Outcome, part: LockstepPart, profile: RobotProfile
) -> list[Failure]:
    """Every expectation of ``scenario`` that ``outcome`` does not meet (none: it passed)."""
    if outcome.error:
        return [Failure(scenario.where, "run", outcome.error)]
    story = outcome.story
    if story is None:
        return [Failure(scenario.where, "run", "no run: the mission never started")]
    out: list[Failure] = []
    if outcome.timed_out:
        clock = "simulated " if outcome.simulated else ""
        said = (
            f"ended by its time limit ({scenario.timeout:g} {clock}s): the mission was still "
            f"running at {outcome.timed_out!r}"
        )
        out.append(Failure(scenario.where, "timeout", said, outcome.timed_out))
    out += _story(scenario, story)
    expect, where = scenario.expect, scenario.expect.where
    if expect.no_motion_after is not None:
        failure = _still(outcome, expect.no_motion_after, part)
        if failure:
            out.append(Failure(where["no_motion_after"], "expect.no_motion_after", failure))
    if expect.end is not None:
        out += _end(
            scenario, expect.end, outcome.joints, outcome.base, profile, where["end"], "expect.end"
        )
    for check in expect.body:
        out += _body(scenario, check, outcome, profile)
    return out


def _story(scenario: Scenario, story: RunStory) -> list[Failure]:
    """The expectations the run's record answers: result, causes, nodes."""
    expect, where = scenario.expect, scenario.expect.where
    out = []
    if expect.result is not None and story.result != expect.result:
        said = _result(expect.result, story)
        out.append(Failure(where["result"], "expect.result", said, _node(story)))
    if expect.causes is not None and set(expect.causes) != set(story.causes):
        got = ", ".join(story.causes) or "none"
        said = f"expected {', '.join(expect.causes) or 'none'}; the run's: {got} ({story.reason or story.result})"
        out.append(Failure(where["causes"], "expect.causes", said))
    if expect.ran:
        out += _ran(expect.ran, story, where["ran"])
    for ref in expect.never_ran:
        ran = [p for p in story.started if nodes.matches(ref, p)]
        if ran:
            out.append(Failure(where["never_ran"], "expect.never_ran", f"{ran[0]!r} ran", ran[0]))
    if expect.failed_at is not None:
        at = story.failed_at
        if at is None or not nodes.matches(expect.failed_at, at):
            got = f"it failed at {at!r}" if at else f"it ended {story.result} ({story.reason})"
            said = f"expected the run to fail at {expect.failed_at!r}; {got}"
            out.append(Failure(where["failed_at"], "expect.failed_at", said, at or ""))
    return out


def _body(
    scenario: Scenario, check: BodyCheck, outcome: Outcome, profile: RobotProfile
) -> list[Failure]:
    what = f"expect.body[{check.index}]"
    joints = outcome.body.get(check.index)
    verb = "started" if check.when == "on_start" else "ended"
    if joints is None:
        return [Failure(check.where, what, f"{check.node!r} never {verb}", check.node)]
    return [
        Failure(f.where, f.what, f"when {check.node!r} {verb}: {f.message}", check.node)
        for f in _end(
            scenario,
            check.end,
            joints,
            outcome.body_base.get(check.index),
            profile,
            check.where,
            what,
        )
    ]


def _node(story: RunStory) -> str:
    return story.failed_at or ""


def _result(expected: str, story: RunStory) -> str:
    if story.result is None:
        return f"expected {expected}; the run did not end"
    why = ""
    if story.result == "FAILED" and story.failed_at:
        rest = story.reason.removeprefix(f"{story.failed_at}: ")
        why = f" at {story.failed_at!r}: {rest}"
    elif story.reason:
        why = f" ({story.reason})"
    return f"expected {expected}; the run ended {story.result}{why}"


def _ran(expected: tuple[str, ...], story: RunStory, where: Location) -> list[Failure]:
    """``expected`` in order in the nodes that ran (others may come between)."""
    position = 0
    previous = ""
    for ref in expected:
        found = next(
            (
                i
                for i in range(position, len(story.started))
                if nodes.matches(ref, story.started[i])
            ),
            None,
        )
        if found is None:
            if any(nodes.matches(ref, p) for p in story.started):
                why = f"{ref!r} ran, but not after {previous!r}"
            else:
                last = story.started[-1] if story.started else "nothing"
                why = f"{ref!r} did not run (the last node to start: {last!r}; {story.result})"
            return [Failure(where, "expect.ran", why, ref)]
        position, previous = found + 1, story.started[found]
    return []


def _still(outcome: Outcome, still: Still, part: LockstepPart) -> str:
    """Why the robot was not still from ``still.within`` s after its event ("" if it was)."""
    fired = outcome.fired[still.event]
    event = fired.event.describe()
    if fired.t is None:
        return f"{event} never fired: {fired.missed}"
    if outcome.record is None:
        return "no record of the robot's commands"
    # moving (the robot said so: the adapter's ``motion()``), or told to (its commands)
    moving = fired.moving or part.motion_after(outcome.record, fired.t - MOVING_BEFORE_S, fired.t)
    if not moving:
        return (
            f"nothing was moving when {event} fired: the expectation proves nothing "
            "(put the event where the robot moves)"
        )
    until, before = "", math.inf
    if still.until is not None:
        end = outcome.fired[still.until]
        if end.t is None:
            return f"{end.event.describe()} never fired: {end.missed}"
        until, before = f" until {end.event.describe()}", end.t
    moved = part.motion_after(outcome.record, fired.t + still.within, before)
    if moved:
        more = f" (and {len(moved) - 1} more)" if len(moved) > 1 else ""
        return (
            f"the robot was told to move {still.within:g} s and more after {event}{until}: "
            f"{moved[0]} (the event at {fired.t:.3f} s){more}"
        )
    return ""


def _end(
    scenario: Scenario,
    end: End,
    joints: Mapping[str, float],
    base: Pose | None,
    profile: RobotProfile,
    where: Location,
    what: str,
) -> list[Failure]:
    out = []
    if end.base is not None:
        out += _base(end, base, where, f"{what}.base")
    if end.pose:
        root = scenario.missions_dir
        library = MissionLoader(profile, root).library(root)
        pose = library.poses.get(end.pose) or library.gestures[end.pose]  # load.py checked it
        worst, off = "", 0.0
        for name, q in pose.joints.items():
            measured = joints.get(name)
            diff = math.inf if measured is None else abs(measured - q)
            if diff > off:
                worst, off = name, diff
        if off > end.pose_within:
            # a finger's unit is its stream's (the Adam's hands: counts)
            unit = profile.tolerance(worst).unit if worst in profile.joints else "rad"
            shown = "not measured" if math.isinf(off) else f"{off:.3f} {unit} off"
            said = f"not at {end.pose!r} within {end.pose_within:g} {unit}: {worst} {shown}"
            out.append(Failure(where, f"{what}.pose", said))
    if end.point:
        from executive.seam.body import load  # MuJoCo: only for this expectation

        body = load(profile)
        body.pose(dict(joints))
        at = body.point(end.point)
        distance = float(np.linalg.norm(at - np.asarray(end.at)))
        if distance > end.point_within:
            shown = ", ".join(f"{v:.3f}" for v in at)
            out.append(
                Failure(
                    where,
                    f"{what}.hand",
                    f"{end.point} at [{shown}], {distance:.3f} m from {list(end.at)} "
                    f"(within {end.point_within:g} m expected)",
                )
            )
    return out


def _base(end: End, base: Pose | None, where: Location, what: str) -> list[Failure]:
    """The base where ``end`` wants it: within ``base_within`` m of (x, y), and facing
    ``heading`` within ``heading_within`` rad (the shorter way round) if one is given."""
    assert end.base is not None
    if base is None:
        return [Failure(where, what, "the robot reported no base pose")]
    x, y, yaw = base
    out = []
    distance = math.hypot(x - end.base[0], y - end.base[1])
    if distance > end.base_within:
        said = (
            f"the base at [{x:.3f}, {y:.3f}], {distance:.3f} m from {list(end.base)} "
            f"(within {end.base_within:g} m expected)"
        )
        out.append(Failure(where, what, said))
    if end.heading is not None:
        off = abs(math.remainder(yaw - end.heading, math.tau))
        if off > end.heading_within:
            said = (
                f"the base heading {yaw:.3f} rad, {off:.3f} rad from {end.heading:g} "
                f"(within {end.heading_within:g} rad expected)"
            )
            out.append(Failure(where, f"{what}.heading", said))
    return out
