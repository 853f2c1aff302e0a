"""The Adam's own profile options: the ``adam:`` mapping of an Adam profile
(``battery_voltage: {empty: V, full: V}``, the pack's datasheet range: the Adam reports volts
only) and the battery's percent from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from executive.robots.adam.robot import ROBOT

# the profile's ``adam:`` options
OPTION_KEYS = ("battery_voltage",)


BATTERY_KEYS = ("empty", "full")  # battery_voltage: {empty: V, full: V}


def battery_percent(volts: float, empty: float, full: float) -> float | None:
    """The charge of a pack at ``volts``, percent: linear from ``empty`` (0) to ``full`` (100)
    volts, clamped to 0..100; None for a non-finite reading."""
    if not math.isfinite(volts):
        return None
    return min(100.0, max(0.0, 100.0 * (volts - empty) / (full - empty)))


def battery_range(options: Mapping[str, Any]) -> tuple[float, float] | None:
    """(empty, full) volts of a checked ``adam:`` mapping, None if it gives none."""
    raw = options.get("battery_voltage")
    if not isinstance(raw, Mapping):
        return None
    return float(raw["empty"]), float(raw["full"])


def _volts(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def check_options(options: Mapping[str, Any], profile: Mapping[str, Any] | None) -> list[str]:
    """Problems with a profile's ``adam:`` mapping (``key: message``), given the whole
    profile's data: unknown keys, a malformed ``battery_voltage``, and the ``battery``
    capability offered (listed, or the spec's when ``capabilities:`` is not given) without
    the range it needs."""
    p = [
        f"{key}: unknown key (known: {', '.join(OPTION_KEYS)})"
        for key in sorted(set(options) - set(OPTION_KEYS), key=str)
    ]
    raw = options.get("battery_voltage")
    if raw is not None:
        if not isinstance(raw, Mapping) or set(raw) != set(BATTERY_KEYS):
            p.append(
                "battery_voltage: must be {empty: V, full: V}, the pack's voltage range "
                f"(its datasheet's), got {raw!r}"
            )
        elif not all(_volts(raw[k]) for k in BATTERY_KEYS):
            p.append(f"battery_voltage: empty and full must be volts (finite, > 0), got {raw!r}")
        elif not raw["empty"] < raw["full"]:
            p.append(f"battery_voltage: empty must be below full, got {raw!r}")
    caps = None if profile is None else profile.get("capabilities")
    if caps is None:
        caps = ROBOT.capabilities
    if isinstance(caps, list | frozenset | set) and "battery" in caps and raw is None:
        p.append(
            "battery_voltage: missing, and the profile offers the battery capability "
            "(listed, or the spec's when capabilities: is not given): the Adam reports volts "
            "only; set battery_voltage: {empty: V, full: V} from the pack's datasheet, or "
            "list capabilities without battery"
        )
    return p
