"""An analytics sink that records each ``tool_call`` event as OpenTelemetry telemetry (the
``otel`` extra), following the OpenTelemetry semantic conventions for MCP
(open-telemetry/semantic-conventions-genai, ``model/mcp``: ``common.yaml``, ``spans.yaml``,
``metrics.yaml``):

- a SERVER span named ``tools/call {tool}`` with ``mcp.method.name = tools/call``,
  ``gen_ai.operation.name = execute_tool``, ``gen_ai.tool.name`` and ``mcp.session.id``;
- ``error.type = tool_error`` and span status ERROR exactly when the result had ``isError``
  literal ``true``: the conventions' value for a ``CallToolResult`` with ``isError: true``. That is
  a call recorded as an error (every failure this package records, the ones before the handler
  ran included, reaches the client as such a result), and a call recorded as a success whose
  captured output says ``isError: true`` (events from SDKs older than the rule). The status
  description is the event's message, PII-stripped again here, so no other text is recorded;
- the ``mcp.server.operation.duration`` histogram, in seconds, from ``latency_ms`` (absent when
  the handler never ran: then nothing is recorded, as there is no duration to report).

When the framework already traces the request (the ``mcp`` SDK's ``OpenTelemetryMiddleware``,
or FastMCP 4's own SERVER span, opens a ``tools/call`` span around the code the sink is called
from), the sink names that span ``tools/call {tool}``, adds its attributes to it and does not
start a second one.

FastMCP writes its own ``error.type`` (``NotFoundError``, ``ValidationError``...) on its span
after every middleware has returned, which would overwrite the sink's. The sink therefore says
``records_tool_call_spans = True``: ``toolcall_spec.mcp.instrument`` then runs each FastMCP call
under FastMCP's public ``suppress_fastmcp_telemetry()`` below its middleware, so FastMCP opens its
request span as usual but neither enriches nor overwrites it, and the sink's values are the
span's (see ``toolcall_spec.mcp.fastmcp_adapter``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from toolcall_spec import __version__
from toolcall_spec.analytics.otlp_spans import CATEGORY_ATTRIBUTE, TOOL_ERROR, TOOLS_CALL
from toolcall_spec.analytics.pii import strip_pii
from toolcall_spec.clock import parse_timestamp
from toolcall_spec.rules import is_tool_error

DURATION_METRIC = "mcp.server.operation.duration"
# The conventions' advisory buckets for MCP operation durations, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
EVENT_ID_ATTRIBUTE = "toolcall_spec.event_id"


class OpenTelemetrySink:
    """``sink(event)``: one span (or the framework's span, enriched) and one duration per
    event."""

    records_tool_call_spans = True
    """Read by ``toolcall_spec.mcp.instrument``: this sink owns the ``tools/call`` span's
    error attributes, so a framework that would overwrite them afterwards is kept from it."""

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self._tracer = trace.get_tracer("toolcall_spec", __version__, tracer_provider)
        meter = metrics.get_meter("toolcall_spec", __version__, meter_provider)
        self._duration = meter.create_histogram(
            DURATION_METRIC,
            unit="s",
            description="MCP request duration as observed on the server",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )

    def __call__(self, event: Mapping[str, Any]) -> None:
        attributes = convention_attributes(event)
        failed = is_error(event)
        current = trace.get_current_span()
        if is_sdk_tools_call_span(current):
            current.update_name(span_name(event))
            _annotate(current, attributes, event, failed)
        else:
            self._record_span(event, attributes, failed)
        latency = event.get("latency_ms")
        if _is_number(latency):
            metric_attributes = {
                key: value for key, value in attributes.items() if key != "mcp.session.id"
            }
            self._duration.record(latency / 1000.0, metric_attributes)

    def _record_span(
        self, event: Mapping[str, Any], attributes: dict[str, str], failed: bool
    ) -> None:
        end = _epoch_ns(event)
        latency = event.get("latency_ms")
        start = end - int(latency * 1_000_000) if _is_number(latency) else end
        span = self._tracer.start_span(
            span_name(event), kind=SpanKind.SERVER, attributes=attributes, start_time=start
        )
        _annotate(span, {}, event, failed)
        span.end(end_time=end)


def is_error(event: Mapping[str, Any]) -> bool:
    """Whether the call's result had ``isError`` literal ``true`` (see the module text)."""
    return event.get("status") == "error" or is_tool_error(event.get("output_content"))


def span_name(event: Mapping[str, Any]) -> str:
    tool = event.get("event_name")
    return f"{TOOLS_CALL} {tool}" if isinstance(tool, str) and tool else TOOLS_CALL


def convention_attributes(event: Mapping[str, Any]) -> dict[str, str]:
    attributes = {"mcp.method.name": TOOLS_CALL, "gen_ai.operation.name": "execute_tool"}
    if isinstance(event.get("event_name"), str):
        attributes["gen_ai.tool.name"] = event["event_name"]
    if isinstance(event.get("session_id"), str):
        attributes["mcp.session.id"] = event["session_id"]
    if is_error(event):
        attributes["error.type"] = TOOL_ERROR
    return attributes


def is_sdk_tools_call_span(span: Span) -> bool:
    """Whether ``span`` is a live ``tools/call`` span someone else (the ``mcp`` SDK, FastMCP)
    started."""
    recorded = getattr(span, "attributes", None)
    return (
        span.is_recording()
        and isinstance(recorded, Mapping)
        and recorded.get("mcp.method.name") == TOOLS_CALL
    )


def _annotate(
    span: Span, attributes: dict[str, str], event: Mapping[str, Any], failed: bool
) -> None:
    span.set_attributes(attributes)
    if isinstance(event.get("event_id"), str):
        span.set_attribute(EVENT_ID_ATTRIBUTE, event["event_id"])
    if not failed:
        return
    category = event.get("error_category")
    span.set_attribute(CATEGORY_ATTRIBUTE, category if isinstance(category, str) else TOOL_ERROR)
    message = event.get("error_message")
    span.set_status(
        Status(StatusCode.ERROR, strip_pii(message) if isinstance(message, str) else None)
    )


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _epoch_ns(event: Mapping[str, Any]) -> int:
    return int(parse_timestamp(str(event["timestamp"])).timestamp() * 1_000_000_000)
