"""``POST /v1/traces``: OTLP/HTTP trace exports into the store, beside ``POST /v1/events``.

A request goes through what ``/v1/events`` does, in the same order and with the same functions:
the project key (401), the body limit while reading, gzip included (413), then the spans are
translated (``toolcall_spec.analytics.otlp_spans``) and the events checked as a batch of
``/v1/events`` is (``ingest_batch``: the same rejections, repairs and warnings), then handed to
the same acceptance path (``make_durable``) the events route uses, and answered only once they
are durable.

The answer follows OTLP/HTTP: ``200`` with an ``ExportTraceServiceResponse`` in the request's
encoding (``application/x-protobuf`` or ``application/json``), whose ``partial_success`` counts
the spans skipped (a ``tools/call`` server span without the attributes, or an event the batch
check rejected) as ``rejected_spans`` and names each in ``error_message`` with its span path; a
repair alone is reported there with ``rejected_spans`` 0 (a warning, per OTLP). Spans that are
not MCP ``tools/call`` server spans are ignored: counted in the ``Toolcall-Spans-Ignored``
header and the server log, not an error. A body that is not a trace export gets ``400`` with a
``google.rpc.Status`` naming the problem; an unsupported media type or encoding ``415``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from toolcall_spec.analytics.ingest import MAX_BATCH_EVENTS, MAX_BODY_BYTES, ingest_batch
from toolcall_spec.analytics.otlp_spans import (
    JSON_TYPE,
    PROTOBUF_TYPE,
    OtlpSpan,
    SpanProblem,
    TraceBodyError,
    Translation,
    export_response,
    json_spans,
    protobuf_spans,
    status_body,
    translate,
)
from toolcall_spec.http.auth import bearer_token
from toolcall_spec.http.ingest_reading import (
    BadEncodingError,
    BodyTooLargeError,
    project_of,
    read_limited,
)

TRACES_PATH = "/v1/traces"
IGNORED_HEADER = "Toolcall-Spans-Ignored"
MAX_NAMED_PROBLEMS = 20
"""Most skipped spans named one by one in ``error_message``; the rest are counted."""

# google.rpc.Code values OTLP/HTTP answers carry.
INVALID_ARGUMENT = 3
UNAUTHENTICATED = 16
RESOURCE_EXHAUSTED = 8
UNIMPLEMENTED = 12
UNAVAILABLE = 14

logger = logging.getLogger(__name__)

MakeDurable = Callable[[str, Sequence[Mapping[str, Any]]], Awaitable[Response | None]]
"""The events route's acceptance path: ``None`` once the events are durable, otherwise the
answer to send as it is (the store or log cannot take them)."""


def traces_endpoint(
    keys: Mapping[str, str], make_durable: MakeDurable
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of ``POST /v1/traces`` for these project keys."""

    async def post_traces(request: Request) -> Response:
        media = _media_type(request.headers.get("content-type"))
        reply = PROTOBUF_TYPE if media == PROTOBUF_TYPE else JSON_TYPE
        project = project_of(keys, bearer_token(request.headers.get("authorization")))
        if project is None:
            message = "Authorization: Bearer <project key> is required"
            return _status(401, UNAUTHENTICATED, message, reply)
        if media not in (JSON_TYPE, PROTOBUF_TYPE):
            message = f"Content-Type {media or '(none)'}: send {PROTOBUF_TYPE} or {JSON_TYPE}"
            return _status(415, INVALID_ARGUMENT, message, reply)
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            message = f"Content-Encoding {encoding} is not gzip"
            return _status(415, INVALID_ARGUMENT, message, reply)
        try:
            raw = await read_limited(request.stream(), MAX_BODY_BYTES, encoding == "gzip")
        except BodyTooLargeError:
            message = f"the body is over the limit of {MAX_BODY_BYTES:,} bytes (decompressed)"
            return _status(413, RESOURCE_EXHAUSTED, message, reply)
        except BadEncodingError as exc:
            return _status(400, INVALID_ARGUMENT, str(exc), reply)
        try:
            translation = translate(_spans(raw, media))
        except TraceBodyError as exc:
            return _status(400, INVALID_ARGUMENT, f"not an OTLP trace export: {exc}", reply)
        except ImportError:
            message = (
                f"{PROTOBUF_TYPE} needs opentelemetry-proto on the server "
                "(pip install 'toolcall-spec[otel]'); send OTLP/JSON instead"
            )
            return _status(415, UNIMPLEMENTED, message, reply)
        accepted, rejected, notes = checked_events(translation)
        problem = await make_durable(project, accepted)
        if problem is not None:
            return as_status(problem, reply)
        summary = _summary(notes)
        if rejected:
            logger.warning("%s: %d spans rejected: %s", TRACES_PATH, rejected, summary)
        logger.info(
            "%s: %d events stored, %d spans rejected, %d spans ignored",
            TRACES_PATH,
            len(accepted),
            rejected,
            translation.ignored,
        )
        body = export_response(rejected, summary, reply)
        headers = {IGNORED_HEADER: str(translation.ignored)}
        return Response(body, 200, headers, media_type=reply)

    return post_traces


def _spans(raw: bytes, media: str) -> Iterator[OtlpSpan | SpanProblem]:
    return protobuf_spans(raw) if media == PROTOBUF_TYPE else json_spans(raw)


def checked_events(translation: Translation) -> tuple[list[dict[str, Any]], int, list[str]]:
    """The events as ``/v1/events`` accepts them (checked in batches of its size, repaired where
    it repairs), how many spans were rejected (skipped, or their event rejected), and a note per
    skipped, rejected or repaired span (``span path: why``)."""
    accepted: list[dict[str, Any]] = []
    notes = list(translation.skipped)
    rejected = len(translation.skipped)
    for start in range(0, len(translation.events), MAX_BATCH_EVENTS):
        chunk = translation.events[start : start + MAX_BATCH_EVENTS]
        answer = ingest_batch({"events": [event for _, event in chunk]}, accepted.append)
        rejected += answer["rejected"]
        for rejection in answer["errors"]:
            path = chunk[rejection["index"]][0]
            notes += (f"{path}: event rejected: {issue}" for issue in rejection["issues"])
        for repair in answer.get("warnings", []):
            notes.append(f"{chunk[repair['index']][0]}: event repaired: {repair['message']}")
    return accepted, rejected, notes


def _summary(notes: list[str]) -> str:
    named = notes[:MAX_NAMED_PROBLEMS]
    if len(notes) > len(named):
        named.append(f"and {len(notes) - len(named):,} more")
    return "; ".join(named)


def as_status(problem: Response, content_type: str) -> Response:
    """The acceptance path's refusal (503 with ``Retry-After``, 507, in the events route's JSON
    error form) as OTLP answers it: the same status and headers, the body a ``google.rpc.Status``
    in the request's encoding, so an exporter retries a 503 as OTLP says it should."""
    try:
        message = str(orjson.loads(problem.body)["error"]["message"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        message = "the events could not be made durable; nothing was acknowledged"
    code = UNAVAILABLE if problem.status_code == 503 else RESOURCE_EXHAUSTED
    headers = {
        name: value
        for name, value in problem.headers.items()
        if name.lower() not in ("content-length", "content-type")
    }
    body = status_body(code, message, content_type)
    return Response(body, problem.status_code, headers, media_type=content_type)


def _media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def _status(http_status: int, code: int, message: str, content_type: str) -> Response:
    headers = {"WWW-Authenticate": 'Bearer realm="ingest"'} if http_status == 401 else None
    body = status_body(code, message, content_type)
    return Response(body, http_status, headers, media_type=content_type)
