"""The interface every engine implements, and the parts they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any

from toolcall_spec.analytics.store.layout import (
    BY_CATEGORY_SQL,
    BY_DAY_SQL,
    BY_TOOL_SQL,
    TOTALS_SQL,
    Columns,
    Row,
    StoreMetrics,
    assemble_metrics,
    columns_of,
    event_columns,
)


class StoreError(Exception):
    """The store could not be opened, written or read; the message says which and why."""


class UnstorableRowsError(StoreError):
    """The rows themselves cannot be written (a value the engine's column cannot hold): the same
    write fails again, whereas another ``StoreError`` (the engine down) may pass on a retry."""


class EventStore(ABC):
    """Where accepted events live. ``write`` returns only once the rows are durably written
    (an endpoint acknowledges a batch after it returns); writing a row whose
    ``(project_id, event_id)`` is already stored changes nothing."""

    engine: str
    """``duckdb`` or ``clickhouse``."""
    durability_note: str | None = None
    """Set when the engine cannot make a write durable when it returns (an old ClickHouse
    server): what an operator must know; the loader logs it at start."""

    @abstractmethod
    def write_columns(self, columns: Columns) -> None:
        """Store the rows ``columns`` hold (see ``.layout``), durably, ignoring keys already
        stored."""

    def write(self, rows: Sequence[Row]) -> None:
        """Store ``rows``, as ``write_columns``."""
        if rows:
            self.write_columns(columns_of(rows))

    def write_events(
        self, events: Sequence[Mapping[str, Any]], project_id: str, ingested_at: datetime
    ) -> None:
        """Store schema-valid events of ``project_id`` (their rows: ``.layout.event_columns``)."""
        if events:
            self.write_columns(event_columns(events, project_id, ingested_at))

    @abstractmethod
    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        """Rows of one query; ``sql`` uses ``{events}`` for the table and ``%(name)s``
        placeholders for ``parameters``."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection (and the file lock, for DuckDB)."""

    def count(self, project_id: str | None = None) -> int:
        """Stored events (one per key)."""
        sql, params = _scoped("SELECT count(*) FROM {events} WHERE {where}", project_id)
        return int(self.query(sql, params)[0][0])

    def metrics(self, project_id: str | None = None) -> StoreMetrics:
        """The metrics, computed by the engine (four aggregate queries; no event is read back)."""
        answers = [
            self.query(*_scoped(sql, project_id))
            for sql in (TOTALS_SQL, BY_CATEGORY_SQL, BY_TOOL_SQL, BY_DAY_SQL)
        ]
        return assemble_metrics(answers[0][0], answers[1], answers[2], answers[3])

    def __enter__(self) -> EventStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _scoped(sql: str, project_id: str | None) -> tuple[str, dict[str, str]]:
    """``sql`` limited to one project, or to none (``{where}`` is a condition either way)."""
    if project_id is None:
        return sql.replace("{where}", "1 = 1"), {}
    return sql.replace("{where}", "project_id = %(project)s"), {"project": project_id}
