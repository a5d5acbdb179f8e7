"""Keywords that constrain one value: ``type``, ``enum``/``const``, numeric and size bounds,
``multipleOf``, ``pattern``, ``format``, ``uniqueItems``; plus the identity keywords (``$id``,
``$schema``) and keywords this comparison does not know.

When the old schema only allows a list of values (``enum``/``const``), a constraint that looks
narrower is checked against each of those values: if they all still pass, nothing that validated
before is lost and the change is a patch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from toolcall_spec.compat.keywords import ANNOTATIONS
from toolcall_spec.compat.locations import At
from toolcall_spec.compat.values import (
    TYPES,
    finite_values,
    render,
    satisfies,
    type_set,
)
from toolcall_spec.json_values import is_number, json_equal, json_key, number

if TYPE_CHECKING:
    from toolcall_spec.compat.changes import Change
    from toolcall_spec.compat.keywords import Walker

Schema = dict[str, Any]

HANDLED = frozenset(
    {
        *("$schema", "$id", "$ref", "$defs", "type", "enum", "const", "multipleOf", "pattern"),
        *("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "format", "uniqueItems"),
        *("minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains"),
        *("minProperties", "maxProperties", "properties", "required", "additionalProperties"),
        *("patternProperties", "propertyNames", "dependentRequired", "dependentSchemas"),
        *("items", "prefixItems", "contains", "allOf", "anyOf", "oneOf", "not", "if", "then"),
        *("else", "unevaluatedProperties", "unevaluatedItems"),
    }
)
"""Draft 2020-12 keywords compared by a keyword family of this package."""

UNANALYSED = frozenset({"$anchor", "$dynamicAnchor", "$dynamicRef", "$vocabulary"})
"""Draft 2020-12 keywords that can change validation but are not compared: any change is major."""

COUNTS: tuple[tuple[str, int | None, bool], ...] = (
    ("minLength", 0, True),
    ("maxLength", None, False),
    ("minItems", 0, True),
    ("maxItems", None, False),
    ("minContains", 1, True),
    ("maxContains", None, False),
    ("minProperties", 0, True),
    ("maxProperties", None, False),
)
"""Size bounds: keyword, the value its absence means, whether it is a lower bound."""


class Bound(NamedTuple):
    value: Fraction
    exclusive: bool
    keyword: str
    shown: Any

    def __str__(self) -> str:
        return f"{self.keyword} {render(self.shown)}"


def dialect(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    out = []
    if not json_equal(old.get("$schema"), new.get("$schema")):
        message = f"$schema changed ({render(old.get('$schema'))} -> {render(new.get('$schema'))})"
        out.append(walk.change(at, "dialect-changed", "major", message + ": another dialect"))
    if not json_equal(old.get("$id"), new.get("$id")):
        message = (
            f"$id changed ({render(old.get('$id'))} -> {render(new.get('$id'))}): a schema or a "
            "registry that refers to the old $id no longer finds it"
        )
        out.append(walk.change(at, "id-changed", "major", message))
    return out


def compare(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    allowed = finite_values(old)
    narrowing = _Narrowing(walk, at, allowed, new)
    return [
        *_types(walk, old, new, at, narrowing),
        *_values(walk, old, new, at),
        *_numeric_bounds(walk, old, new, at, narrowing),
        *_counts(walk, old, new, at, narrowing),
        *_multiple_of(walk, old, new, at, narrowing),
        *_text_rule(walk, old, new, at, narrowing, keyword="pattern"),
        *_text_rule(walk, old, new, at, narrowing, keyword="format"),
        *_unique_items(walk, old, new, at, narrowing),
    ]


def others(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    """Keywords no family compares: draft 2020-12 ones are major when changed (not analysed),
    others are not keywords of the dialect, which validators ignore."""
    out = []
    for keyword in sorted((old.keys() | new.keys()) - HANDLED - ANNOTATIONS):
        if json_equal(old.get(keyword), new.get(keyword)) and keyword in old and keyword in new:
            continue
        if keyword in UNANALYSED:
            message = f"{keyword} changed; this comparison does not analyse it"
            out.append(walk.change(at, "unclassified", "major", message))
        else:
            message = (
                f"{keyword} changed; it is not a draft 2020-12 keyword, so validators ignore it"
            )
            out.append(walk.change(at, "annotation-changed", "patch", message))
    return out


class _Narrowing:
    """Builds the change for a constraint that looks narrower: major, unless the old schema only
    allowed a list of values and every one of them passes the new constraint."""

    def __init__(self, walk: Walker, at: At, allowed: list[Any] | None, new: Schema) -> None:
        self.walk, self.at, self.allowed, self.new = walk, at, allowed, new

    def __call__(self, kind: str, message: str, keywords: Sequence[str]) -> Change:
        if self.allowed is not None and all(
            satisfies(self.new, keyword, value) is True
            for value in self.allowed
            for keyword in keywords
        ):
            message += "; every value the old schema allowed still passes"
            return self.walk.change(self.at, kind, "patch", message)
        return self.walk.change(self.at, kind, "major", message)


def _malformed(walk: Walker, at: At, keyword: str) -> Change:
    message = f"{keyword} is not well formed on one side, so its change cannot be classified"
    return walk.change(at, "unclassified", "major", message)


def _describe(types: frozenset[str]) -> str:
    return "any type" if types == TYPES else " or ".join(sorted(types))


def _types(walk: Walker, old: Schema, new: Schema, at: At, narrowing: _Narrowing) -> list[Change]:
    before, after = type_set(old), type_set(new)
    if before is None or after is None:
        same = json_equal(old.get("type"), new.get("type"))
        return [] if same else [_malformed(walk, at, "type")]

    def covered(name: str, types: frozenset[str]) -> bool:
        return name in types or (name == "integer" and "number" in types)

    lost = sorted(t for t in before if not covered(t, after))
    gained = sorted(t for t in after if not covered(t, before))
    shift = f"{_describe(before)} -> {_describe(after)}"
    if lost:
        what = [
            "numbers with a fraction" if t == "number" and "integer" in after else t for t in lost
        ]
        message = f"type narrowed ({shift}): {', '.join(what)} no longer accepted"
        return [narrowing("type-narrowed", message, ("type",))]
    if gained:
        message = f"type widened ({shift}): {', '.join(gained)} now accepted"
        return [walk.change(at, "type-widened", "minor", message)]
    return []


def _listed(schema: Schema) -> list[Any] | None:
    """The values ``enum`` and ``const`` allow together, before any other keyword."""
    if "enum" not in schema and "const" not in schema:
        return None
    values = schema["enum"] if isinstance(schema.get("enum"), list) else []
    if "const" in schema:
        keep = "enum" not in schema or any(json_equal(schema["const"], v) for v in values)
        values = [schema["const"]] if keep else []
    return values


def _values(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before, after = finite_values(old), _listed(new)
    if before is None and after is None:
        return []
    if before is None:
        assert after is not None
        message = f"values restricted to {render(after)}; any other value is no longer accepted"
        return [walk.change(at, "constraint-added", "major", message)]
    if after is None:
        message = "values no longer restricted to a list (enum/const removed)"
        return [walk.change(at, "constraint-removed", "minor", message)]
    # Sets of hashable keys, not pairwise comparison: enums of thousands of values stay linear.
    after_keys = {json_key(w) for w in after}
    old_keys = {json_key(w) for w in _listed(old) or []}
    out = [
        walk.change(at, "enum-value-removed", "major", f"value {render(v)} no longer accepted")
        for v in before
        if json_key(v) not in after_keys
    ]
    out += [
        walk.change(at, "enum-value-added", "minor", f"value {render(v)} now accepted")
        for v in after
        if json_key(v) not in old_keys
    ]
    return out


def _bound(schema: Schema, keywords: tuple[str, str], strength: Strength) -> Bound | str | None:
    """The effective bound among an inclusive and an exclusive keyword; ``None`` when neither is
    there; the keyword's name when its value is not a number."""
    found = []
    for keyword, exclusive in zip(keywords, (False, True), strict=True):
        if keyword in schema:
            value = schema[keyword]
            if not is_number(value):
                return keyword
            found.append(Bound(number(value), exclusive, keyword, value))
    return max(found, key=strength) if found else None


