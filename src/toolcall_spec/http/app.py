"""The reference host as an ASGI application (starlette): the OpenWOP v2 HTTP surface of a host
that runs eval suites, plus two documented vendor seams for conformance.

Routes (every one but discovery behind the bearer token when one is configured):

- ``GET  /.well-known/openwop``               discovery (ETag, ``If-None-Match`` -> 304)
- ``POST /runs``                              create an eval run -> 201
- ``GET  /runs/{runId}``                      snapshot (+ seam ``x-toolcall-spec.agentOutput``)
- ``GET  /runs/{runId}/events/poll``          long poll (``afterSequence``, ``timeout``)
- ``GET  /runs/{runId}/events``               Server-Sent Events
- ``GET  /runs/{runId}/eval-summary``         200, 409 while running
- ``GET  /x-toolcall-spec/live-invocations``  seam: live tool invocation counts
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from toolcall_spec.http.auth import BearerAuth
from toolcall_spec.http.discovery import VERSION_HEADER, ServedDocument, check_version
from toolcall_spec.http.errors import STATUS_CODES, ApiError, invalid
from toolcall_spec.http.limits import Limits
from toolcall_spec.http.params import (
    CreateRun,
    after_sequence,
    parse_create_run,
    poll_timeout,
    run_path_candidates,
)
from toolcall_spec.http.responses import PROTOCOL_HEADERS, error_response, json_response
from toolcall_spec.http.runs import Refusal, RunBackend, RunGate, RunRecord, RunRegistry
from toolcall_spec.http.suite_refs import SuiteSources, conformance_fixtures, resolve_suite_ref

VENDOR_KEY = "x-toolcall-spec"
"""The vendor member (OpenWOP's ``x-`` hatch) carrying this host's seams in a run snapshot."""
LIVE_INVOCATIONS_PATH = "/x-toolcall-spec/live-invocations"


@dataclass(frozen=True)
class HostSettings:
    """Everything the app is built from besides the backend; all optional."""

    token: str | None = None
    sources: SuiteSources = field(default_factory=lambda: SuiteSources(conformance_fixtures()))
    """Default: the conformance fixtures, no file: directory."""
    limits: Limits = field(default_factory=Limits)
    tenant: str = "local"
    gate: RunGate | None = None
    new_opaque_id: Callable[[], str] | None = None


def create_app(backend: RunBackend, settings: HostSettings | None = None) -> Starlette:
    """The ASGI app serving ``backend``; the discovery document is read once, here."""
    settings = settings or HostSettings()
    registry = RunRegistry(
        backend,
        settings.limits,
        tenant=settings.tenant,
        gate=settings.gate,
        new_opaque_id=settings.new_opaque_id,
    )
    handlers = _Handlers(backend, registry, settings, _discovery(backend, settings.sources))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            registry.shutdown()

    middleware = [Middleware(BearerAuth, token=settings.token)] if settings.token else []
    app = Starlette(
        routes=[
            Route("/.well-known/openwop", handlers.discovery, methods=["GET"]),
            Route("/runs", handlers.create_run, methods=["POST"]),
            Route("/runs/{rest:path}", handlers.run_resource, methods=["GET"]),
            Route(LIVE_INVOCATIONS_PATH, handlers.live_invocations, methods=["GET"]),
        ],
        middleware=middleware,
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
        lifespan=lifespan,
    )
    app.state.registry = registry
    return app


def _discovery(backend: RunBackend, sources: SuiteSources) -> ServedDocument:
    """The backend's document, with ``fixtures`` listing exactly the ids this app can resolve:
    advertise only what is implemented."""
    document = dict(backend.capabilities())
    document.pop("fixtures", None)
    if sources.fixtures:
        document["fixtures"] = sorted(sources.fixtures)
    return ServedDocument.of(document)


class _Handlers:
    def __init__(
        self,
        backend: RunBackend,
        registry: RunRegistry,
        settings: HostSettings,
        document: ServedDocument,
    ) -> None:
        self.backend = backend
        self.registry = registry
        self.settings = settings
        self.limits = settings.limits
        self.document = document

    async def discovery(self, request: Request) -> Response:
        check_version(request.headers.get(VERSION_HEADER))
        headers = {
            "ETag": self.document.etag,
            "Vary": VERSION_HEADER,
            "Cache-Control": "no-cache",
            **PROTOCOL_HEADERS,
        }
        if self.document.not_modified(request.headers.get("if-none-match")):
            return Response(status_code=304, headers=headers)
        return Response(self.document.body, media_type="application/json", headers=headers)

    async def create_run(self, request: Request) -> Response:
        check_version(request.headers.get(VERSION_HEADER))
        _require_json(request)
        body = parse_create_run(await _read_body(request, self.limits.max_body_bytes))
        suite, refusal = await anyio.to_thread.run_sync(self._prepare, body)
        if refusal is not None:
            return json_response(refusal.envelope, refusal.status)
        record = self.registry.create(suite, mode=body.eval_mode, agent_id=body.agent_id)
        urls = _urls(record.run_id)
        return json_response(
            {
                "runId": record.run_id,
                "status": record.status,
                "eventsUrl": urls["eventsUrl"],
                "statusUrl": urls["statusUrl"],
            },
            201,
            {"Location": urls["statusUrl"]},
        )

    def _prepare(self, body: CreateRun) -> tuple[dict[str, Any], Refusal | None]:
        """Off the event loop, in one thread hop: read the suite (a file, a large data: URI),
        then the run-create checks (schema validation of the whole suite)."""
        suite = resolve_suite_ref(
            body.eval_suite_ref, self.settings.sources, max_bytes=self.limits.max_suite_bytes
        )
        return suite, self.backend.check(suite, mode=body.eval_mode, agent_id=body.agent_id)

    async def run_resource(self, request: Request) -> Response:
        check_version(request.headers.get(VERSION_HEADER))
        record, rest = self._find_run(request)
        if rest == "":
            return json_response(_snapshot(record))
        if rest == "events/poll":
            return await self._poll(request, record)
        if rest == "events":
            return self._stream(request, record)
        if rest == "eval-summary":
            return _summary(record)
        raise ApiError(404, "not_found", "no such run resource")

    async def live_invocations(self, _: Request) -> Response:
        counts = await anyio.to_thread.run_sync(self.backend.live_invocations)
        if counts is None:
            raise ApiError(404, "not_found", "this host does not expose live invocation counts")
        return json_response({"liveInvocations": counts})

    def _find_run(self, request: Request) -> tuple[RunRecord, str]:
        raw = _raw_path(request)
        for run_id, rest in run_path_candidates(raw):
            record = self.registry.get(run_id)
            if record is not None:
                return record, rest
        raise ApiError(
            404,
            "not_found",
            "no such run (it may never have existed, or been "
            "evicted: this host keeps the most recent runs only)",
        )

    async def _poll(self, request: Request, record: RunRecord) -> Response:
        after = after_sequence(request.query_params.get("afterSequence"))
        timeout = poll_timeout(
            request.query_params.get("timeout"),
            self.limits.min_poll_timeout,
            self.limits.max_poll_timeout,
        )
        events = record.events_after(after, self.limits.max_events_per_poll)
        if not events and not record.is_terminal and timeout > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(record.done.wait(), timeout)
            events = record.events_after(after, self.limits.max_events_per_poll)
        return json_response(
            {
                "runId": record.run_id,
                "events": events,
                "lastSequence": events[-1]["sequence"] if events else -1,
                "status": record.status,
                "isTerminal": record.is_terminal,
            }
        )

    def _stream(self, request: Request, record: RunRecord) -> Response:
        start = request.headers.get("last-event-id") or request.query_params.get("afterSequence")
        field_name = "Last-Event-ID" if request.headers.get("last-event-id") else "afterSequence"
        try:
            after = after_sequence(start)
        except ApiError:
            raise invalid(field_name, f"must be an integer >= -1, not {start!r}") from None
        return StreamingResponse(
            _sse(record, after, self.limits.sse_keepalive_seconds),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **PROTOCOL_HEADERS},
        )


async def _sse(record: RunRecord, after: int, keepalive: float) -> AsyncIterator[bytes]:
    """Every event past ``after`` as ``id:``/``event:``/``data:`` frames; the stream ends when the
    run is terminal and everything was sent. A comment line keeps an idle stream open."""
    yield b"retry: 1000\n\n"
    while True:
        events = record.events_after(after, 1 << 30)
        for event in events:
            yield sse_frame(event)
            after = int(event["sequence"])
        if record.is_terminal:
            return
        try:
            await asyncio.wait_for(record.done.wait(), keepalive)
        except asyncio.TimeoutError:
            yield b": keep-alive\n\n"


def sse_frame(event: Mapping[str, Any]) -> bytes:
    """One Server-Sent Event: ``id:`` the sequence, ``event:`` the type, ``data:`` the event JSON
    (orjson writes it on one line, so one ``data:`` line carries it)."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (
        int(event["sequence"]),
        str(event["type"]).encode(),
        orjson.dumps(event),
    )


