"""Tick tests: navigating to a tag, with the vendor's status sequence and cancel-first."""

from __future__ import annotations

from py_trees.common import Status

from behaviours.actions.navigation import NavigateToTag

from .conftest import Kit

# the Atom's AMRState_ numbers, as DESIGN.md 3.3 documents them (the leaf sees them only
# through the Atom adapter's snapshot)
TASKING = 2
QUEUING, RUNNING, COMPLETED, FAILED, PAUSED, CANCELED = 1, 2, 3, 4, 5, 6
IDLE_DEV, IDLE_NAV = 1, 8


def amr(kit: Kit, device: int, nav: int) -> None:
    kit.robot.publish("amr_state", device_status=device, navigation_status=nav)


def test_idle_base_goes_straight_to_tag(kit: Kit) -> None:
    amr(kit, IDLE_DEV, IDLE_NAV)
    leaf = kit.setup(NavigateToTag(3, theta=1.57, timeout=30))
    assert kit.tick(leaf, 0.01) is Status.RUNNING
    assert kit.commands.calls == [("go_to_tag", 3, 1.57)]
    amr(kit, IDLE_DEV, QUEUING)
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    amr(kit, TASKING, RUNNING)
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    amr(kit, IDLE_DEV, COMPLETED)
    assert kit.tick(leaf, 0.05) is Status.SUCCESS
    assert len(kit.commands.calls) == 1


def test_a_stale_completed_does_not_count(kit: Kit) -> None:
    amr(kit, IDLE_DEV, COMPLETED)  # the previous task's end, seen before we sent ours
    leaf = kit.setup(NavigateToTag(2))
    kit.tick(leaf, 0.01)
    assert kit.tick(leaf) is Status.RUNNING


def test_busy_base_is_canceled_first(kit: Kit) -> None:
    amr(kit, TASKING, RUNNING)
    leaf = kit.setup(NavigateToTag(5))
    kit.tick(leaf, 0.01)
    assert kit.commands.calls == [("cancel_base",)]
    amr(kit, TASKING, RUNNING)
    kit.tick(leaf, 0.05)
    assert len(kit.commands.calls) == 1  # still waiting for the cancel
    amr(kit, IDLE_DEV, CANCELED)
    kit.tick(leaf, 0.05)
    assert kit.commands.calls[-1] == ("go_to_tag", 5, 0.0)
    amr(kit, IDLE_DEV, CANCELED)  # our move not yet accepted: the old CANCELED is no failure
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    amr(kit, TASKING, RUNNING)
    kit.tick(leaf, 0.05)
    amr(kit, IDLE_DEV, COMPLETED)
    assert kit.tick(leaf, 0.05) is Status.SUCCESS


def test_failed_and_canceled_end_the_task(kit: Kit) -> None:
    for end, code in ((FAILED, "amr_failed"), (CANCELED, "amr_canceled")):
        amr(kit, IDLE_DEV, IDLE_NAV)
        leaf = kit.setup(NavigateToTag(1))
        kit.tick(leaf, 0.01)
        amr(kit, TASKING, RUNNING)
        kit.tick(leaf, 0.05)
        amr(kit, IDLE_DEV, end)
        assert kit.tick(leaf, 0.05) is Status.FAILURE
        assert leaf.failure is not None and leaf.failure.code == code


def test_preempted_mid_navigation_cancels_once(kit: Kit) -> None:
    amr(kit, IDLE_DEV, IDLE_NAV)
    leaf = kit.setup(NavigateToTag(4))
    kit.tick(leaf, 0.01)
    amr(kit, TASKING, RUNNING)
    kit.tick(leaf, 0.05)
    leaf.stop(Status.INVALID)
    leaf.stop(Status.INVALID)
    assert kit.commands.base()[-1] == ("cancel_base",)
    assert len(kit.commands.base()) == 2


def test_timeout_cancels_the_task(kit: Kit) -> None:
    amr(kit, IDLE_DEV, IDLE_NAV)
    leaf = kit.setup(NavigateToTag(4, timeout=2.0))
    kit.tick(leaf, 0.01)
    amr(kit, TASKING, RUNNING)
    assert kit.tick(leaf, 2.5) is Status.FAILURE
    assert (
        leaf.failure is not None
        and "tag 4 not reached within 2.0 s (driving)" in leaf.failure.message
    )
    assert kit.commands.calls[-1] == ("cancel_base",)
    leaf.stop(Status.FAILURE)
    assert len(kit.commands.base()) == 2


def test_a_lingering_failed_is_not_a_refusal_of_the_next_task(kit: Kit) -> None:
    """The previous task FAILED (task 7); ours is queued behind its lingering status. Seen
    in the soak: the next mission failed at once with "the base refused the task"."""
    kit.robot.publish("amr_state", device_status=IDLE_DEV, navigation_status=FAILED, task_id=7)
    leaf = kit.setup(NavigateToTag(2, timeout=30))
    kit.tick(leaf, 0.01)
    ours = len(kit.commands.calls)  # RecordingCommands numbers commands by their position
    kit.robot.publish("amr_state", device_status=IDLE_DEV, navigation_status=FAILED, task_id=7)
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    kit.robot.publish("amr_state", device_status=TASKING, navigation_status=QUEUING, task_id=ours)
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    kit.robot.publish(
        "amr_state", device_status=IDLE_DEV, navigation_status=COMPLETED, task_id=ours
    )
    assert kit.tick(leaf, 0.05) is Status.SUCCESS


def test_a_failed_for_our_task_is_a_refusal(kit: Kit) -> None:
    for before in ((IDLE_NAV, 0), (FAILED, 7)):  # whatever was showing before
        kit.robot.publish(
            "amr_state", device_status=IDLE_DEV, navigation_status=before[0], task_id=before[1]
        )
        leaf = kit.setup(NavigateToTag(9))
        kit.tick(leaf, 0.01)
        ours = len(kit.commands.calls)
        kit.robot.publish("amr_state", device_status=4, navigation_status=FAILED, task_id=ours)
        assert kit.tick(leaf, 0.05) is Status.FAILURE
        assert leaf.failure is not None and "refused the task to tag 9" in leaf.failure.message


def test_a_new_failed_is_a_refusal_even_without_task_ids(kit: Kit) -> None:
    """A base that does not echo command ids: a FAILED that was not showing before is ours."""
    amr(kit, IDLE_DEV, COMPLETED)
    leaf = kit.setup(NavigateToTag(9))
    kit.tick(leaf, 0.01)
    amr(kit, IDLE_DEV, FAILED)
    assert kit.tick(leaf, 0.05) is Status.FAILURE
