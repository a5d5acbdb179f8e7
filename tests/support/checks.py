"""The check functions behind the differential property, the named invariants and the schema lint.

Each check returns what is wrong (a message, or a list of findings), empty when all is well. The
property tests assert that nothing is wrong on generated input;
tests/schemas/test_planted_defects.py runs the very same functions against planted defects (a
lax model, a schema without a rule, a truthy ``is_tool_error``) and asserts that something is
found, so no check can pass vacuously.

A *judge* is one way of saying whether a document is valid: the pure-Python ``jsonschema`` oracle,
the fast validator (jsonschema-rs, as ``toolcall_spec.validate`` uses it), and the generated models
reading the JSON text or the Python object.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable

from toolcall_spec import models
from toolcall_spec.catalog import SCHEMA_FILES, Kind, all_schemas, validator

Judge = Callable[[Any], bool]
Schemas = Mapping[str, dict[str, Any]]
"""Schema files by path under schemas/, e.g. ``events/run-event.schema.json``."""

MODELS: dict[Kind, type[BaseModel]] = {
    "suite": models.AgentEvalSuite,
    "capabilities": models.DiscoveryDocument,
    "run-event": models.RunEvent,
    "eval-summary": models.EvalSummary,
    "error-envelope": models.ErrorEnvelope,
    "call-tool-result": models.CallToolResult,
    "tool-call-event": models.ToolCallEvent,
    "ingest-batch": models.IngestBatch,
    "ingest-answer": models.IngestAnswer,
}
"""The generated model of each document kind."""

HATCH_PATTERN = "^(openwop-|x-|vendor\\.)"
"""The 0.1 vendor hatch. OpenWOP v2 has none on the objects this package checks; kept to test that
the schemas refuse it."""
EXTENSION_KEY_PATTERN = "^[a-z][a-z0-9]*(-[a-z0-9]+)*\\.[a-z][a-z0-9]*(-[a-z0-9]+)*$"
"""The one ``patternProperties`` key allowed: the discovery document's ``extensions`` keys
(``<org>.<name>``), as OpenWOP v2 defines them."""
SCHEMA_BASE = "https://toolcall-spec.github.io/toolcall-spec/schemas/"
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

# --- judges -------------------------------------------------------------------------------------


def _with(overrides: Schemas | None) -> dict[str, dict[str, Any]]:
    return {**all_schemas(), **(overrides or {})}


def oracle_registry(overrides: Schemas | None = None) -> Registry[Any]:
    """Every schema under its ``$id``; nothing is retrieved, so a missing one fails, offline."""
    resources = [(s["$id"], Resource.from_contents(s)) for s in _with(overrides).values()]
    return Registry().with_resources(resources)


def oracle_validator(kind: Kind, overrides: Schemas | None = None) -> Draft202012Validator:
    """The reference: pure-Python jsonschema, draft 2020-12, formats checked."""
    schema = _with(overrides)[SCHEMA_FILES[kind]]
    return Draft202012Validator(
        schema,
        registry=oracle_registry(overrides),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


@cache
def default_oracle(kind: Kind) -> Draft202012Validator:
    """The oracle of ``kind`` over the packaged schemas, compiled once."""
    return oracle_validator(kind)


def oracle(kind: Kind, overrides: Schemas | None = None) -> Judge:
    compiled = default_oracle(kind) if overrides is None else oracle_validator(kind, overrides)
    return compiled.is_valid


def fast(kind: Kind, overrides: Schemas | None = None) -> Judge:
    """The package's validator (``catalog.validator``), or the same over overridden schemas."""
    if overrides is None:
        return validator(kind).is_valid
    schemas = _with(overrides)
    registry = jsonschema_rs.Registry([(s["$id"], s) for s in schemas.values()])
    compiled = jsonschema_rs.Draft202012Validator(
        schemas[SCHEMA_FILES[kind]], registry=registry, validate_formats=True
    )
    return compiled.is_valid


def model_json(model: type[BaseModel]) -> Judge:
    """The model reading the document's JSON text (``model_validate_json``)."""

    def judge(document: Any) -> bool:
        try:
            model.model_validate_json(json.dumps(document, ensure_ascii=False))
        except ValidationError:
            return False
        return True

    return judge


