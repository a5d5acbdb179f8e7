"""The table both engines keep, and the metric queries both engines run.

One row per accepted ``tool_call`` event, keyed by ``(project_id, event_id)``: the dedupe key, so
a retried batch never counts twice (DuckDB: a primary key and ``INSERT OR IGNORE``; ClickHouse: a
``ReplacingMergeTree`` read with ``FINAL``). The ``tool_call`` fields the metrics need are typed
columns; the event as accepted is kept whole in ``event_json``, so nothing sent is lost.

``output_is_error`` is the rule (``isError`` is the JSON boolean ``true``) applied once, when the
row is written, by ``toolcall_spec.rules.is_tool_error``: the metric SQL counts it and never
re-implements the rule. ``keep_rank`` makes ClickHouse keep the FIRST row written for a key, as
DuckDB does (a ``ReplacingMergeTree`` keeps the row with the highest version).

The metric SQL is one text for both engines: only the table reference differs (``events`` or
``events FINAL``), which each engine passes in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import orjson

from toolcall_spec.analytics.metrics import ErrorMetrics
from toolcall_spec.clock import parse_timestamp
from toolcall_spec.rules import is_tool_error

TABLE = "tool_call_events"

COLUMNS: tuple[str, ...] = (
    "project_id",
    "event_id",
    "timestamp",
    "event_name",
    "status",
    "error_category",
    "error_message",
    "latency_ms",
    "output_is_error",
    "trace_id",
    "session_id",
    "source",
    "user_id",
    "platform",
    "sdk_version",
    "tokens_in",
    "tokens_out",
    "is_retry",
    "ingested_at",
    "keep_rank",
    "event_json",
)
"""Column order of every row, on both engines."""

Row = tuple[Any, ...]

_RANK_CEILING = 2**63
"""``keep_rank`` counts down from here as time goes on, so the earliest write has the top rank."""


Columns = list[list[Any]]
"""Rows column by column, in ``COLUMNS`` order: what a write hands an engine (DuckDB takes the
columns as they are; building rows and turning them around costs as much again)."""


def event_columns(
    events: Sequence[Mapping[str, Any]], project_id: str, ingested_at: datetime
) -> Columns:
    """The rows of schema-valid events, column by column: the one mapping from an event to its
    row. Times are timezone-aware UTC datetimes; each engine converts them to its own type."""
    count = len(events)
    micros = int(ingested_at.timestamp() * 1_000_000)
    return [
        [project_id] * count,
        # UUIDs compare case-insensitively, as ingest does
        [str(event["event_id"]).lower() for event in events],
        [parse_timestamp(str(event["timestamp"])) for event in events],
        [event.get("event_name") for event in events],
        [event.get("status") for event in events],
        [event.get("error_category") for event in events],
        [event.get("error_message") for event in events],
        [_number(event.get("latency_ms")) for event in events],
        [1 if is_tool_error(event.get("output_content")) else 0 for event in events],
        [str(event["trace_id"]) for event in events],
        [str(event["session_id"]) for event in events],
        [str(event["source"]) for event in events],
        [event.get("user_id") for event in events],
        [event.get("platform") for event in events],
        [event.get("sdk_version") for event in events],
        [event.get("tokens_in") for event in events],
        [event.get("tokens_out") for event in events],
        [int(event.get("is_retry") or 0) for event in events],
        [ingested_at] * count,
        [_RANK_CEILING - micros] * count,
        [orjson.dumps(event).decode() for event in events],
    ]


def event_row(event: Mapping[str, Any], project_id: str, ingested_at: datetime) -> Row:
    """The row of one schema-valid event (``event_columns`` of that event)."""
    return tuple(column[0] for column in event_columns([event], project_id, ingested_at))


def columns_of(rows: Sequence[Row]) -> Columns:
    """Rows turned into columns."""
    return [list(column) for column in zip(*rows, strict=True)]


def joined(parts: Sequence[Columns]) -> Columns:
    """The columns of several groups of rows, one group after the other."""
    if len(parts) == 1:
        return parts[0]
    return [[value for part in parts for value in part[index]] for index in range(len(COLUMNS))]


def first_of_each_key(columns: Columns) -> Columns:
    """``columns`` with only the first row of each key ``(project_id, event_id)``: the rule a
    store applies to a key already stored, applied within one write too (a retried batch loaded
    with its first send puts a key twice in one write; DuckDB 1.1 refuses such an insert
    whole). The columns themselves when no key repeats (the common case: one pass)."""
    keys = list(zip(columns[0], columns[1], strict=True))
    if len(set(keys)) == len(keys):
        return columns
    first = {key: index for index, key in reversed(list(enumerate(keys)))}
    kept = sorted(first.values())
    return [[column[index] for index in kept] for column in columns]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# --- the metric queries (one text, both engines) ------------------------------------------------

_ERROR = "CASE WHEN status = 'error' THEN 1 ELSE 0 END"
# The blind spot: recorded as not an error, yet the output the model saw had isError: true.
_BLIND = "CASE WHEN coalesce(status, '') <> 'error' AND output_is_error = 1 THEN 1 ELSE 0 END"

TOTALS_SQL = (
    f"SELECT count(*), coalesce(sum({_ERROR}), 0), coalesce(sum({_BLIND}), 0) "
    "FROM {events} WHERE {where}"
)
BY_CATEGORY_SQL = (
    "SELECT coalesce(error_category, 'unknown') AS category, count(*) FROM {events} "
    "WHERE status = 'error' AND {where} GROUP BY category ORDER BY category"
)
BY_TOOL_SQL = (
    f"SELECT coalesce(event_name, '') AS tool, count(*), sum({_ERROR}), sum({_BLIND}) "
    "FROM {events} WHERE {where} GROUP BY tool ORDER BY tool"
)
BY_DAY_SQL = (
    f"SELECT CAST(timestamp AS DATE) AS day, count(*), sum({_ERROR}), sum({_BLIND}) "
    "FROM {events} WHERE {where} GROUP BY day ORDER BY day"
)


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Calls, errors and blind-spot calls of one tool or one day."""

    calls: int
    errors: int
    reclassified: int

    def as_dict(self) -> dict[str, Any]:
        rate = self.errors / self.calls if self.calls else 0.0
        return {
            "tool_calls": self.calls,
            "errors": self.errors,
            "error_rate": rate,
            "reclassified": self.reclassified,
        }


