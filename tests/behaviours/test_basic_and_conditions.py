"""Tick tests: wait, log, battery check, operator button."""

from __future__ import annotations

import numpy as np
import pytest
from py_trees.common import Status

from behaviours.actions.basic import Log, Wait
from behaviours.conditions.robot import CheckBattery, WaitForButton
from executive.robots.atom.gamepad import BUTTONS  # the Atom's wireless_remote byte and bit

from .conftest import Kit


def test_wait_uses_the_injected_clock(kit: Kit) -> None:
    leaf = kit.setup(Wait(2.0))
    assert kit.tick(leaf) is Status.RUNNING
    assert kit.tick(leaf, 1.9) is Status.RUNNING
    assert kit.tick(leaf, 0.2) is Status.SUCCESS


def test_log_feeds_the_status(kit: Kit) -> None:
    leaf = kit.setup(Log("drink delivered"))
    assert kit.tick(leaf) is Status.SUCCESS
    assert kit.context.feed == [(kit.clock(), "drink delivered")]


def test_battery_uses_the_lowest_reading(kit: Kit) -> None:
    kit.robot.publish(
        "upper_state", bms_state=np.zeros((), kit.robot.records["upper_state"].dtype["bms_state"])
    )
    kit.robot.records["upper_state"]["bms_state"]["battery_level"] = 80
    kit.robot.records["lower_state"]["bms_state"]["battery_level"] = 25
    kit.robot.publish("upper_state")
    kit.robot.publish("lower_state")
    assert kit.tick(kit.setup(CheckBattery(20))) is Status.SUCCESS
    leaf = kit.setup(CheckBattery(30))
    assert kit.tick(leaf) is Status.FAILURE
    assert (
        leaf.failure is not None
        and leaf.failure.code == "low_battery"
        and "25 %" in leaf.failure.message
    )


def test_battery_without_state_fails(kit: Kit) -> None:
    leaf = kit.setup(CheckBattery(10))
    assert (
        kit.tick(leaf) is Status.FAILURE
        and leaf.failure is not None
        and leaf.failure.code == "no_state"
    )


def press(kit: Kit, *buttons: str) -> None:
    remote = np.zeros(40, dtype=np.uint8)
    for b in buttons:
        byte, bit = BUTTONS[b]
        remote[byte] |= 1 << bit
    kit.robot.publish("upper_state", wireless_remote=remote)


def test_button_needs_a_fresh_press(kit: Kit) -> None:
    press(kit, "A")  # held before the step started
    leaf = kit.setup(WaitForButton("A", timeout=10))
    kit.tick(leaf, 0.01)
    press(kit, "A")
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    press(kit, "B")
    assert kit.tick(leaf, 0.05) is Status.RUNNING
    press(kit, "A", "B")
    assert kit.tick(leaf, 0.05) is Status.SUCCESS


def test_a_press_right_after_the_start_counts(kit: Kit) -> None:
    press(kit)  # released before the step
    leaf = kit.setup(WaitForButton("X", timeout=10))
    kit.tick(leaf, 0.01)
    press(kit, "X")  # the very next sample already shows the press
    assert kit.tick(leaf, 0.02) is Status.SUCCESS


def test_button_times_out(kit: Kit) -> None:
    leaf = kit.setup(WaitForButton("Y", timeout=1.0))
    kit.tick(leaf)
    assert kit.tick(leaf, 1.1) is Status.FAILURE
    assert leaf.failure is not None and "button Y not pressed" in leaf.failure.message


def test_unknown_button_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="unknown button"):
        WaitForButton("Z")


def test_leaf_without_context_says_so() -> None:
    leaf = Wait(1.0)
    with pytest.raises(RuntimeError, match="before setup"):
        leaf.tick_once()
