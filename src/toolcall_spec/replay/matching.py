"""Fixture argument matching (RFC 0244 §D as DESIGN.md reads it), on JSON-value equality."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from math import isnan
from typing import Any, Literal

from toolcall_spec.json_values import json_equal

ArgsMatch = Literal["exact", "subset"]

__all__ = ["ArgsMatch", "args_match", "lookup_key", "member_keys", "subset_match"]


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


# --- hash keys for indexing fixture entries -----------------------------------------------------

MAX_KEY_DEPTH = 64
"""Below this depth a value's key is a placeholder: deep values still index, coarsely."""


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_LIST = _Marker("list")
_TRUE = (_Marker("true"),)
_FALSE = (_Marker("false"),)
_OPAQUE = _Marker("opaque")  # a value the key does not describe exactly


def lookup_key(value: Any) -> tuple[Hashable, bool]:
    """A hashable key for a JSON value, and whether it is exact.

    Always: ``json_equal(a, b)`` implies ``lookup_key(a)[0] == lookup_key(b)[0]`` (objects become
    frozen sets of members, so key order is ignored; ``1`` and ``1.0`` hash alike, as Python
    numbers do; booleans get keys of their own, so ``true`` is not ``1``). When both keys are
    exact, the converse holds too, so an index lookup needs no further comparison. A key is not
    exact when the value holds something JSON does not (NaN, a subclass of ``str``, a tuple, a
    key that is not a string) or is nested deeper than ``MAX_KEY_DEPTH``."""
    exact = [True]
    return _key(value, 0, exact), exact[0]


def member_keys(args: dict[str, Any]) -> tuple[dict[str, Hashable], bool]:
    """The key of each member of an object, and whether all are exact."""
    exact = [True]
    keys = {
        name: value if value.__class__ in _ITS_OWN_KEY else _key(value, 1, exact)
        for name, value in args.items()
    }
    if keys and {*map(type, keys)} != {str}:  # names are str on the wire
        exact[0] = False
    return keys, exact[0]


_ITS_OWN_KEY = frozenset({str, int, type(None)})
"""The classes whose values are their own keys: the members of most arguments, looked up without
a call."""


def _key(value: Any, depth: int, exact: list[bool]) -> Hashable:
    cls = value.__class__
    if cls in _ITS_OWN_KEY:
        return value  # type: ignore[no-any-return]
    if cls is bool:
        return _TRUE if value else _FALSE
    if cls is float:
        if isnan(value):  # not even equal to itself
            exact[0] = False
            return _OPAQUE
        return value  # type: ignore[no-any-return]
    if depth >= MAX_KEY_DEPTH:
        exact[0] = False
        return _OPAQUE
    if isinstance(value, dict):
        if value and {*map(type, value)} != {str}:  # names are str on the wire
            exact[0] = False
        return frozenset(
            [
                (name, item if item.__class__ in _ITS_OWN_KEY else _key(item, depth + 1, exact))
                for name, item in value.items()
            ]
        )
    if isinstance(value, list):
        return (
            _LIST,
            *[
                item if item.__class__ in _ITS_OWN_KEY else _key(item, depth + 1, exact)
                for item in value
            ],
        )
    exact[0] = False
    if isinstance(value, int):  # a subclass (an IntEnum): equal to its number
        return int(value)
    if isinstance(value, float):
        return float(value)
    return _OPAQUE
