"""``POST /v1/traces`` on a real uvicorn server on loopback, writing into a real DuckDB file.

The spans come from the real other side: the ``mcp`` SDK's own ``tools/call`` spans and this
package's ``OpenTelemetrySink``, each exported by the real OTLP/HTTP exporter
(opentelemetry-exporter-otlp-proto-http, protobuf, gzip too); the store's metrics are compared
with what the real ``mcp`` client received. OTLP/JSON bodies are written by hand, per the OTLP
JSON mapping (hex ids, integer enums, 64-bit integers as strings).
"""

from __future__ import annotations

import base64
import gzip
import itertools
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")
pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")
pytest.importorskip("mcp", reason="the mcp extra is not installed")

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from support.mcp_servers import Call, demo_server, run_calls
from support.otel import sdk_spans_to

from toolcall_spec.analytics.ingest import MAX_BATCH_EVENTS, MAX_BODY_BYTES
from toolcall_spec.analytics.metrics import error_metrics
from toolcall_spec.analytics.otel import OpenTelemetrySink
from toolcall_spec.analytics.otlp_spans import span_event_id
from toolcall_spec.analytics.store import EventStore, StoreError, open_store
from toolcall_spec.analytics.store.layout import Columns, Row
from toolcall_spec.http.ingest_app import IngestSettings, create_ingest_app
from toolcall_spec.http.otlp_route import IGNORED_HEADER, TRACES_PATH
from toolcall_spec.http.server import BackgroundServer
from toolcall_spec.mcp import instrument

KEY_A = "key-of-project-a-0123456789"
KEYS = {KEY_A: "project-a"}
PROTOBUF = "application/x-protobuf"

SPAN_TO_EVENT = pytest.mark.requirement("toolcall-spec.requirement.otlp.span-to-event")
SAME_INTAKE = pytest.mark.requirement("toolcall-spec.requirement.otlp.same-intake")
SKIPPED_REPORTED = pytest.mark.requirement("toolcall-spec.requirement.otlp.skipped-reported")
RETRY_DEDUPE = pytest.mark.requirement("toolcall-spec.requirement.otlp.retry-dedupe")
NOT_A_TRACE = pytest.mark.requirement("toolcall-spec.requirement.otlp.not-a-trace")

