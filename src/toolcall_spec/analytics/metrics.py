"""Error rate and category breakdown over ``tool_call`` events: the dashboard rule.

``error_rate = count(status = error) / count(tool_call)``; the breakdown counts the error events
by ``coalesce(error_category, 'unknown')``.

Events recorded before tool results with ``isError: true`` counted as errors say ``status:
success`` while their captured ``output_content`` has ``isError: true``. ``ErrorMetrics``
reports them as ``reclassified`` and gives the ``corrected_error_rate`` that counts them as
``tool_error``, so a user sees the numbers the rule gives for old data too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from toolcall_spec.analytics.ingest import EVENT_KIND
from toolcall_spec.catalog import validator
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.rules import is_tool_error


@dataclass
class ErrorMetrics:
    """Counts over a set of events. ``skipped`` counts what was not a valid ``tool_call`` event
    (not counted anywhere else)."""

    tool_calls: int = 0
    errors: int = 0
    by_category: Counter[str] = field(default_factory=Counter)
    reclassified: int = 0
    skipped: int = 0

    @property
    def error_rate(self) -> float:
        """count(status = error) / count(tool_call); 0.0 when there are no calls."""
        return self.errors / self.tool_calls if self.tool_calls else 0.0

    @property
    def corrected_error_rate(self) -> float:
        """The error rate when recorded successes whose output has ``isError: true`` count too."""
        return (self.errors + self.reclassified) / self.tool_calls if self.tool_calls else 0.0

    def add(self, event: Mapping[str, Any]) -> None:
        """Count one valid ``tool_call`` event."""
        self.tool_calls += 1
        if event.get("status") == "error":
            self.errors += 1
            category = event.get("error_category")
            self.by_category[category if isinstance(category, str) else "unknown"] += 1
        elif is_tool_error(event.get("output_content")):
            self.reclassified += 1

    def as_dict(self) -> dict[str, Any]:
        corrected = self.by_category.copy()
        corrected["tool_error"] += self.reclassified
        return {
            "tool_calls": self.tool_calls,
            "errors": self.errors,
            "error_rate": self.error_rate,
            "by_category": dict(sorted(self.by_category.items())),
            "reclassified": self.reclassified,
            "corrected_error_rate": self.corrected_error_rate,
            "corrected_by_category": {k: v for k, v in sorted(corrected.items()) if v},
            "skipped": self.skipped,
        }


def error_metrics(events: Iterable[Any]) -> ErrorMetrics:
    """Metrics over events; anything that is not a schema-valid ``tool_call`` event is skipped,
    as ingest would have rejected it."""
    metrics = ErrorMetrics()
    is_valid = validator(EVENT_KIND).is_valid
    for event in events:
        if isinstance(event, Mapping) and is_valid(event):
            metrics.add(event)
        else:
            metrics.skipped += 1
    return metrics


def jsonl_error_metrics(handle: BinaryIO) -> ErrorMetrics:
    """``error_metrics`` over a JSONL stream, line by line in constant memory; a line that is
    not JSON counts as skipped."""
    return error_metrics(value if error is None else None for _, value, error in iter_jsonl(handle))
