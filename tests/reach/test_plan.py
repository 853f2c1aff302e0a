"""Paths around the body (executive/reach/plan.py) on the Atom's vendor model: a move
whose straight joint path goes through the torso gets a path that keeps clear by the
body's own check, within the joint limits, the same every time; a clear move is not
planned; a plan out of time, or a goal in the body, is no path, saying why.

The move: the right hand from the right of the chest (the upper arm back, the elbow
tucked) across to the front of the left side. Its straight path drives the forearm 26 mm
into the torso; the sim's physics collides the same pairs (tests/integration)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Mapping

import numpy as np
import pytest

from executive.mission.body_checks import duration
from executive.reach import clearance, ik
from executive.reach import plan as paths
from executive.seam import body as bodies
from executive.seam.profile import load_profile
from tests.reach.across import ACROSS, ARM, TUCK

PROFILE = load_profile("atom-sdk")
HOME = {j: 0.0 for j in PROFILE.joints} | dict(PROFILE.body.rest)  # type: ignore[union-attr]
START = HOME | TUCK


@pytest.fixture(scope="module")
def body() -> bodies.Body:
    return bodies.load(PROFILE)


def deepest(body: bodies.Body, start: Mapping[str, float], goal: Mapping[str, float]) -> float:
    """The least distance between the arm and the rest of the body along the straight
    path (m; negative: overlapping)."""
    moved = body.moved_by(ARM)
    least = np.inf
    for sample in bodies.path_samples(start, goal):
        body.pose({**start, **sample})
        for c in body.collisions(margin=0.5, only=moved):
            least = min(least, c.distance)
    return float(least)


def test_the_straight_path_across_goes_through_the_torso(body: bodies.Body) -> None:
    hit = clearance.first_hit(body, START, ACROSS)
    assert hit is not None and {hit.contact.a, hit.contact.b} == {
        "torso_link",
        "right_elbow_pitch_link",
    }
    assert deepest(body, START, ACROSS) < -0.02  # not a graze: 2 cm into the torso


def test_the_planned_path_keeps_clear_within_the_limits(body: bodies.Body) -> None:
    path = paths.plan(body, PROFILE, START, ACROSS)
    assert path.ok and path.planned, path.problem
    assert path.straight is not None  # it says why it planned
    assert path.waypoints[-1] == ACROSS
    assert 1 < len(path.waypoints) <= 6  # simplified: a few segments, not the raw tree
    here = dict(START)
    for wp in path.waypoints:
        assert set(wp) == set(ARM)
        for j, q in wp.items():
            assert PROFILE.joints[j].lower <= q <= PROFILE.joints[j].upper
        assert clearance.first_hit(body, here, wp) is None  # validation's check, per segment
        assert deepest(body, here, wp) > body.spec.margin
        here.update(wp)
    # paced by the caps, segment by segment: longer than the straight move, not absurdly
    assert 1.0 < duration(PROFILE, path, START) < 10.0


def test_the_same_move_gives_the_same_path_after_other_plans(body: bodies.Body) -> None:
    first = paths.plan(body, PROFILE, START, ACROSS)
    other = paths.plan(body, PROFILE, START, ACROSS, seed=7)  # the generators move on
    again = paths.plan(body, PROFILE, START, ACROSS)
    assert first.waypoints == again.waypoints
    assert other.ok


def test_the_same_move_gives_the_same_path_in_another_process(body: bodies.Body) -> None:
    here = paths.plan(body, PROFILE, START, ACROSS)
    code = textwrap.dedent(
        f"""
        from executive.reach import plan as paths
        from executive.seam import body as bodies
        from executive.seam.profile import load_profile
        p = load_profile("atom-sdk")
        print(paths.plan(bodies.load(p), p, {START!r}, {ACROSS!r}).waypoints)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == str(here.waypoints)


def test_a_clear_move_is_not_planned(body: bodies.Body) -> None:
    path = paths.plan(body, PROFILE, HOME, TUCK)
    assert path.ok and not path.planned and path.straight is None
    assert path.waypoints == (TUCK,)


def test_no_path_within_the_budget_is_said(body: bodies.Body) -> None:
    path = paths.plan(body, PROFILE, START, ACROSS, budget=1e-6)
    assert not path.ok and path.waypoints == ()
    assert path.problem == "no path around the body found within 1e-06 s"


def test_a_goal_inside_the_body_is_no_path(body: bodies.Body) -> None:
    into = ACROSS | {"right_shoulder_yaw": 2.4, "right_elbow_pitch": -0.6}
    path = paths.plan(body, PROFILE, START, into)
    assert not path.ok
    assert path.problem.startswith("the goal itself is not clear: ")
    assert "torso_link" in path.problem


def test_a_scene_box_is_planned_around() -> None:
    """The arm hangs at rest; its hand goes to a cup ahead; a 6 cm box stands where the
    straight path passes (tests/behaviours/test_reach.py): the plan goes around it."""
    board = bodies.Scene((bodies.Box("board", (0.345, -0.297, -0.137), (0.06, 0.06, 0.06)),))
    solver = ik.Solver(PROFILE, board)
    cup = solver.solve([ik.Goal("right_hand", (0.45, -0.20, 0.10))], ARM, HOME)
    assert cup.ok, cup.problem
    body = solver.body
    hit = clearance.first_hit(body, HOME, cup.joints)
    assert hit is not None and hit.contact.b == "board"
    path = paths.plan(body, PROFILE, HOME, cup.joints)
    assert path.ok and path.planned, path.problem
    here = dict(HOME)
    for wp in path.waypoints:
        assert clearance.first_hit(body, here, wp) is None
        here.update(wp)


@pytest.mark.serial
def test_a_plan_does_not_stall_another_thread(body: bodies.Body) -> None:
    """A tick-like thread at 20 ms keeps its period while plans run back to back on
    another (the planner calls the check from C++, and Python switches threads between
    checks): no gap near a plan's length. Ordinary threads, not SCHED_FIFO: serial."""
    paths.plan(body, PROFILE, START, ACROSS)  # OMPL imported (its library loads once)
    done = threading.Event()
    plans: list[float] = []

    def planner() -> None:
        mine = bodies.load(PROFILE)
        seed = 100
        while not done.is_set():
            path = paths.plan(mine, PROFILE, START, ACROSS, seed=seed, budget=2.0)
            plans.append(path.seconds)
            seed += 1

    thread = threading.Thread(target=planner)
    thread.start()
    late = []
    try:
        due = time.monotonic()
        for _ in range(75):
            due += 0.02
            time.sleep(max(0.0, due - time.monotonic()))
            late.append(time.monotonic() - due)
    finally:
        done.set()
        thread.join(timeout=10)
    assert len(plans) >= 10, plans  # the planner was busy throughout
    # held for a whole plan, the tick would wait about half a plan's time at every turn
    assert float(np.median(late)) < 0.005, (np.median(late), np.median(plans))
    assert max(late) < 0.1, (max(late), max(plans))
