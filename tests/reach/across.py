"""The move the path tests plan: the right arm from a tuck in front of the chest to across
the torso, whose straight joint path goes 2 cm into it (the Atom's body; validation refuses
it without ``path: plan``). One place for the tests that plan it."""

from __future__ import annotations

from executive.seam.profile import load_profile

PROFILE = load_profile("atom-sdk")
ARM = tuple(PROFILE.joint_sets["right_arm"])
TUCK = dict.fromkeys(ARM, 0.0) | {"right_shoulder_pitch": 0.5, "right_elbow_pitch": -0.5}
ACROSS = {
    "right_shoulder_pitch": -0.78,
    "right_shoulder_roll": 0.05,
    "right_shoulder_yaw": 1.69,
    "right_elbow_pitch": 0.13,
    "right_elbow_roll": -0.03,
    "right_wrist_pitch": -0.09,
    "right_wrist_roll": 0.17,
}
