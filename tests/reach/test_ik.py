"""Inverse kinematics on the Atom's vendor model (executive/reach/ik.py): a place in, the
group's joints out, and when there is no answer, how far the best stays and what stops it.

Positions are checked by the body's own forward kinematics here; the proof against a
forward kinematics that shares no code with the project is tests/integration/test_reach.py
(on the simulated robot) and tests/reach/test_urdf_fk.py."""

from __future__ import annotations

import numpy as np
import pytest

from executive.reach import clearance
from executive.reach.ik import Goal, ReachError, Solver
from executive.seam import body as bodies
from executive.seam.profile import load_profile

PROFILE = load_profile("atom-sdk")


@pytest.fixture(scope="module")
def solver() -> Solver:
    return Solver(PROFILE)


def arm(solver: Solver) -> list[str]:
    return solver.joints_of("right_arm")


# spread over the right arm's workspace: in front low and high, out to the side, up, across
WORKSPACE = [
    (0.45, -0.20, 0.10),
    (0.55, -0.25, 0.22),
    (0.30, -0.50, 0.00),
    (0.35, -0.10, -0.10),
    (0.00, -0.47, 0.71),
    (0.25, -0.40, 0.40),
    (0.50, -0.05, 0.30),
]


@pytest.mark.parametrize("at", WORKSPACE)
def test_a_place_in_the_workspace_is_solved_within_a_millimetre(
    solver: Solver, at: tuple[float, float, float]
) -> None:
    sol = solver.solve([Goal("right_hand", at)], arm(solver), {})
    assert sol.ok, sol.problem
    assert sol.residual < 0.002
    body = bodies.load(PROFILE)
    body.pose(sol.joints)
    assert np.linalg.norm(body.point("right_hand") - np.array(at)) < 0.002
    assert body.collisions() == [] and body.scene_hits() == []
    for name, q in sol.joints.items():  # inside the profile's limits, tighter than the URDF's
        assert PROFILE.joints[name].within(q), (name, q)
    assert set(sol.joints) == set(arm(solver))  # the group, nothing else


def test_the_same_goal_gives_the_same_joints_from_a_fresh_solver(solver: Solver) -> None:
    goal = [Goal("right_hand", (0.45, -0.20, 0.10))]
    first = solver.solve(goal, arm(solver), {}).joints
    again = Solver(PROFILE).solve(goal, arm(solver), {}).joints
    assert first == again


def test_the_seed_keeps_the_elbow_where_the_author_put_it(solver: Solver) -> None:
    """The posture task pulls toward the seed: a seed with the elbow out gives a solution
    near it, not the one the rest pose gives (no flipping between runs of one file)."""
    goal = [Goal("right_hand", (0.35, -0.30, 0.15))]
    plain = solver.solve(goal, arm(solver), {})
    seeded = solver.solve(
        goal, arm(solver), {"right_shoulder_roll": -0.9, "right_shoulder_yaw": 0.8}
    )
    assert plain.ok and seeded.ok
    assert seeded.joints["right_shoulder_roll"] < plain.joints["right_shoulder_roll"] - 0.2


def test_a_free_axis_leaves_that_coordinate_where_the_seed_puts_it(solver: Solver) -> None:
    sol = solver.solve([Goal("right_hand", (0.45, -0.20, None))], arm(solver), {})
    assert sol.ok
    x, y, _ = sol.points["right_hand"]
    assert abs(x - 0.45) < 0.002 and abs(y + 0.20) < 0.002


def test_both_hands_and_the_gaze(solver: Solver) -> None:
    both = solver.solve(
        [Goal("right_hand", (0.4, -0.15, 0.15)), Goal("left_hand", (0.4, 0.15, 0.15))],
        solver.joints_of("arms"),
        {},
    )
    assert both.ok and both.residual < 0.002
    # the Atom is left-right symmetric: so is the solution
    assert both.joints["left_elbow_pitch"] == pytest.approx(both.joints["right_elbow_pitch"])
    assert both.joints["left_shoulder_roll"] == pytest.approx(-both.joints["right_shoulder_roll"])
    look = solver.solve([Goal("gaze", (0.4, 0.2, 0.2))], solver.joints_of("head"), {})
    assert look.ok and look.joints["head_yaw"] > 0.2 and look.joints["head_pitch"] > 0.2


