"""The ingest endpoint: ``POST /v1/events`` on the package's ASGI stack (starlette on uvicorn);
``POST /v1/traces`` (``.otlp_route``) beside it shares its reading, keys and acceptance path;
``GET /v1/health`` reports the write-ahead log's backlog.

A request goes through, in this order:

1. **the key**: ``Authorization: Bearer <key>``; each key belongs to one project, and the project
   comes from the key, never from the body (401 otherwise);
2. **the size limit, while reading**: the body is read chunk by chunk and the read stops as soon
   as it passes ``toolcall_spec.analytics.ingest.MAX_BODY_BYTES`` (413, nothing parsed). A
   ``Content-Encoding: gzip`` body is decompressed as it arrives and the limit applies to the
   decompressed bytes, so a small compressed bomb is refused after reading just past the limit;
3. **the batch answer** of ``toolcall_spec.analytics.ingest.ingest_body``, the function
   ``toolcall-spec ingest`` answers with (200, 207 or 400, per event);
4. **durable**: the accepted events, as accepted (repaired where the answer's ``warnings`` say
   so: ``ingest_body`` hands each one over), go through ``EventIntake.make_durable``, the one
   acceptance path of every route that takes events: appended to the write-ahead log and fsynced
   (``toolcall_spec.analytics.store.wal``; a loader moves the log into the store), or, without a
   log, written to the store. The answer is sent only after that. When it fails the answer is 503
   (``Retry-After`` when the log is at its bound) or 507 (a full disk) and nothing is
   acknowledged: the client retries, and the dedupe key (``event_id``) makes the retry count once.

Writes are grouped (``GroupWriter``): the batches of concurrent requests that wait while a write
is under way go together in the next write, one fsync (or one store commit) for all of them, so
the cost of a durable write is shared instead of paid per request. A batch whose events were all
accepted as sent is logged as the body received, not encoded again.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

import orjson
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolcall_spec.analytics.ingest import MAX_BODY_BYTES, ingest_body, refused
from toolcall_spec.analytics.store import EventStore, StoreError
from toolcall_spec.analytics.store.layout import Columns, event_columns, joined
from toolcall_spec.analytics.store.wal import (
    LogFullError,
    LogWriteError,
    WriteAheadLog,
    encode_batch_record,
    encode_record,
    loggable_body,
)
from toolcall_spec.clock import utc_now
from toolcall_spec.http.auth import bearer_token
from toolcall_spec.http.hot_routes import HotRoutes
from toolcall_spec.http.ingest_reading import (
    BadEncodingError,
    BodyTooLargeError,
    project_of,
    read_limited,
)
from toolcall_spec.http.otlp_route import TRACES_PATH, traces_endpoint
from toolcall_spec.typed import IngestAnswer

EVENTS_PATH = "/v1/events"
HEALTH_PATH = "/v1/health"
T = TypeVar("T")


@dataclass(frozen=True)
class IngestSettings:
    store: EventStore | None
    """Where batches are written when there is no log; with a log, ``None`` is fine (its loader,
    in a process of its own under ``serve-ingest``, holds the store)."""
    keys: Mapping[str, str]
    """Key (bearer token) -> project id."""
    log: WriteAheadLog | None = None
    """The write-ahead log batches are made durable in (a ``LogLoader`` fills the store from
    it); ``None``: each group of batches is written to the store directly, the answer waiting
    for it."""


RETRY_AFTER_SECONDS = 2


class GroupWriter(Generic[T]):
    """Hands the items of concurrent requests to one blocking ``write`` together (group
    commit), on a thread of its own. A request's ``submit`` returns once a ``write`` holding its
    item has returned, or raises what that write raised; while one write is under way, the items
    arriving meanwhile wait for the next one. Only the event loop's thread calls ``submit``.

    When a write ends, the next one starts and the waiting requests are answered in one turn of
    the event loop: each extra hop (a task woken to wake another) waits for the turn's other
    work, a batch's check taking about half a millisecond, and every client waits with it."""

    def __init__(self, write: Callable[[list[T]], None]) -> None:
        self._write = write
        self._waiting: list[tuple[T, asyncio.Future[None]]] = []
        self._writing = False
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ingest-write")

    async def submit(self, item: T) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._waiting.append((item, done))
        if not self._writing:
            self._start(loop)
        await done  # cancelled (the client left): the write goes on, its answer is dropped

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        group, self._waiting = self._waiting, []
        self._writing = True
        self._thread.submit(self._run, loop, group)

    def _run(self, loop: asyncio.AbstractEventLoop, group: list[tuple[T, Any]]) -> None:
        """In the writer's thread: the write, then its end handed to the event loop (whatever
        the write raised: the next write waits for this one's end)."""
        error: BaseException | None = None
        try:
            self._write([item for item, _ in group])
        except BaseException as exc:  # every waiting request learns the write failed
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits any more
            loop.call_soon_threadsafe(self._finish, loop, group, error)

    def _finish(
        self,
        loop: asyncio.AbstractEventLoop,
        group: list[tuple[T, asyncio.Future[None]]],
        error: BaseException | None,
    ) -> None:
        self._writing = False
        if self._waiting:
            self._start(loop)
        for _, done in group:
            if done.done():
                continue
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)


