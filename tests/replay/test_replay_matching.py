"""JSON-value equality and argument matching (RFC 0244 §D as DESIGN.md reads it)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.replay import canonical

from toolcall_spec.json_values import json_equal
from toolcall_spec.replay.matching import args_match, lookup_key, member_keys

EQUAL = [
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (1, 1.0),
    ({"n": [1, {"x": 2.0}]}, {"n": [1.0, {"x": 2}]}),
    (None, None),
    ("c-1", "c-1"),
    ([], []),
    ({}, {}),
]
DIFFERENT = [
    (True, 1),
    (False, 0),
    (1, True),
    (0.0, False),
    ("1", 1),
    (None, False),
    ([1, 2], [2, 1]),
    ([1], [1, 1]),
    ({"a": 1}, {"a": 1, "b": 2}),
    ({"a": None}, {}),
    ({"a": [True]}, {"a": [1]}),
    ([], {}),
]


@pytest.mark.parametrize(("left", "right"), EQUAL)
@pytest.mark.requirement("toolcall-spec.requirement.replay.args-matching")
def test_equal_json_values(left: Any, right: Any) -> None:
    assert json_equal(left, right)
    assert json_equal(right, left)


@pytest.mark.parametrize(("left", "right"), DIFFERENT)
def test_different_json_values(left: Any, right: Any) -> None:
    assert not json_equal(left, right)
    assert not json_equal(right, left)


def test_deep_nesting_does_not_exhaust_the_stack() -> None:
    deep: Any = 1
    for _ in range(5000):
        deep = {"a": [deep]}
    other: Any = 1.0
    for _ in range(5000):
        other = {"a": [other]}
    assert json_equal(deep, other)


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.sampled_from([0.0, 1.0, 2.0, 0.5, -1.0]),
        st.sampled_from(["", "a", "1", "true"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(json_values, json_values)
def test_equality_agrees_with_canonical_text(left: Any, right: Any) -> None:
    assert json_equal(left, right) == (canonical(left) == canonical(right))


@pytest.mark.requirement("toolcall-spec.requirement.replay.args-matching")
def test_exact_subset_and_absent_args() -> None:
    exact = {"tool": "t", "args": {"id": "c-1", "n": 1}}
    assert args_match(exact, {"n": 1.0, "id": "c-1"})
    assert not args_match(exact, {"id": "c-1", "n": 1, "extra": 0})
    assert not args_match(exact, {"id": "c-1"})
    assert not args_match({"tool": "t", "args": {"flag": True}}, {"flag": 1})
    assert args_match({**exact, "argsMatch": "exact"}, {"id": "c-1", "n": 1})

    subset = {"tool": "t", "args": {"id": "c-1"}, "argsMatch": "subset"}
    assert args_match(subset, {"id": "c-1", "extra": [1]})
    assert not args_match(subset, {"extra": [1]})
    assert not args_match(subset, {"id": "c-2"})
    assert args_match({"tool": "t", "args": {}, "argsMatch": "subset"}, {"anything": 1})
    assert not args_match({"tool": "t", "args": {}}, {"anything": 1})

    assert args_match({"tool": "t"}, {"whatever": [1, 2]})
    assert args_match({"tool": "t"}, {})


@pytest.mark.parametrize(
    "value",
    [{1: "a"}, {"a": {2: "b"}}, [{None: 1}], {"n": float("nan")}, ("a",), {"a": ("b",)}],
)
def test_a_key_is_not_exact_for_what_json_cannot_hold(value: Any) -> None:
    """The fixture index trusts an exact key without comparing (``lookup_key``): a value JSON
    cannot hold (a member name that is not a string, NaN, a tuple) must not claim one, at the
    top or inside; nor an object's member keys (``member_keys``)."""
    assert lookup_key(value)[1] is False
    assert lookup_key({"a": "b"})[1] is True
    if isinstance(value, dict):
        assert member_keys(value)[1] is False
