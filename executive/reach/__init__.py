"""Reach: where the body goes, given places instead of angles.

``ik`` solves a profile group's joints for points of the body (a hand, the gaze) on the
vendor's model with mink; ``clearance`` measures what the body comes close to (points
inside links, the closest pair, a path's first collision). Robot-neutral: everything
robot-specific is the profile's ``body:``.
"""