def _snapshot(record: RunRecord) -> dict[str, Any]:
    snapshot: dict[str, Any] = {
        "runId": record.run_id,
        "mode": "eval",
        "agentId": record.agent_id,
        "evalMode": record.eval_mode,
        "status": record.status,
        "isTerminal": record.is_terminal,
        "createdAt": record.created_at,
        **_urls(record.run_id),
    }
    for key, value in (
        ("suiteId", record.suite_id),
        ("suiteVersion", record.suite_version),
        ("finishedAt", record.finished_at),
        ("error", record.error),
    ):
        if value is not None:
            snapshot[key] = value
    if record.outcome is not None:
        snapshot["eventCount"] = len(record.outcome.events)
        if record.outcome.agent_output is not None:
            snapshot[VENDOR_KEY] = {"agentOutput": record.outcome.agent_output}
    return snapshot


def _summary(record: RunRecord) -> Response:
    if record.status == "running":
        raise ApiError(
            409,
            "run_state_conflict",
            "the run is still running; its eval summary exists once it is terminal",
            {"status": record.status},
        )
    if record.outcome is None:
        raise ApiError(
            409,
            "run_state_conflict",
            f"the run is {record.status} and produced no eval summary",
            {"status": record.status},
        )
    if record.outcome.summary is None:
        raise ApiError(404, "not_found", "this run is not an eval run: it has no eval summary")
    return json_response(record.outcome.summary)


