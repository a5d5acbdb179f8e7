"""Ingest validation: what an ingest endpoint answers for a batch of ``tool_call`` events, and
the same check over a JSONL file of any size.

A batch (``{"events": [...]}``) is answered like this:

- ``413`` when the body is over ``MAX_BODY_BYTES``, decided before it is parsed;
- ``400`` for a batch that is not one: not JSON, not an object, no ``events`` array, unknown
  top-level members, 0 or more than ``MAX_BATCH_EVENTS`` events; and when every event is
  rejected;
- otherwise each event is checked on its own, ``200`` when all are accepted, ``207`` when some are
  rejected.

An event that breaks the schema only in ways an older or foreign SDK does (Yavio's SDK 0.3.x, for
one) is repaired, accepted, and named in ``warnings`` by its ``index`` as sent
(``repair_event``): over-long free text is cut to its limit (an ``error_message`` is
PII-stripped and clamped to 500 characters, as the SDK side does), unknown members are dropped,
an error without a category becomes ``unknown``, and a success keeps its status and loses its
error members. An event with error members but no ``status`` is not repaired: nothing says
whether it failed, so it is rejected, as the schema and Yavio's ingest reject it. Identifiers
(``trace_id``, ``session_id``, ``event_name``, ``user_id``, ``subject_id``) are never cut,
since a cut id could merge two; over-long, they reject the event, as in Yavio's ingest.

``errors`` names each rejected event by its ``index`` in the batch as sent, with its issues as
``path: message``. A repeated ``event_id`` (compared case-insensitively, as UUIDs are) rejects the
repeat and keeps the first accepted event with that id; an invalid event never claims an id, so it
cannot get a later valid event rejected. ``accepted + rejected`` is always the number of events
sent (0 and 0 when the body could not be read as a batch at all).

A JSONL file is a stream of events, each line checked on its own, in constant memory: each
rejection carries ``index`` (the event's position among the file's events, blank lines not
counted) and ``line`` (its 1-based line number). No batch limits apply, and ``event_id``
repeats are not tracked across a file: remembering every id would make memory grow with the
file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, BinaryIO, Literal

import jsonschema_rs

from toolcall_spec.analytics.classify import error_message
from toolcall_spec.analytics.pii import safe_cut
from toolcall_spec.analytics.precheck import iter_unsettled_events
from toolcall_spec.catalog import Kind, load_schema, registry, validator
from toolcall_spec.json_paths import format_path
from toolcall_spec.loading import DocumentError, parse_json
from toolcall_spec.typed import BatchError, EventRejection, EventWarning, IngestAnswer
from toolcall_spec.validation import (
    schema_error_problems,
    structure_problems,
    validator_problems,
    within_structure_limits,
)

MAX_BATCH_EVENTS = 1_000
"""Most events a batch may hold (Yavio's ``IngestBatch``: ``events`` 1 to 1,000)."""
MAX_BODY_BYTES = 1_048_576
"""Largest batch body, in bytes; a larger one is answered 413 without being parsed. Yavio's
ingest runs behind Fastify's default ``bodyLimit`` of 1 MiB (1,048,576 bytes) and then checks
500 KB (512,000 bytes) of the body re-serialized; its SDK sends at most 100 events a batch, so
it never meets that second limit. This package keeps the 1 MiB one only, so that a full batch of
1,000 realistic events (about 613 bytes each) is admitted."""

EVENT_KIND: Kind = "tool-call-event"


AnswerStatus = Literal[200, 207, 400, 413]


def rejection(index: int, issues: list[str], line: int | None = None) -> EventRejection:
    """One rejected event: where it was in what was sent (``line`` for a JSONL stream), and
    why."""
    if line is None:
        return {"index": index, "issues": issues}
    return {"index": index, "line": line, "issues": issues}


def warning(index: int, message: str, line: int | None = None) -> EventWarning:
    """One change ingest made to an accepted event: where the event was, and what changed."""
    if line is None:
        return {"index": index, "message": message}
    return {"index": index, "line": line, "message": message}


# --- one event ----------------------------------------------------------------------------------


def event_issues(event: Any) -> list[str]:
    """The issues of one ``tool_call`` event as ``path: message`` (empty when valid): the
    structure limits every reader applies (depth, integer range), then the schema. The compiled
    jsonschema-rs validator answers ``is_valid`` first; errors are collected only for the events
    that fail."""
    if not within_structure_limits(event):
        return [str(problem) for problem in structure_problems(event)]
    if validator(EVENT_KIND).is_valid(event):
        return []
    return [str(problem) for problem in schema_error_problems(event, EVENT_KIND)]


def repair_event(event: Any) -> tuple[Any, list[str]]:
    """An event that failed the schema, with what an older SDK gets wrong repaired, and what was
    changed as ``path: message``. Anything else is left for the schema to reject."""
    if not isinstance(event, dict):
        return event, []
    properties = _event_properties()
    changes: list[str] = []
    repaired: dict[str, Any] = {}
    for key, value in event.items():
        if key not in properties:
            changes.append(f"{key}: not a tool_call member; dropped")
        else:
            repaired[key] = value
    status = repaired.get("status")
    if status == "error" and "error_category" not in repaired:
        repaired["error_category"] = "unknown"
        changes.append("error_category: missing on an error event; set to unknown")
    elif status == "success":  # no status says nothing: error members without one reject
        for key in ("error_category", "error_message"):
            if key in repaired:
                del repaired[key]
                changes.append(f"{key}: only an error event carries it; dropped")
    for key, limit in _free_text_limits().items():
        value = repaired.get(key)
        if isinstance(value, str) and len(value) > limit:
            repaired[key] = _shortened(key, value, limit)
            how = "PII-stripped and clamped" if key == "error_message" else "truncated"
            changes.append(f"{key}: {len(value):,} characters, over the limit of {limit:,}; {how}")
    return repaired, changes


def _shortened(key: str, value: str, limit: int) -> str:
    if key == "error_message":  # what the SDK side does: cut, strip PII, clamp
        return error_message(value) or value[:0]
    return safe_cut(value, limit) or value[:limit]


FREE_TEXT = ("error_message", "platform", "sdk_version", "locale", "end_user_agent")
"""Members that are free text, cut to their schema ``maxLength`` when longer."""


@cache
def _event_properties() -> frozenset[str]:
    return frozenset(load_schema(EVENT_KIND)["properties"])


@cache
def _free_text_limits() -> dict[str, int]:
    properties = load_schema(EVENT_KIND)["properties"]
    return {key: int(properties[key]["maxLength"]) for key in FREE_TEXT}


def checked_event(event: Any) -> tuple[Any, list[str], list[str]]:
    """``(event as accepted, issues, warnings)``: a valid event as it is; an invalid one
    repaired when it can be (with a warning per change), otherwise its issues."""
    issues = event_issues(event)
    return _repaired_or_rejected(event, issues) if issues else (event, [], [])


def _repaired_or_rejected(event: Any, issues: list[str]) -> tuple[Any, list[str], list[str]]:
    """``checked_event`` for an event whose ``issues`` (not empty) are known already."""
    repaired, changes = repair_event(event)
    if changes and not event_issues(repaired):
        return repaired, [], changes
    return event, issues, []


class DuplicateTracker:
    """Remembers the ``event_id`` of every accepted event of one batch."""

    def __init__(self) -> None:
        self._first: dict[str, int] = {}

    def issue(self, event: Any) -> str | None:
        """Why ``event`` repeats an accepted event's id, or ``None``."""
        event_id = event.get("event_id") if isinstance(event, dict) else None
        if not isinstance(event_id, str):
            return None
        first = self._first.get(event_id.lower())
        if first is None:
            return None
        return f"event_id: repeats the event_id of the event at index {first}; the first is kept"

    def accept(self, event: dict[str, Any], index: int) -> None:
        self._first.setdefault(str(event["event_id"]).lower(), index)


def _answer(
    accepted: int,
    rejected: int,
    errors: list[EventRejection],
    warnings: list[EventWarning] | None = None,
    envelope_warnings: list[str] | None = None,
) -> IngestAnswer:
    answer: IngestAnswer = {
        "status": 207 if rejected else 200,
        "accepted": accepted,
        "rejected": rejected,
        "errors": errors,
    }
    if accepted == 0 and rejected:
        answer["status"] = 400
        answer["error"] = {
            "code": "all_rejected",
            "message": f"all {rejected:,} events were rejected",
        }
    elif warnings:
        answer["warnings"] = warnings
    if envelope_warnings:
        answer["envelopeWarnings"] = envelope_warnings
    return answer


# --- a batch ------------------------------------------------------------------------------------


EventCallback = Callable[[dict[str, Any]], None]
"""Given each accepted event, as accepted (repaired where a warning says so)."""


def ingest_body(body: bytes | str, on_accepted: EventCallback | None = None) -> IngestAnswer:
    """Answer a batch request body: the size limit, then parsing, then ``ingest_batch``."""
    raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    if len(raw) > MAX_BODY_BYTES:
        return refused(
            413,
            "payload_too_large",
            f"the body is {len(raw):,} bytes, over the limit of {MAX_BODY_BYTES:,} bytes",
        )
    try:
        batch = parse_json(raw)
    except DocumentError as exc:
        return refused(400, "invalid_json", str(exc))
    return ingest_batch(batch, on_accepted)


def ingest_batch(batch: Any, on_accepted: EventCallback | None = None) -> IngestAnswer:
    """Answer a parsed batch: refuse it as a whole when it is not a batch, otherwise check every
    event on its own (repairing what ``repair_event`` can, with a warning).
    ``on_accepted`` is given each accepted event, e.g. to store it."""
    refusal = _batch_refusal(batch)
    if refusal is not None:
        return refusal
    envelope_warnings = _envelope_warnings(batch)
    events: list[Any] = batch["events"]
    errors: list[EventRejection] = []
    warnings: list[EventWarning] = []
    duplicates = DuplicateTracker()
    accepted = 0
    for index, sent in enumerate(events):
        event, issues, changes = checked_event(sent)
        repeat = duplicates.issue(event)
        if repeat is not None:
            issues.append(repeat)
        if issues:
            errors.append(rejection(index, issues))
            continue
        duplicates.accept(event, index)
        accepted += 1
        warnings += (warning(index, change) for change in changes)
        if on_accepted is not None:
            on_accepted(event)
    return _answer(accepted, len(errors), errors, warnings, envelope_warnings)


def _batch_refusal(batch: Any) -> IngestAnswer | None:
    """Why ``batch`` is no batch at all (no array of 1 to ``MAX_BATCH_EVENTS`` events), or
    ``None``. Nothing beside the events refuses a batch: see ``_envelope_warnings``."""
    if not isinstance(batch, dict):
        return refused(400, "invalid_batch", "a batch is a JSON object with an events array")
    events = batch.get("events")
    if not isinstance(events, list):
        return refused(400, "invalid_batch", "events: required, an array of events")
    sent = len(events)
    if not 1 <= sent <= MAX_BATCH_EVENTS:
        return refused(
            400,
            "batch_size",
            f"events: a batch holds 1 to {MAX_BATCH_EVENTS:,} events, this one {sent:,}",
            sent,
        )
    return None


def _envelope_warnings(batch: dict[str, Any]) -> list[str]:
    """What the batch holds beside its events that the batch schema does not allow, as
    ``path: message``, each ignored: the envelope says nothing about any event, so it never
    rejects one (Yavio's ingest ignores every envelope member too)."""
    known = _envelope_members()
    warnings = [
        f"{format_path([name])}: not a member of a batch; ignored"
        for name in batch
        if name not in known and name != "events"
    ]
    envelope = {name: value for name, value in batch.items() if name in known}
    warnings += (
        f"{problem}; ignored" for problem in validator_problems(_envelope_validator(), envelope)
    )
    return warnings


def refused(status: AnswerStatus, code: str, message: str, sent: int = 0) -> IngestAnswer:
    """A refusal of the whole batch: none of the ``sent`` events is accepted."""
    error: BatchError = {"code": code, "message": message}
    return {"status": status, "accepted": 0, "rejected": sent, "errors": [], "error": error}


@cache
def _envelope_members() -> frozenset[str]:
    """The members the batch schema names beside ``events``."""
    return frozenset(load_schema("ingest-batch")["properties"]) - {"events"}


@cache
def _envelope_validator() -> jsonschema_rs.Validator:
    """The batch schema without ``events``: the envelope's known members are checked by the
    schema file itself, while the events are checked one by one."""
    schema = dict(load_schema("ingest-batch"))
    schema["$id"] = schema["$id"].replace("ingest-batch", "ingest-batch-envelope")
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "events"}
    schema["required"] = [name for name in schema.get("required", []) if name != "events"]
    return jsonschema_rs.Draft202012Validator(schema, registry=registry(), validate_formats=True)


