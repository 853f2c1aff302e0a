"""The body's link tree and local transforms (executive/seam/bodyframes.py): composing
each link's transform from its parent gives MuJoCo's own world pose of every link."""

from __future__ import annotations

import numpy as np

from executive.seam import body, bodyframes
from executive.seam.body import FloatArray
from executive.seam.profile import load_profile


def _rot(q: FloatArray) -> FloatArray:
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_local_frames_compose_to_the_world_pose() -> None:
    b = body.load(load_profile("atom-sdk"))
    rng = np.random.default_rng(7)
    b.pose({n: float(rng.uniform(-0.5, 0.5)) for n in b.qpos_of})
    tree = bodyframes.tree(b)
    translation, rotation = bodyframes.local_frames(b, tree)
    top = bodyframes.root(b)
    assert top == "pelvis"
    world = {top: (np.zeros(3), np.eye(3))}
    for link, t, q in zip(tree.links, translation, rotation, strict=True):
        assert link.parent in world  # parents come first
        p, r = world[link.parent]
        world[link.name] = (p + r @ t, r @ _rot(q))
        pos, mat = b.link_pose(link.name)
        np.testing.assert_allclose(world[link.name][0], pos, atol=1e-9)
        np.testing.assert_allclose(world[link.name][1], mat, atol=1e-9)
    assert len(world) == b.model.nbody - 1  # every link but the world


def test_shapes_are_the_collision_boxes() -> None:
    b = body.load(load_profile("atom-sdk"))
    by_link = {s.link: s for s in bodyframes.shapes(b)}
    assert by_link["torso_link"].kind == "box"
    assert by_link["torso_link"].size == (0.26, 0.24, 0.4)  # the URDF's box, full extents
    assert by_link["right_elbow_pitch_link"].position == (0.16, 0.0, 0.0)