def _urls(run_id: str) -> dict[str, str]:
    base = f"/runs/{quote(run_id, safe='')}"
    return {
        "statusUrl": base,
        "eventsUrl": f"{base}/events",
        "evalSummaryUrl": f"{base}/eval-summary",
    }


def _raw_path(request: Request) -> str:
    """The path as sent, percent-encoding intact, without the app's root path."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if raw else quote(request.scope["path"])
    root = request.scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _require_json(request: Request) -> None:
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise ApiError(
            415,
            "unsupported_media_type",
            f"send the body as Content-Type: application/json, not {media_type or 'nothing'}",
        )


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to exceed ``limit`` (from
    ``Content-Length`` or while streaming), so an oversized upload is never buffered whole."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> ApiError:
    return ApiError(
        413,
        "payload_too_large",
        f"the request body is over this host's limit of {limit:,} bytes",
        {"limit": limit},
    )


async def _api_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    """The router's own answers (unknown path 404, wrong method 405) in the flat envelope."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    where = f"{request.method} {request.url.path}"
    messages = {
        404: f"no such resource: {where}",
        405: f"{where} is not allowed; allowed methods: {headers.get('Allow', 'none')}",
    }
    code = STATUS_CODES.get(exc.status_code, "error")
    message = messages.get(exc.status_code) or exc.detail or code
    return error_response(ApiError(exc.status_code, code, message, headers=headers))


async def _internal_error(_: Request, exc: Exception) -> Response:
    return error_response(
        ApiError(500, "internal_error", f"the host failed to answer: {type(exc).__name__}")
    )
