"""JSON-value equality, the one comparison every part of the package uses (fixture matching,
golden scoring, conformance, schema compatibility).

Two values are equal as JSON values when they denote the same JSON text up to key order and number
spelling: ``{"a": 1, "b": 2} == {"b": 2, "a": 1.0}``, but ``true != 1`` and ``false != 0`` (Python's
``True == 1`` is exactly the coercion this package refuses). The comparison is iterative, so a
deeply nested document cannot exhaust the interpreter's recursion limit.
"""

from __future__ import annotations

from typing import Any


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