# --- a JSONL file -------------------------------------------------------------------------------

ProgressCallback = Callable[[int, int, int], None]
"""Called with (events read, accepted, rejected) after each block read (about 1 MiB)."""


def iter_jsonl_rejections(
    handle: BinaryIO,
    counts: list[int],
    on_progress: ProgressCallback | None = None,
    warnings: list[EventWarning] | None = None,
) -> Iterator[EventRejection]:
    """Check every line of a JSONL stream and yield each rejection as it is found, in constant
    memory. ``counts`` is ``[accepted, rejected]`` and is kept up to date; an event accepted
    after a repair is counted as accepted and its changes go to ``warnings`` when given."""
    # The pre-check settles (and counts) most valid events from their bytes; the rest come here.
    for index, number, value, error in iter_unsettled_events(handle, counts, on_progress):
        if error is not None:  # not JSON, too long, a repeated member: nothing to repair
            counts[1] += 1
            yield rejection(index, [f"(root): {error}"], number)
            continue
        issues = event_issues(value)
        if not issues:
            counts[0] += 1  # the hot path: nothing else for a valid line
            continue
        rejected = _checked_line(index, number, value, issues, counts=counts, warnings=warnings)
        if rejected is not None:
            yield rejected


def _checked_line(
    index: int,
    number: int,
    value: Any,
    issues: list[str],
    *,
    counts: list[int],
    warnings: list[EventWarning] | None,
) -> EventRejection | None:
    """A line whose event has ``issues``: accepted after a repair (its changes to
    ``warnings``), or its rejection."""
    _, issues, changes = _repaired_or_rejected(value, issues)
    if issues:
        counts[1] += 1
        return rejection(index, issues, number)
    counts[0] += 1
    if warnings is not None:
        warnings += (warning(index, change, number) for change in changes)
    return None


