"""Tool-call analytics: classify what a tool call produced into ``tool_call`` event fields, strip
PII from messages, build events, send them to sinks, check them as an ingest endpoint would, and
compute the error rate.

Modules, one concern each: ``.pii``, ``.classify``, ``.events``, ``.sinks``,
``.ingest``, ``.metrics``. The MCP server instrumentation is ``toolcall_spec.mcp.instrument``.
The names below are importable from this package and load their module on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcall_spec.analytics.classify import (
        MAX_ERROR_MESSAGE_LENGTH,
        Classification,
        classify_exception,
        classify_pre_handler_failure,
        classify_result,
    )
    from toolcall_spec.analytics.events import EventFactory
    from toolcall_spec.analytics.ingest import ingest_batch, ingest_body, ingest_jsonl
    from toolcall_spec.analytics.metrics import ErrorMetrics, error_metrics, jsonl_error_metrics
    from toolcall_spec.analytics.pii import strip_pii
    from toolcall_spec.analytics.sinks import JsonlFileSink, MemorySink, callback_sink
    from toolcall_spec.typed import IngestAnswer

_EXPORTS = {
    "MAX_ERROR_MESSAGE_LENGTH": "classify",
    "Classification": "classify",
    "classify_exception": "classify",
    "classify_pre_handler_failure": "classify",
    "classify_result": "classify",
    "EventFactory": "events",
    "IngestAnswer": "toolcall_spec.typed",
    "ingest_batch": "ingest",
    "ingest_body": "ingest",
    "ingest_jsonl": "ingest",
    "ErrorMetrics": "metrics",
    "error_metrics": "metrics",
    "jsonl_error_metrics": "metrics",
    "strip_pii": "pii",
    "JsonlFileSink": "sinks",
    "MemorySink": "sinks",
    "callback_sink": "sinks",
}

__all__ = [
    "MAX_ERROR_MESSAGE_LENGTH",
    "Classification",
    "ErrorMetrics",
    "EventFactory",
    "IngestAnswer",
    "JsonlFileSink",
    "MemorySink",
    "callback_sink",
    "classify_exception",
    "classify_pre_handler_failure",
    "classify_result",
    "error_metrics",
    "ingest_batch",
    "ingest_body",
    "ingest_jsonl",
    "jsonl_error_metrics",
    "strip_pii",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(name)
    # A bare name is a module of this package; a dotted one is a full module path.
    return getattr(import_module(module if "." in module else f"{__name__}.{module}"), name)
