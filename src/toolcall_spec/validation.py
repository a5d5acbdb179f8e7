"""``validate(document, kind=None)``: every problem of a document, each with a path in the
``tasks[0].fixtures.toolResponses[0].isError`` form, from the packaged JSON Schemas (checked with
jsonschema-rs, formats included) plus the package's warnings for valid but suspicious documents."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jsonschema_rs

from toolcall_spec.catalog import KINDS, Kind, infer_kind, is_kind, validator
from toolcall_spec.paths import ROOT, format_path, printable
from toolcall_spec.problems import Problem
from toolcall_spec.rules import is_tool_error

MAX_MESSAGE_LENGTH = 300
"""Messages quote the offending value; a huge value is cut so a problem stays one readable line."""


class UnknownKindError(ValueError):
    """The kind named is not one this package has a schema for."""


def validate(document: Any, kind: Kind | str | None = None) -> list[Problem]:
    """Return the problems of ``document`` (empty when valid). ``kind`` is inferred when ``None``;
    a document whose kind cannot be inferred gets one problem saying so."""
    resolved = _resolve_kind(document, kind)
    if resolved is None:
        return [
            Problem(
                ROOT, f"cannot tell what kind of document this is; name one of: {', '.join(KINDS)}"
            )
        ]
    problems = schema_problems(document, resolved)
    if problems:
        return problems
    return list(_warnings(document, resolved))


def _resolve_kind(document: Any, kind: Kind | str | None) -> Kind | None:
    if kind is None:
        return infer_kind(document)
    if not is_kind(kind):
        raise UnknownKindError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    return kind


def schema_problems(document: Any, kind: Kind) -> list[Problem]:
    """The schema's verdict alone, as problems. ``is_valid`` first: valid documents, the common
    case, never pay for error collection."""
    compiled = validator(kind)
    if compiled.is_valid(document):
        return []
    return [
        Problem(format_path(error.instance_path), _message(error))
        for error in compiled.iter_errors(document)
    ]


def _message(error: jsonschema_rs.ValidationError) -> str:
    kind = type(error.kind).__name__
    schema_path = list(error.schema_path)
    if kind == "Not" and schema_path[-1:] == ["not"]:
        message = "members that are mutually exclusive appear together"
        required = getattr(error.kind, "schema", {})
        if isinstance(required, dict) and isinstance(required.get("required"), list):
            message = f"{' and '.join(map(str, required['required']))} are mutually exclusive"
    elif kind == "FalseSchema" and error.instance_path:
        member = error.instance_path[-1]
        message = f"{member} is not allowed here"
        if "else" in schema_path or "then" in schema_path:
            message += " (a condition on the other members excludes it)"
    elif kind == "Required" and "dependentRequired" in schema_path:
        message = f"{error.message}, because a member that depends on it is present"
    else:
        message = error.message
    message = printable(message)
    if len(message) > MAX_MESSAGE_LENGTH:
        message = message[: MAX_MESSAGE_LENGTH - 1] + "…"
    return message


# Warnings: valid documents that are almost certainly mistakes. One function per rule.


def _suite_success_entry_carries_is_error(document: Any) -> Iterator[Problem]:
    """A success entry whose opaque ``response`` has an ``isError`` key is served as a success
    (RFC 0245 §A keeps ``response`` opaque); it is almost always a recording mistake. A recorded
    ``isError: false`` says the same as the entry, so it is left alone."""
    for t, task in enumerate(document.get("tasks", [])):
        entries = (task.get("fixtures") or {}).get("toolResponses", [])
        for e, entry in enumerate(entries):
            response = entry.get("response")
            if is_tool_error(entry) or not isinstance(response, dict):
                continue
            if "isError" in response and response["isError"] is not False:
                where: list[str | int] = [
                    "tasks",
                    t,
                    "fixtures",
                    "toolResponses",
                    e,
                    "response",
                    "isError",
                ]
                yield Problem(
                    format_path(where),
                    "this entry is served as a success although its response carries isError; "
                    "set the entry's own isError: true to replay a recorded failure",
                    "warning",
                )


DEPRECATED_ON_MISS = "error"
"""This package's 0.1 spelling of ``onMiss: fail`` (upstream's word, RFC 0252)."""


def _suite_deprecated_on_miss(document: Any) -> Iterator[Problem]:
    """``onMiss: error`` still means ``fail``; it validates, with a warning to rename it."""
    for t, task in enumerate(document.get("tasks", [])):
        if (task.get("fixtures") or {}).get("onMiss") == DEPRECATED_ON_MISS:
            yield Problem(
                format_path(["tasks", t, "fixtures", "onMiss"]),
                'onMiss "error" is deprecated: it means "fail", the spelling OpenWOP uses; '
                'write "fail"',
                "warning",
            )


WARNINGS: dict[Kind, tuple[Callable[[Any], Iterable[Problem]], ...]] = {
    "suite": (_suite_success_entry_carries_is_error, _suite_deprecated_on_miss),
}


def _warnings(document: Any, kind: Kind) -> Iterator[Problem]:
    for rule in WARNINGS.get(kind, ()):
        yield from rule(document)
