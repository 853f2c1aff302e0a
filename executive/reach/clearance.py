"""What the body comes close to: a point inside a link, the closest pair, a path's first hit.

``executive.seam.body`` answers whether two links or a link and the scene are closer than
the profile's margin. A solver also needs the numbers around that answer: how deep a
place lies inside a link (a cup "inside the torso" is refused before anything is
solved), how much room the closest pair of a solved pose has (``pose solve`` prints it),
and where along a move the first collision is (a ``reach`` refuses a path that has one).

A named point (a hand 9 cm past the wrist) carries no collision geometry in the vendors'
models, so a point inside a link is measured here, by the signed distance to each of the
model's primitive shapes (box, sphere, capsule, cylinder, ellipsoid): the shapes the
collision models we load carry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from executive.seam import body as bodies
from executive.seam.body import Body, Contact, FloatArray

FAR = 1.0  # m: the most a distance query looks for


def signed_distance(body: Body, geom: int, p: FloatArray) -> float:
    """How far ``p`` (base frame) is outside the geom's surface (m; negative: inside, by
    that much). A shape the collision models do not carry (a mesh, a plane) is far."""
    m, d, g = body.model, body.data, body.mujoco.mjtGeom
    local = d.geom_xmat[geom].reshape(3, 3).T @ (p - d.geom_xpos[geom])
    size = m.geom_size[geom]
    kind = int(m.geom_type[geom])
    if kind == g.mjGEOM_BOX:
        q = np.abs(local) - size
        return float(np.linalg.norm(np.maximum(q, 0.0)) + min(float(np.max(q)), 0.0))
    if kind == g.mjGEOM_SPHERE:
        return float(np.linalg.norm(local) - size[0])
    if kind == g.mjGEOM_CAPSULE:
        z = float(np.clip(local[2], -size[1], size[1]))
        return float(np.linalg.norm(local - np.array([0.0, 0.0, z])) - size[0])
    if kind == g.mjGEOM_CYLINDER:
        q = np.array([np.hypot(local[0], local[1]) - size[0], abs(local[2]) - size[1]])
        return float(np.linalg.norm(np.maximum(q, 0.0)) + min(float(np.max(q)), 0.0))
    if kind == g.mjGEOM_ELLIPSOID:  # a close bound, exact on the axes (Quilez's)
        k0 = float(np.linalg.norm(local / size[:3]))
        k1 = float(np.linalg.norm(local / size[:3] ** 2))
        return k0 * (k0 - 1.0) / k1 if k1 > 0 else -float(np.min(size[:3]))
    return float("inf")


def attached(body: Body, link_id: int) -> frozenset[int]:
    """The robot geoms a point of ``link_id`` is attached to by construction: those of its
    own link, else of the nearest link toward the root that has any (a hand's forearm)."""
    m = body.model
    has = {int(m.geom_bodyid[g]): g for g in body.link_of_geom}
    b = link_id
    while b != 0 and b not in has:
        b = int(m.body_parentid[b])
    return frozenset(g for g in body.link_of_geom if int(m.geom_bodyid[g]) == b)


def inside(
    body: Body, p: FloatArray, margin: float, exclude: frozenset[int] = frozenset()
) -> Contact | None:
    """The deepest robot link (not in ``exclude``) that ``p`` lies within ``margin`` of, at
    the body's current pose; None: clear of all of them."""
    worst: tuple[float, int] | None = None
    for g in body.link_of_geom:
        if g in exclude:
            continue
        depth = signed_distance(body, g, p)
        if depth < margin and (worst is None or depth < worst[0]):
            worst = (depth, g)
    if worst is None:
        return None
    return Contact("the point", body.link_of_geom[worst[1]], worst[0])


def closest(body: Body, only: frozenset[int]) -> Contact | None:
    """The closest pair the body checks that has a geom of ``only`` (``Body.moved_by``):
    two links, or a link and a scene box, at its current pose; None: nothing within
    ``FAR``."""
    m, d, mujoco = body.model, body.data, body.mujoco
    fromto = np.zeros(6)
    best: Contact | None = None
    pairs = [(a, b) for a, b in body.pairs if a in only or b in only]
    pairs += [(g, s) for s in body.scene_geoms for g in body.link_of_geom if g in only]
    for a, b in pairs:
        dist = float(mujoco.mj_geomDistance(m, d, a, b, FAR, fromto))
        if dist < FAR and (best is None or dist < best.distance):
            name_b = body.scene_geoms.get(b) or body.link_of_geom[b]
            best = Contact(body.link_of_geom[a], name_b, dist)
    return best


@dataclass(frozen=True)
class Hit:
    """A path's first colliding sample: its number, of how many, the closest pair there."""

    sample: int
    samples: int
    contact: Contact

    def along(self) -> str:
        if self.sample == self.samples:
            return "at the end of the move"
        return f"{100 * self.sample / self.samples:.0f}% of the way there"


def first_hit(
    body: Body, entry: Mapping[str, float], moved: Mapping[str, float], step: float = 0.05
) -> Hit | None:
    """The first sample of the straight joint-space path from ``entry`` to ``moved`` (how a
    minimum-jerk move runs) at which two links that are not neighbours, a link and the
    scene, or a named point and the scene come closer than the profile's margin; None for
    a clear path. Joints in neither are at the body's rest. Only pairs with a link the
    move moves are measured: the others keep their distance."""
    start = {j: entry.get(j, float(body.rest[body.qpos_of[j]])) for j in moved}
    changing = body.moved_by(j for j in moved if moved[j] != start[j])
    if not changing:
        return None
    samples = bodies.path_samples(start, moved, step)
    for k, sample in enumerate(samples, 1):
        body.pose({**entry, **sample})
        hits = body.collisions(only=changing) + body.scene_hits(only=changing)
        if hits:
            return Hit(k, len(samples), min(hits, key=lambda c: c.distance))
    return None
