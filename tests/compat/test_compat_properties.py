"""Properties of the compatibility comparison, over generated schemas and mutations of the real
ones (tests/support/strategies/compat.py):

- a schema compared with itself, or with the same schema written in another order, has no change;
- adding an optional member at any object site is never major, and the same member required is
  always major (so the first property is not vacuous: the sites are real and seen);
- soundness against the validator: whenever a widening mutation of a packaged schema is not
  classified major, every document the old schemas accept is still accepted by the new ones
  (jsonschema-rs over the mutated files). A planted misclassification shows the check can fail.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.checks import fast
from support.repo import EXAMPLES
from support.strategies import Draw, valid_documents
from support.strategies.compat import (
    LIST_KEYWORDS,
    MAP_KEYWORDS,
    NON_MONOTONE,
    ONE_KEYWORDS,
    SURELY_WIDER,
    Pointer,
    at,
    generated_schemas,
    object_sites,
    subschemas,
    with_optional_member,
)

from toolcall_spec.catalog import KINDS, SCHEMA_FILES, Kind, all_schemas
from toolcall_spec.compat import Change, compare, compare_documents, verdict
from toolcall_spec.loading import read_json_file

WITH_SITES = sorted(path for path, schema in all_schemas().items() if object_sites(schema))


SCHEMA_SIZED = settings(deadline=None)
"""Whole packaged schemas per example: the discovery document alone lists 80 members, so one
example can take longer than Hypothesis's default deadline on a loaded machine."""


def _one_file(path: str, new: Any) -> list[Change]:
    """The changes to one packaged file (its references into other files stay as they are)."""
    return compare_documents({path: all_schemas()[path]}, {path: new})


def _names(changes: list[Change], name: str) -> list[Change]:
    return [c for c in changes if c.path == name or c.path.endswith(f".{name}")]


# -- no change -----------------------------------------------------------------------------------


@given(generated_schemas())
def test_a_generated_schema_compared_with_a_copy_has_no_changes(schema: Any) -> None:
    assert compare(schema, copy.deepcopy(schema)) == []