def model_python(model: type[BaseModel]) -> Judge:
    """The model reading the Python object (``model_validate``)."""

    def judge(document: Any) -> bool:
        try:
            model.model_validate(document)
        except ValidationError:
            return False
        return True

    return judge


def judges(kind: Kind, **replacements: Judge) -> dict[str, Judge]:
    """The four judges of ``kind``: ``oracle``, ``fast``, ``model_json``, ``model_python``; a
    keyword argument replaces one of them (a planted defect)."""
    panel: dict[str, Judge] = {
        "oracle": oracle(kind),
        "fast": fast(kind),
        "model_json": model_json(MODELS[kind]),
        "model_python": model_python(MODELS[kind]),
    }
    unknown = set(replacements) - set(panel)
    assert not unknown, f"no judge named {unknown}"
    return {**panel, **replacements}


def verdicts(panel: Mapping[str, Judge], document: Any) -> dict[str, bool]:
    return {name: judge(document) for name, judge in panel.items()}


def accepted_by(panel: Mapping[str, Judge], document: Any) -> list[str]:
    return [name for name, valid in verdicts(panel, document).items() if valid]


def rejected_by(panel: Mapping[str, Judge], document: Any) -> list[str]:
    return [name for name, valid in verdicts(panel, document).items() if not valid]


# --- the differential property ------------------------------------------------------------------


def disagreement(panel: Mapping[str, Judge], document: Any) -> str | None:
    """``None`` when every judge returns the same verdict, else who said what."""
    said = verdicts(panel, document)
    if len(set(said.values())) <= 1:
        return None
    return f"judges disagree: {said}"


def invalid_fraction(judge: Judge, documents: Iterable[Any]) -> float:
    """The share of ``documents`` that ``judge`` rejects (near misses must be mostly invalid)."""
    said = [judge(document) for document in documents]
    return said.count(False) / len(said) if said else 0.0


# --- the named invariants -----------------------------------------------------------------------


def literal_true_mismatch(is_tool_error: Callable[[object], bool], value: Any) -> str | None:
    """``is_tool_error`` must say "error" exactly when ``isError`` is the boolean ``true``, for a
    CallToolResult-shaped mapping and for a fixture entry alike."""
    expected = value is True
    for shape in ({"content": [], "isError": value}, {"tool": "t:x", "isError": value}):
        if is_tool_error(shape) is not expected:
            return f"is_tool_error({shape!r}) is {not expected}, expected {expected}"
    if is_tool_error(value) is not False:
        return f"is_tool_error({value!r}) reports an error for a value that is no tool result"
    return None


def exclusivity_violation(
    panel: Mapping[str, Judge], event: dict[str, Any], outcome: Any
) -> str | None:
    """Given a valid ``agent.tool-returned`` event that carries ``error`` (and no ``outcome``):
    every judge accepts it, and every judge rejects it once it carries ``outcome`` as well."""
    payload = event["payload"]
    assert "error" in payload, "give an event with error"
    assert "outcome" not in payload, "give an event without outcome"
    both = {**event, "payload": {**payload, "outcome": outcome}}
    problems = [
        f"{name} rejects the event with error alone" for name in rejected_by(panel, event)
    ] + [f"{name} accepts error beside outcome" for name in accepted_by(panel, both)]
    return "; ".join(problems) or None


ERROR_FIELDS = ("error_category", "error_message")


def error_fields_violation(
    panel: Mapping[str, Judge], event: dict[str, Any], category: str
) -> str | None:
    """Given a valid ``tool_call`` event: the error fields are accepted only on ``status:
    error``, and ``status: error`` is accepted only with a category."""
    bare = {k: v for k, v in event.items() if k not in ERROR_FIELDS}
    status = bare.get("status")
    expectations: list[tuple[str, dict[str, Any], bool]] = [("the event", event, True)]
    if status == "error":
        expectations.append(("status error without a category", bare, False))
        with_category = {**bare, "error_category": category}
        expectations.append(("status error with a category", with_category, True))
    else:
        for field in ERROR_FIELDS:
            expectations.append((f"{field} on status {status!r}", {**bare, field: category}, False))
        expectations.append((f"status {status!r} without error fields", bare, True))
    problems = [
        f"{name} {'rejects' if expected else 'accepts'} {label}"
        for label, document, expected in expectations
        for name, valid in verdicts(panel, document).items()
        if valid is not expected
    ]
    return "; ".join(problems) or None