def test_out_of_reach_says_how_far_and_how_long_the_arm_is(solver: Solver) -> None:
    sol = solver.solve([Goal("right_hand", (1.0, -0.2, 0.1))], arm(solver), {})
    assert not sol.ok and sol.stops == "out of reach"
    assert "stays 388 mm from (+1.000, -0.200, +0.100)" in sol.problem
    assert "1.03 m from right_shoulder_pitch's axis" in sol.problem
    assert "reach 0.72 m" in sol.problem
    assert sol.residual == pytest.approx(0.388, abs=0.002)


def test_a_place_inside_the_torso_is_refused_before_solving(solver: Solver) -> None:
    sol = solver.solve([Goal("right_hand", (0.0, 0.0, 0.1))], arm(solver), {})
    assert not sol.ok and sol.stops == "inside the body" and sol.iterations == 0
    assert "is inside torso_link (100 mm deep)" in sol.problem


def test_a_joint_limit_that_stops_the_hand_is_named() -> None:
    """The elbow may not bend past -0.87 rad (the profile's limit): a hand asked to come
    up to the shoulder, the upper arm only allowed to pitch, stops at that limit."""
    solver = Solver(PROFILE)
    sol = solver.solve(
        [Goal("right_hand", (0.05, -0.24, 0.35))],
        ["right_shoulder_pitch", "right_elbow_pitch"],
        {},
    )
    assert not sol.ok and sol.stops == "a joint limit", sol.problem
    assert "right_elbow_pitch at its lower limit -0.87" in sol.problem


def test_a_collision_that_stops_the_hand_is_named(solver: Solver) -> None:
    """The right hand sent across the belly to the left: the forearm meets the torso."""
    sol = solver.solve([Goal("right_hand", (0.16, 0.25, 0.05))], arm(solver), {})
    assert not sol.ok and "collision" in sol.stops, sol.problem
    assert "torso_link" in sol.problem


def test_the_closest_pair_at_a_solution(solver: Solver) -> None:
    sol = solver.solve([Goal("right_hand", (0.45, -0.20, 0.10))], arm(solver), {})
    assert sol.closest is not None
    assert sol.closest.distance > PROFILE.body.margin  # type: ignore[union-attr]
    assert {sol.closest.a, sol.closest.b} & {"right_elbow_pitch_link", "right_shoulder_roll_link"}


def test_questions_it_cannot_be_asked(solver: Solver) -> None:
    with pytest.raises(ReachError, match="no point 'right_foot'"):
        solver.solve([Goal("right_foot", (0.4, 0.0, 0.0))], arm(solver), {})
    with pytest.raises(ReachError, match="not a place"):
        solver.solve([Goal("right_hand", (float("nan"), 0.0, 0.0))], arm(solver), {})
    with pytest.raises(ReachError, match="moves gaze"):
        solver.solve([Goal("gaze", (0.4, 0.0, 0.3))], arm(solver), {})
    with pytest.raises(ReachError, match="does not carry"):
        solver.joints_of("hands")
    with pytest.raises(ReachError, match="not a joint group"):
        solver.joints_of("tail")


def test_a_scene_box_is_avoided() -> None:
    """A post where the forearm would be without it (16 mm into it): the solution bends
    around it, keeping the collision limit's distance (the margin and 5 mm)."""
    goal = [Goal("right_hand", (0.45, -0.20, 0.10))]
    scene = bodies.Scene((bodies.Box("post", (0.22, -0.28, 0.06), (0.08, 0.06, 0.2)),))
    solver = Solver(PROFILE, scene)
    plain = Solver(PROFILE).solve(goal, arm(solver), {})
    solver.body.pose(plain.joints)
    assert [c.b for c in solver.body.scene_hits()] == ["post"]
    sol = solver.solve(goal, arm(solver), {})
    assert sol.ok, sol.problem
    solver.body.pose(sol.joints)
    assert solver.body.scene_hits() == []
    assert sol.closest is not None and sol.closest.b == "post"
    assert sol.closest.distance > PROFILE.body.margin  # type: ignore[union-attr]


def test_signed_distance_of_a_point_to_a_box() -> None:
    body = bodies.load(PROFILE)
    torso = next(g for g, link in body.link_of_geom.items() if link == "torso_link")
    assert clearance.signed_distance(body, torso, np.array([0.0, 0.0, 0.2])) == pytest.approx(-0.12)
    assert clearance.signed_distance(body, torso, np.array([0.33, 0.0, 0.2])) == pytest.approx(0.2)
