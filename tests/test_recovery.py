"""The look at start for what a previous instance left (executive/service/recovery.py), on
the in-process rig: the real Atom adapter and executive over real DDS, a robot-side writer."""

from __future__ import annotations

import pytest

from behaviours.context import RobotContext
from executive.core.safety import SafetyMonitor
from executive.core.tree import Executive
from executive.motion.streamer import MotionStreamer
from executive.robots.atom.topics import AtomIO
from executive.seam.registry import open_adapter
from executive.service.recovery import LOOK_FOR_S, WHY, PreviousInstance
from executive.wire import dds
from executive.wire.robot_io import Side
from tests.rigs import PROFILE, STATE_TOPICS, Rig, rig  # noqa: F401 - the fixture
from tests.sim.conftest import wait_until

pytestmark = pytest.mark.dds


def test_the_gate_holds_until_the_look_and_a_robot_heard_late_is_still_made_safe(
    dds_domain: int,
) -> None:
    """Not heard within LOOK_FOR_S: the gate lifts (the silent sources refuse starts anyway),
    the look goes on, and when the robot is heard, with control a dead instance left on, the
    gate is back until control is released."""
    with dds.open_participant(dds_domain) as p1, dds.open_participant(dds_domain) as p2:
        adapter = open_adapter(PROFILE, participant=p2)  # the robot not heard yet
        streamer = MotionStreamer(adapter.streams, PROFILE)
        context = RobotContext(PROFILE, adapter.commands, streamer)
        ex = Executive(adapter, context, streamer, SafetyMonitor(max_age=PROFILE.safety_sources))
        now = [100.0]
        alone: list[bool | None] = [None]
        previous = PreviousInstance(
            ex, "release", clock=lambda: now[0], alone=lambda: alone[0], started=now[0]
        )
        assert ex.recovering == WHY + "the robot not heard yet"
        previous.on_tick()
        assert ex.reset() == (False, "refused: not ready: " + ex.recovering)
        now[0] += LOOK_FOR_S + 0.1
        previous.on_tick()
        assert previous.outcome == "not_heard" and ex.recovering == ""
        assert not previous.done and previous.sent == []

        robot = AtomIO(p1, side=Side.ROBOT)  # the robot comes up, control left on
        for key in STATE_TOPICS:
            rec = robot.codec(key).zeros()
            if key == "upper_state":
                rec["is_upper_control"] = True
            robot.write_record(key, rec)
        assert wait_until(lambda: adapter.leftovers() is not None)
        previous.on_tick()
        assert ex.recovering.startswith(WHY + "found upper-body control is on"), ex.recovering
        assert ex.blockers()[0] == ex.recovering
        alone[0] = True
        previous.on_tick()
        assert previous.outcome == "made_safe" and ex.recovering == ""
        assert previous.sent == ["upper-body control released"]
        assert previous.after_s is not None and previous.after_s > LOOK_FOR_S
        robot_sees = robot.readers["switch_upper_control"]
        assert robot_sees.wait_for(lambda s: not s.flag, 5) is not None
        adapter.close()


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


def test_a_robot_with_nothing_left_lifts_the_gate_without_the_peer_watch(rig: Rig) -> None:  # noqa: F811
    """Nothing left commanding the robot: there is no act to hold for the peer watch's
    answer, so starts are not refused while it settles (a DDS Security handshake made the
    operator's first start after boot fail: 'found nothing left commanding it; waiting for
    the peer watch')."""
    previous = PreviousInstance(rig.ex, "release", alone=lambda: None)  # not known yet
    assert wait_until(lambda: rig.ex.adapter.leftovers() is not None)
    previous.on_tick()
    assert rig.ex.adapter.leftovers() == ()
    assert previous.done and previous.outcome == "made_safe" and previous.sent == []
    assert rig.ex.recovering == ""
