"""Forward kinematics of a URDF in plain numpy, sharing no code with the project.

The witness the reach tests hold the executive to: it reads the vendor's URDF file with
the standard library's XML parser and chains each joint's origin (xyz, rpy) and axis, as
the URDF specification defines them, from the root link to the link asked for. Nothing
of ``executive`` is imported (no MuJoCo either): a mistake in how the project loads the
model, maps joint names or places a point would show here as a distance. Why not a
library (yourdfpy, pinocchio): the project dropped yourdfpy and its 22 dependencies, and
pinocchio is large; forty lines of the specification are easier to audit than either.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float64]


def _rpy(r: float, p: float, y: float) -> Matrix:
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return np.asarray(rz @ ry @ rx, dtype=np.float64)  # URDF: fixed-axis roll, pitch, yaw


def _axis_angle(axis: Matrix, q: float) -> Matrix:
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.asarray(np.eye(3) + np.sin(q) * kx + (1 - np.cos(q)) * (kx @ kx), dtype=np.float64)


def _numbers(text: str | None, default: str) -> Matrix:
    return np.array([float(v) for v in (text or default).split()])


class Urdf:
    def __init__(self, path: Path) -> None:
        root = ET.parse(path).getroot()
        self.parent_joint: dict[str, ET.Element] = {}
        for joint in root.iter("joint"):
            child = joint.find("child")
            assert child is not None
            self.parent_joint[child.attrib["link"]] = joint

    def transform(self, link: str, q: Mapping[str, float]) -> Matrix:
        """The 4x4 pose of ``link`` in the root link's frame for joint values ``q`` (by the
        URDF's joint names; absent: 0)."""
        chain = []
        while link in self.parent_joint:
            joint = self.parent_joint[link]
            chain.append(joint)
            parent = joint.find("parent")
            assert parent is not None
            link = parent.attrib["link"]
        t = np.eye(4)
        for joint in reversed(chain):
            origin = joint.find("origin")
            xyz = _numbers(origin.get("xyz") if origin is not None else None, "0 0 0")
            rpy = _numbers(origin.get("rpy") if origin is not None else None, "0 0 0")
            step = np.eye(4)
            step[:3, :3] = _rpy(*rpy)
            step[:3, 3] = xyz
            if joint.attrib["type"] in ("revolute", "continuous"):
                axis = joint.find("axis")
                a = _numbers(axis.get("xyz") if axis is not None else None, "1 0 0")
                turn = np.eye(4)
                turn[:3, :3] = _axis_angle(a, q.get(joint.attrib["name"], 0.0))
                step = step @ turn
            t = t @ step
        return t

    def point(self, link: str, offset: Matrix, q: Mapping[str, float]) -> Matrix:
        t = self.transform(link, q)
        return np.asarray(t[:3, :3] @ offset + t[:3, 3], dtype=np.float64)
