"""Fixture argument matching (RFC 0244 §D as DESIGN.md reads it), on JSON-value equality."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from toolcall_spec.json_values import json_equal

ArgsMatch = Literal["exact", "subset"]

__all__ = ["ArgsMatch", "args_match", "json_equal", "subset_match"]


def subset_match(expected: dict[str, Any], actual: Any) -> bool:
    """Every member of ``expected`` is present in the object ``actual`` with an equal value."""
    if not isinstance(actual, dict):
        return False
    return all(key in actual and json_equal(value, actual[key]) for key, value in expected.items())


def args_match(entry: Mapping[str, Any], call_args: Any) -> bool:
    """Whether a fixture entry's ``args``/``argsMatch`` accept a call's arguments. An entry without
    ``args`` accepts any call of its tool; ``argsMatch`` defaults to ``exact``."""
    if "args" not in entry:
        return True
    expected = entry["args"]
    if entry.get("argsMatch", "exact") == "subset":
        return isinstance(expected, dict) and subset_match(expected, call_args)
    return json_equal(expected, call_args)
