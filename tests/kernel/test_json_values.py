"""``json_values.json_type`` against a real JSON Schema validator: the type it names is a type
the value has for jsonschema (draft 2020-12), and no narrower JSON Schema type also fits."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from toolcall_spec.json_values import json_equal, json_key, json_type

SCALARS = (
    st.none()
    | st.booleans()
    # Within 2**53: beyond it json_key reads a float as its shortest decimal while json_equal
    # compares the binary value, so 2**63 and float(2**63) are equal without sharing a key.
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def schema_types(value: Any) -> set[str]:
    """Every JSON Schema type jsonschema says ``value`` has."""
    return {name for name in TYPES if Draft202012Validator({"type": name}).is_valid(value)}


@given(VALUES)
def test_json_type_is_the_narrowest_type_jsonschema_agrees_to(value: Any) -> None:
    found = schema_types(value)
    assert json_type(value) in found
    # integer is the one type inside another (number); json_type names the narrower one
    assert found - {json_type(value)} <= ({"number"} if json_type(value) == "integer" else set())


def test_an_integral_float_is_an_integer_as_in_json_schema() -> None:
    assert json_type(1.0) == "integer"
    assert schema_types(1.0) == {"integer", "number"}
    assert json_type(1.5) == "number"


@given(VALUES, VALUES)
def test_equal_values_share_a_key(left: Any, right: Any) -> None:
    if json_equal(left, right):
        assert json_key(left) == json_key(right)
    if json_key(left) == json_key(right):
        assert json_equal(left, right)