Strength = Callable[[Bound], tuple[Fraction, bool]]
NUMERIC_BOUNDS: tuple[tuple[str, tuple[str, str], Strength], ...] = (
    ("lower", ("minimum", "exclusiveMinimum"), lambda b: (b.value, b.exclusive)),
    ("upper", ("maximum", "exclusiveMaximum"), lambda b: (-b.value, b.exclusive)),
)
"""Each side of a number's range: the stronger bound sorts higher (an exclusive bound is stronger
than an inclusive one at the same value)."""


def _numeric_bounds(
    walk: Walker, old: Schema, new: Schema, at: At, narrowing: _Narrowing
) -> list[Change]:
    out = []
    for name, keywords, strength in NUMERIC_BOUNDS:
        before, after = _bound(old, keywords, strength), _bound(new, keywords, strength)
        if isinstance(before, str) or isinstance(after, str):
            if not all(json_equal(old.get(k), new.get(k)) for k in keywords):
                out.append(_malformed(walk, at, " / ".join(keywords)))
            continue
        if after is not None and (before is None or strength(after) > strength(before)):
            change = f"{before} -> {after}" if before is not None else f"added: {after}"
            out.append(narrowing("bound-tightened", f"{name} bound {change}", keywords))
        elif before is not None and (after is None or strength(after) < strength(before)):
            change = f"{before} -> {after}" if after is not None else f"removed (was {before})"
            out.append(walk.change(at, "bound-relaxed", "minor", f"{name} bound {change}"))
    return out


