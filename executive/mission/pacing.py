"""Whether every timed move can keep its time: where joints may be when a move starts.

A ``duration`` too short for the profile's speed caps is refused by the motion planner
(``executive.motion.trajectory.plan``) when the move starts, from the measured
positions: "duration 1.800 s is too short: the joints' speed caps need 1.943 s". How
long a move needs depends on where it starts, which is only measured at run time — but
*bounded* before: by where the earlier steps of the mission leave each joint, or, for a
joint nothing has set yet, by its limits. This module computes those bounds and refuses
at validation every duration that could be refused at run time.

Why refuse rather than stretch (the other way out: treat ``duration`` as a minimum and
slow the move down to the caps, reporting the stretch): a duration is what the author
asked for and what the rest of the mission is timed against — the hand gesture in a
parallel that should close as the arm arrives, the leaf's own ``timeout``, the guest
waiting for the cup. A stretched move runs a different mission from the one reviewed,
and says so only in a log nobody reads until something went wrong. The integrator wants
every mistake caught before the robot moves (``DESIGN.md`` §1), and the language already
has the tool for a start that cannot be known: ``speed`` (or no pace at all), which the
planner always meets. The rule for authors is then simple: pace a joint's first move,
time the moves after it. The planner keeps its own check, against measured positions,
as the last word; this module makes it a check that does not fire.

The cost is that a first move from an unknown start is judged against the worst start
within the joint's limits, which is pessimistic for a robot that usually starts at
home; that is the price of a check that holds whatever the robot was doing before.

How the bounds are computed: an interval per joint (absent = anywhere within its
limits), pushed through the tree in the order it runs (abstract interpretation):

- a move that succeeds leaves each of its joints within ``tolerance`` of its target; a
  move that fails or is stopped leaves it somewhere between where it started and that
  (minimum-jerk paths are straight lines in joint space, so no joint leaves that hull);
- a sequence runs each child from where the previous one succeeded; a fallback each
  child from where the previous one failed; parallel children start together and drive
  different joints (``tree_checks`` makes sure), so their results combine joint by joint;
- a ``repeat`` or ``retry`` child starts from the entry or from where any earlier run
  left it: the entry widened by every target in the child (the hull of all of them, so
  one pass is enough, however the runs end);
- ``set_fsm`` and ``release_control`` forget everything: another FSM state or another
  controller may move the joints (zero torque lets the arms drop).

Only missions are checked: a subtree's moves are checked where a mission includes it,
from the poses that mission leaves the joints in. The same bounds also say when a paced
move (``speed``, or the caps) may outlast its ``timeout``: that is a warning, since the
author may have a start in mind that the mission cannot show.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from executive.language.diagnostics import Diagnostics, Location
from executive.language.model import Composite, Decorator, Guard, Leaf, Node, Subtree, walk
from executive.mission.tree_checks import MOTION
from executive.motion.trajectory import required_duration, too_short
from executive.seam.profile import RobotProfile

# Leaves after which the joints may be anywhere: the FSM or another controller moves them.
FORGETS = ("set_fsm", "release_control")
_SLACK = 1e-9  # as the planner compares


@dataclass(frozen=True, slots=True)
class Span:
    """Where one joint may be: ``lo``..``hi`` rad, put there by the leaves ``by``."""

    lo: float
    hi: float
    by: frozenset[tuple[Location, str]]

    def join(self, other: Span) -> Span:
        return Span(min(self.lo, other.lo), max(self.hi, other.hi), self.by | other.by)


State = dict[str, Span]  # joint -> where it may be; a joint not in it may be anywhere


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where a node leaves the joints when it succeeds (``ok``) and when it fails or is
    stopped at any point (``stop``, which includes everywhere it passes through)."""

    ok: State
    stop: State


def join(states: Iterable[State]) -> State:
    """Where the joints may be after any of ``states``: the hull, per joint."""
    items = list(states)
    if not items:
        return {}
    out = dict(items[0])
    for state in items[1:]:
        out = {j: span.join(state[j]) for j, span in out.items() if j in state}
    return out


def check(root: Node, profile: RobotProfile, diags: Diagnostics) -> None:
    """Report every timed move of a mission that the speed caps may not let keep its
    duration (an error), and every paced move that may outlast its timeout (a warning)."""
    _Pacing(profile, diags).node(root, {})