def _reordered(rng: random.Random, schema: Any) -> Any:
    """The same schema with member order, ``required``, ``enum`` and the alternatives of
    ``anyOf``/``allOf``/``oneOf`` shuffled (``prefixItems`` keeps its order: it is positional)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    keys = list(schema)
    rng.shuffle(keys)
    for keyword in keys:
        value = schema[keyword]
        if keyword in ("required", "enum") and isinstance(value, list):
            value = rng.sample(value, len(value))
        elif keyword in MAP_KEYWORDS and isinstance(value, dict):
            names = rng.sample(list(value), len(value))
            value = {name: _reordered(rng, value[name]) for name in names}
        elif keyword in ONE_KEYWORDS or keyword in NON_MONOTONE:
            value = _reordered(rng, value)
        elif keyword in LIST_KEYWORDS and isinstance(value, list):
            value = [_reordered(rng, v) for v in value]
            if keyword != "prefixItems":
                value = rng.sample(value, len(value))
        out[keyword] = value
    return out


@SCHEMA_SIZED
@given(st.one_of(generated_schemas(), st.sampled_from(list(all_schemas().values()))), st.randoms())
def test_the_same_schema_in_another_order_has_no_changes(schema: Any, rng: random.Random) -> None:
    """Slow on purpose (over 10 s): every example compares two whole schema trees."""
    assert compare(schema, _reordered(rng, schema)) == []


# -- adding an optional member -------------------------------------------------------------------


@st.composite
def _sources(draw: Draw) -> tuple[str, Any]:
    """A packaged schema file, or a generated schema (named ``""``) with an object site."""
    if draw(st.booleans()):
        path = draw(st.sampled_from(WITH_SITES))
        return path, all_schemas()[path]
    return "", draw(generated_schemas().filter(object_sites))


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
@SCHEMA_SIZED
@given(_sources(), st.data())
def test_adding_an_optional_member_anywhere_is_never_major(
    source: tuple[str, Any], data: st.DataObject
) -> None:
    """Slow on purpose (over 10 s): a property over every place in the packaged schemas."""
    path, schema = source
    new, _, name = with_optional_member(data.draw, schema)
    changes = _one_file(path, new) if path else compare(schema, new)
    assert verdict(changes) != "major", [str(c) for c in changes]
    seen = {c.kind for c in _names(changes, name)}
    assert seen & {"member-added-optional", "member-documented"}, [str(c) for c in changes]
    event(f"verdict: {verdict(changes)}")


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
@SCHEMA_SIZED
@given(_sources(), st.data())
def test_adding_a_required_member_anywhere_is_major(
    source: tuple[str, Any], data: st.DataObject
) -> None:
    """Slow on purpose (over 10 s): a property over every place in the packaged schemas."""
    path, schema = source
    new, _, name = with_optional_member(data.draw, schema, required=True)
    changes = _one_file(path, new) if path else compare(schema, new)
    assert [c.level for c in _names(changes, name) if c.kind == "member-added-required"] == [
        "major"
    ]


# -- soundness against the validator -------------------------------------------------------------

Mutation = Callable[[Draw, dict[str, Any]], bool]
"""Widens one subschema in place; ``False`` when it has nothing to widen."""


def _add_enum_value(draw: Draw, schema: dict[str, Any]) -> bool:
    if not isinstance(schema.get("enum"), list):
        return False
    schema["enum"].append(draw(st.sampled_from(["zq-new", 12345, None])))
    return True


BOUNDS = ("maxLength", "maxItems", "maximum", "minLength", "minItems", "minimum")


def _relax_bound(draw: Draw, schema: dict[str, Any]) -> bool:
    bounds = [k for k in BOUNDS if k in schema]
    if not bounds:
        return False
    keyword = draw(st.sampled_from(bounds))
    if draw(st.booleans()):
        del schema[keyword]
    elif keyword.startswith("max"):
        schema[keyword] += 1
    else:
        schema[keyword] -= 1 if schema[keyword] > 0 or keyword == "minimum" else 0
    return True


def _drop_pattern(draw: Draw, schema: dict[str, Any]) -> bool:
    return schema.pop("pattern", None) is not None


def _allow_null(draw: Draw, schema: dict[str, Any]) -> bool:
    if not isinstance(schema.get("type"), str):
        return False
    schema["type"] = [schema["type"], "null"]
    return True


def _open_object(draw: Draw, schema: dict[str, Any]) -> bool:
    if schema.get("additionalProperties") is not False:
        return False
    schema["additionalProperties"] = True
    return True


def _drop_required(draw: Draw, schema: dict[str, Any]) -> bool:
    if not schema.get("required"):
        return False
    schema["required"].remove(draw(st.sampled_from(schema["required"])))
    return True


WIDENINGS: dict[str, Mutation] = {
    "enum-value": _add_enum_value,
    "bound": _relax_bound,
    "pattern": _drop_pattern,
    "null": _allow_null,
    "open": _open_object,
    "required": _drop_required,
}


@st.composite
def _widened(draw: Draw) -> tuple[str, Any, str, bool]:
    """A packaged file, a widened copy, the mutation's name, and whether the mutated subschema
    lies where a wider part surely makes a wider whole (not under not, if or oneOf)."""
    path = draw(st.sampled_from(sorted(all_schemas())))
    new = copy.deepcopy(all_schemas()[path])
    sites = {n: [p for p, s in subschemas(new) if _could(n, s)] for n in sorted(WIDENINGS)}
    name = draw(st.sampled_from([n for n, found in sites.items() if found]))
    pointer: Pointer = draw(st.sampled_from(sites[name]))
    assert WIDENINGS[name](draw, at(new, pointer))
    surely = pointer in {p for p, _ in subschemas(new, skip=SURELY_WIDER)}
    return path, new, name, surely


def _could(name: str, schema: dict[str, Any]) -> bool:
    keyword = {"enum-value": "enum", "pattern": "pattern", "required": "required"}.get(name)
    if keyword is not None:
        return bool(schema.get(keyword))
    if name == "bound":
        return any(k in schema for k in BOUNDS)
    if name == "null":
        return isinstance(schema.get("type"), str)
    return schema.get("additionalProperties") is False


def _files_of(kind: Kind) -> set[str]:
    """The schema files a document of ``kind`` is validated against: its own and every file its
    references reach."""
    by_id = {schema["$id"]: path for path, schema in all_schemas().items()}
    found, todo = set(), [SCHEMA_FILES[kind]]
    while todo:
        path = todo.pop()
        if path not in found:
            found.add(path)
            refs = re.findall(r'"\$ref": "([^"#]+)', json.dumps(all_schemas()[path]))
            todo += [by_id[urljoin(all_schemas()[path]["$id"], ref)] for ref in refs]
    return found


USERS = {path: [k for k in KINDS if path in _files_of(k)] for path in all_schemas()}
"""The kinds whose documents each schema file checks."""


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
@SCHEMA_SIZED
@given(_widened(), st.data())
def test_a_change_not_classified_major_keeps_every_valid_document_valid(
    widened: tuple[str, Any, str, bool], data: st.DataObject
) -> None:
    """Slow on purpose (over 10 s): each example generates a schema change and validates documents
    under both schemas."""
    path, new, name, surely = widened
    kind = data.draw(st.sampled_from(USERS[path]))
    changes = _one_file(path, new)
    level = verdict(changes)
    event(f"{name}: {level}")
    if surely and name != "required":
        # Widening below monotone keywords only: additive, and seen as a change.
        assert level in ("minor", "patch"), [str(c) for c in changes]
    if level == "major":
        return
    document = data.draw(valid_documents(kind))
    assert fast(kind, {path: new})(document), (kind, path, name, [str(c) for c in changes])


def test_every_schema_file_checks_some_kind_of_document() -> None:
    assert [path for path, kinds in USERS.items() if not kinds] == []
    assert "analytics/tool-call-event.schema.json" in _files_of("ingest-batch")


def test_the_soundness_check_catches_a_narrowing_called_additive() -> None:
    """Removing ``tool_error`` from the analytics categories rejects a valid tool-error event: had
    the comparison called that change additive, the property above would have failed."""
    path = "analytics/tool-call-event.schema.json"
    new = copy.deepcopy(all_schemas()[path])
    new["properties"]["error_category"]["enum"].remove("tool_error")
    document = read_json_file(EXAMPLES / "analytics/tool-error-event.json")
    assert fast("tool-call-event")(document)
    assert not fast("tool-call-event", {path: new})(document)
    assert verdict(_one_file(path, new)) == "major"
