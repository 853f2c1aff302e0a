"""Places as a request or a parameter gives them: the field that is wrong is named."""

from __future__ import annotations

import math

import pytest

from behaviours import places
from executive.language.values import point


@pytest.mark.parametrize(
    ("name", "at", "field", "words"),
    [
        ("Cup", [0.1, 0.2, 0.3], "args.name", "lower_case"),
        ("cup\n", [0.1, 0.2, 0.3], "args.name", "lower_case"),  # `$` would let this through
        ("a" * 65, [0.1, 0.2, 0.3], "args.name", "lower_case"),
        (7, [0.1, 0.2, 0.3], "args.name", "lower_case"),
        ("cup", [10**400, 0, 0], "args.at", "too large"),  # JSON has such integers
        ("cup", [math.nan, 0, 0], "args.at", "not a finite number"),
        ("cup", [1e9, 0, 0], "args.at", "m from the robot"),
        ("cup", [True, 0, 0], "args.at", "3 values"),
        ("cup", [0.1, 0.2], "args.at", "2 values"),
    ],
)
def test_a_bad_place_is_refused_naming_its_field(
    name: object, at: object, field: str, words: str
) -> None:
    got, why = places.check(name, at)
    assert got is None
    assert why.startswith(f"{field}: ") and words in why, why


def test_a_place_is_three_floats() -> None:
    assert places.check("table_2", [1, -0.5, 100]) == ((1.0, -0.5, 100.0), "")
    assert point([1, 2, 3]) == ((1.0, 2.0, 3.0), None)
