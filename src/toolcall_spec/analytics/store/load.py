"""Loading a JSONL archive of events into a store: validated, deduplicated, streamed.

Lines are read one at a time (``toolcall_spec.loading.iter_jsonl``), each event checked on its
own as ingest checks it (``toolcall_spec.analytics.ingest.checked_event``: an event an older SDK
gets wrong is repaired, stored as repaired, and reported as a warning), and accepted events
written in chunks of ``CHUNK_EVENTS``, so memory holds one chunk whatever the file's size.
Deduplication is the store's: a repeated ``event_id`` (in the file, or already stored) is stored
once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from toolcall_spec.analytics.ingest import EVENT_KIND, checked_event, rejection, warning
from toolcall_spec.analytics.store.base import EventStore
from toolcall_spec.catalog import validator
from toolcall_spec.clock import utc_now
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.typed import EventRejection, EventWarning

CHUNK_EVENTS = 10_000


@dataclass
class LoadCounts:
    accepted: int = 0
    rejected: int = 0
    warnings: int = 0


def load_jsonl(
    handle: BinaryIO,
    store: EventStore,
    project_id: str,
    on_rejection: Callable[[EventRejection], None],
    on_warning: Callable[[EventWarning], None] | None = None,
) -> LoadCounts:
    """Store every accepted event of the stream under ``project_id``, as accepted. Each rejection
    goes to ``on_rejection`` and each repair to ``on_warning`` as it is found (index among the
    events, and line number)."""
    is_valid = validator(EVENT_KIND).is_valid  # the hot loop: a valid line needs nothing else
    counts = LoadCounts()
    chunk: list[Mapping[str, Any]] = []
    now = utc_now()
    for index, (number, value, error) in enumerate(iter_jsonl(handle)):
        if error is None and is_valid(value):
            event = value
        else:
            event = _repaired(
                index,
                number,
                value,
                error,
                counts=counts,
                on_rejection=on_rejection,
                on_warning=on_warning,
            )
            if event is None:
                continue
        counts.accepted += 1
        chunk.append(event)
        if len(chunk) >= CHUNK_EVENTS:
            store.write_events(chunk, project_id, now)
            chunk = []
    store.write_events(chunk, project_id, now)
    return counts


def _repaired(
    index: int,
    number: int,
    value: object,
    error: str | None,
    *,
    counts: LoadCounts,
    on_rejection: Callable[[EventRejection], None],
    on_warning: Callable[[EventWarning], None] | None,
) -> dict[str, object] | None:
    """The event a line that is not valid as it stands is accepted as, or ``None`` once its
    rejection is reported."""
    if error is not None:
        counts.rejected += 1
        on_rejection(rejection(index, [f"(root): {error}"], number))
        return None
    event, issues, changes = checked_event(value)
    if issues:
        counts.rejected += 1
        on_rejection(rejection(index, issues, number))
        return None
    counts.warnings += len(changes)
    if on_warning is not None:
        for change in changes:
            on_warning(warning(index, change, number))
    return dict(event)
