"""A host port (``toolcall_spec.host``) as an ASGI application (starlette): the OpenWOP v2 HTTP
surface of a host that runs eval suites. Paths, headers, id projection, the error envelope and
event names come from ``toolcall_spec.openwop_wire``.

Routes (every one but discovery behind the bearer token when one is configured):

- ``GET  /.well-known/openwop``               discovery (ETag, ``If-None-Match`` -> 304)
- ``POST /runs``                              create an eval run -> 201
- ``GET  /runs/{runId}``                      run snapshot
- ``GET  /runs/{runId}/events/poll``          long poll (``afterSequence``, ``timeout``)
- ``GET  /runs/{runId}/events``               Server-Sent Events, ending on the terminal event
- ``GET  /runs/{runId}/eval-summary``         200, 409 while running

``{runId}`` is accepted projected (``local~2F...``), percent-encoded or as two segments; every
link the host emits is projected. With the test seams on (``HostSettings.expose_test_seams``, off
by default) the snapshot also carries what the scripted agent received under
``extensions["toolcall-spec.test-seams"]`` and ``GET /x-toolcall-spec/live-invocations`` answers.
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

from toolcall_spec.host.port import HostPort, owner_for
from toolcall_spec.http.auth import BearerAuth
from toolcall_spec.http.discovery import ServedDocument, check_version
from toolcall_spec.http.errors import STATUS_CODES, ApiError, invalid
from toolcall_spec.http.hot_routes import HotRoutes
from toolcall_spec.http.limits import Limits
from toolcall_spec.http.params import CreateRun, after_sequence, parse_create_run, poll_timeout
from toolcall_spec.http.responses import error_response, json_response
from toolcall_spec.http.runs import RunGate, RunRegistry, ServedRun
from toolcall_spec.http.suite_refs import SuiteSources, conformance_fixtures, resolve_suite_ref
from toolcall_spec.openwop_wire import (
    DISCOVERY_PATH,
    EVAL_SUMMARY,
    EVENTS,
    LIVE_INVOCATIONS_PATH,
    POLL,
    PROTOCOL_HEADERS,
    RUNS_PATH,
    SEAMS_EXTENSION,
    TRANSPORT_REST,
    VERSION_HEADER,
    run_links,
    run_path_readings,
)
from toolcall_spec.replay.refusal import RunRefused, RunRequest

INLINE_PREPARE_BYTES = 16 * 1024
"""Creates up to this size (body bytes) with a ``data:`` suite are checked in the event loop."""

INLINE_RUN_EVENTS = 64
"""Default of ``HostSettings.inline_run_events`` (the conformance fixture's run writes 10)."""


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
    expose_test_seams: bool = False
    """Serve what the scripted agent received (in the snapshot's ``extensions``) and the live
    invocation counts. Off by default: it quotes recorded fixture payloads."""
    inline_run_events: int = INLINE_RUN_EVENTS
    """A run whose create is prepared in the event loop (a fixture id, a small ``data:`` suite)
    and that writes at most this many events executes in the event loop too, right after its
    create is answered: a hop to a worker thread and back costs more than such a run. 0 sends
    every run to a worker thread; do that for a backend whose ``execute`` may block (live tools
    that wait on I/O)."""


def create_app(backend: HostPort, settings: HostSettings | None = None) -> Starlette:
    """The ASGI app serving ``backend``; the discovery document is read once, here. The app
    applies its limits' memory budget to ``backend.store``, the one home of finished runs."""
    settings = settings or HostSettings()
    registry = RunRegistry(
        backend,
        settings.limits,
        tenant=settings.tenant,
        gate=settings.gate,
        new_opaque_id=settings.new_opaque_id,
        inline_run_events=settings.inline_run_events,
    )
    handlers = _Handlers(backend, registry, settings, _discovery(backend, settings.sources))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            registry.shutdown()

    middleware = [Middleware(BearerAuth, token=settings.token)] if settings.token else []
    middleware.append(
        Middleware(
            HotRoutes,
            exact={("POST", RUNS_PATH): handlers.create_run},
            prefixed={("GET", RUNS_PATH + "/"): handlers.run_resource},
        )
    )
    app = Starlette(
        routes=[
            Route(DISCOVERY_PATH, handlers.discovery, methods=["GET"]),
            Route(RUNS_PATH, handlers.create_run, methods=["POST"]),
            Route(f"{RUNS_PATH}/{{rest:path}}", handlers.run_resource, methods=["GET"]),
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


def _discovery(backend: HostPort, sources: SuiteSources) -> ServedDocument:
    """The backend's document, with ``fixtures`` listing exactly the ids this app can resolve:
    advertise only what is implemented."""
    document = dict(backend.discovery())
    document.pop("fixtures", None)
    if sources.fixtures:
        document["fixtures"] = sorted(sources.fixtures)
    return ServedDocument.of(document)


class _Handlers:
    def __init__(
        self,
        backend: HostPort,
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
        raw = await _read_body(request, self.limits.max_body_bytes)
        with self.registry.preparing(len(raw)):  # parsing takes memory too: within the budget
            body = parse_create_run(raw)
            inline = self._prepare_inline(body, len(raw))
            if inline:
                run_request, suite_bytes, refusal = self._prepare(body)
            else:
                run_request, suite_bytes, refusal = await anyio.to_thread.run_sync(
                    self._prepare, body
                )
        if refusal is not None:
            return json_response(refusal.envelope, refusal.status)
        run = self.registry.create(run_request, suite_bytes, inline=inline)
        links = run_links(run.run_id)
        return json_response(
            {
                "runId": run.run_id,
                "status": run.status,
                "eventsUrl": links["eventsUrl"],
                "statusUrl": links["statusUrl"],
            },
            201,
            {"Location": links["statusUrl"]},
        )

    def _prepare_inline(self, body: CreateRun, body_bytes: int) -> bool:
        """Whether to prepare a create in the event loop: a seeded fixture or a small ``data:``
        suite is checked in less time than a hop to a thread and back costs; a file, or a larger
        suite, goes to a thread so the loop keeps answering."""
        ref = body.eval_suite_ref
        return ref in self.settings.sources.fixtures or (
            body_bytes <= INLINE_PREPARE_BYTES and ref[:5].lower() == "data:"
        )

    def _prepare(self, body: CreateRun) -> tuple[RunRequest, int, RunRefused | None]:
        """Off the event loop, in one thread hop: read the suite (a file, a large data: URI),
        then the run-create checks (the one schema validation of the suite for this run). Also
        the suite's JSON length, for the run's memory reservation."""
        suite = resolve_suite_ref(
            body.eval_suite_ref, self.settings.sources, max_bytes=self.limits.max_suite_bytes
        )
        run_request = RunRequest(
            suite,
            body.agent_id,
            body.eval_mode,
            body.eval_modes,
            body.baseline_run_id,
            body.fixture_runs,
            body.options,
            owner_for(self.settings.tenant, self.settings.token),
            TRANSPORT_REST,
        )
        refusal = self.backend.check(run_request)
        suite_bytes = len(orjson.dumps(suite)) if refusal is None else 0
        return run_request, suite_bytes, refusal

    async def run_resource(self, request: Request) -> Response:
        check_version(request.headers.get(VERSION_HEADER))
        run, rest = self._find_run(request)
        if rest == "":
            return json_response(self._snapshot(run))
        if rest == POLL:
            return await self._poll(request, run)
        if rest == EVENTS:
            return self._stream(request, run)
        if rest == EVAL_SUMMARY:
            return _summary(run)
        raise ApiError(404, "not_found", "no such run resource")

    def _snapshot(self, run: ServedRun) -> dict[str, Any] | orjson.Fragment:
        if run.packed is None:
            return run.snapshot()
        if not self.settings.expose_test_seams:
            return orjson.Fragment(run.packed.snapshot_json)  # as packed, not re-encoded
        snapshot = run.snapshot()
        seams = {"agentOutput": orjson.Fragment(run.packed.agent_output_json)}
        snapshot["extensions"] = {SEAMS_EXTENSION: seams}
        return snapshot

    async def live_invocations(self, _: Request) -> Response:
        if not self.settings.expose_test_seams:
            raise ApiError(404, "not_found", "this host does not expose its test seams")
        counts = await anyio.to_thread.run_sync(self.backend.live_invocations)
        if counts is None:
            raise ApiError(404, "not_found", "this host does not expose live invocation counts")
        return json_response({"liveInvocations": counts})

    def _find_run(self, request: Request) -> tuple[ServedRun, str]:
        raw = _raw_path(request)
        readings = run_path_readings(raw)
        for run_id, rest in readings:
            run = self.registry.get(run_id)
            if run is not None:
                return run, rest
        tenants = {run_id.partition("/")[0] for run_id, _ in readings if "/" in run_id}
        if tenants and self.settings.tenant not in tenants:
            # runs.md: another tenant's id is refused without saying whether the run exists
            raise ApiError(
                403, "id_tenant_mismatch", "the run id's tenant segment is not this caller's"
            )
        raise ApiError(
            404,
            "not_found",
            "no such run (it may never have existed, or been "
            "evicted: this host keeps the most recent runs only)",
        )

    async def _poll(self, request: Request, run: ServedRun) -> Response:
        after = after_sequence(request.query_params.get("afterSequence"))
        timeout = poll_timeout(
            request.query_params.get("timeout"),
            self.limits.min_poll_timeout,
            self.limits.max_poll_timeout,
        )
        limit = self.limits.max_events_per_poll
        events, last = run.events_page(after, limit)
        if last < 0 and not run.is_terminal and timeout > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(run.done.wait(), timeout)
            events, last = run.events_page(after, limit)
        return json_response(
            {
                "runId": run.run_id,
                "events": orjson.Fragment(events),  # cut from the packed log, not re-encoded
                "lastSequence": last,
                "status": run.status,
                "isTerminal": run.is_terminal,
            }
        )

    def _stream(self, request: Request, run: ServedRun) -> Response:
        start = request.headers.get("last-event-id") or request.query_params.get("afterSequence")
        field_name = "Last-Event-ID" if request.headers.get("last-event-id") else "afterSequence"
        try:
            after = after_sequence(start)
        except ApiError:
            raise invalid(field_name, f"must be an integer >= -1, not {start!r}") from None
        return StreamingResponse(
            _sse(run, after, self.limits.sse_keepalive_seconds),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **PROTOCOL_HEADERS},
        )


async def _sse(run: ServedRun, after: int, keepalive: float) -> AsyncIterator[bytes]:
    """Every event past ``after`` as ``id:``/``event:``/``data:`` frames; the stream ends when the
    run is terminal and everything was sent. A comment line keeps an idle stream open."""
    yield b"retry: 1000\n\n"
    while True:
        events = run.events_after(after, 1 << 30)
        for event in events:
            yield sse_frame(event)
            after = int(event["sequence"])
        if run.is_terminal:
            return
        try:
            await asyncio.wait_for(run.done.wait(), keepalive)
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


def _summary(run: ServedRun) -> Response:
    if run.status == "running":
        raise ApiError(
            409,
            "run_state_conflict",
            "the run is still running; its eval summary exists once it is terminal",
            {"status": run.status},
        )
    if run.packed is None or run.status != "completed":
        raise ApiError(
            409,
            "run_state_conflict",
            f"the run is {run.status} and produced no eval summary",
            {"status": run.status},
        )
    return json_response(orjson.Fragment(run.packed.summary_json))


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
