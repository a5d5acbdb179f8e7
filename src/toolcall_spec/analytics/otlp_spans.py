"""From OTLP trace exports to ``tool_call`` events: what ``POST /v1/traces`` stores.

An MCP server instrumented with OpenTelemetry (the ``mcp`` SDK's own ``OpenTelemetryMiddleware``,
this package's ``OpenTelemetrySink``, ...) opens one SERVER span per ``tools/call`` request, named
per the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai, ``model/mcp``):
``mcp.method.name = tools/call``, ``gen_ai.tool.name``, ``mcp.session.id`` (when the transport has
a session), ``error.type`` and the span status on failure. Each such span becomes one event:

- ``error.type = tool_error`` (the result reached the client with ``isError: true``): status
  ``error``, category ``tool_error``; any other ``error.type`` (an exception's type, a JSON-RPC
  error code), or a span status ERROR without one: status ``error``, category ``unknown``;
  otherwise ``success``. When the span also carries this package's own
  ``toolcall_spec.error_category`` (``OpenTelemetrySink`` sets it) and it is a category the
  schema knows, it refines the category of an error (``timeout``, ``validation``...);
- ``latency_ms`` is the span's duration, ``timestamp`` its end, ``trace_id`` the trace id (hex),
  ``session_id`` ``mcp.session.id`` or, without one, the trace id;
- ``error_message`` is the span status description through the one message path
  (``classify.error_message``: cut, PII-stripped, clamped);
- ``event_id`` is derived from the trace id and the span id (a UUID 5), so an exporter that
  retries an export stores each span once.

Spans that are not ``tools/call`` SERVER spans (other MCP methods, the client's own spans, the
application's spans) are ignored and counted. A span that is a ``tools/call`` server span but
cannot become an event (no ``gen_ai.tool.name``, malformed ids or times) is skipped with its path
and the reason. Paths name the span in the export's JSON form:
``resourceSpans[0].scopeSpans[1].spans[2]``.

Both OTLP/HTTP encodings are read: JSON (``application/json``, the OTLP/JSON mapping: hex ids,
integer enums, 64-bit integers as strings or numbers) by hand, and protobuf
(``application/x-protobuf``) with ``opentelemetry-proto`` (the ``otel`` extra), imported only when
a protobuf body arrives.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from toolcall_spec.analytics.classify import Classification, ErrorCategory, error_message
from toolcall_spec.analytics.events import EventFactory
from toolcall_spec.analytics.metrics import CATEGORIES
from toolcall_spec.analytics.otlp_integers import (
    FIXED64,
    INT64,
    SPAN_KIND,
    STATUS_CODE,
    IntegerKind,
    integer_problems,
    integer_value,
    snake_case,
)
from toolcall_spec.json_paths import format_path
from toolcall_spec.loading import DocumentError, parse_json
from toolcall_spec.typed import ToolCallEvent

TOOLS_CALL = "tools/call"
TOOL_ERROR = "tool_error"
CATEGORY_ATTRIBUTE = "toolcall_spec.error_category"
"""Not a convention: this package's finer category (``timeout``, ``validation``...), set by
``OpenTelemetrySink`` (``analytics.otel``, which writes these attributes; this module reads
them, and has no OpenTelemetry import of its own)."""
SPAN_KIND_SERVER = 2
STATUS_CODE_ERROR = 2
JSON_TYPE = "application/json"
PROTOBUF_TYPE = "application/x-protobuf"
SDK_VERSION_LIMIT = 64
"""The schema's ``maxLength`` of ``sdk_version``, which carries the instrumentation scope."""

EVENT_ID_NAMESPACE = uuid.UUID("5b7c3f1e-2d44-4c59-9a0e-0f6d1c2b7a31")
"""The UUID 5 namespace of event ids derived from a span (fixed: a retry must derive the same)."""
_EXPORT_MEMBERS = frozenset({"resourceSpans", "resource_spans"})
_OTHER_SIGNALS = {
    "resourceMetrics": "metrics",
    "resource_metrics": "metrics",
    "resourceLogs": "logs",
    "resource_logs": "logs",
    "resourceProfiles": "profiles",
}


