"""Loading a JSONL archive of events into a store: validated, deduplicated, streamed.

Lines are read one at a time (``toolcall_spec.loading.iter_jsonl``), each event checked
against the schema on its own, and accepted events written in chunks of ``CHUNK_EVENTS``, so
memory holds one chunk whatever the file's size. Deduplication is the store's: a repeated
``event_id`` (in the file, or already stored) is stored once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, BinaryIO

from toolcall_spec.analytics.ingest import EVENT_KIND, event_issues, rejection
from toolcall_spec.analytics.store.base import EventStore
from toolcall_spec.analytics.store.layout import Row, event_row
from toolcall_spec.catalog import validator
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.typed import EventRejection

CHUNK_EVENTS = 10_000


@dataclass
class LoadCounts:
    accepted: int = 0
    rejected: int = 0


def load_jsonl(
    handle: BinaryIO,
    store: EventStore,
    project_id: str,
    on_rejection: Callable[[EventRejection], None],
) -> LoadCounts:
    """Store every schema-valid event of the stream under ``project_id``; each rejection goes to
    ``on_rejection`` as it is found (index among the events, and line number)."""
    is_valid = validator(EVENT_KIND).is_valid
    counts = LoadCounts()
    chunk: list[Row] = []
    now = datetime.now(timezone.utc)
    for index, (number, value, error) in enumerate(iter_jsonl(handle)):
        if error is None and is_valid(value):
            counts.accepted += 1
            chunk.append(event_row(value, project_id, now))
            if len(chunk) >= CHUNK_EVENTS:
                store.write(chunk)
                chunk = []
        else:
            counts.rejected += 1
            on_rejection(rejection(index, _issues(value, error), number))
    store.write(chunk)
    return counts


def _issues(value: Any, error: str | None) -> list[str]:
    return [f"(root): {error}"] if error is not None else event_issues(value)
