"""The packaged JSON Schemas: where each kind's schema lives, a registry that resolves every
``$ref`` offline, compiled validators, and kind inference for documents given without a kind."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.abc import Traversable
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, get_args

from toolcall_spec.package_data import data_folder

if TYPE_CHECKING:
    import jsonschema_rs

from toolcall_spec.loading import parse_json

Kind = Literal[
    "suite",
    "capabilities",
    "run-event",
    "eval-summary",
    "error-envelope",
    "call-tool-result",
    "tool-call-event",
    "ingest-batch",
    "ingest-answer",
]
KINDS: tuple[Kind, ...] = get_args(Kind)


def is_kind(name: str) -> TypeGuard[Kind]:
    return name in KINDS


SCHEMA_FILES: Mapping[Kind, str] = {
    "suite": "suites/agent-eval-suite.schema.json",
    "capabilities": "capabilities/discovery.schema.json",
    "run-event": "events/run-event.schema.json",
    "eval-summary": "events/eval-summary.schema.json",
    "error-envelope": "events/error-envelope.schema.json",
    "call-tool-result": "mcp/call-tool-result.schema.json",
    "tool-call-event": "analytics/tool-call-event.schema.json",
    "ingest-batch": "analytics/ingest-batch.schema.json",
    "ingest-answer": "analytics/ingest-answer.schema.json",
}
"""Each document kind and its schema, relative to the packaged ``schemas`` folder."""


def schema_root() -> Traversable:
    return data_folder("schemas")


@cache
def all_schemas() -> dict[str, dict[str, Any]]:
    """Every packaged schema file (``$defs``-only files included), by path relative to the root."""
    found: dict[str, dict[str, Any]] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".schema.json"):
                found[prefix + entry.name] = parse_json(entry.read_bytes())

    walk(schema_root(), "")
    return found


def load_schema(kind: Kind) -> dict[str, Any]:
    return all_schemas()[SCHEMA_FILES[kind]]


@cache
def registry() -> jsonschema_rs.Registry:
    """Every packaged schema under its ``$id``, so cross-file ``$ref`` never reaches the network."""
    import jsonschema_rs  # noqa: PLC0415  (the CLI's --help lists KINDS without the validator)

    return jsonschema_rs.Registry([(doc["$id"], doc) for doc in all_schemas().values()])


@cache
def validator(kind: Kind) -> jsonschema_rs.Validator:
    """The compiled draft 2020-12 validator of ``kind``; formats (uuid, date-time) are checked."""
    import jsonschema_rs  # noqa: PLC0415

    return jsonschema_rs.Draft202012Validator(
        load_schema(kind), registry=registry(), validate_formats=True
    )


def infer_kind(document: Any) -> Kind | None:
    """The kind a document most likely is, from its distinctive members; ``None`` when unclear."""
    if not isinstance(document, dict):
        return None
    keys = document.keys()
    rules: tuple[tuple[Kind, bool], ...] = (
        ("eval-summary", "aggregateScore" in keys),
        ("suite", "tasks" in keys or "suiteId" in keys),
        ("capabilities", "protocolVersions" in keys or "preferredVersion" in keys),
        ("run-event", "eventId" in keys or ("runId" in keys and "payload" in keys)),
        ("tool-call-event", "event_type" in keys),
        ("ingest-batch", "events" in keys),
        ("ingest-answer", "accepted" in keys and "rejected" in keys),
        ("error-envelope", isinstance(document.get("error"), str) and "message" in keys),
        ("call-tool-result", "content" in keys or "isError" in keys),
    )
    return next((kind for kind, matches in rules if matches), None)
