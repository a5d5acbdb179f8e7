"""Ingest validation: what an ingest endpoint answers for a batch of ``tool_call`` events, and
the same check over a JSONL file of any size.

A batch (``{"events": [...]}``) is answered like this:

- ``413`` when the body is over :data:`MAX_BODY_BYTES`, decided before it is parsed;
- ``400`` for a batch that is not one: not JSON, not an object, no ``events`` array, unknown
  top-level members, 0 or more than :data:`MAX_BATCH_EVENTS` events; and when every event is
  rejected;
- otherwise each event is checked on its own, ``200`` when all are accepted, ``207`` when some are
  rejected.

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
from dataclasses import dataclass, field
from functools import cache
from typing import Any, BinaryIO

import jsonschema_rs

from toolcall_spec.analytics.precheck import iter_unsettled_events
from toolcall_spec.catalog import Kind, load_schema, registry, validator
from toolcall_spec.loading import DocumentError, parse_json
from toolcall_spec.paths import format_path
from toolcall_spec.validation import schema_problems

MAX_BATCH_EVENTS = 1_000
"""Most events a batch may hold."""
MAX_BODY_BYTES = 512_000
"""Largest batch body, in bytes; a larger one is answered 413 without being parsed."""

EVENT_KIND: Kind = "tool-call-event"


@dataclass(frozen=True, slots=True)
class EventRejection:
    """One rejected event: where it was in what was sent, and why."""

    index: int
    issues: tuple[str, ...]
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index}
        if self.line is not None:
            out["line"] = self.line
        out["issues"] = list(self.issues)
        return out


@dataclass(frozen=True, slots=True)
class BatchError:
    """Why a batch as a whole was refused (400 or 413)."""

    code: str
    message: str


@dataclass(frozen=True)
class IngestAnswer:
    """The answer to a batch or a JSONL file (schema ``ingest-answer``)."""

    status: int
    accepted: int
    rejected: int
    errors: list[EventRejection] = field(default_factory=list)
    error: BatchError | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "errors": [rejection.as_dict() for rejection in self.errors],
        }
        if self.error is not None:
            out["error"] = {"code": self.error.code, "message": self.error.message}
        return out


# --- one event ----------------------------------------------------------------------------------


def event_issues(event: Any) -> list[str]:
    """The schema issues of one ``tool_call`` event as ``path: message`` (empty when valid).
    The compiled jsonschema-rs validator answers ``is_valid`` first; errors are collected only
    for the events that fail."""
    if validator(EVENT_KIND).is_valid(event):
        return []
    return [str(problem) for problem in schema_problems(event, EVENT_KIND)]


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


def _answer(accepted: int, rejected: int, errors: list[EventRejection]) -> IngestAnswer:
    if accepted == 0 and rejected:
        error = BatchError("all_rejected", f"all {rejected:,} events were rejected")
        return IngestAnswer(400, 0, rejected, errors, error)
    return IngestAnswer(207 if rejected else 200, accepted, rejected, errors)


# --- a batch ------------------------------------------------------------------------------------


def ingest_body(body: bytes | str) -> IngestAnswer:
    """Answer a batch request body: the size limit, then parsing, then :func:`ingest_batch`."""
    raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    if len(raw) > MAX_BODY_BYTES:
        return _refused(
            413,
            "payload_too_large",
            f"the body is {len(raw):,} bytes, over the limit of {MAX_BODY_BYTES:,} bytes",
        )
    try:
        batch = parse_json(raw)
    except DocumentError as exc:
        return _refused(400, "invalid_json", str(exc))
    return ingest_batch(batch)


def ingest_batch(batch: Any) -> IngestAnswer:
    """Answer a parsed batch: refuse it as a whole when it is not a batch, otherwise check every
    event on its own."""
    refusal = _batch_refusal(batch)
    if refusal is not None:
        return refusal
    events: list[Any] = batch["events"]
    errors: list[EventRejection] = []
    duplicates = DuplicateTracker()
    accepted = 0
    for index, event in enumerate(events):
        issues = event_issues(event)
        repeat = duplicates.issue(event)
        if repeat is not None:
            issues.append(repeat)
        if issues:
            errors.append(EventRejection(index, tuple(issues)))
        else:
            duplicates.accept(event, index)
            accepted += 1
    return _answer(accepted, len(errors), errors)


def _batch_refusal(batch: Any) -> IngestAnswer | None:
    if not isinstance(batch, dict):
        return _refused(400, "invalid_batch", "a batch is a JSON object with an events array")
    events = batch.get("events")
    if not isinstance(events, list):
        return _refused(400, "invalid_batch", "events: required, an array of events")
    sent = len(events)
    envelope = {key: value for key, value in batch.items() if key != "events"}
    issues = [
        f"{format_path(error.instance_path)}: {error.message}"
        for error in _envelope_validator().iter_errors(envelope)
    ]
    if issues:
        return _refused(400, "invalid_batch", "; ".join(issues), sent)
    if not 1 <= sent <= MAX_BATCH_EVENTS:
        return _refused(
            400,
            "batch_size",
            f"events: a batch holds 1 to {MAX_BATCH_EVENTS:,} events, this one {sent:,}",
            sent,
        )
    return None


def _refused(status: int, code: str, message: str, sent: int = 0) -> IngestAnswer:
    """A refusal of the whole batch: none of the ``sent`` events is accepted."""
    return IngestAnswer(status, 0, sent, [], BatchError(code, message))


@cache
def _envelope_validator() -> jsonschema_rs.Validator:
    """The batch schema without ``events``, so the envelope's members (and unknown ones) are
    checked by the schema file itself while the events are checked one by one."""
    schema = dict(load_schema("ingest-batch"))
    schema["$id"] = schema["$id"].replace("ingest-batch", "ingest-batch-envelope")
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "events"}
    schema["required"] = [name for name in schema.get("required", []) if name != "events"]
    return jsonschema_rs.Draft202012Validator(schema, registry=registry(), validate_formats=True)


# --- a JSONL file -------------------------------------------------------------------------------

ProgressCallback = Callable[[int, int, int], None]
"""Called with (events read, accepted, rejected) after each block read (about 1 MiB)."""


def iter_jsonl_rejections(
    handle: BinaryIO, counts: list[int], on_progress: ProgressCallback | None = None
) -> Iterator[EventRejection]:
    """Check every line of a JSONL stream and yield each rejection as it is found, in constant
    memory. ``counts`` is ``[accepted, rejected]`` and is kept up to date."""
    is_valid = validator(EVENT_KIND).is_valid  # the hot loop: one lookup, not one per line
    # The pre-check settles (and counts) most valid events from their bytes; the rest come here.
    for index, number, value, error in iter_unsettled_events(handle, counts, on_progress):
        if error is None and is_valid(value):
            counts[0] += 1
        else:
            counts[1] += 1
            issues = (f"(root): {error}",) if error is not None else tuple(event_issues(value))
            yield EventRejection(index, issues, number)


MAX_KEPT_REJECTIONS = 10_000
"""Most rejections :func:`ingest_jsonl` keeps in its answer by default: memory stays flat however
many lines are rejected. ``rejected`` still counts them all; :func:`iter_jsonl_rejections`
streams every one (the CLI writes them all)."""


def ingest_jsonl(
    handle: BinaryIO,
    on_progress: ProgressCallback | None = None,
    *,
    max_errors: int | None = MAX_KEPT_REJECTIONS,
) -> IngestAnswer:
    """Answer a JSONL stream of events, keeping the first ``max_errors`` rejections (``None``:
    all of them); ``len(answer.errors) < answer.rejected`` tells that some were left out."""
    counts = [0, 0]
    errors = keep_first(iter_jsonl_rejections(handle, counts, on_progress), max_errors)
    return jsonl_answer(counts[0], counts[1], errors)


def keep_first(rejections: Iterator[EventRejection], limit: int | None) -> list[EventRejection]:
    """The first ``limit`` rejections (all for ``None``), reading ``rejections`` to its end."""
    kept: list[EventRejection] = []
    for rejection in rejections:
        if limit is None or len(kept) < limit:
            kept.append(rejection)
    return kept


def jsonl_answer(
    accepted: int, rejected: int, errors: list[EventRejection] | None = None
) -> IngestAnswer:
    """The answer for a JSONL stream once read: like a batch's, and 400 for a stream without
    events. ``errors`` may be left out by a caller that streamed the rejections itself."""
    if accepted == 0 and rejected == 0:
        return _refused(400, "no_events", "the stream holds no events")
    return _answer(accepted, rejected, errors or [])
