"""JSON values as this package reads them: their type, their equality, a hashable key and a
canonical text. Every part of the package (fixture matching, golden scoring, conformance, schema
compatibility, analytics) uses these.

A number with no fractional part is an ``integer``, as JSON Schema says: ``json_type(1.0)`` is
``"integer"``, and ``1`` and ``1.0`` are equal and share a key.

Two values are equal as JSON values when they denote the same JSON text up to key order and number
spelling: ``{"a": 1, "b": 2} == {"b": 2, "a": 1.0}``, but ``true != 1`` and ``false != 0`` (Python's
``True == 1`` is exactly the coercion this package refuses). The comparison is iterative, so a
deeply nested document cannot exhaust the interpreter's recursion limit.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction
from typing import Any

import orjson


def _scalar_equal(left: Any, right: Any) -> bool:
    if left.__class__ is right.__class__:
        return bool(left == right)
    if left.__class__ is bool or right.__class__ is bool:
        return False  # true is not 1, false is not 0
    return isinstance(left, _NUMBERS) and isinstance(right, _NUMBERS) and left == right


_NUMBERS = (int, float)


def json_equal(left: Any, right: Any) -> bool:
    """Whether ``left`` and ``right`` are the same JSON value (objects: same members, any order;
    arrays: same length, element-wise; numbers: by value; booleans: only to booleans). Values are
    what a JSON parser returns: ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``.
    """
    pending: list[tuple[Any, Any]] = [(left, right)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, dict):
            if not isinstance(b, dict) or len(a) != len(b):
                return False
            for key, value in a.items():
                if key not in b:
                    return False
                pending.append((value, b[key]))
        elif isinstance(a, list):
            if not isinstance(b, list) or len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif not _scalar_equal(a, b):
            return False
    return True


def is_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number (a boolean is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def milliseconds(value: Any) -> float | None:
    """A recorded duration (``record --timings``): a JSON number of 0 or more, else ``None``."""
    return float(value) if is_number(value) and value >= 0 else None


def number(value: int | float) -> Fraction:
    """The exact value of a JSON number; a float reads as its shortest decimal (``0.1``: 1/10)."""
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def json_type(value: Any) -> str:
    """The JSON Schema type name of a parsed JSON value: ``null``, ``boolean``, ``integer`` (any
    number with no fractional part, ``1.0`` included), ``number``, ``string``, ``array`` (a list
    or tuple), ``object`` (a mapping). Anything else is named by its Python type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    return "array" if isinstance(value, (list, tuple)) else type(value).__name__


def json_key(value: Any) -> Hashable:
    """A hashable key equal for equal JSON values: ``1`` and ``1.0`` agree, ``true`` and ``1`` do
    not, member order does not matter."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", number(value))
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("array", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, json_key(v)) for k, v in value.items()))
    return ("other", repr(value))


def canonical(value: Any) -> bytes | None:
    """The value as JSON text with sorted members; ``None`` when it is not JSON."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
