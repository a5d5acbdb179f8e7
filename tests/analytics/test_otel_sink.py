"""The OpenTelemetry sink against the OpenTelemetry SDK's in-memory exporter and metric reader, a
real OTLP/HTTP exporter sending to a receiver on loopback (decoded with opentelemetry-proto), and
a real ``mcp`` server whose SDK already traces ``tools/call``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import Histogram, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from support.otel import sdk_spans_to
from support.store import tool_call

from toolcall_spec.analytics.otel import DURATION_METRIC, OpenTelemetrySink

ERROR_MAPPING = pytest.mark.requirement("toolcall-spec.requirement.otel.error-mapping")


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def sink(spans: InMemorySpanExporter, reader: InMemoryMetricReader) -> OpenTelemetrySink:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    return OpenTelemetrySink(provider, MeterProvider(metric_readers=[reader]))


def only_span(spans: InMemorySpanExporter) -> ReadableSpan:
    (span,) = spans.get_finished_spans()
    return span


@ERROR_MAPPING
@pytest.mark.parametrize(
    ("overrides", "failed"),
    [
        ({"status": "success"}, False),
        ({"status": "error", "error_category": "tool_error"}, True),
        ({"status": "error", "error_category": "validation", "latency_ms": None}, True),
        ({"status": "success", "output_content": {"isError": True}}, True),
        ({"status": "success", "output_content": {"isError": "true"}}, False),
        ({"status": "success", "output_content": {"isError": 1}}, False),
        ({"status": "success", "output_content": {"isError": False}}, False),
    ],
    ids=["success", "tool-error", "pre-handler", "old-sdk-blind-spot", "string", "one", "false"],
)
def test_error_exactly_when_is_error_is_literal_true(
    sink: OpenTelemetrySink,
    spans: InMemorySpanExporter,
    overrides: dict[str, Any],
    failed: bool,
) -> None:
    event = {k: v for k, v in tool_call(1, **overrides).items() if v is not None}
    sink(event)
    span = only_span(spans)
    assert span.name == "tools/call tool_1"
    assert span.kind is SpanKind.SERVER
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "tool_1"
    assert (span.status.status_code is StatusCode.ERROR) is failed
    assert (attributes.get("error.type") == "tool_error") is failed
    assert ("error.type" in attributes) is failed


@ERROR_MAPPING
def test_only_the_pii_stripped_message_is_recorded(
    sink: OpenTelemetrySink, spans: InMemorySpanExporter
) -> None:
    sink(tool_call(5, error_message="customer max@example.com not found"))
    span = only_span(spans)
    assert span.status.description == "customer [EMAIL_REDACTED] not found"
    assert "max@example.com" not in repr(span.to_json())


def test_the_span_lasts_the_latency_and_ends_at_the_timestamp(
    sink: OpenTelemetrySink, spans: InMemorySpanExporter
) -> None:
    sink(tool_call(1, latency_ms=250.0, timestamp="2026-11-30T12:00:00.000Z"))
    span = only_span(spans)
    assert span.end_time == 1_796_040_000 * 10**9
    assert span.end_time - (span.start_time or 0) == 250_000_000


def test_the_duration_histogram_is_in_seconds_with_the_convention_attributes(
    sink: OpenTelemetrySink, reader: InMemoryMetricReader
) -> None:
    sink(tool_call(1, latency_ms=1500.0))
    sink(tool_call(5, latency_ms=500.0))
    sink({k: v for k, v in tool_call(10).items() if k != "latency_ms"})  # never ran: no duration
    data = reader.get_metrics_data()
    assert data is not None
    metrics = [m for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    (duration,) = [metric for metric in metrics if metric.name == DURATION_METRIC]
    assert duration.unit == "s"
    assert isinstance(duration.data, Histogram)
    points = {
        (point.attributes or {}).get("error.type"): point for point in duration.data.data_points
    }
    assert points[None].sum == pytest.approx(1.5)
    assert points["tool_error"].sum == pytest.approx(0.5)
    assert [point.count for point in points.values()] == [1, 1]


class Receiver(BaseHTTPRequestHandler):
    """A minimal OTLP/HTTP trace receiver: decodes each protobuf export request."""

    received: list[ExportTraceServiceRequest]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.received.append(request)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@ERROR_MAPPING
def test_spans_reach_a_real_otlp_receiver(receiver: ThreadingHTTPServer) -> None:
    host, port = receiver.server_address[:2]
    provider = TracerProvider()
    exporter = OTLPSpanExporter(endpoint=f"http://{host!s}:{port}/v1/traces")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sink = OpenTelemetrySink(provider, MeterProvider())
    sink(tool_call(5, error_message="quota for max@example.com"))
    sink(tool_call(1))
    provider.shutdown()
    received = receiver.received  # type: ignore[attr-defined]
    spans = [
        span
        for request in received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert [span.name for span in spans] == ["tools/call tool_1", "tools/call tool_1"]
    error, success = spans
    attributes = {kv.key: kv.value.string_value for kv in error.attributes}
    assert attributes["error.type"] == "tool_error"
    assert error.status.code == error.status.STATUS_CODE_ERROR
    assert error.status.message == "quota for [EMAIL_REDACTED]"
    assert "error.type" not in {kv.key for kv in success.attributes}
    assert error.kind == error.SPAN_KIND_SERVER


@pytest.fixture
def global_spans() -> Iterator[InMemorySpanExporter]:
    """What the process-wide tracer provider the ``mcp`` SDK traces with ends meanwhile (it can
    be set once per process: ``support.otel`` owns it for every test)."""
    exporter = InMemorySpanExporter()
    with sdk_spans_to(SimpleSpanProcessor(exporter)):
        yield exporter


@pytest.mark.requirement("toolcall-spec.requirement.otel.no-duplicate-span")
def test_the_sdk_span_is_enriched_not_duplicated(global_spans: InMemorySpanExporter) -> None:
    pytest.importorskip("mcp")
    from support.mcp_servers import demo_server, run_calls

    from toolcall_spec.mcp import instrument

    server = demo_server()
    instrument(server, OpenTelemetrySink())
    global_spans.clear()
    run_calls(server, [("crash", {}), ("add", {"a": 1, "b": 2}), ("add", {"a": "x"})])
    calls = [s for s in global_spans.get_finished_spans() if s.name.startswith("tools/call")]
    assert [span.name for span in calls] == ["tools/call crash", "tools/call add", "tools/call add"]
    crash, added, refused = (dict(span.attributes or {}) for span in calls)
    assert crash["toolcall_spec.error_category"] == "unknown"
    assert crash["error.type"] == "tool_error"
    assert "max@example.com" not in calls[0].to_json()  # the tool's message, PII-stripped
    assert "toolcall_spec.event_id" in added
    assert "error.type" not in added
    assert refused["toolcall_spec.error_category"] == "validation"
    assert refused["error.type"] == "tool_error"


# --- on every framework: the sink's error.type is the one on the request's span -----------------

OTEL_PROBE: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 1, "b": 2}),
    ("lookup_offer", {"reference": "max@example.com"}),
    ("crash", {}),
    ("async_crash", {}),
    ("no_such_tool", {}),
    ("add", {"a": "x"}),
    ("dict_with_flag", {}),
]
"""Success, an isError result, a raised exception, a ToolError, an unknown tool, invalid
arguments, and a dict that merely contains an isError key (data, a success)."""


def run_fastmcp_calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Each call through fastmcp's own in-process ``Client`` (the server's full request path)."""
    import fastmcp

    async def main() -> None:
        async with fastmcp.Client(server) as client:
            for name, arguments in calls:
                await client.call_tool_mcp(name, arguments)

    anyio.run(main)