class EventIntake:
    """The one way accepted events become durable, for every route that takes events
    (``/v1/events``, OTLP traces): into the write-ahead log when the settings have one (one
    fsync per group of concurrent batches; the log's loader fills the store), else straight into
    the store (one write per group)."""

    def __init__(self, settings: IngestSettings) -> None:
        self.log = settings.log
        self.store = settings.store
        if self.log is None and self.store is None:
            raise ValueError("the ingest endpoint needs a store or a log")
        self._writer: GroupWriter[Any] = GroupWriter(
            self._append if self.log is not None else self._write_rows
        )

    def _append(self, records: list[Callable[[], bytes]]) -> None:
        """Frame the records here, in the writer's thread, then append them (one fsync)."""
        assert self.log is not None
        self.log.append([record() for record in records])

    def _write_rows(self, batches: list[Columns]) -> None:
        assert self.store is not None
        self.store.write_columns(joined(batches))

    async def make_durable(
        self, project: str, events: Sequence[Mapping[str, Any]], batch: bytes | None = None
    ) -> Response | None:
        """``None`` once ``events`` (schema-valid, as accepted) are durable for ``project``: the
        caller may acknowledge them. Otherwise the answer to send instead, nothing acknowledged:
        503 with ``Retry-After`` (the log is full: the engine is behind; or the store failed),
        507 (the disk is full). ``batch``: the batch body the events came from, when every event
        in it was accepted as sent and the loader reads it as the intake did
        (``loggable_body``); the log keeps it as it is instead of encoding them again."""
        if not events:
            return None
        try:
            if self.log is not None:
                if not self.log.has_room():
                    return _busy("the ingest log is full (the store is behind); retry later")
                now = utc_now()
                record = (
                    partial(encode_record, project, now, events)
                    if batch is None
                    else partial(encode_batch_record, project, now, batch, len(events))
                )
                await self._writer.submit(record)
            else:
                await self._writer.submit(event_columns(events, project, utc_now()))
        except LogFullError:
            return _busy("the ingest log is full (the store is behind); retry later")
        except LogWriteError as exc:
            if exc.disk_full:
                return _error(507, "insufficient_storage", f"{exc}: nothing was acknowledged")
            return _busy(f"the events could not be logged ({exc}); retry")
        except StoreError:
            return _busy("the events could not be stored; retry")
        return None

    def health(self) -> dict[str, Any]:
        """What ``GET /v1/health`` answers: the engine, and the log's backlog."""
        out: dict[str, Any] = {"status": "ok"}
        if self.store is not None:
            out["store"] = self.store.engine
        if self.log is not None:
            out["log"] = self.log.stats()
            if not self.log.has_room():
                out["status"] = "full"
        return out


def create_ingest_app(settings: IngestSettings) -> Starlette:
    """The ASGI app serving ``POST /v1/events``, ``POST /v1/traces`` (both routed without
    starlette's router: ``HotRoutes``) and ``GET /v1/health``: events go into ``settings.log``
    when there is one (whoever runs the app runs its ``LogLoader``: under ``serve-ingest``, a
    process of its own), else into ``settings.store``."""
    if not settings.keys or any(not key for key in settings.keys):
        raise ValueError("the ingest endpoint needs at least one non-empty key")
    intake = EventIntake(settings)

    async def post_events(request: Request) -> Response:
        project = project_of(settings.keys, bearer_token(request.headers.get("authorization")))
        if project is None:
            return _error(401, "unauthorized", "Authorization: Bearer <project key> is required")
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip"):
            return _error(415, "unsupported_encoding", f"Content-Encoding {encoding} is not gzip")
        try:
            raw = await read_limited(request.stream(), MAX_BODY_BYTES, encoding == "gzip")
        except BodyTooLargeError:
            return _answer(_too_large(MAX_BODY_BYTES))
        except BadEncodingError as exc:
            return _error(400, "invalid_encoding", str(exc))
        answer, events = accepted_events(raw)
        body = loggable_body(raw) if unchanged(answer) else None
        problem = await intake.make_durable(project, events, body)
        return _answer(answer) if problem is None else problem

    async def get_health(request: Request) -> Response:
        return Response(orjson.dumps(intake.health()), 200, media_type="application/json")

    post_traces = traces_endpoint(settings.keys, intake.make_durable)
    hot = {("POST", EVENTS_PATH): post_events, ("POST", TRACES_PATH): post_traces}
    return Starlette(
        routes=[
            Route(EVENTS_PATH, post_events, methods=["POST"]),
            Route(TRACES_PATH, post_traces, methods=["POST"]),
            Route(HEALTH_PATH, get_health, methods=["GET"]),
        ],
        middleware=[Middleware(HotRoutes, exact=hot)],
    )


def accepted_events(raw: bytes) -> tuple[IngestAnswer, list[dict[str, Any]]]:
    """The answer ``toolcall-spec ingest`` gives for this body (the same function), and the events
    it accepted, as accepted (repaired where a warning says so), in batch order."""
    events: list[dict[str, Any]] = []
    answer = ingest_body(raw, on_accepted=events.append)
    return answer, events


def unchanged(answer: IngestAnswer) -> bool:
    """Every event of the batch was accepted as sent: nothing rejected, nothing repaired."""
    return answer["status"] == 200 and not answer.get("warnings")


def _too_large(limit: int) -> IngestAnswer:
    message = f"the body is over the limit of {limit:,} bytes (decompressed)"
    return refused(413, "payload_too_large", message)


def _answer(answer: IngestAnswer) -> Response:
    body: IngestAnswer = {**answer, "requestId": str(uuid.uuid4())}
    return Response(orjson.dumps(body), answer["status"], media_type="application/json")


def _busy(message: str) -> Response:
    response = _error(503, "service_unavailable", message)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _error(status: int, code: str, message: str) -> Response:
    body = {"error": {"code": code, "message": message, "status": status}}
    headers = {"WWW-Authenticate": 'Bearer realm="ingest"'} if status == 401 else None
    return Response(orjson.dumps(body), status, headers, media_type="application/json")