# --- schema lint --------------------------------------------------------------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "contains", "propertyNames", "unevaluatedItems")
_CONDITIONS = ("if", "then", "else", "not")
"""Keywords whose subschemas add conditions to the same instance rather than define an object."""


def subschemas(schema: Any, pointer: str = "#") -> Iterator[tuple[str, dict[str, Any], bool]]:
    """Every schema object inside ``schema`` (itself included), keyword-aware (an ``enum`` or a
    ``default`` value is not walked), as ``(pointer, subschema, is_condition)``."""
    yield from _walk(schema, pointer, in_condition=False)


def _walk(
    schema: Any, pointer: str, in_condition: bool
) -> Iterator[tuple[str, dict[str, Any], bool]]:
    if not isinstance(schema, dict):
        return
    yield pointer, schema, in_condition
    for keyword in _SCHEMA_MAPS:
        for name, sub in schema.get(keyword, {}).items():
            yield from _walk(sub, f"{pointer}/{keyword}/{name}", in_condition)
    for keyword in _SCHEMA_LISTS:
        for index, sub in enumerate(schema.get(keyword, [])):
            yield from _walk(sub, f"{pointer}/{keyword}/{index}", in_condition)
    for keyword in _SCHEMA_VALUES:
        if keyword in schema:
            yield from _walk(schema[keyword], f"{pointer}/{keyword}", in_condition)
    for keyword in _CONDITIONS:
        if keyword in schema:
            yield from _walk(schema[keyword], f"{pointer}/{keyword}", True)


def meta_schema_problems(schema: dict[str, Any]) -> list[str]:
    """Where ``schema`` breaks the draft 2020-12 meta-schema."""
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)
    return [f"{error.json_path}: {error.message}" for error in meta.iter_errors(schema)]


def identity_problems(path: str, schema: dict[str, Any]) -> list[str]:
    """``$schema`` is draft 2020-12 and ``$id`` is the stable address of the file."""
    problems = []
    if schema.get("$schema") != DRAFT_2020_12:
        problems.append(f"$schema is {schema.get('$schema')!r}, not {DRAFT_2020_12}")
    if schema.get("$id") != SCHEMA_BASE + path:
        problems.append(f"$id is {schema.get('$id')!r}, not {SCHEMA_BASE + path}")
    return problems


def undeclared_additional_properties(schema: dict[str, Any]) -> list[str]:
    """Object definitions (``type: object`` or ``properties``, outside conditions) that leave
    ``additionalProperties`` to its default."""
    return [
        pointer
        for pointer, sub, in_condition in subschemas(schema)
        if not in_condition
        and (sub.get("type") == "object" or "properties" in sub)
        and "additionalProperties" not in sub
    ]


def foreign_pattern_properties(schema: dict[str, Any]) -> list[str]:
    """``patternProperties`` entries other than the ``extensions`` key of the discovery
    document: no closed object takes unknown members through a pattern."""
    return [
        f"{pointer}/patternProperties/{pattern}"
        for pointer, sub, _ in subschemas(schema)
        for pattern in sub.get("patternProperties", {})
        if pattern != EXTENSION_KEY_PATTERN
    ]


def unresolvable_refs(schemas: Schemas) -> list[str]:
    """Every ``$ref`` that the offline registry of ``schemas`` cannot resolve."""
    registry = oracle_registry(schemas)
    problems = []
    for path, schema in schemas.items():
        resolver = registry.resolver(base_uri=schema["$id"])
        for pointer, sub, _ in subschemas(schema):
            if "$ref" in sub:
                try:
                    resolver.lookup(sub["$ref"])
                except Unresolvable:
                    problems.append(f"{path}{pointer[1:]}: $ref {sub['$ref']!r} does not resolve")
    return problems


def schema_copy(path: str) -> dict[str, Any]:
    """A deep copy of a schema file, safe to plant a defect in."""
    copied: dict[str, Any] = json.loads(json.dumps(all_schemas()[path]))
    return copied
