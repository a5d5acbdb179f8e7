"""Error rate and category breakdown over ``tool_call`` events: the dashboard rule.

``error_rate = count(status = error) / count(tool_call with a status)``; the breakdown counts the
error events by ``coalesce(error_category, 'unknown')``.

Nothing is dropped silently: every ``tool_call`` event that carries a ``status`` counts, valid or
not (a Yavio SDK 0.3.x error with a 2,000-character message is still an error), and the
``tool_call`` events that could not be read as such (not JSON, no usable ``status``) are counted
and reported as ``unreadable``. Lines that are not ``tool_call`` events at all (other event types)
are counted as ``skipped``.

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

from toolcall_spec.loading import iter_jsonl
from toolcall_spec.rules import is_tool_error


@dataclass
class ErrorMetrics:
    """Counts over a set of events. ``unreadable`` counts the lines or values that may be
    ``tool_call`` events but could not be counted (not JSON, or no ``status`` of ``success`` or
    ``error``); ``skipped`` counts the events of other types."""

    tool_calls: int = 0
    errors: int = 0
    by_category: Counter[str] = field(default_factory=Counter)
    reclassified: int = 0
    skipped: int = 0
    unreadable: int = 0

    @property
    def error_rate(self) -> float:
        """count(status = error) / count(tool_call); 0.0 when there are no calls."""
        return self.errors / self.tool_calls if self.tool_calls else 0.0

    @property
    def corrected_error_rate(self) -> float:
        """The error rate when recorded successes whose output has ``isError: true`` count too."""
        return (self.errors + self.reclassified) / self.tool_calls if self.tool_calls else 0.0

    def add(self, event: Mapping[str, Any]) -> None:
        """Count one ``tool_call`` event with a ``status``."""
        self.tool_calls += 1
        if event.get("status") == "error":
            self.errors += 1
            category = event.get("error_category")
            self.by_category[category if category in CATEGORIES else "unknown"] += 1
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
            "unreadable": self.unreadable,
            "skipped": self.skipped,
        }


COUNTED_STATUSES = ("success", "error")
CATEGORIES = frozenset(
    ("auth", "validation", "timeout", "rate_limit", "server", "unknown", "tool_error")
)
"""The categories the schema names; any other value (or none) is counted as ``unknown``."""


def error_metrics(events: Iterable[Any]) -> ErrorMetrics:
    """Metrics over events: every ``tool_call`` event with a ``status`` counts, whether or not
    ingest would accept it as sent (ingest repairs what old SDKs send; metrics must not lose
    their errors either). A value that is not an event object, or a ``tool_call`` without a
    usable ``status``, is ``unreadable``; an event of another type is ``skipped``."""
    metrics = ErrorMetrics()
    for event in events:
        if not isinstance(event, Mapping):
            metrics.unreadable += 1
        elif event.get("event_type") != "tool_call":
            if "event_type" in event:
                metrics.skipped += 1
            else:
                metrics.unreadable += 1
        elif event.get("status") in COUNTED_STATUSES:
            metrics.add(event)
        else:
            metrics.unreadable += 1
    return metrics


def jsonl_error_metrics(handle: BinaryIO) -> ErrorMetrics:
    """``error_metrics`` over a JSONL stream, line by line in constant memory; a line that is
    not JSON counts as unreadable."""
    return error_metrics(value if error is None else None for _, value, error in iter_jsonl(handle))
