"""What a missions directory offers: each mission's name, description and parameters as
JSON-ready data, for the service's ``missions`` reply and the CLI's ``missions`` listing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _value(value: Any) -> Any:
    """A default as JSON carries it (an unresolved ``${x}`` as its text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    return str(value)


def describe_mission(name: str, mission: Any) -> dict[str, Any]:
    """A mission's name, description and parameters (name, type, default or required,
    description, bounds) as JSON-ready data; ``mission`` is a validated ``Mission``."""
    params = []
    for decl in mission.params.values():
        entry: dict[str, Any] = {
            "name": decl.name,
            "type": getattr(decl.type, "value", str(decl.type)),
            "required": bool(decl.required),
        }
        if not decl.required:
            entry["default"] = _value(decl.default)
        if decl.description:
            entry["description"] = decl.description
        for bound in ("minimum", "maximum"):
            if getattr(decl, bound, None) is not None:
                entry[bound] = getattr(decl, bound)
        params.append(entry)
    return {"name": name, "description": mission.description, "params": params}


def describe_missions(directory: Path, profile: Any, names: Sequence[str]) -> list[dict[str, Any]]:
    """``describe_mission`` of each ``directory/<name>.yaml``; a file that does not load
    is listed with its first problem instead of a description; subtree files (no
    missions of their own) are left out."""
    from executive.mission.loader import MissionLoader

    loader = MissionLoader(profile, directory)
    out = []
    for name in names:
        result = loader.check(directory / f"{name}.yaml")
        if result.mission is None:
            first = next(iter(result.errors), None)
            out.append({"name": name, "problem": str(first) if first else "not a mission"})
        elif result.mission.kind == "mission":
            out.append(describe_mission(name, result.mission))
    return out