def _counts(walk: Walker, old: Schema, new: Schema, at: At, narrowing: _Narrowing) -> list[Change]:
    out = []
    for keyword, default, lower in COUNTS:
        if any(keyword in s and not is_number(s[keyword]) for s in (old, new)):
            if keyword not in old or keyword not in new or old[keyword] != new[keyword]:
                out.append(_malformed(walk, at, keyword))
            continue
        before, after = old.get(keyword, default), new.get(keyword, default)
        if json_equal(before, after):
            continue
        if before is None or after is None:
            tighter = after is not None  # an upper bound added (or, when false, removed)
        else:
            tighter = number(after) > number(before) if lower else number(after) < number(before)
        if keyword not in old:
            what = f"{keyword} added: {render(after)}"
        elif keyword not in new:
            what = f"{keyword} removed (was {render(before)})"
        else:
            verb = "raised" if tighter == lower else "lowered"
            what = f"{keyword} {verb} from {render(before)} to {render(after)}"
        if tighter:
            out.append(narrowing("bound-tightened", what, (keyword,)))
        else:
            out.append(walk.change(at, "bound-relaxed", "minor", what))
    return out


def _multiple_of(
    walk: Walker, old: Schema, new: Schema, at: At, narrowing: _Narrowing
) -> list[Change]:
    before, after = old.get("multipleOf"), new.get("multipleOf")
    if json_equal(before, after):
        return []
    if not all(v is None or (is_number(v) and v > 0) for v in (before, after)):
        return [_malformed(walk, at, "multipleOf")]
    if after is None:
        message = f"multipleOf removed (was {render(before)})"
        return [walk.change(at, "bound-relaxed", "minor", message)]
    if before is not None and (number(before) / number(after)).denominator == 1:
        message = f"multipleOf {render(before)} -> {render(after)}: every multiple still passes"
        return [walk.change(at, "bound-relaxed", "minor", message)]
    shift = f"{render(before)} -> {render(after)}" if before is not None else f"added: {after}"
    return [narrowing("bound-tightened", f"multipleOf {shift}", ("multipleOf",))]


def _text_rule(
    walk: Walker, old: Schema, new: Schema, at: At, narrowing: _Narrowing, *, keyword: str
) -> list[Change]:
    """``pattern`` or ``format`` (this package checks formats, so a format is a constraint)."""
    before, after = old.get(keyword), new.get(keyword)
    if json_equal(before, after):
        return []
    if after is None:
        message = f"{keyword} {render(before)} removed"
        return [walk.change(at, f"{keyword}-removed", "minor", message)]
    if before is None:
        message = f"{keyword} {render(after)} added: strings that do not match are rejected"
        return [narrowing(f"{keyword}-added", message, (keyword,))]
    message = (
        f"{keyword} changed from {render(before)} to {render(after)}: a string that matched the "
        "old one may not match the new one"
    )
    return [narrowing(f"{keyword}-changed", message, (keyword,))]


def _unique_items(
    walk: Walker, old: Schema, new: Schema, at: At, narrowing: _Narrowing
) -> list[Change]:
    before, after = old.get("uniqueItems") is True, new.get("uniqueItems") is True
    if before == after:
        return []
    if before:
        message = "uniqueItems removed: repeated items are now accepted"
        return [walk.change(at, "constraint-removed", "minor", message)]
    message = "uniqueItems added: an array with a repeated item is now rejected"
    return [narrowing("constraint-added", message, ("uniqueItems",))]