# Every outcome the demo server has: a success, results with isError: true (returned, raised,
# refused before the handler, failed output conversion), a JSON-RPC error, and a dict result.
CALLS: list[Call] = [
    ("add", {"a": 1, "b": 2}),
    ("lookup_offer", {"reference": "A-1"}),
    ("crash", {}),
    ("async_crash", {}),
    ("silent_failure", {}),
    ("quota", {}),
    ("add", {"a": "x"}),
    ("no_such_tool", {}),
    ("bad_output", {}),
    ("dict_with_flag", {}),
    ("add", {"a": 2, "b": 3}),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(str(tmp_path / "events.duckdb")) as opened:
        yield opened


@pytest.fixture
def server(store: EventStore) -> Iterator[BackgroundServer]:
    with BackgroundServer(create_ingest_app(IngestSettings(store, KEYS))) as running:
        yield running


def exporter(server: BackgroundServer, **options: Any) -> OTLPSpanExporter:
    return OTLPSpanExporter(
        endpoint=server.url + TRACES_PATH,
        headers={"Authorization": f"Bearer {KEY_A}"},
        timeout=30,
        **options,
    )


def client_truth(outcomes: list[Any]) -> tuple[int, int, int]:
    """(calls, results with isError true, JSON-RPC errors) as the client received them."""
    results = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    flagged = sum(1 for result in results if result.is_error is True)
    return len(outcomes), flagged, len(outcomes) - len(results)


def stored(store: EventStore) -> list[dict[str, Any]]:
    rows = store.query("SELECT event_json FROM {events} ORDER BY timestamp", {})
    return [orjson.loads(row[0]) for row in rows]


@SPAN_TO_EVENT
@RETRY_DEDUPE
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_mcp_sdk_spans_land_as_the_calls_the_client_saw(
    server: BackgroundServer, store: EventStore, mode: str
) -> None:
    """The SDK's own spans, the real exporter (protobuf), the real client: one event per
    tools/call, its errors exactly the client's isError results (tool_error) and JSON-RPC errors
    (unknown). Over JSON-RPC (``legacy``), the client's own tools/call spans go to the same
    exporter and are not counted."""
    copies = InMemorySpanExporter()
    to_server = SimpleSpanProcessor(exporter(server))
    with sdk_spans_to(SimpleSpanProcessor(copies)), sdk_spans_to(to_server):
        outcomes = run_calls(demo_server(), CALLS, mode)
    calls, flagged, rpc_errors = client_truth(outcomes)
    assert (flagged, rpc_errors) > (0, 0)  # the run has both kinds of failure to count
    metrics = store.metrics("project-a")
    assert metrics.totals.tool_calls == calls
    assert metrics.totals.errors == flagged + rpc_errors
    assert dict(metrics.totals.by_category) == {"tool_error": flagged, "unknown": rpc_errors}
    server_spans = [
        span
        for span in copies.get_finished_spans()
        if span.kind is SpanKind.SERVER and span.name.startswith("tools/call")
    ]
    client_spans = [s for s in copies.get_finished_spans() if s.kind is SpanKind.CLIENT]
    assert len(client_spans) >= (len(CALLS) if mode == "legacy" else 0)  # exported, ignored
    expected_ids = {
        span_event_id(f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}")
        for span in server_spans
    }
    events = stored(store)
    assert {event["event_id"] for event in events} == expected_ids
    by_id = {
        span_event_id(f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}"): s
        for s in server_spans
    }
    for event in events:
        span = by_id[event["event_id"]]
        assert event["event_name"] == (span.attributes or {})["gen_ai.tool.name"]
        duration_ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
        assert event["latency_ms"] == pytest.approx(duration_ms, abs=0.001)
        assert event["trace_id"] == f"{span.context.trace_id:032x}"
    assert all("max@example.com" not in orjson.dumps(event).decode() for event in events)


@SPAN_TO_EVENT
def test_the_sinks_own_spans_land_with_the_events_metrics(
    server: BackgroundServer, store: EventStore
) -> None:
    """``OpenTelemetrySink`` spans (gzip, through the real exporter): the store's metrics equal
    the metrics of the events the sink was given, and the errors are what the client saw."""
    events: list[Mapping[str, Any]] = []
    demo = demo_server()
    instrument(demo, events.append)
    outcomes = run_calls(demo, CALLS)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter(server, compression=Compression.Gzip)))
    sink = OpenTelemetrySink(provider, MeterProvider())
    for event in events:  # outside any span: the sink starts its own
        sink(event)
    provider.shutdown()
    calls, flagged, rpc_errors = client_truth(outcomes)
    truth = error_metrics(events)
    metrics = store.metrics("project-a").totals
    assert metrics.tool_calls == truth.tool_calls == calls
    assert metrics.errors == truth.errors == flagged + rpc_errors
    assert metrics.by_category == truth.by_category
    assert len(truth.by_category) > 1  # the sink's finer categories came through
    # A call that never reached its handler has no latency: the sink's span lasts 0 s.
    sent = sorted(event.get("latency_ms", 0.0) for event in events)
    assert sorted(event["latency_ms"] for event in stored(store)) == pytest.approx(sent, abs=0.001)


@SPAN_TO_EVENT
def test_the_sdk_spans_enriched_by_the_sink_keep_the_events_categories(
    server: BackgroundServer, store: EventStore
) -> None:
    """The production set-up: the SDK traces, ``instrument(server, OpenTelemetrySink())`` adds
    its attributes to the SDK's span, the exporter sends it. The store then holds the categories
    the events had (an exception is ``unknown``, a refused call ``validation``), not only
    ``tool_error``."""
    events: list[Mapping[str, Any]] = []
    sink = OpenTelemetrySink(meter_provider=MeterProvider())

    def both(event: Mapping[str, Any]) -> None:
        events.append(event)
        sink(event)

    demo = demo_server()
    instrument(demo, both)
    with sdk_spans_to(SimpleSpanProcessor(exporter(server))):
        outcomes = run_calls(demo, CALLS)
    calls, flagged, rpc_errors = client_truth(outcomes)
    truth = error_metrics(events)
    metrics = store.metrics("project-a").totals
    assert (metrics.tool_calls, metrics.errors) == (calls, flagged + rpc_errors)
    assert metrics.by_category == truth.by_category
    assert {"unknown", "tool_error"} <= set(truth.by_category)