class TraceBodyError(ValueError):
    """The body is not an OTLP trace export; the message names where and why."""


class SpanFormatError(ValueError):
    """One span cannot be read (malformed id, time or attribute); the span is skipped."""


@dataclass(frozen=True, slots=True)
class OtlpSpan:
    """One span of an export, decoded from either encoding."""

    path: str
    name: str
    kind: int
    trace_id: str
    """32 lowercase hex digits."""
    span_id: str
    """16 lowercase hex digits."""
    start_ns: int
    end_ns: int
    attributes: Mapping[str, object]
    status_code: int
    status_message: str
    scope: str = ""
    """The instrumentation scope, ``name version``, e.g. ``mcp-python-sdk``."""


@dataclass(frozen=True, slots=True)
class SpanProblem:
    """A span of the export that could not be decoded, and why."""

    path: str
    reason: str


@dataclass
class Translation:
    """What an export holds for the store: the events (each with the path of its span), the
    ``tools/call`` spans skipped (``path: reason``), and how many other spans were ignored."""

    events: list[tuple[str, ToolCallEvent]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: int = 0


# --- translation --------------------------------------------------------------------------------


def translate(spans: Iterator[OtlpSpan | SpanProblem]) -> Translation:
    """The events of the ``tools/call`` server spans; the rest skipped or ignored."""
    out = Translation()
    for span in spans:
        if isinstance(span, SpanProblem):
            out.skipped.append(f"{span.path}: {span.reason}")
            continue
        if not is_tools_call_server_span(span):
            out.ignored += 1
            continue
        try:
            out.events.append((span.path, span_event(span)))
        except SpanFormatError as exc:
            out.skipped.append(f"{span.path}: {exc}")
    return out


def is_tools_call_server_span(span: OtlpSpan) -> bool:
    """A SERVER span of a ``tools/call`` request: by its ``mcp.method.name``, or, without that
    attribute, by its conventional name (``tools/call {tool}``), so that such a span is skipped
    with a reason instead of ignored in silence. Client spans of the same call are not counted:
    a client and a server exporting to one endpoint would count each call twice."""
    if span.kind != SPAN_KIND_SERVER:
        return False
    method = span.attributes.get("mcp.method.name")
    if method is not None:
        return method == TOOLS_CALL
    return span.name == TOOLS_CALL or span.name.startswith(TOOLS_CALL + " ")


def span_event(span: OtlpSpan) -> ToolCallEvent:
    """The ``tool_call`` event of one ``tools/call`` server span; ``SpanFormatError`` when the
    span lacks what an event needs."""
    if span.attributes.get("mcp.method.name") != TOOLS_CALL:
        raise SpanFormatError("a tools/call span without mcp.method.name = tools/call; skipped")
    tool = span.attributes.get("gen_ai.tool.name")
    if not isinstance(tool, str) or not tool:
        raise SpanFormatError("a tools/call span without gen_ai.tool.name; skipped")
    if span.start_ns <= 0 or span.end_ns < span.start_ns:
        raise SpanFormatError(
            f"startTimeUnixNano {span.start_ns} and endTimeUnixNano {span.end_ns} "
            "are not a span's times; skipped"
        )
    session = span.attributes.get("mcp.session.id")
    end = _moment(span.end_ns)
    event_id = span_event_id(span.trace_id, span.span_id)
    factory = EventFactory(
        session_id=session if isinstance(session, str) and session else span.trace_id,
        sdk_version=span.scope[:SDK_VERSION_LIMIT] or EventFactory.sdk_version,
        clock=lambda: end,
        new_id=lambda: event_id,
    )
    return factory.tool_call(
        tool,
        span_classification(span),
        latency_ms=(span.end_ns - span.start_ns) / 1_000_000,
        trace_id=span.trace_id,
    )


def _moment(unix_ns: int) -> datetime:
    try:
        seconds = datetime.fromtimestamp(unix_ns // 1_000_000_000, timezone.utc)
    except (OverflowError, ValueError, OSError):
        raise SpanFormatError(f"endTimeUnixNano {unix_ns}: not a time an event can carry") from None
    return seconds.replace(microsecond=(unix_ns // 1_000) % 1_000_000)


def span_classification(span: OtlpSpan) -> Classification:
    """``error.type = tool_error``: ``tool_error``; another ``error.type`` or an ERROR status:
    ``unknown``, refined by ``toolcall_spec.error_category`` when it names a known category;
    otherwise a success."""
    error_type = span.attributes.get("error.type")
    if error_type is None and span.status_code != STATUS_CODE_ERROR:
        return Classification("success")
    category: ErrorCategory = "tool_error" if error_type == TOOL_ERROR else "unknown"
    refined = span.attributes.get(CATEGORY_ATTRIBUTE)
    if isinstance(refined, str) and refined in CATEGORIES:
        category = refined  # type: ignore[assignment]  # checked against the schema's enum
    return Classification("error", category, error_message(span.status_message or None))


def span_path(resource: int, scope: int, index: int) -> str:
    """Where a span is in the export (``format_path``'s form, written out: it is on every span's
    way, and its members are plain names)."""
    return f"resourceSpans[{resource}].scopeSpans[{scope}].spans[{index}]"


def span_event_id(trace_id: str, span_id: str) -> str:
    """The event id of a span: the same for every export of the span."""
    return str(uuid.uuid5(EVENT_ID_NAMESPACE, f"{trace_id}-{span_id}"))


# --- decoding: OTLP/JSON ------------------------------------------------------------------------


def json_spans(raw: bytes) -> Iterator[OtlpSpan | SpanProblem]:
    """The spans of an OTLP/JSON trace export. ``TraceBodyError`` at once when the body is not
    one (not JSON, another signal, a misshapen ``resourceSpans``)."""
    try:
        export = parse_json(raw)
    except DocumentError as exc:
        raise TraceBodyError(f"not JSON: {exc}") from None
    if not isinstance(export, dict):
        raise TraceBodyError("(root): an OTLP trace export is a JSON object with resourceSpans")
    if not _EXPORT_MEMBERS & export.keys():
        _refuse_other_document(export)
    resources = export.get("resourceSpans", export.get("resource_spans", []))
    checked = _array(resources, ["resourceSpans"])
    for problem in integer_problems(export):  # the first is enough: the export is refused
        raise TraceBodyError(problem)
    return _json_resources(checked)


def _refuse_other_document(export: dict[str, Any]) -> None:
    """A JSON object without ``resourceSpans``: an empty export when it has no members at all,
    otherwise some other document (another signal's export, a batch of events), refused by
    naming what it has. With ``resourceSpans``, other members are ignored: OTLP/JSON receivers
    must ignore fields they do not know (opentelemetry-specification #2816)."""
    for member in export:
        if member in _OTHER_SIGNALS:
            raise TraceBodyError(
                f"{member}: this is an OTLP {_OTHER_SIGNALS[member]} export; "
                "/v1/traces takes traces (resourceSpans)"
            )
    if export:
        member = next(iter(export))
        raise TraceBodyError(
            f"{format_path([member])}: not a member of an OTLP trace export, which has "
            "resourceSpans"
        )


def _json_resources(resources: list[Any]) -> Iterator[OtlpSpan | SpanProblem]:
    for r, resource in enumerate(resources):
        where: list[str | int] = ["resourceSpans", r]
        scopes = _member(_object(resource, where), "scopeSpans", "scope_spans")
        for s, scope_spans in enumerate(_array(scopes, [*where, "scopeSpans"])):
            at: list[str | int] = [*where, "scopeSpans", s]
            scope_object = _object(scope_spans, at)
            scope = _scope_text(_member(scope_object, "scope", "scope"))
            for i, span in enumerate(
                _array(_member(scope_object, "spans", "spans"), [*at, "spans"])
            ):
                path = span_path(r, s, i)
                try:
                    yield _json_span(span, path, scope)
                except SpanFormatError as exc:
                    yield SpanProblem(path, str(exc))


def _json_span(span: Any, path: str, scope: str) -> OtlpSpan:
    if not isinstance(span, dict):
        raise SpanFormatError("a span is a JSON object; skipped")
    status = span.get("status") or {}
    if not isinstance(status, dict):
        raise SpanFormatError("status: not an object; skipped")
    # The integers were checked with the whole export (check_integer_fields): read, not judged.
    return OtlpSpan(
        path=path,
        name=_text(span.get("name")),
        kind=_read_integer(_field(span, "kind"), SPAN_KIND),
        trace_id=_hex_id(span.get("traceId"), 16, "traceId"),
        span_id=_hex_id(span.get("spanId"), 8, "spanId"),
        start_ns=_read_integer(_field(span, "startTimeUnixNano"), FIXED64),
        end_ns=_read_integer(_field(span, "endTimeUnixNano"), FIXED64),
        attributes=_json_attributes(span.get("attributes", [])),
        status_code=_read_integer(status.get("code"), STATUS_CODE),
        status_message=_text(status.get("message")),
        scope=scope,
    )


def _field(message: dict[str, Any], camel: str) -> Any:
    """A field under its JSON name or its proto name (ProtoJSON readers accept both)."""
    value = message.get(camel)
    return message.get(snake_case(camel)) if value is None else value


def _read_integer(value: Any, kind: IntegerKind) -> int:
    """A checked integer field's value (absent or ``null``: 0, the proto default)."""
    return 0 if value is None else integer_value(value, kind)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _json_attributes(attributes: Any) -> dict[str, object]:
    if not isinstance(attributes, list):
        raise SpanFormatError("attributes: not an array of key-value pairs; skipped")
    out: dict[str, object] = {}
    for index, pair in enumerate(attributes):
        if not isinstance(pair, dict) or not isinstance(pair.get("key"), str):
            raise SpanFormatError(f"attributes[{index}]: not a key-value pair; skipped")
        out[pair["key"]] = _any_value(pair.get("value"))
    return out


def _any_value(value: Any) -> object:
    """An ``AnyValue`` as a Python value: the scalars (an ``intValue`` may be a decimal string)
    and arrays of them; anything else is ``None``, as no attribute read here has another type."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    kind, inner = next(iter(value.items()))
    if kind in ("intValue", "int_value"):
        return None if inner is None else integer_value(inner, INT64)
    if kind == "arrayValue" and isinstance(inner, dict) and isinstance(inner.get("values"), list):
        return [_any_value(item) for item in inner["values"]]
    if kind in ("stringValue", "boolValue", "doubleValue"):
        return inner
    return None


def _scope_text(scope: Any) -> str:
    if not isinstance(scope, dict):
        return ""
    parts = (scope.get("name"), scope.get("version"))
    return " ".join(part for part in parts if isinstance(part, str) and part)


def _member(value: dict[str, Any], camel: str, snake: str) -> Any:
    return value.get(camel, value.get(snake, []))


def _array(value: Any, where: list[str | int]) -> list[Any]:
    if not isinstance(value, list):
        raise TraceBodyError(f"{format_path(where)}: not an array")
    return value


def _object(value: Any, where: list[str | int]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TraceBodyError(f"{format_path(where)}: not an object")
    return value


def _hex_id(value: Any, size: int, name: str) -> str:
    """An OTLP/JSON id: ``size`` bytes as hex (case-insensitive), not all zero."""
    if not isinstance(value, str) or len(value) != 2 * size:
        raise SpanFormatError(f"{name}: not {size} bytes as {2 * size} hex digits; skipped")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise SpanFormatError(f"{name}: not hex digits; skipped") from None
    return _checked_id(raw, size, name)


def _checked_id(raw: bytes, size: int, name: str) -> str:
    if len(raw) != size or not any(raw):
        raise SpanFormatError(f"{name}: not a valid {size}-byte id; skipped")
    return raw.hex()


# --- decoding: protobuf -------------------------------------------------------------------------


def protobuf_spans(raw: bytes) -> Iterator[OtlpSpan | SpanProblem]:
    """The spans of a protobuf ``ExportTraceServiceRequest``. ``TraceBodyError`` when the bytes
    are not one; ``ImportError`` when ``opentelemetry-proto`` (the ``otel`` extra) is missing."""
    from google.protobuf.message import DecodeError  # noqa: PLC0415
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: PLC0415
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(raw)
    except DecodeError as exc:
        raise TraceBodyError(f"not a protobuf ExportTraceServiceRequest: {exc}") from None
    return _protobuf_resources(request)


def _protobuf_resources(request: Any) -> Iterator[OtlpSpan | SpanProblem]:
    for r, resource in enumerate(request.resource_spans):
        for s, scope_spans in enumerate(resource.scope_spans):
            scope = " ".join(p for p in (scope_spans.scope.name, scope_spans.scope.version) if p)
            for i, span in enumerate(scope_spans.spans):
                path = span_path(r, s, i)
                try:
                    yield _protobuf_span(span, path, scope)
                except SpanFormatError as exc:
                    yield SpanProblem(path, str(exc))


def _protobuf_span(span: Any, path: str, scope: str) -> OtlpSpan:
    return OtlpSpan(
        path=path,
        name=span.name,
        kind=int(span.kind),
        trace_id=_checked_id(bytes(span.trace_id), 16, "traceId"),
        span_id=_checked_id(bytes(span.span_id), 8, "spanId"),
        start_ns=int(span.start_time_unix_nano),
        end_ns=int(span.end_time_unix_nano),
        attributes={kv.key: _protobuf_value(kv.value) for kv in span.attributes},
        status_code=int(span.status.code),
        status_message=span.status.message,
        scope=scope,
    )


def _protobuf_value(value: Any) -> object:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_protobuf_value(item) for item in value.array_value.values]
    if kind in ("string_value", "bool_value", "int_value", "double_value"):
        return getattr(value, kind)
    return None


# --- the answer ---------------------------------------------------------------------------------


def export_response(rejected: int, message: str, content_type: str) -> bytes:
    """An ``ExportTraceServiceResponse`` in the request's encoding: ``partial_success`` only
    when spans were rejected or there is something to say (a warning, per OTLP, when
    ``rejected`` is 0)."""
    if content_type == PROTOBUF_TYPE:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: PLC0415
            ExportTraceServiceResponse,
        )

        response = ExportTraceServiceResponse()
        if rejected or message:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = message
        encoded: bytes = response.SerializeToString()
        return encoded
    import orjson  # noqa: PLC0415

    if not (rejected or message):
        return b"{}"
    return orjson.dumps({"partialSuccess": {"rejectedSpans": rejected, "errorMessage": message}})


def status_body(code: int, message: str, content_type: str) -> bytes:
    """A ``google.rpc.Status`` (what OTLP/HTTP answers a failed request with) in the request's
    encoding. Encoded by hand: two fields, and no dependency for them."""
    if content_type == PROTOBUF_TYPE:
        text = message.encode("utf-8")
        return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text
    import orjson  # noqa: PLC0415

    return orjson.dumps({"code": code, "message": message})


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        low, number = number & 0x7F, number >> 7
        out.append(low | (0x80 if number else 0))
        if not number:
            return bytes(out)


__all__ = [
    "JSON_TYPE",
    "PROTOBUF_TYPE",
    "OtlpSpan",
    "SpanProblem",
    "TraceBodyError",
    "Translation",
    "export_response",
    "json_spans",
    "protobuf_spans",
    "span_event",
    "span_event_id",
    "status_body",
    "translate",
]
