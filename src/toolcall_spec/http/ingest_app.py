"""The ingest endpoint: ``POST /v1/events`` on the package's ASGI stack (starlette on uvicorn);
``POST /v1/traces`` (``.otlp_route``) beside it shares its reading, keys and acceptance path.

A request goes through, in this order:

1. **the key**: ``Authorization: Bearer <key>``; each key belongs to one project, and the project
   comes from the key, never from the body (401 otherwise);
2. **the size limit, while reading**: the body is read chunk by chunk and the read stops as soon
   as it passes ``toolcall_spec.analytics.ingest.MAX_BODY_BYTES`` (413, nothing parsed). A
   ``Content-Encoding: gzip`` body is decompressed as it arrives and the limit applies to the
   decompressed bytes, so a small compressed bomb is refused after reading just past the limit;
3. **the batch answer** of ``toolcall_spec.analytics.ingest.ingest_body``, the function
   ``toolcall-spec ingest`` answers with (200, 207 or 400, per event);
4. **the store**: the accepted events are written as accepted (repaired where the answer's
   ``warnings`` say so: ``ingest_body`` hands each one over), and the answer is sent only once
   the store has durably written them. When the store fails, the answer is 503 and nothing is
   acknowledged: the client retries, and the dedupe key (``event_id``) makes the retry count once.

Writes are grouped (``GroupWriter``): the batches of concurrent requests that wait while a
write is under way go to the store together in the next write, one commit for all of them, so the
cost of a durable commit is shared instead of paid per request.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolcall_spec.analytics.ingest import MAX_BODY_BYTES, ingest_body, refused
from toolcall_spec.analytics.store import EventStore, StoreError, event_row
from toolcall_spec.analytics.store.layout import Row
from toolcall_spec.clock import utc_now
from toolcall_spec.http.auth import bearer_token
from toolcall_spec.http.ingest_reading import (
    BadEncodingError,
    BodyTooLargeError,
    project_of,
    read_limited,
)
from toolcall_spec.http.otlp_route import TRACES_PATH, traces_endpoint
from toolcall_spec.typed import IngestAnswer

EVENTS_PATH = "/v1/events"


@dataclass(frozen=True)
class IngestSettings:
    store: EventStore
    keys: Mapping[str, str]
    """Key (bearer token) -> project id."""


class GroupWriter:
    """Writes the rows of concurrent requests to the store together. A request's ``write``
    returns once a store write holding its rows has returned (durably written), or raises what
    that write raised; while one write is under way, the rows arriving meanwhile wait for the
    next one. Only the event loop's thread calls ``write``."""

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._waiting: list[tuple[Sequence[Row], asyncio.Future[None]]] = []
        self._drain: asyncio.Task[None] | None = None

    async def write(self, rows: Sequence[Row]) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((rows, done))
        if self._drain is None or self._drain.done():
            self._drain = asyncio.create_task(self._write_waiting())
        await asyncio.shield(done)

    async def _write_waiting(self) -> None:
        while self._waiting:
            group, self._waiting = self._waiting, []
            rows = [row for batch, _ in group for row in batch]
            try:
                await anyio.to_thread.run_sync(self._store.write, rows)
            except Exception as exc:  # every waiting request learns the write failed
                for _, done in group:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _, done in group:
                    if not done.done():
                        done.set_result(None)


def create_ingest_app(settings: IngestSettings) -> Starlette:
    """The ASGI app serving ``POST /v1/events`` and ``POST /v1/traces`` into ``settings.store``."""
    if not settings.keys or any(not key for key in settings.keys):
        raise ValueError("the ingest endpoint needs at least one non-empty key")
    writer = GroupWriter(settings.store)

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
        problem = await make_durable(project, events)
        return _answer(answer) if problem is None else problem

    async def make_durable(project: str, events: Sequence[Mapping[str, Any]]) -> Response | None:
        """The one acceptance path of both routes: ``None`` once the events are durably
        stored, otherwise the answer to send (503: nothing acknowledged, the client retries)."""
        if not events:
            return None
        try:
            await writer.write(rows_of(events, project))
        except StoreError:
            return _error(503, "store_unavailable", "the events could not be stored; retry")
        return None

    post_traces = traces_endpoint(settings.keys, make_durable)
    return Starlette(
        routes=[
            Route(EVENTS_PATH, post_events, methods=["POST"]),
            Route(TRACES_PATH, post_traces, methods=["POST"]),
        ]
    )


def accepted_events(raw: bytes) -> tuple[IngestAnswer, list[dict[str, Any]]]:
    """The answer ``toolcall-spec ingest`` gives for this body (the same function), and the events
    it accepted, as accepted (repaired where a warning says so), in batch order."""
    events: list[dict[str, Any]] = []
    answer = ingest_body(raw, on_accepted=events.append)
    return answer, events


def rows_of(events: Sequence[Mapping[str, Any]], project: str) -> list[Row]:
    now = utc_now()
    return [event_row(event, project, now) for event in events]


def _too_large(limit: int) -> IngestAnswer:
    message = f"the body is over the limit of {limit:,} bytes (decompressed)"
    return refused(413, "payload_too_large", message)


def _answer(answer: IngestAnswer) -> Response:
    body: IngestAnswer = {**answer, "requestId": str(uuid.uuid4())}
    return Response(orjson.dumps(body), answer["status"], media_type="application/json")


def _error(status: int, code: str, message: str) -> Response:
    body = {"error": {"code": code, "message": message, "status": status}}
    headers = {"WWW-Authenticate": 'Bearer realm="ingest"'} if status == 401 else None
    return Response(orjson.dumps(body), status, headers, media_type="application/json")
