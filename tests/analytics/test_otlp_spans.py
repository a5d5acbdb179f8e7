"""The span -> ``tool_call`` translation of ``POST /v1/traces`` on its own: the error mapping
against the OpenTelemetry MCP conventions, the event against the event schema, and bad input of
every shape turned into a clear reason, never an exception."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_spec.analytics.ingest import event_issues
from toolcall_spec.analytics.otlp_spans import (
    OtlpSpan,
    SpanProblem,
    TraceBodyError,
    Translation,
    json_spans,
    protobuf_spans,
    span_classification,
    span_event,
    span_event_id,
    span_path,
    translate,
)
from toolcall_spec.json_paths import format_path

SPAN_TO_EVENT = pytest.mark.requirement("toolcall-spec.requirement.otlp.span-to-event")
NOT_A_TRACE = pytest.mark.requirement("toolcall-spec.requirement.otlp.not-a-trace")
TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def span(
    attributes: dict[str, object] | None = None, status_code: int = 0, message: str = ""
) -> OtlpSpan:
    return OtlpSpan(
        path="resourceSpans[0].scopeSpans[0].spans[0]",
        name="tools/call add",
        kind=2,
        trace_id=TRACE,
        span_id=SPAN,
        start_ns=1_796_040_000_000_000_000,
        end_ns=1_796_040_000_012_345_678,
        attributes={
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "add",
            **(attributes or {}),
        },
        status_code=status_code,
        status_message=message,
    )


@SPAN_TO_EVENT
@pytest.mark.parametrize(
    ("attributes", "status_code", "expected"),
    [
        ({}, 0, ("success", None)),
        ({}, 1, ("success", None)),
        ({"error.type": "tool_error"}, 2, ("error", "tool_error")),
        ({"error.type": "tool_error"}, 0, ("error", "tool_error")),
        ({"error.type": "-32602"}, 2, ("error", "unknown")),
        ({"error.type": "RuntimeError"}, 2, ("error", "unknown")),
        ({}, 2, ("error", "unknown")),
        (
            {"error.type": "tool_error", "toolcall_spec.error_category": "timeout"},
            2,
            ("error", "timeout"),
        ),
        (
            {"error.type": "tool_error", "toolcall_spec.error_category": "bogus"},
            2,
            ("error", "tool_error"),
        ),
        ({"toolcall_spec.error_category": "timeout"}, 0, ("success", None)),
    ],
    ids=[
        "unset",
        "ok",
        "tool-error",
        "tool-error-no-status",
        "json-rpc-code",
        "exception",
        "status-only",
        "refined",
        "unknown-refinement",
        "category-on-success",
    ],
)
def test_the_error_mapping_follows_the_conventions(
    attributes: dict[str, object], status_code: int, expected: tuple[str, str | None]
) -> None:
    classification = span_classification(span(attributes, status_code))
    assert (classification.status, classification.error_category) == expected


@SPAN_TO_EVENT
def test_the_event_is_schema_valid_and_carries_the_span() -> None:
    event = span_event(
        span(
            {"error.type": "ValueError", "mcp.session.id": "session-9"},
            2,
            "no account for max@example.com",
        )
    )
    assert event_issues(dict(event)) == []
    assert event["event_id"] == span_event_id(TRACE, SPAN)
    assert event["trace_id"] == TRACE
    assert event["session_id"] == "session-9"
    assert event["timestamp"] == "2026-11-30T12:00:00.012Z"
    assert event["latency_ms"] == 12.346
    assert event["error_message"] == "no account for [EMAIL_REDACTED]"


def test_the_event_id_depends_on_both_ids_only() -> None:
    assert span_event_id(TRACE, SPAN) == span_event_id(TRACE, SPAN)
    assert span_event_id(TRACE, SPAN) != span_event_id(TRACE, "b7ad6b7169203332")
    assert span_event_id(TRACE, SPAN) != span_event_id("1" + TRACE[1:], SPAN)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"attributes": {"mcp.method.name": "tools/call"}}, "without gen_ai.tool.name"),
        ({"attributes": {}}, "without mcp.method.name"),
        ({"start_ns": 0}, "are not a span's times"),
        ({"end_ns": 1}, "are not a span's times"),
    ],
    ids=["no-tool", "named-only", "no-start", "ends-first"],
)
def test_a_tools_call_span_without_what_an_event_needs_is_skipped(
    change: dict[str, Any], reason: str
) -> None:
    fields = _fields(span())
    fields.update(change)
    out = translate(iter([OtlpSpan(**fields)]))
    assert out.events == []
    assert len(out.skipped) == 1
    assert out.skipped[0].startswith("resourceSpans[0].scopeSpans[0].spans[0]: ")
    assert reason in out.skipped[0]


def _fields(value: OtlpSpan) -> dict[str, Any]:
    return {name: getattr(value, name) for name in OtlpSpan.__slots__}


@pytest.mark.parametrize(
    "change",
    [
        {"kind": 3},
        {"kind": 1},
        {"attributes": {"mcp.method.name": "tools/list"}},
        {"name": "GET /"},
    ],
    ids=["client", "internal", "other-method", "not-mcp"],
)
def test_other_spans_are_ignored_and_counted(change: dict[str, Any]) -> None:
    fields = _fields(span())
    if "name" in change:
        fields["attributes"] = {}
    fields.update(change)
    out = translate(iter([OtlpSpan(**fields)]))
    assert (out.events, out.skipped, out.ignored) == ([], [], 1)


@NOT_A_TRACE
@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"resourceLogs": []}', "resourceLogs: this is an OTLP logs export"),
        (b'{"resourceSpans": [{"scopeSpans": 3}]}', "resourceSpans[0].scopeSpans: not an array"),
        (b'{"resourceSpans": [1]}', "resourceSpans[0]: not an object"),
        (b'"spans"', "(root): an OTLP trace export is a JSON object"),
    ],
)
def test_a_json_body_that_is_not_a_trace_names_where(body: bytes, says: str) -> None:
    with pytest.raises(TraceBodyError) as caught:
        translate(json_spans(body))
    assert says in str(caught.value)


def test_members_a_newer_otlp_adds_are_ignored() -> None:
    """OTLP/JSON receivers must ignore fields they do not know (opentelemetry-specification
    #2816): beside resourceSpans, in a resource, a scope and a span."""
    span = {
        "traceId": TRACE,
        "spanId": SPAN,
        "kind": 2,
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [
            {"key": "mcp.method.name", "value": {"stringValue": "tools/call"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "add"}},
        ],
        "futureSpanField": {"x": 1},
    }
    export = {
        "resourceSpans": [{"scopeSpans": [{"spans": [span], "futureScope": 1}], "future": []}],
        "futureTopLevel": True,
    }
    out = translate(json_spans(orjson.dumps(export)))
    assert [(path, event["event_name"]) for path, event in out.events] == [
        ("resourceSpans[0].scopeSpans[0].spans[0]", "add")
    ]


def test_an_empty_export_is_no_spans() -> None:
    assert translate(json_spans(b"{}")).events == []


def test_a_malformed_json_span_is_a_problem_with_its_path() -> None:
    spans = [
        {"traceId": "00" * 16, "spanId": SPAN},
        {"traceId": TRACE, "spanId": SPAN, "attributes": [{"value": {}}]},
        "a span",
    ]
    body = orjson.dumps({"resourceSpans": [{"scopeSpans": [{}, {"spans": spans}]}]})
    problems = [item for item in json_spans(body) if isinstance(item, SpanProblem)]
    assert [problem.path for problem in problems] == [
        f"resourceSpans[0].scopeSpans[1].spans[{index}]" for index in range(3)
    ]
    reasons = [problem.reason.split(":")[0] for problem in problems]
    assert reasons == [
        "traceId",
        "attributes[0]",
        "a span is a JSON object; skipped",
    ]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "resourceSpans",
                    "scopeSpans",
                    "spans",
                    "traceId",
                    "spanId",
                    "kind",
                    "attributes",
                    "key",
                    "value",
                    "stringValue",
                    "status",
                    "code",
                    "name",
                    "startTimeUnixNano",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


def read_or_refuse(read: Callable[[], Translation]) -> str | Translation:
    """The translation, or the refusal's message: whatever the body, one of the two."""
    try:
        return read()
    except TraceBodyError as exc:
        return str(exc)


@NOT_A_TRACE
@given(JSON_VALUES)
def test_any_json_body_is_read_or_refused_with_a_reason(document: object) -> None:
    out = read_or_refuse(lambda: translate(json_spans(orjson.dumps(document))))
    if isinstance(out, str):
        assert out
    else:
        assert all(": " in reason for reason in out.skipped)


@NOT_A_TRACE
@given(st.binary(max_size=200))
def test_any_protobuf_body_is_read_or_refused_with_a_reason(body: bytes) -> None:
    pytest.importorskip("opentelemetry.proto")
    out = read_or_refuse(lambda: translate(protobuf_spans(body)))
    if isinstance(out, str):
        assert out.startswith("not a protobuf ExportTraceServiceRequest")
    else:
        assert all(": " in reason for reason in out.skipped)


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_a_span_path_is_the_package_path_form(resource: int, scope: int, index: int) -> None:
    parts: list[str | int] = ["resourceSpans", resource, "scopeSpans", scope, "spans", index]
    assert span_path(resource, scope, index) == format_path(parts)
