"""A body's link tree, each link's transform from its parent, and its collision shapes.

What a viewer needs to draw a robot from its model (``executive.seam.body``): the links
as a tree of frames rooted at the model's root link (the base frame), where each link is
relative to its parent for given joint values, and the primitive shapes of the collision
geometry attached to each link. The run's MCAP file carries them as Foxglove transforms
and a scene (``executive.records.bodychannels``); ``pose preview`` draws them.

Robot-neutral: everything comes from the compiled model. Kept apart from ``body.py`` so
validation and the simulator do not carry drawing concerns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from executive.seam.body import Body, FloatArray


@dataclass(frozen=True)
class Link:
    """A link of the model below its root: its MuJoCo body id and its parent's."""

    name: str
    parent: str
    id: int
    parent_id: int


@dataclass(frozen=True)
class Shape:
    """A collision primitive on ``link``: ``kind`` is ``box``, ``sphere``, ``cylinder``,
    ``capsule`` or ``ellipsoid``; ``size`` full extents in the shape's frame (m: a box's
    x, y, z; a sphere's or a cylinder's diameter in x and y and its length in z; a
    capsule's cylinder, without its end caps); ``position`` and ``rotation`` (w, x, y, z)
    in the link's frame."""

    link: str
    kind: str
    size: tuple[float, float, float]
    position: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


def _name(body: Body, bid: int) -> str:
    return str(body.mujoco.mj_id2name(body.model, body.mujoco.mjtObj.mjOBJ_BODY, bid))


def root(body: Body) -> str:
    """The model's root link: the base frame every position of ``body`` is in."""
    return _name(body, _root_id(body))


def _root_id(body: Body) -> int:
    m = body.model
    roots = [b for b in range(1, m.nbody) if int(m.body_parentid[b]) == 0]
    return roots[0]


@dataclass(frozen=True)
class LinkTree:
    """The links below the root, each after its parent, and their body ids as arrays
    (what ``local_frames`` indexes with, many times a second)."""

    links: tuple[Link, ...]
    child: npt.NDArray[np.intp] = field(repr=False)
    parent: npt.NDArray[np.intp] = field(repr=False)


def links(body: Body) -> list[Link]:
    """Every link below the root, each after its parent (MuJoCo numbers bodies depth
    first), with its parent link."""
    m = body.model
    top = _root_id(body)
    out = []
    for b in range(top + 1, m.nbody):
        parent = int(m.body_parentid[b])
        if parent == 0:
            continue  # another tree hung off the world: not the robot's
        out.append(Link(_name(body, b), _name(body, parent), b, parent))
    return out


def tree(body: Body) -> LinkTree:
    """The body's :func:`links` with their ids ready for :func:`local_frames`."""
    found = tuple(links(body))
    return LinkTree(
        found,
        np.array([link.id for link in found], dtype=np.intp),
        np.array([link.parent_id for link in found], dtype=np.intp),
    )


def _quat_conj_mul(p: FloatArray, q: FloatArray) -> FloatArray:
    """conj(p) * q for rows of unit quaternions (w, x, y, z)."""
    pw, pv = p[:, :1], -p[:, 1:]
    qw, qv = q[:, :1], q[:, 1:]
    w = pw * qw - np.sum(pv * qv, axis=1, keepdims=True)
    v = pw * qv + qw * pv + np.cross(pv, qv)
    return np.asarray(np.hstack([w, v]), dtype=np.float64)


def local_frames(body: Body, links: LinkTree) -> tuple[FloatArray, FloatArray]:
    """Each link of ``links`` relative to its parent at the body's current pose (after
    ``Body.pose``): translations (n, 3, m) and rotations (n, 4, w x y z)."""
    d = body.data
    child, parent = links.child, links.parent
    rot_parent = d.xmat[parent].reshape(-1, 3, 3)
    offset = d.xpos[child] - d.xpos[parent]
    translation = np.einsum("nji,nj->ni", rot_parent, offset)  # R_parent^T (x_c - x_p)
    rotation = _quat_conj_mul(np.asarray(d.xquat[parent]), np.asarray(d.xquat[child]))
    return np.asarray(translation, dtype=np.float64), rotation


def shapes(body: Body) -> list[Shape]:
    """The robot's collision primitives (the scene's obstacles are not the robot's)."""
    m, geom = body.model, body.mujoco.mjtGeom
    out = []
    for g, link in sorted(body.link_of_geom.items()):
        kind = int(m.geom_type[g])
        s = [float(v) for v in m.geom_size[g]]
        if kind == geom.mjGEOM_BOX:
            name, size = "box", (2 * s[0], 2 * s[1], 2 * s[2])
        elif kind == geom.mjGEOM_SPHERE:
            name, size = "sphere", (2 * s[0], 2 * s[0], 2 * s[0])
        elif kind == geom.mjGEOM_CYLINDER:
            name, size = "cylinder", (2 * s[0], 2 * s[0], 2 * s[1])
        elif kind == geom.mjGEOM_CAPSULE:
            name, size = "capsule", (2 * s[0], 2 * s[0], 2 * s[1])
        elif kind == geom.mjGEOM_ELLIPSOID:
            name, size = "ellipsoid", (2 * s[0], 2 * s[1], 2 * s[2])
        else:
            continue  # a plane or a mesh: the collision models we load carry neither
        p, q = m.geom_pos[g], m.geom_quat[g]
        out.append(
            Shape(
                link,
                name,
                size,
                (float(p[0]), float(p[1]), float(p[2])),
                (float(q[0]), float(q[1]), float(q[2]), float(q[3])),
            )
        )
    return out