def otlp_json(spans: Sequence[ReadableSpan]) -> bytes:
    """The spans as the SDK's own encoder writes them (``encode_spans``), in the OTLP/JSON
    mapping: proto3 JSON with integer enums, except that ids are hex, not base64."""
    message = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in message.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return orjson.dumps(message)


@SPAN_TO_EVENT
@SAME_INTAKE
def test_the_sdk_spans_as_gzip_otlp_json_land_as_the_client_saw(
    server: BackgroundServer, store: EventStore
) -> None:
    copies = InMemorySpanExporter()
    with sdk_spans_to(SimpleSpanProcessor(copies)):
        outcomes = run_calls(demo_server(), CALLS, "legacy")
    body = gzip.compress(otlp_json(copies.get_finished_spans()))
    response = post(server, body, **{"Content-Encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert response.json() == {}
    calls, flagged, rpc_errors = client_truth(outcomes)
    assert int(response.headers[IGNORED_HEADER]) >= calls  # the client's spans, at least
    metrics = store.metrics("project-a").totals
    assert (metrics.tool_calls, metrics.errors) == (calls, flagged + rpc_errors)
    assert dict(metrics.by_category) == {"tool_error": flagged, "unknown": rpc_errors}


# --- OTLP/JSON, written by hand -----------------------------------------------------------------

_ids = itertools.count(1)


def json_span(
    *,
    name: str = "tools/call add",
    kind: int = 2,
    attributes: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    start: int = 1_796_040_000_000_000_000,
    duration_ns: int = 250_000_000,
) -> dict[str, Any]:
    number = next(_ids)
    span: dict[str, Any] = {
        "traceId": f"{number:032x}",
        "spanId": f"{number:016x}",
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + duration_ns),
        "attributes": [
            {"key": key, "value": {"stringValue": value}}
            for key, value in (attributes or {}).items()
        ],
    }
    if status is not None:
        span["status"] = status
    return span


def tools_call(tool: str = "add", **extra: str) -> dict[str, str]:
    return {"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, **extra}


def json_export(spans: list[dict[str, Any]]) -> bytes:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "demo"}}]}
    scope = {"name": "mcp-python-sdk", "version": "2.3.0"}
    export = {
        "resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]
    }
    return orjson.dumps(export)


def post(
    server: BackgroundServer,
    body: bytes,
    content_type: str = "application/json",
    key: str | None = KEY_A,
    **headers: str,
) -> httpx.Response:
    headers["Content-Type"] = content_type
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return httpx.post(server.url + TRACES_PATH, content=body, headers=headers, timeout=30)


def mixed_export() -> tuple[bytes, dict[str, tuple[str, str | None]]]:
    """An export of every kind of span, and the (status, category) each tool's event must get."""
    spans = [
        json_span(attributes=tools_call("ok", **{"mcp.session.id": "s-1"})),
        json_span(
            attributes=tools_call("flagged", **{"error.type": "tool_error"}),
            status={"code": 2},
        ),
        json_span(
            attributes=tools_call("raised", **{"error.type": "RuntimeError"}),
            status={"code": 2, "message": "customer max@example.com not found"},
        ),
        json_span(attributes=tools_call("status_only"), status={"code": "STATUS_CODE_ERROR"}),
        json_span(
            attributes=tools_call(
                "timed_out",
                **{"error.type": "tool_error", "toolcall_spec.error_category": "timeout"},
            )
        ),
        json_span(name="initialize", attributes={"mcp.method.name": "initialize"}),
        json_span(kind=3, attributes=tools_call("client_side")),
        json_span(name="GET /", attributes={"http.request.method": "GET"}),
    ]
    expected = {
        "ok": ("success", None),
        "flagged": ("error", "tool_error"),
        "raised": ("error", "unknown"),
        "status_only": ("error", "unknown"),
        "timed_out": ("error", "timeout"),
    }
    return json_export(spans), expected


