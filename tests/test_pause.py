"""A pause's rest watch and how status and watch show a pause (issue 23, 1).

``RestWatch`` fed a body ringing down the way the simulated Atom's torso does after a stop
mid-reach (a 0.26 s cycle decaying over seconds) finds it at rest only once a whole
window moves less than ``REST_SPREAD_RAD``, then keeps the largest drift; the status
line says PAUSING until then and PAUSED since the rest after.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import numpy.typing as npt
import py_trees

from behaviours.actions.basic import Wait
from executive.core.rest import REST_SPREAD_RAD, REST_WINDOW_S, RestWatch
from executive.operator import watch
from executive.operator.lines import paused_line, summary
from executive.service.status import active_node, state_line, status_document
from tests.rigs import Rig
from tests.test_watch import status as watch_status

TICK = 0.02  # the executive's 50 Hz


def _ringing(t: float, amplitude: float = 10e-3, tau: float = 1.0) -> npt.NDArray[np.float64]:
    """Three joints ringing down about 0.3 rad, one of them out of phase."""
    swing = amplitude * math.exp(-t / tau) * math.sin(2 * math.pi * t / 0.26)
    return np.array([0.3 + swing, 0.3 - 0.5 * swing, 0.3])


def test_rest_is_found_only_once_a_whole_window_is_still_then_drift_is_kept() -> None:
    rest = RestWatch()
    t = 0.0
    while not rest.add(t, _ringing(t), still=True):
        t += TICK
        assert t < 10.0, "never at rest"
    found = t
    assert rest.at_rest and rest.rest_at == found and rest.pose is not None
    # the swing's peak over the last window was below half the spread: 10 mrad e^-t/1
    assert 10e-3 * math.exp(-(t - REST_WINDOW_S)) < REST_SPREAD_RAD
    assert 10e-3 * math.exp(-(t - REST_WINDOW_S - 2 * TICK)) > REST_SPREAD_RAD / 2
    assert rest.drift <= REST_SPREAD_RAD / 2
    for _ in range(100):  # held: it rings down further, then a joint is pushed 2 mrad
        t += TICK
        rest.add(t, _ringing(t), still=True)
    assert rest.drift < REST_SPREAD_RAD
    rest.add(t + TICK, rest.pose + np.array([0.0, 0.0, 2e-3]), still=True)
    assert math.isclose(rest.drift, 2e-3, rel_tol=1e-9)
    assert rest.rest_at == found  # found once


def test_no_rest_while_the_base_drives_or_a_joint_is_unmeasured() -> None:
    rest = RestWatch()
    still = np.zeros(3)
    for i in range(100):
        assert not rest.add(i * TICK, still, still=False)  # the base still drives its task
    for i in range(100, 200):  # every fourth tick a held joint has no fresh state
        assert not rest.add(i * TICK, None if i % 4 == 3 else still, still=True)
    ticks = [rest.add(i * TICK, still, still=True) for i in range(200, 240)]
    # a whole window after the last gap (199), give or take a tick of float rounding
    assert ticks.index(True) in (round(REST_WINDOW_S / TICK), round(REST_WINDOW_S / TICK) + 1)


def test_nothing_held_is_at_rest_once_the_base_has_stopped() -> None:
    """A robot with no joint stream engaged (the GRX walking): rest is the base's alone."""
    rest = RestWatch()
    empty = np.zeros(0)
    assert not rest.add(0.0, empty, still=False)
    assert [rest.add(t * TICK, empty, still=True) for t in range(1, 23)].count(True) == 1
    assert rest.drift == 0.0


PAUSING = {
    "since": "2026-11-27T08:00:00.000Z",
    "for_s": 0.8,
    "by": "operator",
    "what": ["joint stream upper", "base task (PAUSE_TASK)", "timeouts and waits"],
    "held_since": None,
    "rest_after_s": None,
    "drift_mrad": None,
}
HELD = {
    **PAUSING,
    "for_s": 5.5,
    "held_since": "2026-11-27T08:00:03.400Z",
    "rest_after_s": 3.4,
    "drift_mrad": 0.27,
}


def test_the_paused_line_says_pausing_then_paused_since_rest() -> None:
    assert paused_line(PAUSING) == (
        "PAUSING since 2026-11-27T08:00:00.000Z (0.8 s; coming to rest): joint stream upper, "
        "base task (PAUSE_TASK), timeouts and waits"
    )
    assert paused_line(HELD) == (
        "PAUSED since 2026-11-27T08:00:03.400Z (asked 2026-11-27T08:00:00.000Z, 3.4 s to rest,"
        " 5.5 s paused; joints within 0.27 mrad): joint stream upper, base task (PAUSE_TASK),"
        " timeouts and waits"
    )
    old = {k: HELD[k] for k in ("since", "for_s", "by", "what")}  # da3f944's document
    assert paused_line(old).startswith("PAUSED since 2026-11-27T08:00:00.000Z (5.5 s): ")


def _with_document(paused: dict[str, Any]) -> Any:
    document = {"schema": "atom-executive/status", "version": 1, "paused": paused}
    return watch_status(document=json.dumps(document))


def test_status_and_watch_show_the_pause() -> None:
    text = summary(_with_document(HELD))
    assert "paused: " + paused_line(HELD) in text.splitlines()
    lines = watch.summary_lines(_with_document(HELD))
    (line,) = [line for line in lines if line.plain.startswith("paused: ")]
    assert line.plain == "paused: " + paused_line(HELD)
    assert any(span.style == "bold yellow" for span in line.spans)
    pausing = summary(_with_document(PAUSING)).splitlines()
    assert [p for p in pausing if p.startswith("paused:")] == ["paused: " + paused_line(PAUSING)]
    assert not [p for p in summary(watch_status()).splitlines() if p.startswith("paused")]


def test_a_forged_pause_is_printed_as_text() -> None:
    forged = {**HELD, "what": ["\x1b[2Jx"], "held_since": "\x07now"}
    text = summary(_with_document(forged))
    assert not set(text) & {"\x1b", "\x07"}, repr(text)


def test_a_real_executive_says_pausing_then_paused_once_at_rest(rig: Rig) -> None:
    """The rig's robot stands still (its state never changes) and nothing streams: the
    pause is PAUSING until a whole rest window has been measured, then PAUSED since."""
    rig.ex.start_mission("greet", py_trees.composites.Sequence("greet", True, [Wait(30)]))
    rig.tick_until(lambda: rig.ex.run is not None and active_node(rig.ex.tree.root) != "")
    ok, said = rig.ex.pause("test")
    assert ok and "timeouts and waits" in said, said
    assert state_line(rig.ex).startswith("RUNNING PAUSING greet")
    paused = status_document(rig.ex)["paused"]
    assert paused["held_since"] is None and paused["drift_mrad"] is None
    rig.tick_until(lambda: rig.ex.paused is not None and rig.ex.paused.rest.at_rest)
    assert state_line(rig.ex).startswith("RUNNING PAUSED greet")
    paused = status_document(rig.ex)["paused"]
    assert paused["held_since"] >= paused["since"] and paused["drift_mrad"] == 0.0
    assert REST_WINDOW_S <= paused["rest_after_s"] < REST_WINDOW_S + 1.0
    assert rig.ex.resume()[0]
    assert rig.ex.paused is None and state_line(rig.ex).startswith("RUNNING greet")
