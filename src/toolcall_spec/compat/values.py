"""JSON values as JSON Schema compares them (``1 == 1.0``, ``true != 1``), and the scalar keywords
evaluated on single values, so that a constraint added to a schema with a finite set of values
can be checked against each of those values instead of being assumed to narrow."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import orjson

from toolcall_spec.json_paths import printable
from toolcall_spec.json_values import canonical, is_number, json_equal, json_key, json_type, number

TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})


def mentions(value: Any, text: str) -> bool:
    """Whether ``text`` occurs as a member name or a string anywhere in ``value`` (say ``$ref``)."""
    found = canonical(value)
    return found is None or orjson.dumps(text) in found


def render(value: Any, limit: int = 60) -> str:
    """A value as compact JSON on one line, shortened when long."""
    text = printable(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def has_type(value: Any, types: frozenset[str]) -> bool:
    found = json_type(value)
    return found in types or (found == "integer" and "number" in types)


def type_set(schema: Mapping[str, Any]) -> frozenset[str] | None:
    """The ``type`` keyword as a set; every type when absent, ``None`` when it is malformed."""
    declared = schema.get("type")
    if declared is None:
        return TYPES
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(isinstance(n, str) and n in TYPES for n in names):
        return None
    return frozenset(names)


def finite_values(schema: Any) -> list[Any] | None:
    """The values ``enum``/``const`` allow, minus those the schema's scalar keywords reject;
    ``None`` when the schema does not restrict values to a list."""
    if not isinstance(schema, dict) or ("enum" not in schema and "const" not in schema):
        return None
    values = schema["enum"] if isinstance(schema.get("enum"), list) else None
    if "const" in schema:
        const = schema["const"]
        values = [const] if values is None or any(json_equal(const, v) for v in values) else []
    if values is None:
        return None
    # Each value comes from enum/const, so only the other keywords can reject it; checking enum
    # again would compare every value with every other (quadratic on large enums).
    others = [k for k in SCALAR_CHECKS if k not in ("enum", "const") and k in schema]
    return [v for v in values if all(satisfies(schema, k, v) is not False for k in others)]


def satisfies(schema: Mapping[str, Any], keyword: str, value: Any) -> bool | None:
    """Whether ``value`` passes ``keyword`` of ``schema`` (``True`` when the keyword is absent);
    ``None`` when this module cannot tell (``format``, a malformed keyword)."""
    if keyword not in schema:
        return True
    check = SCALAR_CHECKS.get(keyword)
    if check is None:
        return None
    try:
        return check(schema[keyword], value)
    except (TypeError, ValueError, ZeroDivisionError, re.error):
        return None


def _type(declared: Any, value: Any) -> bool | None:
    types = type_set({"type": declared})
    return None if types is None else has_type(value, types)


def _enum(allowed: Any, value: Any) -> bool:
    return any(json_equal(a, value) for a in allowed)


def _bound(compare: Callable[[Fraction, Fraction], bool]) -> Callable[[Any, Any], bool]:
    def check(limit: Any, value: Any) -> bool:
        return not is_number(value) or compare(number(value), number(limit))

    return check


def _count(of: type, measure: Callable[[Any], int], low: bool) -> Callable[[Any, Any], bool]:
    def check(limit: Any, value: Any) -> bool:
        if not isinstance(value, of):
            return True
        return bool(measure(value) >= limit if low else measure(value) <= limit)

    return check


def _pattern(pattern: Any, value: Any) -> bool:
    return not isinstance(value, str) or re.search(pattern, value) is not None


def _multiple_of(divisor: Any, value: Any) -> bool:
    return not is_number(value) or (number(value) / number(divisor)).denominator == 1


def _unique(flag: Any, value: Any) -> bool:
    if flag is not True or not isinstance(value, list):
        return True
    return len({json_key(item) for item in value}) == len(value)


SCALAR_CHECKS: dict[str, Callable[[Any, Any], bool | None]] = {
    "type": _type,
    "enum": _enum,
    "const": json_equal,
    "minimum": _bound(lambda v, limit: v >= limit),
    "exclusiveMinimum": _bound(lambda v, limit: v > limit),
    "maximum": _bound(lambda v, limit: v <= limit),
    "exclusiveMaximum": _bound(lambda v, limit: v < limit),
    "multipleOf": _multiple_of,
    "minLength": _count(str, len, low=True),
    "maxLength": _count(str, len, low=False),
    "pattern": _pattern,
    "minItems": _count(list, len, low=True),
    "maxItems": _count(list, len, low=False),
    "uniqueItems": _unique,
    "minProperties": _count(dict, len, low=True),
    "maxProperties": _count(dict, len, low=False),
}
"""Keywords whose verdict on one value needs nothing but that value."""
