"""Hand-written Hypothesis strategies for the compatibility properties (tests/test_compat_*.py).

- ``generated_schemas()``: small draft 2020-12 schemas with the shapes of schemas/: objects with
  properties, required, additionalProperties (true, false or a schema) and a vendor-style
  patternProperties, arrays, enums and bounds, ``$defs`` with ``$ref``, anyOf/allOf, oneOf whose
  alternatives are told apart by a ``kind`` constant, ``not`` and if/then/else over scalars.
- ``subschemas(schema)``: every subschema position, with its JSON pointer; ``object_sites``: those
  that describe an object and sit where a wider part makes a wider whole (not under ``not``,
  ``if`` or ``propertyNames``).
- ``with_optional_member(draw, schema)``: a copy with one optional member added at an object site,
  with a schema that accepts no less than the object accepted for that name before: anything on a
  closed object, the ``additionalProperties`` schema itself otherwise.

Nesting is bounded by hand, and member names added by a mutation start with ``zq`` so they match no
generated or real ``patternProperties`` regex.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from typing import Any

from hypothesis import strategies as st

from support.strategies import Draw

JSON = Any
Pointer = tuple[str | int, ...]

MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "dependentSchemas")
ONE_KEYWORDS = ("additionalProperties", "items", "contains", "then", "else")
LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
NON_MONOTONE = ("not", "if", "propertyNames")
"""Positions where a wider subschema does not make a wider whole."""
MONOTONE_ONLY = frozenset(NON_MONOTONE)
SURELY_WIDER = frozenset({*NON_MONOTONE, "oneOf"})
"""Below these, a wider subschema may not make a wider whole (under ``oneOf``, a wider
alternative can make a document match two)."""

NAMES = ("id", "kind", "value", "items", "meta")
DEF_NAMES = ("Alpha", "Beta")


def subschemas(
    schema: JSON, pointer: Pointer = (), *, skip: frozenset[str] = frozenset()
) -> Iterator[tuple[Pointer, dict[str, Any]]]:
    """Every subschema that is a JSON object, depth first, with its pointer; the subschemas under
    a keyword in ``skip`` are left out."""
    if not isinstance(schema, dict):
        return
    yield pointer, schema
    for keyword, value in schema.items():
        if keyword in skip:
            continue
        if keyword in MAP_KEYWORDS and isinstance(value, dict):
            for name, sub in value.items():
                yield from subschemas(sub, (*pointer, keyword, name), skip=skip)
        elif keyword in ONE_KEYWORDS or keyword in NON_MONOTONE:
            yield from subschemas(value, (*pointer, keyword), skip=skip)
        elif keyword in LIST_KEYWORDS and isinstance(value, list):
            for position, sub in enumerate(value):
                yield from subschemas(sub, (*pointer, keyword, position), skip=skip)


def is_object_schema(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def object_sites(schema: JSON) -> list[Pointer]:
    return [p for p, s in subschemas(schema, skip=MONOTONE_ONLY) if is_object_schema(s)]


def at(document: JSON, pointer: Pointer) -> Any:
    for key in pointer:
        document = document[key]
    return document


# -- generated schemas ---------------------------------------------------------------------------

_scalar_values = st.one_of(
    st.booleans(), st.integers(-5, 5), st.sampled_from(["a", "b", "ab", "text", ""]), st.none()
)


@cache
def scalar_schemas() -> st.SearchStrategy[JSON]:
    typed = st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "boolean", "null"])},
        optional={
            "minimum": st.integers(-3, 3),
            "maximum": st.integers(3, 9),
            "maxLength": st.integers(0, 6),
            "minLength": st.integers(0, 2),
            "pattern": st.sampled_from(["^a", "b$", "^[a-z]*$"]),
            "description": st.just("A value."),
        },
    )
    listed = st.fixed_dictionaries(
        {"enum": st.lists(_scalar_values, min_size=1, max_size=4, unique_by=lambda v: (type(v), v))}
    )
    return st.one_of(
        typed, listed, st.builds(lambda v: {"const": v}, _scalar_values), st.just({}), st.just(True)
    )


def _objects(child: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    @st.composite
    def build(draw: Draw) -> JSON:
        members = draw(st.dictionaries(st.sampled_from(NAMES), child, max_size=4))
        schema: dict[str, Any] = {"type": "object", "properties": members}
        required = draw(st.lists(st.sampled_from(sorted(members)), unique=True)) if members else []
        if required:
            schema["required"] = required
        extra = draw(st.sampled_from(["absent", "true", "false", "schema"]))
        if extra != "absent":
            schema["additionalProperties"] = (
                {"true": True, "false": False}.get(extra) if extra != "schema" else draw(child)
            )
        if draw(st.booleans()):
            schema["patternProperties"] = {"^x-": draw(st.sampled_from([{}, {"type": "string"}]))}
        return schema

    return build()


def _one_of(child: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    """Alternatives that each require ``kind`` with their own constant, as the MCP content blocks
    do with ``type``."""

    @st.composite
    def build(draw: Draw) -> JSON:
        count = draw(st.integers(1, 3))
        branches = []
        for number in range(count):
            members = {
                "kind": {"const": f"k{number}"},
                **draw(st.dictionaries(st.sampled_from(NAMES[2:]), child, max_size=2)),
            }
            closed = draw(st.booleans())
            branches.append(
                {
                    "type": "object",
                    "required": ["kind"],
                    "properties": members,
                    "additionalProperties": not closed,
                }
            )
        return {"oneOf": branches}

    return build()


def _level(child: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
    scalar = scalar_schemas()
    return st.one_of(
        scalar,
        _objects(child),
        st.builds(lambda s: {"type": "array", "items": s}, child),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(child, min_size=1, max_size=3)),
        st.builds(lambda xs: {"allOf": xs}, st.lists(child, min_size=1, max_size=2)),
        _one_of(child),
        st.builds(lambda s: {"not": s}, scalar),
        st.builds(
            lambda c, t, e: {"if": c, "then": t, "else": e},
            scalar,
            child,
            child,
        ),
        st.sampled_from([{"$ref": f"#/$defs/{name}"} for name in DEF_NAMES]),
    )


@cache
def generated_schemas() -> st.SearchStrategy[JSON]:
    """A root object schema with two definitions that members may refer to."""
    leaf = st.one_of(
        scalar_schemas(), st.sampled_from([{"$ref": f"#/$defs/{n}"} for n in DEF_NAMES])
    )
    level_one = _level(leaf)
    level_two = _level(level_one)
    definitions = st.fixed_dictionaries({name: _level(scalar_schemas()) for name in DEF_NAMES})
    return st.builds(
        lambda root, defs: {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **root,
            "$defs": defs,
        },
        _objects(level_two),
        definitions,
    )


# -- mutations -----------------------------------------------------------------------------------


def added_name(draw: Draw, site: dict[str, Any]) -> str:
    taken = set(site.get("properties", {}))
    return draw(
        st.text("abcdefgh", min_size=1, max_size=6)
        .map(lambda s: "zq" + s)
        .filter(lambda n: n not in taken)
    )


def with_optional_member(
    draw: Draw, schema: JSON, *, required: bool = False
) -> tuple[JSON, Pointer, str]:
    """A copy of ``schema`` with one more member at an object site; returns it, the site and the
    member's name. Optional, its schema accepts at least what the object accepted for the name."""
    sites = object_sites(schema)
    assert sites, "the schema has no object site"
    pointer = draw(st.sampled_from(sites))
    new = copy.deepcopy(schema)
    site = at(new, pointer)
    name = added_name(draw, site)
    unlisted = site.get("additionalProperties", True)
    if unlisted is False:
        member = draw(st.one_of(scalar_schemas(), _objects(scalar_schemas())))
    elif unlisted is True:
        member = draw(st.sampled_from([{}, {"description": "Now documented."}, True]))
    else:
        member = copy.deepcopy(unlisted)
    site.setdefault("properties", {})[name] = member
    if required:
        site["required"] = [*site.get("required", []), name]
    return new, pointer, name
