"""Keywords that combine subschemas: ``allOf`` (and a ``$ref`` beside other keywords), ``anyOf``,
``oneOf``, ``if``/``then``/``else`` and ``not``.

``allOf`` and ``anyOf`` are monotone: a wider part makes a wider whole. ``oneOf`` is not: a wider
alternative can make a document match two alternatives, which ``oneOf`` rejects, unless the
alternatives are told apart by a required member with distinct values. ``not`` turns a wider part
into a narrower whole, and a changed ``if`` changes where ``then`` and ``else`` apply."""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import TYPE_CHECKING, Any

from toolcall_spec.compat.keywords import trivially_true
from toolcall_spec.compat.locations import MISSING, At, Loc, Side
from toolcall_spec.compat.values import finite_values
from toolcall_spec.json_values import json_equal, json_key

if TYPE_CHECKING:
    from toolcall_spec.compat.changes import Change
    from toolcall_spec.compat.keywords import Walker

Schema = dict[str, Any]
Part = tuple[Any, tuple[str | int, ...]]
"""A subschema and where it sits below the schema that holds it (``("allOf", 1)``)."""


def conjuncts(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    """``allOf``; a ``$ref`` that stands beside other validation keywords is one more conjunct."""
    pairs, removed, added = pair_up(
        _conjunct_parts(old), _conjunct_parts(new), _equivalence(walk, at)
    )
    out = []
    for (before, old_keys), (after, new_keys) in pairs:
        out += walk.schema(before, after, at.split(None, old_keys, new_keys))
    for schema, keys in removed:
        if not trivially_true(schema):
            here = at.split(None, keys, keys)
            message = "an allOf constraint was removed: documents no longer need to satisfy it"
            out.append(walk.change(here, "constraint-removed", "minor", message, here.old))
    for schema, keys in added:
        if not trivially_true(schema):
            message = "an allOf constraint was added: documents must now satisfy it too"
            out.append(
                walk.change(at.split(None, keys, keys), "constraint-added", "major", message)
            )
    return out


def alternatives(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    out = []
    for keyword in ("anyOf", "oneOf"):
        before, after = old.get(keyword, MISSING), new.get(keyword, MISSING)
        if before is MISSING and after is MISSING:
            continue
        if not all(v is MISSING or isinstance(v, list) for v in (before, after)):
            if not json_equal(before, after):
                message = f"{keyword} is not a list on one side, so not classified"
                out.append(walk.change(at, "unclassified", "major", message))
            continue
        if before is MISSING:
            message = f"{keyword} added: a document must now match its alternatives"
            out.append(walk.change(at, "constraint-added", "major", message))
        elif after is MISSING:
            message = f"{keyword} removed: documents no longer need to match an alternative"
            out.append(walk.change(at, "constraint-removed", "minor", message))
        else:
            out += _alternatives(walk, keyword, before, after, at)
    return out


def conditional(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before, after = old.get("if", MISSING), new.get("if", MISSING)
    branches = [(k, old.get(k, MISSING), new.get(k, MISSING)) for k in ("then", "else")]
    here = at.to(None, "if")
    if before is MISSING and after is MISSING:
        if all(json_equal(b, a) for _, b, a in branches):
            return []
        message = "then/else changed without an if, which validators ignore"
        return [walk.change(at, "annotation-changed", "patch", message)]
    if before is MISSING or after is MISSING:
        holder = new if before is MISSING else old
        if all(trivially_true(holder.get(k, MISSING)) for k in ("then", "else")):
            return []
        if before is MISSING:
            message = "a condition (if/then/else) was added: documents must now satisfy it"
            return [walk.change(here, "constraint-added", "major", message)]
        message = "a condition (if/then/else) was removed: documents no longer need to satisfy it"
        return [walk.change(here, "constraint-removed", "minor", message, here.old)]
    if walk.probe(before, after, here) - {"patch"}:
        message = (
            "the if condition changed, so which documents then/else apply to changed; the "
            "change cannot be classified"
        )
        return [walk.change(here, "condition-changed", "major", message)]
    return [c for key, b, a in branches for c in walk.schema(b, a, at.to(None, key))]


def negation(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before, after = old.get("not", MISSING), new.get("not", MISSING)
    here = at.to(None, "not")
    if before is MISSING and after is MISSING:
        return []
    if before is MISSING:
        if after is False:
            return []
        message = "a not constraint was added: documents that match its schema become invalid"
        return [walk.change(here, "constraint-added", "major", message)]
    if after is MISSING:
        if before is False:
            return []
        message = "a not constraint was removed"
        return [walk.change(here, "constraint-removed", "minor", message, here.old)]
    # The whole widens exactly when the negated schema narrows: compare it the other way round.
    levels = walk.probe(after, before, here, swap=True)
    if "major" in levels:
        message = (
            "the schema under not changed and cannot be shown to exclude fewer documents "
            "than before"
        )
        return [walk.change(here, "constraint-changed", "major", message)]
    if "minor" in levels:
        message = "the schema under not excludes fewer documents than before"
        return [walk.change(here, "constraint-relaxed", "minor", message)]
    if levels:
        return [walk.change(here, "annotation-changed", "patch", "annotations under not changed")]
    return []


# -- oneOf / anyOf -------------------------------------------------------------------------------


def _alternatives(
    walk: Walker, keyword: str, before: list[Any], after: list[Any], at: At
) -> list[Change]:
    old_parts: list[Part] = [(s, (keyword, i)) for i, s in enumerate(before)]
    new_parts: list[Part] = [(s, (keyword, i)) for i, s in enumerate(after)]
    pairs, removed, added = pair_up(old_parts, new_parts, _equivalence(walk, at))
    exclusive = keyword == "oneOf"
    distinct = exclusive and discriminated(walk, walk.new_side, new_parts, at.new)
    out = []
    for (old_schema, old_keys), (new_schema, new_keys) in pairs:
        here = at.split(None, old_keys, new_keys)
        out += walk.schema(old_schema, new_schema, here)
        if exclusive and not distinct:
            widened = walk.probe(old_schema, new_schema, here)
            if "minor" in widened and "major" not in widened:
                message = (
                    "a oneOf alternative now accepts more; a document may now match two "
                    "alternatives, which oneOf rejects (the alternatives have no required member "
                    "with distinct values that tells them apart)"
                )
                out.append(walk.change(here, "alternative-overlap", "major", message))
    for _, keys in removed:
        here = at.split(None, keys, keys)
        message = f"{keyword} alternative removed: documents that matched only it become invalid"
        out.append(walk.change(here, "alternative-removed", "major", message, here.old))
    for _, keys in added:
        here = at.split(None, keys, keys)
        if exclusive and not distinct:
            message = (
                "oneOf alternative added: a document that matched another alternative may match "
                "this one too, which oneOf rejects"
            )
            out.append(walk.change(here, "alternative-added", "major", message))
        else:
            out.append(
                walk.change(here, "alternative-added", "minor", f"{keyword} alternative added")
            )
    return out


def discriminated(walk: Walker, side: Side, parts: list[Part], base: Loc) -> bool:
    """The alternatives each require one member whose allowed values (``const``/``enum``) are
    pairwise disjoint, so no document matches two of them."""
    resolved = []
    for schema, keys in parts:
        found = walk.collapse(side, schema, base.child(*keys))
        if not isinstance(found.schema, dict):
            return False
        resolved.append(found)
    required = [_strings(r.schema.get("required")) for r in resolved]
    for name in sorted(set.intersection(*required) if required else set()):
        sets = []
        for found in resolved:
            members = found.schema.get("properties")
            member = members.get(name, MISSING) if isinstance(members, dict) else MISSING
            if member is MISSING:
                break
            values = finite_values(walk.collapse(side, member, found.loc).schema)
            if values is None:
                break
            sets.append({json_key(v) for v in values})
        else:
            if all(a.isdisjoint(b) for a, b in combinations(sets, 2)):
                return True
    return False


Matcher = Callable[[Part, Part], bool]


def _equivalence(walk: Walker, at: At) -> Matcher:
    """Two parts that differ in writing only (say, reordered ``enum`` values or alternatives):
    a separate walk finds no change between them."""

    def equivalent(old: Part, new: Part) -> bool:
        return not walk.probe(old[0], new[0], at.split(None, old[1], new[1]))

    return equivalent


def pair_up(
    old: list[Part], new: list[Part], equivalent: Matcher | None = None
) -> tuple[list[tuple[Part, Part]], list[Part], list[Part]]:
    """Match the parts of two lists: equal ones first, then equivalent ones, then the same
    ``$ref``, then by position when as many are left on both sides (alternatives are a set, so a
    reordering must not pair unrelated parts). Returns the pairs, the old and the new leftovers."""
    pairs: list[tuple[Part, Part]] = []
    left_old, left_new = list(old), list(new)
    matchers: list[Matcher] = [lambda a, b: json_equal(a[0], b[0])]
    if equivalent is not None:
        matchers.append(equivalent)
    matchers.append(lambda a, b: _same_ref(a[0], b[0]))
    for same in matchers:
        for part in list(left_old):
            match = next((p for p in left_new if same(part, p)), None)
            if match is not None:
                pairs.append((part, match))
                left_old.remove(part)
                left_new.remove(match)
    if len(left_old) == len(left_new):
        pairs += list(zip(left_old, left_new, strict=True))
        left_old, left_new = [], []
    return pairs, left_old, left_new


def _strings(value: Any) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _same_ref(a: Any, b: Any) -> bool:
    return (
        isinstance(a, dict)
        and isinstance(b, dict)
        and "$ref" in a
        and a.get("$ref") == b.get("$ref")
    )


def _conjunct_parts(schema: Schema) -> list[Part]:
    parts: list[Part] = []
    if "$ref" in schema:  # beside other validation keywords, or the walk would have followed it
        parts.append(({"$ref": schema["$ref"]}, ()))
    all_of = schema.get("allOf")
    if isinstance(all_of, list):
        parts += [(s, ("allOf", i)) for i, s in enumerate(all_of)]
    return parts
