"""The look at start for what a previous instance left (executive/service/recovery.py), on
the in-process rig: the real Atom adapter and executive over real DDS, a robot-side writer."""

from __future__ import annotations

import pytest

from executive.service.recovery import LOOK_FOR_S, WHY, PreviousInstance
from tests.rigs import Rig, rig  # noqa: F401 - the fixture

pytestmark = pytest.mark.dds


def test_the_gate_holds_until_the_look_and_a_robot_never_heard_lifts_it(rig: Rig) -> None:  # noqa: F811
    now = [100.0]
    previous = PreviousInstance(rig.ex, "release", clock=lambda: now[0], alone=lambda: None)
    assert rig.ex.recovering == WHY + "the robot not heard yet"
    previous.on_tick()  # heard (the rig has published state), the peer watch not decided
    assert rig.ex.recovering.startswith(WHY + "found nothing left commanding it; waiting")
    assert rig.ex.reset() == (False, "refused: not ready: " + rig.ex.recovering)
    now[0] += LOOK_FOR_S + 0.1
    previous.on_tick()
    assert previous.outcome == "not_heard" and rig.ex.recovering == ""
    assert rig.ex.blockers() == []


def test_what_is_sent_at_once_is_tried_again_once_the_robot_is_heard(rig: Rig) -> None:  # noqa: F811
    """A send at once that the wire refused (a link not up yet) is an error only until the
    second one, when the robot is first heard, goes out; each act is listed once."""
    adapter = rig.ex.adapter
    calls: list[int] = []

    def flaky() -> tuple[str, ...]:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("no route yet")
        return ("zero axes sent",)

    adapter.make_safe_now = flaky  # type: ignore[method-assign]
    previous = PreviousInstance(rig.ex, "release", alone=lambda: True)
    previous.act_now()
    assert previous.problems() == [
        "previous instance: stopping the robot at once: OSError: no route yet"
    ]
    previous.on_tick()
    assert len(calls) == 2 and previous.problems() == []
    assert previous.outcome == "made_safe" and previous.sent == ["zero axes sent"]
    assert previous.first_sent_s is not None and previous.after_s is not None


def test_report_sends_nothing_at_once(rig: Rig) -> None:  # noqa: F811
    adapter = rig.ex.adapter
    adapter.make_safe_now = lambda: pytest.fail("report sends nothing")  # type: ignore[method-assign]
    previous = PreviousInstance(rig.ex, "report", alone=lambda: True)
    previous.act_now()
    previous.on_tick()
    assert previous.outcome == "reported" and previous.sent == [] and rig.ex.recovering == ""