class _Pacing:
    def __init__(self, profile: RobotProfile, diags: Diagnostics) -> None:
        self.profile = profile
        self.diags = diags

    def node(self, node: Node, entry: State) -> Outcome:
        if isinstance(node, Leaf):
            return self.leaf(node, entry)
        if isinstance(node, Subtree):
            return self.node(node.root, entry)
        if isinstance(node, Guard):  # the condition is a condition: it moves nothing
            return self.node(node.child, entry)
        if isinstance(node, Decorator):
            return self.decorator(node, entry)
        if isinstance(node, Composite):
            return self.composite(node, entry)
        return Outcome(entry, entry)

    def composite(self, node: Composite, entry: State) -> Outcome:
        if node.kind == "parallel":
            outs = [self.node(child, entry) for child in node.nodes]
            stop = _merge(entry, [o.stop for o in outs])
            if node.policy == "success_on_one":  # the others are stopped wherever they are
                return Outcome(stop, stop)
            return Outcome(_merge(entry, [o.ok for o in outs]), stop)
        here, oks, stops = entry, [], [entry]
        for child in node.nodes:
            out = self.node(child, here)
            oks.append(out.ok)
            stops.append(out.stop)
            # a sequence goes on where a child succeeded, a fallback where it failed
            here = out.ok if node.kind == "sequence" else out.stop
        ok = here if node.kind == "sequence" else join(oks)
        return Outcome(ok, join(stops))

    def decorator(self, node: Decorator, entry: State) -> Outcome:
        if node.kind in ("repeat", "retry"):
            start = self.widened(entry, node.child)
            out = self.node(node.child, start)
            return Outcome(out.ok, join([start, out.stop]))
        out = self.node(node.child, entry)
        if node.kind == "inverter":  # succeeds where the child failed
            return Outcome(out.stop, out.stop)
        return out

    def widened(self, entry: State, body: Node) -> State:
        """Where a loop's body may start a run: the entry, or anywhere an earlier run of it
        may have left the joints (the hull of the entry and every target in the body)."""
        out = dict(entry)
        for n in walk(body):
            if not isinstance(n, Leaf):
                continue
            if n.kind in FORGETS:
                return {}
            if n.kind in MOTION:
                targets = n.args.get("targets")
                solved = n.args.get("joints")
                if not isinstance(targets, Mapping) and isinstance(solved, tuple):
                    out = {j: s for j, s in out.items() if j not in solved}  # a reach
                    continue
                if not isinstance(targets, Mapping):
                    return {}  # a pose nobody named: any joint may move
                for j, span in self.arrived(n, targets).items():
                    if j in out:
                        out[j] = out[j].join(span)
        return out

    # -- leaves ---------------------------------------------------------------------------

    def leaf(self, leaf: Leaf, entry: State) -> Outcome:
        if leaf.kind in FORGETS:
            return Outcome({}, {})
        if leaf.kind not in MOTION:
            return Outcome(entry, entry)
        targets = leaf.args.get("targets")
        solved = leaf.args.get("joints")
        if not isinstance(targets, Mapping) and isinstance(solved, tuple):
            # a reach: its joints go where the solver sends them, anywhere in their limits
            forgotten = {j: s for j, s in entry.items() if j not in solved}
            return Outcome(forgotten, forgotten)
        if not isinstance(targets, Mapping):
            return Outcome({}, {})
        self.check_move(leaf, targets, entry)
        arrived = self.arrived(leaf, targets)
        ok, stop = dict(entry), dict(entry)
        for j, span in arrived.items():
            ok[j] = span
            if j in entry:  # stopped on the way: between the start and the target
                stop[j] = entry[j].join(span)
        return Outcome(ok, stop)

    def arrived(self, leaf: Leaf, targets: Mapping[str, float]) -> State:
        """Where a move that succeeded leaves its joints: within tolerance of the targets."""
        tol = leaf.args.get("tolerance")
        tol = tol if isinstance(tol, float) else 0.5  # the largest a file may give
        by = frozenset({(leaf.where, leaf.name)})
        out: State = {}
        for j, q in targets.items():
            joint = self.profile.joints[j]
            out[j] = Span(max(q - tol, joint.lower), min(q + tol, joint.upper), by)
        return out

    def check_move(self, leaf: Leaf, targets: Mapping[str, float], entry: State) -> None:
        duration, speed, timeout = (leaf.args.get(k) for k in ("duration", "speed", "timeout"))
        starts = {j: self.worst_start(j, q, entry) for j, q in targets.items()}
        if isinstance(duration, float):
            need, joint = required_duration(self.profile, targets, starts)
            if duration + _SLACK < need and joint is not None:
                self.diags.error(
                    leaf.spots.get("duration", leaf.where),
                    f"{leaf.path}.duration",
                    f"{too_short(duration, need)} ({self.origin(joint, starts, entry)}); "
                    f"give at least {_up(need)} s, or pace the move with speed",
                )
            return
        if speed is not None and not isinstance(speed, float):
            return  # unresolved
        need, joint = required_duration(self.profile, targets, starts, speed=speed)
        if isinstance(timeout, float) and timeout + _SLACK < need and joint is not None:
            pace = f"at {speed:g} rad/s" if speed is not None else "at the joints' speed caps"
            self.diags.warning(
                leaf.spots.get("timeout", leaf.where),
                f"{leaf.path}.timeout",
                f"{timeout:g} s may be too short: {pace} the move can take {need:.3f} s "
                f"({self.origin(joint, starts, entry)}); give at least {_up(need)} s",
            )

    def worst_start(self, j: str, q: float, entry: State) -> float:
        """Of the positions ``j`` may start at, the farthest from its target ``q``."""
        joint = self.profile.joints[j]
        span = entry.get(j)
        lo, hi = (span.lo, span.hi) if span is not None else (joint.lower, joint.upper)
        return lo if abs(q - lo) >= abs(q - hi) else hi

    def origin(self, j: str, starts: Mapping[str, float], entry: State) -> str:
        """Why ``j`` may start where it needs longest, for the message."""
        joint = self.profile.joints[j]
        span = entry.get(j)
        if span is None:
            return (
                f"{j} may start anywhere within its limits [{joint.lower:g}, {joint.upper:g}]: "
                "nothing before this move in the mission sets it"
            )
        leaves = " or ".join(
            f"{name!r} ({where.file}:{where.line})" for where, name in sorted(span.by)
        )
        return f"{j} may start at {starts[j]:.3f} rad, where {leaves} may leave it"


def _merge(entry: State, outs: list[State]) -> State:
    """Where parallel children leave the joints: each joint as the child that moved it
    left it (children drive different joints), the entry where none did."""
    out: State = {}
    for j in set(entry).union(*outs):
        before = entry.get(j)
        changed = [o.get(j) for o in outs if o.get(j) != before]
        if not changed:
            if before is not None:
                out[j] = before
        elif all(span is not None for span in changed):
            out[j] = join([{j: span} for span in changed if span is not None])[j]
    return out


def _up(seconds: float) -> str:
    """``seconds`` rounded up to a tenth, as a duration to suggest."""
    return f"{math.ceil(seconds * 10 - 1e-6) / 10:.1f}"
