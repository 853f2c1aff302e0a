"""Semantic checks of leaves against the robot profile and the libraries.

The compiler has already checked each field's type and range; here the fields of one
leaf are checked together and against the robot: joints exist and targets sit inside
their limits, gestures move fingers only, a selection keeps something, an explicit speed
is within every moved joint's cap, a timeout is not shorter than the move it waits for.
A ``navigate_to_tag`` to a tag the profile's map
(``tags``) lacks is a warning. The result is the leaf's ``args``, exactly the keys its registry kind promises to the
builder — normalised (a pose becomes its joint targets, an FSM name carries its id).

Values that depend on a parameter nobody set (a subtree checked on its own) are
``Unresolved``; checks that need them are skipped, the rest still run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from executive.mission.diagnostics import Diagnostics, Location
from executive.mission.library import Library, limits_message
from executive.mission.model import Unresolved
from executive.mission.registry import NodeKind
from executive.mission.values import Val, suggest
from executive.profile import GROUPS, RobotProfile


@dataclass(frozen=True)
class LeafInput:
    """One leaf's checked fields. ``broken`` names fields that were given but invalid
    (already reported), so checks that combine fields stay quiet about them."""

    kind: NodeKind
    vals: Mapping[str, Val]
    broken: frozenset[str]
    where: Location
    path: str

    def value(self, name: str) -> Any:
        """The field's value, else the kind's default for it."""
        if name in self.vals:
            return self.vals[name].value
        f = self.kind.field(name)
        return f.default if f is not None else None


class LeafChecker:
    """Checks leaves of one load; errors go to ``diags``."""

    def __init__(self, profile: RobotProfile, library: Library, diags: Diagnostics) -> None:
        self.profile = profile
        self.library = library
        self.diags = diags
        self._checks: dict[str, Callable[[LeafInput], dict[str, Any] | None]] = {
            "move_joints": lambda i: self._motion(i, fingers=False),
            "hand_gesture": lambda i: self._motion(i, fingers=True),
            "set_fsm": self._set_fsm,
            "navigate_to_tag": self._navigate,
        }

    def error(self, where: Location, path: str, message: str) -> None:
        self.diags.error(where, path, message)

    def check(self, inp: LeafInput) -> dict[str, Any] | None:
        """The leaf's builder args, or None if it has errors (reported)."""
        if inp.broken:
            return None
        special = self._checks.get(inp.kind.name)
        if special is not None:
            return special(inp)
        return {name: inp.value(name) for name in inp.kind.args}

    # -- set_fsm --------------------------------------------------------------------------

    def _set_fsm(self, inp: LeafInput) -> dict[str, Any] | None:
        if "state" not in inp.vals:  # missing: reported by the field checks
            return None
        state = inp.value("state")
        # names were checked against the profile when the field was read
        fsm_id = state if isinstance(state, Unresolved) else self.profile.fsm_id(state)
        return {"state": state, "fsm_id": fsm_id, "timeout": inp.value("timeout")}

    # -- navigate_to_tag ------------------------------------------------------------------

    def _navigate(self, inp: LeafInput) -> dict[str, Any] | None:
        """A tag the robot's map lacks is a warning, not an error: the profile's ``tags`` is
        what the executive was told about the map, which a site may change under it (a
        new tag on the floor); the base itself refuses an unknown tag (FAILED) at run time."""
        args = {name: inp.value(name) for name in inp.kind.args}
        tag, known = args["tag"], self.profile.tags
        if known is not None and isinstance(tag, int) and tag not in known:
            val = inp.vals["tag"]
            name = inp.value("name")
            leaf = name if isinstance(name, str) else default_name(inp.kind.name, args)
            shown = ", ".join(str(t) for t in sorted(known)) or "none"
            self.diags.warning(
                val.where,
                f"{inp.path}.tag",
                f"{leaf!r}: tag {tag} is not on the robot's map (the tags of profile "
                f"{self.profile.name}: {shown}){val.note}",
            )
        return args

    # -- move_joints / hand_gesture -------------------------------------------------------

    def _motion(self, inp: LeafInput, *, fingers: bool) -> dict[str, Any] | None:
        named, inline = ("gesture", "fingers") if fingers else ("pose", "joints")
        if (named in inp.vals) == (inline in inp.vals):  # reported by the field checks
            return None
        ok = True
        targets: dict[str, Any] | Unresolved | None
        if named in inp.vals:
            targets = self._named(inp.vals[named], fingers)
        else:
            targets = self._inline(inp, inline, fingers)
        if targets is None:
            return None
        if "select" in inp.vals and not isinstance(targets, Unresolved):
            targets = self._select(inp, targets, named, fingers)
            if targets is None:
                return None
        if not isinstance(targets, Unresolved):
            ok = self._speed(inp, targets) and ok
        ok = self._timeout_covers_duration(inp) and ok
        if not ok:
            return None
        return {
            "targets": targets if isinstance(targets, Unresolved) else dict(targets),
            named: inp.vals[named].value if named in inp.vals else None,
            "duration": inp.value("duration"),
            "speed": inp.value("speed"),
            "tolerance": inp.value("tolerance"),
            "timeout": inp.value("timeout"),
        }

    def _named(self, val: Val, fingers: bool) -> dict[str, Any] | Unresolved | None:
        if isinstance(val.value, Unresolved):
            return val.value
        table = self.library.gestures if fingers else self.library.poses
        if val.value in self.library.broken or val.value not in table:
            return None  # reported with the library (or by the field check)
        return dict(table[val.value].joints)

    def _inline(self, inp: LeafInput, field: str, fingers: bool) -> dict[str, Any] | None:
        targets: dict[str, Any] = {}
        ok = True
        items: Mapping[str, tuple[Location, Val]] = inp.vals[field].value
        for name, (key_where, val) in items.items():
            path = f"{inp.path}.{field}.{name}"
            joint = self.profile.joints.get(name)
            if joint is None:
                self.error(
                    key_where, path, f"unknown joint{suggest(name, self.profile.joints, 'joints')}"
                )
                ok = False
                continue
            if fingers and joint.group != "hands":
                self.error(
                    key_where,
                    path,
                    f"{name} is not a finger joint: hand_gesture moves hand joints "
                    "(right_index, left_thumb_rotate...); use move_joints",
                )
                ok = False
                continue
            q = val.value
            if not isinstance(q, Unresolved) and not joint.within(q):
                self.error(
                    val.where, path, limits_message(name, q, joint.lower, joint.upper) + val.note
                )
                ok = False
                continue
            targets[name] = q
        return targets if ok else None

    def _select(
        self, inp: LeafInput, targets: Mapping[str, Any], named: str, fingers: bool
    ) -> dict[str, Any] | None:
        chosen: set[str] = set()
        ok = True
        known = [*self.profile.joint_sets, *GROUPS, "all"]
        for i, item in enumerate(inp.vals["select"].value):
            try:
                chosen.update(self.profile.expand([item.value]))
            except KeyError:
                self.error(
                    item.where,
                    f"{inp.path}.select[{i}]",
                    f"unknown joint, joint set or group {item.value!r}"
                    + suggest(item.value, [*known, *self.profile.joints], "names"),
                )
                ok = False
        if not ok:
            return None
        kept = {n: q for n, q in targets.items() if n in chosen}
        if not kept:
            what = f"{named} {inp.vals[named].value!r}" if named in inp.vals else "the targets"
            self.error(
                inp.vals["select"].where,
                f"{inp.path}.select",
                f"selects none of the joints of {what} ({', '.join(targets)})",
            )
            return None
        return kept

    def _speed(self, inp: LeafInput, targets: Mapping[str, Any]) -> bool:
        speed = inp.value("speed")
        if speed is None or isinstance(speed, Unresolved):
            return True
        joints = [self.profile.joints[n] for n in targets]
        slowest = min(joints, key=lambda j: j.max_velocity)
        if speed > slowest.max_velocity:
            val = inp.vals["speed"]
            self.error(
                val.where,
                f"{inp.path}.speed",
                f"{speed:g} rad/s is above the speed cap of {slowest.name} "
                f"({slowest.max_velocity:g} rad/s in the robot profile){val.note}",
            )
            return False
        return True

    def _timeout_covers_duration(self, inp: LeafInput) -> bool:
        duration, timeout = inp.value("duration"), inp.value("timeout")
        if not isinstance(duration, float) or not isinstance(timeout, float):
            return True
        if timeout < duration:
            val = inp.vals["timeout"]
            self.error(
                val.where,
                f"{inp.path}.timeout",
                f"{timeout:g} s is shorter than the move's duration ({duration:g} s): it would "
                f"always time out{val.note}",
            )
            return False
        return True


def default_name(kind: str, args: Mapping[str, Any]) -> str:
    """What a leaf is called when the file gives no ``name``: what it does, briefly."""

    def g(key: str) -> str:
        v = args.get(key)
        return f"{v:g}" if isinstance(v, float) else str(v)

    if kind == "move_joints":
        return f"Move to pose {g('pose')}" if args.get("pose") is not None else "Move joints"
    if kind == "hand_gesture":
        return f"Gesture {g('gesture')}" if args.get("gesture") is not None else "Move fingers"
    names = {
        "acquire_control": "Acquire control",
        "release_control": "Release control",
        "set_fsm": f"Set FSM {g('state')}",
        "navigate_to_tag": f"Navigate to tag {g('tag')}",
        "wait": f"Wait {g('seconds')} s",
        "wait_for_button": f"Wait for button {g('button')}",
        "clear_errors": "Clear errors",
        "check_battery": f"Battery >= {g('min_level')} %",
    }
    if kind in names:
        return names[kind]
    message = g("message")
    return f"Log: {message[:40]}{'...' if len(message) > 40 else ''}"
