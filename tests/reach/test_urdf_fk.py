"""The test-only forward kinematics (tests/reach/urdf_fk.py) agrees with the body model's
(executive/seam/body.py, MuJoCo) on the Atom's hands and gaze: the two share no code, so
either being wrong shows here. The reach tests then hold solutions to the witness."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from executive.seam import body as bodies
from executive.seam.profile import load_profile

from .urdf_fk import Urdf

ROOT = Path(__file__).resolve().parents[2]
URDF = Urdf(ROOT / "executive" / "resources" / "atom.urdf")
PROFILE_DATA = yaml.safe_load(
    (ROOT / "executive" / "robots" / "profiles" / "atom-sdk.yaml").read_text()
)["body"]


def urdf_joint(name: str) -> str:
    """A profile joint's URDF name, read from the profile's data (not its loader)."""
    return str(PROFILE_DATA["joints"].get(name, PROFILE_DATA["joint_pattern"].format(name)))


def witness(point: str, q: dict[str, float]) -> np.ndarray:  # type: ignore[type-arg]
    """Where ``point`` is for profile joint values ``q`` by the URDF alone (others at 0)."""
    spec = PROFILE_DATA["points"][point]
    return URDF.point(
        spec["link"],
        np.array(spec.get("offset", [0, 0, 0]), dtype=float),
        {urdf_joint(j): v for j, v in q.items()},
    )


@pytest.mark.parametrize("seed", range(8))
def test_the_witness_and_the_body_agree(seed: int) -> None:
    profile = load_profile("atom-sdk")
    rng = np.random.default_rng(seed)
    upper = [j for j in profile.topics["upper"]]
    q = {j: float(rng.uniform(profile.joints[j].lower, profile.joints[j].upper)) for j in upper}
    body = bodies.load(profile)
    body.set_qpos(np.array(body.model.qpos0))  # the body at zero, as the witness's default
    body.pose(q, np.array(body.model.qpos0))
    for point in ("left_hand", "right_hand", "gaze"):
        assert np.linalg.norm(body.point(point) - witness(point, q)) < 1e-6, point
