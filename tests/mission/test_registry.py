"""Invariants of the closed registry, and that the docs cover it."""

from __future__ import annotations

import re

from executive.mission.registry import (
    ACCEPTS,
    BUTTONS,
    KINDS,
    LEAF_KINDS,
    PARAM_TYPES,
    Category,
    FieldType,
)
from tests.mission.conftest import ROOT

DOCS = (ROOT / "docs" / "missions.md").read_text(encoding="utf-8")


def test_the_leaf_kinds_of_the_brief() -> None:
    assert set(LEAF_KINDS) == {
        "acquire_control",
        "release_control",
        "set_fsm",
        "move_joints",
        "hand_gesture",
        "navigate_to_tag",
        "wait",
        "wait_for_button",
        "clear_errors",
        "check_battery",
        "log",
    }


def test_every_waiting_kind_requires_a_positive_timeout() -> None:
    for kind in KINDS.values():
        timeout = kind.field("timeout")
        if kind.waits:
            assert timeout is not None and timeout.required and timeout.gt == 0, kind.name
            assert "timeout" in kind.args
        elif kind.category is Category.LEAF:
            assert timeout is None, kind.name


def test_leaf_args_are_fields_or_derived() -> None:
    derived = {"targets", "fsm_id"}
    for name in LEAF_KINDS:
        kind = KINDS[name]
        fields = {f.name for f in kind.fields}
        assert set(kind.args) <= fields | derived, name
        assert "name" not in kind.args


def test_exclusive_groups_name_real_fields() -> None:
    for kind in KINDS.values():
        for name in (*kind.one_of, *kind.exclusive):
            assert kind.field(name) is not None, (kind.name, name)
            assert not kind.field(name).required  # type: ignore[union-attr]


def test_conditions_are_leaves_that_do_not_wait() -> None:
    for kind in KINDS.values():
        if kind.condition:
            assert kind.category is Category.LEAF and not kind.waits


def test_parameter_types_fill_their_own_fields() -> None:
    for ptype in PARAM_TYPES:
        assert ptype in ACCEPTS[ptype]
        assert ptype in ACCEPTS[FieldType.STRING]


def test_buttons_match_the_gamepad_layout() -> None:
    assert set(BUTTONS) == {
        "A",
        "B",
        "X",
        "Y",
        "LB",
        "RB",
        "LT",
        "RT",
        "SELECT",
        "START",
        "UP",
        "DOWN",
        "LEFT",
        "RIGHT",
    }


def test_docs_describe_every_kind_and_parameter_type() -> None:
    headings = set(re.findall(r"^#### `(\w+)`", DOCS, flags=re.MULTILINE))
    assert headings == set(KINDS)
    for kind in KINDS.values():
        for field in kind.fields:
            assert f"`{field.name}`" in DOCS, (kind.name, field.name)
    for ptype in PARAM_TYPES:
        assert f"`{ptype.value}`" in DOCS
