"""The GRX's own profile options: the ``grx:`` mapping of a GRX profile, as ``GrxSettings``.

``check_options(options, profile)`` is what the registry's ``check_options`` returns when a
profile loads (each problem ``key: message``, relative to ``grx:``); ``from_options`` builds
the settings from a mapping that passed it. Every key is required: the values live in the
profile (``executive/robots/profiles/grx.yaml`` spells them out and says why each is what it is),
not here. A profile that ``extends`` grx and changes one key repeats the mapping, since
``extends`` replaces a top-level key whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from executive.robots.grx import interface as wire

if TYPE_CHECKING:
    from executive.seam.profile import RobotProfile

# (stick, index, sign): which joystick axis carries a rate, and its sign
Axis = tuple[str, int, float]
STICKS = ("left", "right")
AXES = ("forward", "lateral", "yaw")
KEYS = (
    "schema",
    "safe_task",
    "passive_tasks",
    "joystick_hz",
    "axes",
    "components",
    "component_channel",
    "continuous_tasks",
)
MAX_JOYSTICK_HZ = 1000.0


@dataclass(frozen=True)
class GrxSettings:
    schema: str  # the User API table the robot's release speaks (seed, m4)
    safe_task: str | None  # fsm name sent after zero axes on a safety stop (None: axes only)
    passive_tasks: tuple[str, ...]  # fsm names in which the safe task is not sent
    joystick_hz: float  # the virtual joystick stream's rate
    components: Mapping[str, int]  # component (module) names -> MIDs
    component_channel: str  # the client category a component command goes to
    forward: Axis
    lateral: Axis
    yaw: Axis
    continuous_tasks: tuple[str, ...]  # fsm names that stay in process until replaced

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> GrxSettings:
        """The settings of a ``grx:`` mapping; ValueError listing its problems, if any."""
        problems = check_options(options, None)
        if problems:
            raise ValueError("grx options: " + "; ".join(problems))
        axes = options["axes"]
        safe = options["safe_task"]
        return cls(
            schema=str(options["schema"]),
            safe_task=None if safe is None else str(safe),
            passive_tasks=tuple(options["passive_tasks"]),
            joystick_hz=float(options["joystick_hz"]),
            components={str(k): int(v) for k, v in options["components"].items()},
            component_channel=str(options["component_channel"]),
            forward=_axis(axes["forward"]),
            lateral=_axis(axes["lateral"]),
            yaw=_axis(axes["yaw"]),
            continuous_tasks=tuple(options["continuous_tasks"]),
        )

    def axes(self, vx: float, vy: float, yaw: float) -> dict[str, list[float]]:
        """The two virtual sticks carrying these rates (each clamped to [-1, 1])."""
        sticks = {"left": [0.0, 0.0], "right": [0.0, 0.0]}
        for (stick, index, sign), rate in (
            (self.forward, vx),
            (self.lateral, vy),
            (self.yaw, yaw),
        ):
            sticks[stick][index] = sign * min(max(float(rate), -1.0), 1.0)
        return {wire.AXIS_LEFT: sticks["left"], wire.AXIS_RIGHT: sticks["right"]}

    def rates(self, left: list[float], right: list[float]) -> tuple[float, float, float]:
        """Forward, lateral and yaw rates from the two sticks (the inverse of ``axes``)."""
        sticks = {"left": left, "right": right}
        return tuple(  # type: ignore[return-value]
            sign * float(sticks[stick][index])
            for stick, index, sign in (self.forward, self.lateral, self.yaw)
        )


def _axis(raw: Mapping[str, Any]) -> Axis:
    return (str(raw["stick"]), int(raw["index"]), -1.0 if raw.get("invert") else 1.0)


def check_options(options: Mapping[str, Any], profile: Mapping[str, Any] | None) -> list[str]:
    """Problems with a ``grx:`` mapping, ``key: message`` each. With ``profile`` (the whole
    profile's data) the fsm names are checked against its ``fsm:`` and the battery
    capability against the schema."""
    p: list[str] = []
    for key in sorted(set(options) - set(KEYS)):
        p.append(f"{key}: unknown key (known: {', '.join(KEYS)})")
    for key in KEYS:
        if key not in options:
            p.append(f"{key}: missing")
    fsm = None
    if profile is not None and isinstance(profile.get("fsm"), Mapping):
        fsm = set(profile["fsm"])

    def names(key: str, value: Any, many: bool) -> None:
        items = value if many else [value]
        if many and not isinstance(value, list):
            p.append(f"{key}: must be a list of fsm state names, got {value!r}")
            return
        for item in items:
            if not isinstance(item, str):
                p.append(f"{key}: {item!r} is not an fsm state name")
            elif fsm is not None and item not in fsm:
                p.append(f"{key}: {item!r} is not in the profile's fsm ({', '.join(sorted(fsm))})")

    p += _check_values(options, names)
    schema = options.get("schema")
    caps = None if profile is None else profile.get("capabilities", ["battery"])  # spec's
    if (
        isinstance(caps, list)
        and "battery" in caps
        and schema in wire.SCHEMAS
        and not wire.SCHEMAS[schema].has_battery
    ):
        p.append(
            f"schema: the {schema} schema reports no battery; list capabilities without battery"
        )
    return p


def _check_values(options: Mapping[str, Any], names: Callable[[str, Any, bool], None]) -> list[str]:
    """Each given key's value (``names`` reports fsm names' problems itself)."""
    p: list[str] = []
    schema = options.get("schema")
    if "schema" in options and schema not in wire.SCHEMAS:
        p.append(f"schema: must be one of {', '.join(wire.SCHEMAS)}, got {schema!r}")
    if options.get("safe_task") is not None:
        names("safe_task", options["safe_task"], False)
    if "passive_tasks" in options:
        names("passive_tasks", options["passive_tasks"], True)
    if "continuous_tasks" in options:
        names("continuous_tasks", options["continuous_tasks"], True)
    if "joystick_hz" in options:
        hz = options["joystick_hz"]
        if (
            not isinstance(hz, int | float)
            or isinstance(hz, bool)
            or not math.isfinite(hz)
            or not 0 < hz <= MAX_JOYSTICK_HZ
        ):
            p.append(f"joystick_hz: must be a number in (0, {MAX_JOYSTICK_HZ:g}], got {hz!r}")
    if "axes" in options:
        p += _check_axes(options["axes"])
    if "components" in options:
        p += _check_components(options["components"])
    if "component_channel" in options and options["component_channel"] not in wire.CATEGORIES:
        p.append(
            f"component_channel: must be one of {', '.join(wire.CATEGORIES)}, "
            f"got {options['component_channel']!r}"
        )
    return p


def _check_components(comps: Any) -> list[str]:
    if not isinstance(comps, Mapping):
        return [f"components: must map component names to ids, got {comps!r}"]
    p = []
    for name, mid in comps.items():
        if not isinstance(name, str) or not name:
            p.append(f"components: {name!r} is not a name")
        elif not isinstance(mid, int) or isinstance(mid, bool) or not 0 <= mid < 2**31:
            p.append(f"components.{name}: must be an id (int >= 0), got {mid!r}")
    return p


def _check_axes(axes: Any) -> list[str]:
    if not isinstance(axes, Mapping):
        return [f"axes: must map {', '.join(AXES)} to {{stick, index, invert}}, got {axes!r}"]
    p = [f"axes.{k}: unknown axis (known: {', '.join(AXES)})" for k in axes if k not in AXES]
    seen: dict[tuple[Any, Any], str] = {}
    for name in AXES:
        raw = axes.get(name)
        if not isinstance(raw, Mapping):
            p.append(f"axes.{name}: must be {{stick: left|right, index: 0|1, invert: bool}}")
            continue
        bad = set(raw) - {"stick", "index", "invert"}
        if bad:
            p.append(f"axes.{name}: unknown keys {sorted(bad)}")
        if raw.get("stick") not in STICKS:
            p.append(f"axes.{name}.stick: must be left or right, got {raw.get('stick')!r}")
        if raw.get("index") not in (0, 1) or isinstance(raw.get("index"), bool):
            p.append(f"axes.{name}.index: must be 0 or 1, got {raw.get('index')!r}")
        if not isinstance(raw.get("invert", False), bool):
            p.append(f"axes.{name}.invert: must be true or false")
        where = (raw.get("stick"), raw.get("index"))
        if where in seen:
            p.append(f"axes.{name}: the same stick axis as {seen[where]}")
        seen[where] = name
    return p


def settings_of(profile: RobotProfile) -> GrxSettings:
    """The settings in ``profile``'s ``grx:`` mapping (checked when the profile loaded)."""
    return GrxSettings.from_options(profile.options)