MAX_KEPT_REJECTIONS = 10_000
"""Most rejections ``ingest_jsonl`` keeps in its answer by default: memory stays flat however
many lines are rejected. ``rejected`` still counts them all; ``iter_jsonl_rejections`` streams
every one (the CLI writes them all)."""


def ingest_jsonl(
    handle: BinaryIO,
    on_progress: ProgressCallback | None = None,
    *,
    max_errors: int | None = MAX_KEPT_REJECTIONS,
) -> IngestAnswer:
    """Answer a JSONL stream of events, keeping the first ``max_errors`` rejections (``None``:
    all of them); ``len(answer["errors"]) < answer["rejected"]`` tells that some were left out."""
    counts = [0, 0]
    warnings: list[EventWarning] = []
    rejections = iter_jsonl_rejections(handle, counts, on_progress, warnings)
    errors = keep_first(rejections, max_errors)
    return jsonl_answer(counts[0], counts[1], errors, warnings)


def keep_first(rejections: Iterator[EventRejection], limit: int | None) -> list[EventRejection]:
    """The first ``limit`` rejections (all for ``None``), reading ``rejections`` to its end."""
    kept: list[EventRejection] = []
    for rejected in rejections:
        if limit is None or len(kept) < limit:
            kept.append(rejected)
    return kept


def jsonl_answer(
    accepted: int,
    rejected: int,
    errors: list[EventRejection] | None = None,
    warnings: list[EventWarning] | None = None,
) -> IngestAnswer:
    """The answer for a JSONL stream once read: like a batch's, and 400 for a stream without
    events. ``errors`` may be left out by a caller that streamed the rejections itself."""
    if accepted == 0 and rejected == 0:
        return refused(400, "no_events", "the stream holds no events")
    return _answer(accepted, rejected, errors or [], warnings)