@ERROR_MAPPING
@pytest.mark.requirement("toolcall-spec.requirement.otel.no-duplicate-span")
@pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")
@pytest.mark.parametrize("framework", ["mcp", "fastmcp"])
def test_tool_error_is_on_the_request_span_on_every_framework(
    global_spans: InMemorySpanExporter, framework: str
) -> None:
    pytest.importorskip("mcp")
    pytest.importorskip(framework)
    from support.mcp_servers import framework_server, run_calls

    from toolcall_spec.mcp import instrument

    server = framework_server(framework)
    instrument(server, OpenTelemetrySink())  # the global provider, as the framework's spans
    global_spans.clear()
    if framework == "mcp":
        run_calls(server, OTEL_PROBE)
    else:
        run_fastmcp_calls(server, OTEL_PROBE)
    calls = [
        span
        for span in global_spans.get_finished_spans()
        if span.kind is SpanKind.SERVER
        and dict(span.attributes or {}).get("mcp.method.name") == "tools/call"
    ]
    # One SERVER span per call (the framework's, enriched), in call order.
    assert [span.name for span in calls] == [f"tools/call {name}" for name, _ in OTEL_PROBE]
    categories = [None, "tool_error", "unknown", "unknown", "validation", "validation", None]
    for span, category in zip(calls, categories, strict=True):
        attributes = dict(span.attributes or {})
        is_error = category is not None
        assert attributes.get("error.type") == ("tool_error" if is_error else None)
        assert (span.status.status_code is StatusCode.ERROR) is is_error
        assert attributes.get("toolcall_spec.error_category") == category
        assert "toolcall_spec.event_id" in attributes
        assert "max@example.com" not in span.to_json()