@SPAN_TO_EVENT
def test_a_json_export_maps_each_span_by_the_conventions(
    server: BackgroundServer, store: EventStore
) -> None:
    body, expected = mixed_export()
    response = post(server, body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {}  # everything usable was stored: no partial success
    assert response.headers[IGNORED_HEADER] == "3"
    events = {event["event_name"]: event for event in stored(store)}
    assert {name: (e["status"], e.get("error_category")) for name, e in events.items()} == expected
    assert events["raised"]["error_message"] == "customer [EMAIL_REDACTED] not found"
    assert events["ok"]["session_id"] == "s-1"
    assert events["ok"]["latency_ms"] == 250.0
    assert events["ok"]["timestamp"] == "2026-11-30T12:00:00.250Z"
    assert events["ok"]["sdk_version"] == "mcp-python-sdk 2.3.0"
    assert events["flagged"]["session_id"] == events["flagged"]["trace_id"]


@SAME_INTAKE
def test_a_gzip_json_export_is_read(server: BackgroundServer, store: EventStore) -> None:
    body, expected = mixed_export()
    response = post(server, gzip.compress(body), **{"Content-Encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert store.count("project-a") == len(expected)


@RETRY_DEDUPE
def test_a_retried_export_is_stored_once(server: BackgroundServer, store: EventStore) -> None:
    body, expected = mixed_export()
    assert post(server, body).status_code == 200
    assert post(server, body).status_code == 200
    assert store.count("project-a") == len(expected)


@SKIPPED_REPORTED
@pytest.mark.parametrize("content_type", ["application/json", PROTOBUF])
def test_a_tools_call_span_without_the_attributes_is_a_partial_success(
    server: BackgroundServer,
    store: EventStore,
    content_type: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    spans = [
        json_span(attributes=tools_call("ok")),
        json_span(attributes={"mcp.method.name": "tools/call"}),  # no gen_ai.tool.name
        json_span(name="tools/call lookup", attributes={}),  # named like one, no attributes
        {**json_span(attributes=tools_call("bad_id")), "traceId": "not-hex"},
    ]
    body = json_export(spans)
    if content_type == PROTOBUF:
        body = to_protobuf(body)
    response = post(server, body, content_type)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(content_type)
    if content_type == PROTOBUF:
        decoded = ExportTraceServiceResponse()
        decoded.ParseFromString(response.content)
        rejected, message = (
            decoded.partial_success.rejected_spans,
            decoded.partial_success.error_message,
        )
    else:
        partial = response.json()["partialSuccess"]
        rejected, message = partial["rejectedSpans"], partial["errorMessage"]
    span_path = "resourceSpans[0].scopeSpans[0].spans"
    assert rejected == (3 if content_type == "application/json" else 2)
    assert f"{span_path}[1]: a tools/call span without gen_ai.tool.name" in message
    assert f"{span_path}[2]: a tools/call span without mcp.method.name" in message
    if content_type == "application/json":
        assert f"{span_path}[3]: traceId:" in message
    assert [event["event_name"] for event in stored(store)] == ["ok"]
    (logged,) = [
        r for r in caplog.records if r.name.endswith("otlp_route") and r.levelname == "WARNING"
    ]
    assert f"{span_path}[1]: a tools/call span without gen_ai.tool.name" in logged.getMessage()


def to_protobuf(json_body: bytes) -> bytes:
    """The same export as protobuf (a span whose id is not hex is left out: protobuf ids are
    bytes)."""
    export = orjson.loads(json_body)
    request = ExportTraceServiceRequest()
    for resource in export["resourceSpans"]:
        out_resource = request.resource_spans.add()
        for scope_spans in resource["scopeSpans"]:
            out_scope = out_resource.scope_spans.add()
            out_scope.scope.name = scope_spans["scope"]["name"]
            for span in scope_spans["spans"]:
                try:
                    trace_id = bytes.fromhex(span["traceId"])
                except ValueError:
                    continue
                out = out_scope.spans.add()
                out.trace_id, out.span_id = trace_id, bytes.fromhex(span["spanId"])
                out.name, out.kind = span["name"], span["kind"]
                out.start_time_unix_nano = int(span["startTimeUnixNano"])
                out.end_time_unix_nano = int(span["endTimeUnixNano"])
                for attribute in span["attributes"]:
                    added = out.attributes.add()
                    added.key = attribute["key"]
                    added.value.string_value = attribute["value"]["stringValue"]
    encoded: bytes = request.SerializeToString()
    return encoded


@NOT_A_TRACE
@pytest.mark.parametrize(
    ("body", "content_type", "says"),
    [
        (b'{"events": []}', "application/json", "events: not a member of an OTLP trace export"),
        (b'{"resourceMetrics": []}', "application/json", "this is an OTLP metrics export"),
        (b"[1, 2]", "application/json", "a JSON object with resourceSpans"),
        (b"{not json", "application/json", "not JSON"),
        (b'{"resourceSpans": {}}', "application/json", "resourceSpans: not an array"),
        (b'{"events": []}', PROTOBUF, "not a protobuf ExportTraceServiceRequest"),
    ],
    ids=["batch", "metrics", "array", "not-json", "spans-object", "json-as-protobuf"],
)
def test_a_body_that_is_not_a_trace_is_400(
    server: BackgroundServer, store: EventStore, body: bytes, content_type: str, says: str
) -> None:
    response = post(server, body, content_type)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith(content_type)
    if content_type == PROTOBUF:
        # google.rpc.Status: field 1 code (3, INVALID_ARGUMENT), field 2 the message.
        assert response.content.startswith(b"\x08\x03\x12")
        assert says.encode() in response.content
    else:
        assert response.json()["code"] == 3
        assert says in response.json()["message"]
    assert store.count() == 0


@SAME_INTAKE
@pytest.mark.parametrize("key", [None, "wrong-key-0123456789"])
def test_a_missing_or_wrong_key_is_401(
    server: BackgroundServer, store: EventStore, key: str | None
) -> None:
    response = post(server, mixed_export()[0], key=key)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert store.count() == 0


@SAME_INTAKE
def test_the_body_limit_holds_on_the_decompressed_size(server: BackgroundServer) -> None:
    padding = b" " * (MAX_BODY_BYTES + 10)
    compressed = gzip.compress(b'{"resourceSpans": [' + padding + b"]}")
    assert len(compressed) < MAX_BODY_BYTES // 100
    assert post(server, compressed, **{"Content-Encoding": "gzip"}).status_code == 413


class FailingStore(EventStore):
    engine = "failing"

    def write_columns(self, columns: Columns) -> None:
        raise StoreError("the disk is gone")

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        return []

    def close(self) -> None:
        return None


@SAME_INTAKE
def test_a_store_failure_is_503_and_nothing_is_acknowledged() -> None:
    with BackgroundServer(create_ingest_app(IngestSettings(FailingStore(), KEYS))) as running:
        response = post(running, mixed_export()[0])
        protobuf = post(running, to_protobuf(mixed_export()[0]), PROTOBUF)
    assert response.status_code == protobuf.status_code == 503
    assert response.json() == {"code": 14, "message": "the events could not be stored; retry"}
    assert protobuf.headers["content-type"] == PROTOBUF
    assert protobuf.content.startswith(b"\x08\x0e\x12")  # google.rpc.Status, UNAVAILABLE


@SAME_INTAKE
def test_an_unsupported_media_type_is_415(server: BackgroundServer) -> None:
    assert post(server, b"{}", "text/plain").status_code == 415
    assert post(server, b"{}", **{"Content-Encoding": "br"}).status_code == 415


@SAME_INTAKE
def test_an_export_of_more_spans_than_a_batch_holds_is_checked_in_batches(
    server: BackgroundServer, store: EventStore
) -> None:
    """An exporter does not know the events route's 1,000-event batch: the spans are checked in
    batches of that size, and all of them stored."""
    count = MAX_BATCH_EVENTS + 200
    body = json_export([json_span(attributes=tools_call(f"tool_{i % 7}")) for i in range(count)])
    assert len(body) < MAX_BODY_BYTES
    response = post(server, body)
    assert response.status_code == 200, response.text
    assert response.json() == {}
    assert store.count("project-a") == count
