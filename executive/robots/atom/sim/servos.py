"""``rt/main/nodes/state``: the servo drives behind the joints, and their error codes.

``MainNodesState_`` groups the drives by limb (``left_leg[6]``, ``waist``, ``left_arm[7]``,
``head[2]``, ``ecat2can[2]`` ...), in the vendor SDK's joint order, which is not the order
of any command topic. The simulated Atom injects a servo error by node name
(``left_arm[3]``) or by the joint the node drives (``left_elbow_pitch``); this module owns
that mapping and fills the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from executive.wire.codec import Record

_LEG = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
_ARM = (
    "shoulder_pitch",
    "shoulder_roll",
    "shoulder_yaw",
    "elbow_pitch",
    "elbow_roll",
    "wrist_pitch",
    "wrist_roll",
)
# node array -> the joint each element drives (SDK order; None: not a joint)
NODE_JOINTS: dict[str, tuple[str | None, ...]] = {
    "left_leg": tuple(f"left_{j}" for j in _LEG),
    "right_leg": tuple(f"right_{j}" for j in _LEG),
    "waist": ("torso",),
    "left_arm": tuple(f"left_{j}" for j in _ARM),
    "right_arm": tuple(f"right_{j}" for j in _ARM),
    "head": ("head_yaw", "head_pitch"),
    "ecat2can": (None, None),
}
_SCALAR_NODES = {"waist"}


def node_names() -> list[str]:
    """Every node as a fault target: ``left_leg[0]`` ... ``waist`` ... ``ecat2can[1]``."""
    out = []
    for field, joints in NODE_JOINTS.items():
        if field in _SCALAR_NODES:
            out.append(field)
        else:
            out.extend(f"{field}[{i}]" for i in range(len(joints)))
    return out


def axis_targets() -> dict[str, str]:
    """Servo fault targets (node names and the joint names they drive) -> node name."""
    targets = {n: n for n in node_names()}
    for field, joints in NODE_JOINTS.items():
        for i, joint in enumerate(joints):
            if joint is not None:
                targets[joint] = field if field in _SCALAR_NODES else f"{field}[{i}]"
    return targets


def node_joint(node: str) -> str | None:
    """The joint a node drives (None for the EtherCAT-CAN bridges)."""
    field, _, rest = node.partition("[")
    index = int(rest.rstrip("]")) if rest else 0
    return NODE_JOINTS[field][index]


class MainNodes:
    """A ``MainNodesState_`` record with healthy defaults, and the errors shown in it."""

    SERVO_OP = 8  # servo/EtherCAT "operational"

    def __init__(self, record: Record) -> None:
        """Fill ``record`` (a ``MainNodesState_`` codec record) with healthy drives."""
        self.record = record
        self._error_views: dict[str, tuple[Any, int | None]] = {}
        for field, joints in NODE_JOINTS.items():
            view = self.record[field]
            if field == "ecat2can":
                view["slave_state"] = self.SERVO_OP
                view["software_version"] = 0x0100
            else:
                view["servo_state"] = self.SERVO_OP
                view["node_state"] = self.SERVO_OP
                view["display_op_mode"] = 8  # cyclic synchronous position
                view["mcu_temp"] = 42
                view["mos_temp"] = 40
                view["motor_temp"] = 38
                view["bus_voltage"] = 48
                view["software_version"] = 0x0203
            errors = view["error_code"]
            if field in _SCALAR_NODES:
                self._error_views[field] = (errors, None)
            else:
                for i in range(len(joints)):
                    self._error_views[f"{field}[{i}]"] = (errors, i)

    def set_errors(self, errors: Mapping[str, int]) -> None:
        """Show ``errors`` (node -> code); every other node reads 0."""
        for node, (view, index) in self._error_views.items():
            code = errors.get(node, 0)
            if index is None:
                view[...] = code
            else:
                view[index] = code

    def error_codes(self) -> dict[str, int]:
        """Non-zero error codes by node (for logs and tests)."""
        out = {}
        for node, (view, index) in self._error_views.items():
            code = int(np.asarray(view if index is None else view[index]))
            if code:
                out[node] = code
        return out