@dataclass
class StoreMetrics:
    """What the metric queries answer: the totals as ``ErrorMetrics`` (the numbers the JSONL
    reader gives for the same events), and the breakdowns by tool and by day."""

    totals: ErrorMetrics
    by_tool: dict[str, Breakdown] = field(default_factory=dict)
    by_day: dict[date, Breakdown] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = self.totals.as_dict()
        out["by_tool"] = {tool: counts.as_dict() for tool, counts in self.by_tool.items()}
        out["by_day"] = {day.isoformat(): counts.as_dict() for day, counts in self.by_day.items()}
        return out


def assemble_metrics(
    totals: Row, by_category: list[Row], by_tool: list[Row], by_day: list[Row]
) -> StoreMetrics:
    """``StoreMetrics`` from the rows of the four queries (engines return their own integer
    and date types; both are normalised here)."""
    metrics = ErrorMetrics(
        tool_calls=int(totals[0]),
        errors=int(totals[1]),
        by_category=Counter({str(name): int(count) for name, count in by_category}),
        reclassified=int(totals[2]),
    )
    return StoreMetrics(
        metrics,
        {str(row[0]): _breakdown(row) for row in by_tool},
        {_as_date(row[0]): _breakdown(row) for row in by_day},
    )


def _breakdown(row: Row) -> Breakdown:
    return Breakdown(int(row[1]), int(row[2]), int(row[3]))


def _as_date(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))
