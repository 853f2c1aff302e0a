"""The upper stream carries the body model's gravity torque as feed-forward.

MIT mode is ``tau_ff + kp (q* - q) + kd (dq* - dq)``: with ``tau_ff`` 0 an Atom arm held
out sideways at the SDK's kp 200 settles 0.05-0.07 rad short of its target, past a move's
tolerance, and every shipped arm mission timed out on the simulated Atom's physics. The
feed-forward is the vendor model's, clipped per joint to the profile's ``max_nm``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from executive.seam.body import BodySpec, Gravity
from executive.seam.profile import load_profile

PROFILE = load_profile()
UPPER = list(PROFILE.topics["upper"])


def arm_out() -> np.ndarray:
    q = np.zeros(len(UPPER))
    q[UPPER.index("right_shoulder_roll")] = -1.39  # the right upper arm level, out sideways
    q[UPPER.index("right_shoulder_yaw")] = -1.57
    return q


def test_an_arm_held_out_needs_the_torque_of_its_weight() -> None:
    tau = Gravity(PROFILE, UPPER)(arm_out())
    roll = tau[UPPER.index("right_shoulder_roll")]
    # about 5 kg of arm, its centre of mass some 0.2 m out: 10 N m, pushing the arm up (-)
    assert -13.0 < roll < -8.0
    assert tau[UPPER.index("torso")] == 0.0  # the torso turns about the vertical


def test_the_feedforward_is_clipped_to_the_profile_maximum() -> None:
    body = PROFILE.body
    assert isinstance(body, BodySpec) and body.feedforward == {"upper"}
    weak = dataclasses.replace(PROFILE, body=dataclasses.replace(body, feedforward_max=2.0))
    tau = Gravity(weak, UPPER)(arm_out())
    assert np.max(np.abs(tau)) == pytest.approx(2.0)


def test_joints_the_model_lacks_get_none() -> None:
    hands = list(PROFILE.topics["hands"])
    assert not np.any(Gravity(PROFILE, hands)(np.full(len(hands), 1.0)))


def test_a_bad_feedforward_names_the_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from executive.seam.profile import ProfileError

    path = tmp_path / "p.yaml"
    path.write_text(
        "extends: atom-sdk\nname: p\nbody:\n  model: atom.urdf\n  joint_pattern: '{}_joint'\n"
        "  gravity_feedforward: {streams: [upper], max_nm: -1}\n"
    )
    with pytest.raises(ProfileError, match=r"body\.gravity_feedforward\.max_nm"):
        load_profile(path)
