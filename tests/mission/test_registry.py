"""Invariants of the closed registry, and that the docs cover it."""

from __future__ import annotations

import re

import pytest

from executive.language.kinds import NAME, timeout
from executive.language.leaf import LeafKind
from executive.mission.builders import BUILDERS
from executive.mission.registry import (
    ACCEPTS,
    BUTTONS,
    KINDS,
    LEAF_BEHAVIOURS,
    LEAF_KINDS,
    LEAVES,
    PARAM_TYPES,
    Category,
    FieldType,
    check_builders,
    collect,
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
        "walk",
        "run_task",
        "checkpoint",
        "reach",
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
    derived = {"targets", "fsm_id", "joints", "scene"}  # reach: the solve's joints, the scene
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


def test_every_leaf_kind_is_declared_on_the_behaviour_that_runs_it() -> None:
    declared = [(k.name, cls) for cls in LEAF_BEHAVIOURS for k in cls.kinds]
    assert [name for name, _ in declared] == list(LEAF_KINDS)
    for kind in LEAVES:
        assert isinstance(kind, LeafKind) and kind.category is Category.LEAF
        assert KINDS[kind.name] is kind


def test_the_builder_table_is_the_declared_builders() -> None:
    assert {k.name: k.build for k in LEAVES} == BUILDERS
    assert check_builders(BUILDERS) == []


def test_one_default_per_field() -> None:
    """A field that several kinds share has one default (hand_gesture's tolerance was 0.1
    while move_joints' was 0.05, and the builder fell back to a third copy)."""
    defaults: dict[str, set[object]] = {}
    for kind in LEAVES:
        for f in kind.fields:
            defaults.setdefault(f.name, set()).add(f.default)
    assert {n: d for n, d in defaults.items() if len(d) > 1} == {}
    assert KINDS["hand_gesture"].field("tolerance").default == 0.05  # type: ignore[union-attr]


def _declaring(*kinds: LeafKind) -> type:
    from behaviours.base import RobotLeaf

    return type("Fake", (RobotLeaf,), {"kinds": kinds})


def _kind(name: str = "fake", **kw: object) -> LeafKind:
    args: dict[str, object] = {
        "name": name,
        "doc": "A fake.",
        "fields": (NAME,),
        "requires": None,
        "build": lambda leaf: None,
        "label": lambda a: "Fake",
    }
    return LeafKind(**{**args, **kw})  # type: ignore[arg-type]


def test_a_bad_declaration_fails_at_import() -> None:
    with pytest.raises(ValueError, match="'teleport', which is not a robot capability"):
        collect((_declaring(_kind(requires="teleport")),))
    with pytest.raises(ValueError, match="fake waits on the robot but has no timeout"):
        collect((_declaring(_kind(waits=True)),))
    with pytest.raises(ValueError, match="declared twice: wait"):
        collect((*LEAF_BEHAVIOURS, _declaring(_kind("wait"))))
    with pytest.raises(TypeError, match="declares no leaf kind"):
        collect((_declaring(),))
    assert collect((_declaring(_kind(waits=True, fields=(NAME, timeout("it")))),))
