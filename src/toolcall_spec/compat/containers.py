"""Keywords of objects and arrays: members (``properties``, ``required``, ``additionalProperties``,
``patternProperties``, ``propertyNames``, ``dependentRequired``, ``dependentSchemas``), items
(``items``, ``prefixItems``, ``contains``) and ``$defs``.

A member is compared with what the other version did with a member of that name: a member added
to a closed object was rejected before, so listing it is additive; a member added to an open object
was accepted with any value, so giving it a schema narrows what it may hold."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from toolcall_spec.compat.keywords import ANNOTATIONS, trivially_true
from toolcall_spec.compat.locations import (
    ITEMS,
    MISSING,
    NAMES,
    SOME_ITEM,
    UNLISTED,
    At,
    Loc,
    extend,
    index,
    matching,
)
from toolcall_spec.compat.values import render
from toolcall_spec.json_paths import format_path
from toolcall_spec.json_values import json_equal

if TYPE_CHECKING:
    from toolcall_spec.compat.changes import Change
    from toolcall_spec.compat.keywords import Walker

Schema = dict[str, Any]


def objects(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    return [
        *_members(walk, old, new, at),
        *_required(walk, old, new, at),
        *_unlisted(walk, old, new, at),
        *_patterns(walk, old, new, at),
        *walk.schema(
            old.get("propertyNames", MISSING),
            new.get("propertyNames", MISSING),
            at.to(NAMES, "propertyNames"),
        ),
        *_dependent_required(walk, old, new, at),
        *_dependent_schemas(walk, old, new, at),
        *_unevaluated(walk, old, new, at),
    ]


def arrays(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    old_items, new_items = old.get("items", True), new.get("items", True)
    if isinstance(old_items, list) or isinstance(new_items, list):
        if json_equal(old_items, new_items):
            return []
        message = "items as an array is not draft 2020-12 (prefixItems is), so not classified"
        return [walk.change(at, "unclassified", "major", message)]
    old_prefix, new_prefix = _list(old, "prefixItems"), _list(new, "prefixItems")
    out = []
    for position in range(max(len(old_prefix), len(new_prefix))):
        before, old_loc = _positional(old_prefix, old_items, position, at.old)
        after, new_loc = _positional(new_prefix, new_items, position, at.new)
        out += walk.schema(before, after, At(at.to(index(position)).path, old_loc, new_loc))
    out += walk.schema(old_items, new_items, at.to(ITEMS, "items"))
    return out + _contains(walk, old, new, at)


def definitions(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    """``$defs``, last: a definition some member uses was compared where it is used; the others
    are compared here, named by their schema location."""
    old_defs, new_defs = _map(old, "$defs"), _map(new, "$defs")
    out = []
    for name in _union(old_defs, new_defs):
        here = at.to(None, "$defs", name)
        here = At(format_path(here.new.pointer), here.old, here.new)
        if name not in new_defs:
            message = (
                f"definition {name} removed: a schema that refers to it, in this file or "
                "another, no longer resolves"
            )
            out.append(walk.change(here, "definition-removed", "major", message))
        elif name not in old_defs:
            message = f"definition {name} added"
            out.append(walk.change(here, "definition-added", "minor", message))
        else:
            out += walk.schema(old_defs[name], new_defs[name], here)
    return out


# -- members -------------------------------------------------------------------------------------


def _members(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    old_props, new_props = _map(old, "properties"), _map(new, "properties")
    newly_required = _names(new.get("required")) - _names(old.get("required"))
    out = []
    for name in _union(old_props, new_props):
        here = at.to(name, "properties", name)
        if name in old_props and name in new_props:
            out += walk.schema(old_props[name], new_props[name], here)
        elif name in new_props:
            out += _added(
                walk, old, new_props[name], name in newly_required, At(here.path, at.old, here.new)
            )
        else:
            message = (
                f"member {name} removed: documents that carry it lose its meaning, and are "
                "rejected where the object is closed"
            )
            out.append(walk.change(here, "member-removed", "major", message, here.old))
    return out


def _added(walk: Walker, old: Schema, schema: Any, required: bool, here: At) -> list[Change]:
    """A member listed in the new version only; ``here.old`` is the old object's location."""
    name = str(here.new.pointer[-1])
    if required:
        message = f"new member {name} is required: every document without it becomes invalid"
        return [walk.change(here, "member-added-required", "major", message)]
    before = unlisted_schema(old, name, here.old)
    if before is None:
        message = (
            f"cannot tell how the old schema treated a member named {name} (a patternProperties "
            "regex does not compile here), so adding it is not classified"
        )
        return [walk.change(here, "member-added-optional", "major", message)]
    schema_before, loc = before
    if schema_before is False:
        message = f"optional member {name} added; the object rejected it before"
        return [walk.change(here, "member-added-optional", "minor", message)]
    nested = walk.schema(schema_before, schema, At(here.path, loc, here.new))
    if all(c.level == "patch" for c in nested):
        message = (
            f"member {name} listed; it was accepted before as an unlisted member with the same "
            "constraints, so nothing changes for validation"
        )
        return [*nested, walk.change(here, "member-documented", "patch", message)]
    message = (
        f"optional member {name} added to an object that already accepted it as an unlisted "
        "member; its value is now held to the member's schema (see the changes at this path)"
    )
    return [walk.change(here, "member-added-optional", "minor", message), *nested]


