"""Faults the simulated Adam can be told to have: the kit's syntax, the Adam's kinds.

Specs, parsing and the book of active faults are the kit's (``executive.robots.simkit.faults``:
``KIND[:TARGET][=VALUE][@SECONDS]``); what an Adam can have is narrower than what the
simulated Atom can, because its DDS interface reports less (robots.md 1.3):

- ``servo-error:JOINT[=CODE]``: ``MotorState_.state`` of that joint reads CODE (default 1)
  and the joint stops where it is, until cleared.
- ``dropout[:low_state|hand_state]`` (or ``rt/lowstate``, ``rt/handstate``; none: both): the
  topic goes silent (stale state).
- ``battery=PERCENT``: ``battery_data`` reads a pack at that charge (sdk-1.2 only: the seed
  interface has no battery on the wire).

E-stops, BMS alarms, the AMR, control authority, the FSM and the gamepad have no
counterpart on the Adam's DDS interface; asking for one is an error saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from executive.robots.simkit.faults import (
    FaultBook,
    FaultError,
    FaultSpec,
    canonical_kind,
    parse_clear,
    parse_fault,
)

# state source (the profile's key) -> topic
STATE_TOPICS: dict[str, str] = {"low_state": "rt/lowstate", "hand_state": "rt/handstate"}
KINDS = ("servo-error", "state-dropout", "battery-level")

HELP = """\
fault spec: KIND[:TARGET][=VALUE][@SECONDS]  (@SECONDS: clears itself after that long)
  servo-error:JOINT[=CODE]     MotorState_.state of JOINT (a profile joint name, e.g.
                               left_elbow) reads CODE (default 1); the joint stops
  dropout[:SOURCE]             stop publishing low_state (rt/lowstate) or hand_state
                               (rt/handstate); none: both. e.g. dropout:low_state@2
  battery=PERCENT              battery_data reads PERCENT charge (interface sdk-1.2 only)
on stdin (--stdin-faults), one per line: SPEC | set SPEC | clear KIND[:TARGET] | clear-all
"""


def source_key(text: str) -> str:
    """``low_state`` for ``low_state`` or ``rt/lowstate``; FaultError otherwise."""
    for key, topic in STATE_TOPICS.items():
        if text in (key, topic):
            return key
    raise FaultError(
        f"unknown state source {text!r}; known: {', '.join(STATE_TOPICS)} or their rt/ names"
    )


def normalise_target(kind: str, target: str, joints: Sequence[str]) -> str:
    """The canonical target of an Adam fault of ``kind``; FaultError if there is none."""
    if kind not in KINDS:
        raise FaultError(
            f"the PND Adam has no {kind} on DDS; faults it can have: {', '.join(KINDS)}"
        )
    if kind == "servo-error":
        if target not in joints:
            raise FaultError(
                f"servo-error needs a body joint of the profile, not {target!r} "
                f"(e.g. {', '.join(joints[:3])})"
            )
        return target
    if kind == "state-dropout":
        return source_key(target) if target else ""
    if target:
        raise FaultError(f"{kind} takes no target (got {target!r})")
    return ""


def validate(spec: FaultSpec, *, joints: Sequence[str], battery: bool) -> FaultSpec:
    """The spec with target normalised and value defaulted, or FaultError saying why not.

    ``joints``: the body joints in wire order; ``battery``: the interface reports one.
    """
    kind = canonical_kind(spec.kind)
    spec = replace(spec, kind=kind, target=normalise_target(kind, spec.target, joints))
    if not (math.isfinite(spec.value) and math.isfinite(spec.duration)) or spec.duration < 0:
        raise FaultError(f"{spec.describe()}: value and duration must be finite, duration >= 0")
    if kind == "servo-error":
        if spec.value == 0:
            spec = replace(spec, value=1.0)
        if not (0 < spec.value <= 0xFFFFFFFF and spec.value == int(spec.value)):
            raise FaultError(
                f"servo-error code must be an integer 1..0xffffffff, got {spec.value:g}"
            )
    if kind == "battery-level":
        if not battery:
            raise FaultError("battery-level needs an interface with battery_data (sdk-1.2)")
        if not 0 <= spec.value <= 100:
            raise FaultError(f"battery-level must be 0..100 percent, got {spec.value:g}")
    return spec


def parse_line(line: str) -> tuple[str, FaultSpec] | None:
    """A stdin line as (action, spec): ``SPEC``, ``set SPEC``, ``clear KIND[:T]``, ``clear-all``.

    None for a blank line or a comment; FaultError for anything else it cannot read.
    """
    text = line.split("#", 1)[0].strip()
    if not text:
        return None
    word, _, rest = text.partition(" ")
    rest = rest.strip()
    if word == "clear-all":
        return "clear_all", FaultSpec("servo-error")
    if word == "clear":
        if not rest:
            raise FaultError("clear needs KIND[:TARGET]")
        return "clear", parse_clear(rest)
    if word == "set":
        if not rest:
            raise FaultError("set needs a fault spec")
        return "set", parse_fault(rest)
    return "set", parse_fault(text)


def servo_codes(book: FaultBook) -> Mapping[str, int]:
    """Joint -> error code of every active servo error."""
    return {f.target: int(f.value) for f in book.of_kind("servo-error")}


__all__ = [
    "HELP",
    "KINDS",
    "STATE_TOPICS",
    "normalise_target",
    "parse_line",
    "servo_codes",
    "source_key",
    "validate",
]
