"""The builder table: each mission leaf kind (executive.mission.registry) to its behaviour.

The mission loader has already validated every argument against the registry and the
robot profile, so builders only translate names; constructors store parameters and do
no I/O (the behaviours connect in ``setup(context=...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import py_trees

from behaviours.actions.basic import Log, Wait
from behaviours.actions.control import AcquireControl, ClearErrors, ReleaseControl, SetFsm
from behaviours.actions.motion import MoveJoints
from behaviours.actions.navigation import NavigateToTag
from behaviours.conditions.robot import CheckBattery, WaitForButton

DEFAULT_TOLERANCE = 0.05  # rad


def _opt(args: Mapping[str, Any], key: str) -> Any:
    return args.get(key)


def _move(leaf: Any) -> py_trees.behaviour.Behaviour:
    a = leaf.args
    return MoveJoints(
        dict(a["targets"]),
        name=leaf.name,
        duration=_opt(a, "duration"),
        speed=_opt(a, "speed"),
        tolerance=a.get("tolerance") or DEFAULT_TOLERANCE,
        timeout=float(a["timeout"]),
    )


def _set_fsm(leaf: Any) -> py_trees.behaviour.Behaviour:
    a = leaf.args
    state = a.get("fsm_id") if a.get("fsm_id") is not None else a["state"]
    return SetFsm(state, name=leaf.name, timeout=float(a["timeout"]))


BUILDERS: dict[str, Callable[[Any], py_trees.behaviour.Behaviour]] = {
    "acquire_control": lambda leaf: AcquireControl(leaf.name, float(leaf.args["timeout"])),
    "release_control": lambda leaf: ReleaseControl(leaf.name, float(leaf.args["timeout"])),
    "set_fsm": _set_fsm,
    "move_joints": _move,
    "hand_gesture": _move,
    "navigate_to_tag": lambda leaf: NavigateToTag(
        int(leaf.args["tag"]),
        float(leaf.args.get("theta") or 0.0),
        name=leaf.name,
        timeout=float(leaf.args["timeout"]),
    ),
    "wait": lambda leaf: Wait(float(leaf.args["seconds"]), name=leaf.name),
    "wait_for_button": lambda leaf: WaitForButton(
        leaf.args["button"], name=leaf.name, timeout=float(leaf.args["timeout"])
    ),
    "clear_errors": lambda leaf: ClearErrors(leaf.name),
    "check_battery": lambda leaf: CheckBattery(float(leaf.args["min_level"]), name=leaf.name),
    "log": lambda leaf: Log(str(leaf.args["message"]), name=leaf.name),
}