def unlisted_schema(schema: Schema, name: str, loc: Loc) -> tuple[Any, Loc] | None:
    """What ``schema`` (at ``loc``) applies to a member ``name`` it does not list: the matching
    ``patternProperties``, else ``additionalProperties``; ``None`` when a regex fails to compile."""
    matched = []
    for pattern, sub in _map(schema, "patternProperties").items():
        try:
            if re.search(pattern, name):
                matched.append((sub, loc.child("patternProperties", pattern)))
        except re.error:
            return None
    if len(matched) == 1:
        return matched[0]
    if matched:
        return {"allOf": [sub for sub, _ in matched]}, loc.child("patternProperties")
    return schema.get("additionalProperties", True), loc.child("additionalProperties")


def _required(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    old_props, new_props = _map(old, "properties"), _map(new, "properties")
    before, after = _names(old.get("required")), _names(new.get("required"))
    out = []
    for name in sorted(after - before):
        if name in new_props and name not in old_props:
            continue  # reported as member-added-required
        message = f"member {name} is now required: documents without it become invalid"
        out.append(walk.change(_in_required(at, name), "member-made-required", "major", message))
    for name in sorted(before - after):
        if name in old_props and name not in new_props:
            continue  # reported as member-removed
        message = f"member {name} is no longer required"
        out.append(walk.change(_in_required(at, name), "member-made-optional", "minor", message))
    return out


def _in_required(at: At, name: str) -> At:
    """The member ``name``, located at the ``required`` list that names it."""
    return At(extend(at.path, name), at.old.child("required"), at.new.child("required"))


def _unlisted(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before = old.get("additionalProperties", True)
    after = new.get("additionalProperties", True)
    here = at.to(UNLISTED, "additionalProperties")
    if after is False and before is not False:
        message = (
            "object closed (additionalProperties false): members it does not list were accepted "
            "and are now rejected"
        )
        return [walk.change(here, "object-closed", "major", message)]
    if before is False and after is not False:
        message = "object opened: members it does not list are now accepted"
        if not trivially_true(after):
            message += " when they match the additionalProperties schema"
        return [walk.change(here, "object-opened", "minor", message)]
    return walk.schema(before, after, here)


def _patterns(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    old_patterns, new_patterns = _map(old, "patternProperties"), _map(new, "patternProperties")
    out = []
    for pattern in _union(old_patterns, new_patterns):
        here = at.to(matching(pattern), "patternProperties", pattern)
        if pattern in old_patterns and pattern in new_patterns:
            out += walk.schema(old_patterns[pattern], new_patterns[pattern], here)
        elif pattern in new_patterns:
            base = at.old.child("additionalProperties")
            out += _pattern_added(walk, old, new, pattern, At(here.path, base, here.new))
        else:
            base = at.new.child("additionalProperties")
            out += _pattern_removed(walk, old_patterns[pattern], new, pattern, here, base=base)
    return out


def _pattern_added(walk: Walker, old: Schema, new: Schema, pattern: str, here: At) -> list[Change]:
    """``here.old`` is the old ``additionalProperties``, which covered these names before."""
    schema = new["patternProperties"][pattern]
    if trivially_true(schema) and old.get("additionalProperties", True) is not False:
        return []  # names matching it were accepted with any value, and still are
    out = []
    if not trivially_true(schema):
        others = [p for p in _map(old, "patternProperties") if p != pattern]
        listed = [n for n in _map(new, "properties") if _matches(pattern, n) is not False]
        if others or listed:
            message = (
                f"patternProperties /{pattern}/ added with a schema: a member that also matches "
                f"an existing pattern or is listed ({', '.join(others + listed)}) is now held "
                "to it too, which cannot be shown to be safe"
            )
            out.append(walk.change(here, "member-pattern-added", "major", message))
    before = old.get("additionalProperties", True)
    if before is False:
        message = f"members whose names match /{pattern}/ are now accepted"
        return [walk.change(here, "member-pattern-added", "minor", message), *out]
    return out + walk.schema(before, schema, here)


def _pattern_removed(
    walk: Walker, schema: Any, new: Schema, pattern: str, here: At, *, base: Loc
) -> list[Change]:
    """``base`` is the new ``additionalProperties``, which covers these names now."""
    after = new.get("additionalProperties", True)
    if after is False and schema is not False:
        message = (
            f"patternProperties /{pattern}/ removed from a closed object: members matching it "
            "were accepted and are now rejected unless listed"
        )
        return [walk.change(here, "member-pattern-removed", "major", message, here.old)]
    return walk.schema(schema, after, At(here.path, here.old, base))


def _matches(pattern: str, name: str) -> bool | None:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return None


def _dependent_required(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before, after = _map(old, "dependentRequired"), _map(new, "dependentRequired")
    out = []
    for key in _union(before, after):
        here = at.to(key, "dependentRequired", key)
        was, now = _names(before.get(key)), _names(after.get(key))
        for name in sorted(now - was):
            message = f"when {key} is present, {name} is now required"
            out.append(walk.change(here, "dependency-added", "major", message))
        for name in sorted(was - now):
            message = f"when {key} is present, {name} is no longer required"
            out.append(walk.change(here, "dependency-removed", "minor", message))
    return out


def _dependent_schemas(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before, after = _map(old, "dependentSchemas"), _map(new, "dependentSchemas")
    return [
        change
        for key in _union(before, after)
        for change in walk.schema(
            before.get(key, MISSING), after.get(key, MISSING), at.to(None, "dependentSchemas", key)
        )
    ]


def _unevaluated(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    out = []
    for keyword in ("unevaluatedProperties", "unevaluatedItems"):
        if keyword not in old and keyword not in new:
            continue
        if not json_equal(_validation(old), _validation(new)):
            message = (
                f"{keyword} depends on every other keyword of this schema, so a change here "
                "cannot be classified"
            )
            out.append(walk.change(at, "unclassified", "major", message))
    return out


def _contains(walk: Walker, old: Schema, new: Schema, at: At) -> list[Change]:
    before, after = old.get("contains", MISSING), new.get("contains", MISSING)
    here = at.to(SOME_ITEM, "contains")
    if before is MISSING and after is MISSING:
        return []
    if before is MISSING:
        message = f"contains added: an array must now hold an item matching {render(after)}"
        return [walk.change(here, "constraint-added", "major", message)]
    if after is MISSING:
        message = "contains removed: an array no longer needs a matching item"
        return [walk.change(here, "constraint-removed", "minor", message)]
    return walk.schema(before, after, here)


# -- helpers -------------------------------------------------------------------------------------


def _map(schema: Schema, keyword: str) -> dict[str, Any]:
    value = schema.get(keyword)
    return value if isinstance(value, dict) else {}


def _list(schema: Schema, keyword: str) -> list[Any]:
    value = schema.get(keyword)
    return value if isinstance(value, list) else []


def _names(value: Any) -> set[str]:
    return {n for n in value if isinstance(n, str)} if isinstance(value, list) else set()


def _union(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    return [*first, *(k for k in second if k not in first)]


def _positional(prefix: list[Any], items: Any, position: int, loc: Loc) -> tuple[Any, Loc]:
    if position < len(prefix):
        return prefix[position], loc.child("prefixItems", position)
    return items, loc.child("items")


def _validation(schema: Schema) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k not in ANNOTATIONS}
