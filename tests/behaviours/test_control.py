"""Tick tests: upper-body control, FSM switching, clearing errors."""

from __future__ import annotations

from py_trees.common import Status

from behaviours.actions.control import AcquireControl, ClearErrors, ReleaseControl, SetFsm

from .conftest import Kit


def test_acquire_sends_resends_and_confirms(kit: Kit) -> None:
    kit.robot.publish("upper_state", is_upper_control=False)
    leaf = kit.setup(AcquireControl(timeout=3.0))
    assert kit.tick(leaf) is Status.RUNNING
    assert kit.commands.named("request_control") == [("request_control", True)]
    assert kit.context.control_acquired
    assert kit.tick(leaf, 0.1) is Status.RUNNING and len(kit.commands.calls) == 1
    assert kit.tick(leaf, 0.15) is Status.RUNNING and len(kit.commands.calls) == 2  # re-sent
    kit.robot.publish("upper_state", is_upper_control=True)
    assert kit.tick(leaf, 0.01) is Status.SUCCESS


def test_acquire_ignores_a_confirmation_older_than_the_request(kit: Kit) -> None:
    kit.robot.publish("upper_state", is_upper_control=True)  # stale, from before the request
    kit.clock.advance(1.0)
    leaf = kit.setup(AcquireControl(timeout=3.0))
    assert kit.tick(leaf) is Status.RUNNING


def test_acquire_refused_times_out_with_reason(kit: Kit) -> None:
    leaf = kit.setup(AcquireControl(timeout=1.0))
    kit.tick(leaf)
    statuses = []
    for _ in range(7):  # 1.05 s of refusals
        kit.robot.publish("upper_state", is_upper_control=False)
        statuses.append(kit.tick(leaf, 0.15))
    assert statuses == [Status.RUNNING] * 6 + [Status.FAILURE]
    assert leaf.failure is not None and leaf.failure.code == "timeout"
    assert "upper-body control not confirmed" in leaf.failure.message


def test_release_confirms_and_clears_the_mark(kit: Kit) -> None:
    kit.context.control_acquired = True
    leaf = kit.setup(ReleaseControl())
    assert kit.tick(leaf) is Status.RUNNING
    assert kit.commands.calls == [("request_control", False)]
    # intended from the moment it is sent, so the watchdog never reads it as a revocation
    assert not kit.context.control_acquired
    kit.robot.publish("upper_state", is_upper_control=False)
    assert kit.tick(leaf, 0.01) is Status.SUCCESS
    assert not kit.context.control_acquired  # cleared when the release was sent


def test_set_fsm_by_name_confirmed_by_lower_state(kit: Kit) -> None:
    leaf = kit.setup(SetFsm("walk"))
    assert kit.tick(leaf) is Status.RUNNING
    assert kit.commands.calls == [("set_fsm", 301)]
    kit.robot.publish("lower_state", fsm_id=301)
    assert kit.tick(leaf, 0.01) is Status.SUCCESS


def test_set_fsm_by_number_and_timeout(kit: Kit) -> None:
    leaf = kit.setup(SetFsm(7, timeout=0.5))
    kit.tick(leaf)
    kit.robot.publish("upper_state", fsm_id=3)
    assert kit.tick(leaf, 0.6) is Status.FAILURE
    assert leaf.failure is not None and "never confirmed 7" in leaf.failure.message


def test_set_fsm_unknown_name_fails_without_sending(kit: Kit) -> None:
    leaf = kit.setup(SetFsm("moonwalk"))
    assert kit.tick(leaf) is Status.FAILURE
    assert leaf.failure is not None and leaf.failure.code == "unknown_fsm"
    assert kit.commands.calls == []


def test_clear_errors_sends_once(kit: Kit) -> None:
    leaf = kit.setup(ClearErrors())
    assert kit.tick(leaf) is Status.SUCCESS
    assert kit.commands.calls == [("clear_faults",)]
