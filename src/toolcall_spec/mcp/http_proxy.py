"""The streamable HTTP transport of ``toolcall-spec record``: an ASGI app that forwards every
request to the upstream MCP server (same method, path, query, headers and body; ``Host`` is the
upstream's) and streams every answer back unchanged, JSON or server-sent events alike.

What passes is observed on the way, and recorded before the client receives it:

- a POST body (one JSON-RPC message or a batch) is the client's; its session is the request's
  ``Mcp-Session-Id`` header, or for the request that opens a session (``initialize``) the id
  the upstream's answer assigns. Traffic without any session id (a stateless server, or the
  2026-07-28 protocol) is one session, ``stateless``.
- each answer is paired with a request of the POST that carried it, never by id alone
  (``.pairing``), and a POST's message goes to the recorder before it is forwarded, so calls
  are kept in the order sent;
- a JSON answer, and each event of an event stream (POST or GET), is the server's. An event
  stream is forwarded event by event, each one after the recorder has seen it.
- an event stream that ends before answering a request of its POST (the server died mid-call),
  or an upstream that cannot be reached: the open requests get JSON-RPC errors (``-32000``), as
  a last event or as the JSON answer, and their calls are recorded as failures.
- ``DELETE`` with a session id ends that session: its open calls are recorded as failures.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import orjson

from toolcall_spec.mcp.pairing import RequestPairing, record_safely
from toolcall_spec.mcp.record import INITIALIZE, Recorder, jsonrpc_objects

STATELESS = "stateless"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES = 16 * 1024 * 1024
"""A client message larger than this is refused (413): JSON-RPC messages are small."""
LARGE_MESSAGE_BYTES = 1024 * 1024
"""A server message larger than this is parsed and recorded off the event loop."""
SESSION_HEADER = "mcp-session-id"
SERVER_GONE = -32000
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
NOT_FORWARDED = HOP_BY_HOP | {"accept-encoding"}
"""The answer must come as identity: it is parsed on the way, and forwarded as it came."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Log = Callable[[str], None]


class RecordingProxy:
    """The ASGI app: ``RecordingProxy(upstream_url, recorder, log)``."""

    def __init__(
        self,
        upstream: str,
        recorder: Recorder,
        *,
        log: Log,
        timeout: float = 300.0,
        loopback_only: bool = True,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {upstream!r}")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path or "/"
        self.recorder = recorder
        self.log = log
        self.timeout = timeout
        self.loopback_only = loopback_only
        self._client: httpx.AsyncClient | None = None
        self.pairing = RequestPairing()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._proxy(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                timeout = httpx.Timeout(self.timeout, connect=10.0)
                self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._client is not None:
                    await self._client.aclose()
                reason = "the proxy stopped before the server answered"
                record_safely(self.log, self.recorder.close, reason)
                await send({"type": "lifespan.shutdown.complete"})
                return

    # --- one exchange ---------------------------------------------------------------------------

    async def _proxy(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self._refusal(scope)
        if refusal is not None:
            self.log(f"refused a request: {refusal}")
            await _respond(send, 403, refusal.encode(), "text/plain")
            return
        body = await _read_body(receive)
        if body is None:
            await _respond(send, 413, b"the request body is too large", "text/plain")
            return
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in scope["headers"]
            if k.decode("latin-1").lower() not in NOT_FORWARDED
        ]
        exchange = Exchange()
        session = _header(headers, SESSION_HEADER)
        message = self._parsed(body) if scope["method"] == "POST" else None
        if message is not None and (session is not None or not _opens_session(message)):
            # Recorded before it is forwarded: calls are kept in the order they were sent.
            self._sent(session or STATELESS, exchange, message)
            exchange.recorded = True
        url = self.origin + scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        assert self._client is not None
        # An event stream opened by GET may stay idle for long: only the client may end it.
        read = None if scope["method"] == "GET" else self.timeout
        request = self._client.build_request(
            scope["method"],
            url,
            headers=headers,
            content=body,
            timeout=httpx.Timeout(self.timeout, connect=10.0, read=read),
        )
        try:
            upstream = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await self._unreachable(session or STATELESS, exchange, message, exc, send)
            return
        try:
            session = session or _header(upstream.headers.items(), SESSION_HEADER) or STATELESS
            if message is not None and not exchange.recorded:
                self._sent(session, exchange, message)  # an initialize: now its session is known
            # A GET stream carries no answer of its own (answers there pair by session).
            answers_on = exchange if scope["method"] == "POST" else None
            await self._answer(upstream, session, answers_on, send, receive)
        finally:
            await upstream.aclose()
        if scope["method"] == "DELETE" and upstream.status_code < 300:
            reason = "the client ended the session first"
            self._forget(record_safely(self.log, self.recorder.fail_pending, session, reason) or [])

    def _refusal(self, scope: Scope) -> str | None:
        """Why a request is refused, if it is: served on loopback, the proxy takes only
        loopback ``Host`` and ``Origin`` names. It forwards with the upstream's own ``Host``, so
        without this check a web page could use it to step around the upstream's DNS-rebinding
        guard (the MCP transport asks servers to validate ``Origin``)."""
        if not self.loopback_only:
            return None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = urlsplit(f"//{headers.get('host', '')}").hostname
        if host not in LOOPBACK_NAMES:
            return f"Host {headers.get('host')!r} is not a loopback name"
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).hostname not in LOOPBACK_NAMES:
            return f"Origin {origin!r} is not a loopback origin"
        return None

    def _parsed(self, body: bytes) -> Any:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            self.log(f"a request body from the client is not JSON (passed on): {body[:120]!r}")
            return None

    def _sent(self, session: str, exchange: Exchange, message: Any) -> None:
        if session == STATELESS:
            record_safely(self.log, self.recorder.open_session, STATELESS, STATELESS)
        sent = self.pairing.sent(session, exchange, message)
        record_safely(self.log, self.recorder.from_client, session, sent)

    def _forget(self, tokens: list[Any]) -> None:
        for token in tokens:
            self.pairing.forget(token)

    async def _answer(
        self,
        upstream: httpx.Response,
        session: str,
        exchange: Exchange | None,
        send: Send,
        receive: Receive,
    ) -> None:
        headers = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in upstream.headers.multi_items()
            if k.lower() not in HOP_BY_HOP and k.lower() != "content-encoding"
        ]
        start = {"type": "http.response.start", "status": upstream.status_code, "headers": headers}
        content_type = upstream.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            await send(start)
            await self._stream(upstream, session, exchange, send, receive)
            return
        try:  # read whole before answering: a body cut off gets the client errors, not a 500
            body = await upstream.aread()
        except httpx.HTTPError as exc:
            await self._unreachable(session, exchange or Exchange(), None, exc, send)
            return
        await send(start)
        if content_type.startswith("application/json"):
            await self._from_server(session, exchange, body)
        if exchange is not None:
            reason = f"the server's answer (HTTP {upstream.status_code}) held no answer to it"
            self._fail_open(session, exchange, reason)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _stream(
        self,
        upstream: httpx.Response,
        session: str,
        exchange: Exchange | None,
        send: Send,
        receive: Receive,
    ) -> None:
        """Forward an event stream event by event; a client that hangs up ends it, and the
        POST's requests still open are then recorded as failures (nobody will see an answer)."""
        async with anyio.create_task_group() as streams:
            streams.start_soon(_cancel_on_disconnect, receive, streams.cancel_scope)
            async for chunk in self._events(upstream.aiter_bytes(), session, exchange):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            last = self._unanswered_event(session, exchange)
            await send({"type": "http.response.body", "body": last, "more_body": False})
            streams.cancel_scope.cancel()
        if exchange is not None:  # still open only when the client hung up first
            self._fail_open(session, exchange, "the client disconnected before the answer")

    async def _events(
        self, chunks: AsyncIterator[bytes], session: str, exchange: Exchange | None
    ) -> AsyncIterator[bytes]:
        """The stream's bytes, each complete event released after the recorder saw it."""
        splitter = EventSplitter()
        try:
            async for chunk in chunks:
                for event in splitter.feed(chunk):
                    await self._from_server(session, exchange, event, event=True)
                    yield event
        except httpx.HTTPError as exc:
            self.log(f"the server's event stream broke off: {exc}")
        if rest := splitter.rest():
            yield rest

    async def _from_server(
        self, session: str, exchange: Exchange | None, raw: bytes, *, event: bool = False
    ) -> None:
        """Give the recorder what the server sent (a JSON body, or an event of a stream); a
        large message is read and recorded on a worker thread, so the event loop goes on
        serving the other exchanges meanwhile."""
        if len(raw) > LARGE_MESSAGE_BYTES:
            await anyio.to_thread.run_sync(self._observe_answer, session, exchange, raw, event)
        else:
            self._observe_answer(session, exchange, raw, event)

    def _observe_answer(
        self, session: str, exchange: Exchange | None, raw: bytes, event: bool
    ) -> None:
        data = event_data(raw) if event else raw
        if not data or data.isspace():
            return
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.log(f"a message from the server is not JSON (passed on): {data[:120]!r}")
            return
        answers, unknown = self.pairing.answered(session, exchange, message)
        for request_id in unknown:
            self.log(
                f"the server answered id {request_id!r}, which no open request has (passed on)"
            )
        if answers:
            record_safely(self.log, self.recorder.from_server, session, answers)

    # --- answers the server never gave ------------------------------------------------------------

    def _unanswered_event(self, session: str, exchange: Exchange | None) -> bytes:
        """After an event stream ended: a last event answering the POST's open requests."""
        if exchange is None:
            return b""
        errors = self._fail_open(session, exchange, "the server's event stream ended unanswered")
        return b"".join(b"event: message\ndata: " + orjson.dumps(e) + b"\n\n" for e in errors)

    async def _unreachable(
        self, session: str, exchange: Exchange, message: Any, exc: Exception, send: Send
    ) -> None:
        self.log(f"cannot reach the MCP server: {exc}")
        if message is not None and not exchange.recorded:
            self._sent(session, exchange, message)
        errors = self._fail_open(session, exchange, f"the MCP server cannot be reached: {exc}")
        if not errors:
            await _respond(send, 502, b"the MCP server cannot be reached", "text/plain")
            return
        body = orjson.dumps(errors[0] if len(errors) == 1 else errors)
        await _respond(send, 200, body, "application/json")

    def _fail_open(self, session: str, exchange: Exchange, reason: str) -> list[dict[str, Any]]:
        """JSON-RPC errors for the exchange's requests still open, each fed to the recorder as
        the server's answer (so an open call is recorded as a failure, and warned about)."""
        errors = []
        for request in self.pairing.open_requests(exchange):
            error = {"code": SERVER_GONE, "message": reason}
            errors.append({"jsonrpc": "2.0", "id": request.request_id, "error": error})
            self.log(f"request {request.request_id!r} answered with a JSON-RPC error: {reason}")
            self.pairing.forget(request.token)
            answer = {"jsonrpc": "2.0", "id": request.token, "error": error}
            record_safely(self.log, self.recorder.from_server, session, answer)
        return errors


class Exchange:
    """One POST and its answer: what pairs an answer with the request it answers."""

    __slots__ = ("recorded",)

    def __init__(self) -> None:
        self.recorded = False
        """Whether the POST's message went to the recorder before it was forwarded."""


def _opens_session(message: Any) -> bool:
    """Whether a message without a session id holds an ``initialize``: its session is the one
    the server's answer assigns, known only then."""
    return any(obj.get("method") == INITIALIZE for obj in jsonrpc_objects(message))


class EventSplitter:
    """Splits an event stream into its events as the bytes come, in linear time: each byte is
    searched once, by ``bytes.find`` (a separator cut in two by a chunk boundary is found by
    looking back three bytes), and a bytearray gives up its front without moving what follows."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._searched = 0

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        self._buffer += chunk
        while (end := _event_end(self._buffer, self._searched)) > 0:
            with memoryview(self._buffer) as view:
                event = bytes(view[:end])
            del self._buffer[:end]
            self._searched = 0
            yield event
        self._searched = max(len(self._buffer) - 3, 0)

    def rest(self) -> bytes:
        """What came after the last complete event (a stream cut off mid-event)."""
        rest = bytes(self._buffer)
        self._buffer.clear()
        return rest


def _event_end(buffer: bytearray, start: int) -> int:
    """Where the first event ending at or after ``start`` ends (after its blank line), or 0. A
    blank line follows a line end: LF LF or CR LF CR LF (found line by line, each LF by
    ``find``), or CR CR in a stream whose lines end with CR alone."""
    position = start
    while (newline := buffer.find(b"\n", position)) >= 0:
        if buffer[newline + 1 : newline + 2] == b"\n":
            return newline + 2
        if buffer[newline + 1 : newline + 3] == b"\r\n":
            return newline + 3
        position = newline + 1
    carriage = buffer.find(b"\r\r", start)
    return carriage + 2 if carriage >= 0 else 0


def event_data(event: bytes) -> bytes:
    """The data of one event: its ``data:`` lines, joined by newlines."""
    if b"\r" in event:
        event = event.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    data = [
        line[6:] if line[5:6] == b" " else line[5:]
        for line in event.split(b"\n")
        if line.startswith(b"data:")
    ]
    return data[0] if len(data) == 1 else b"\n".join(data)


def _header(headers: Any, name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


async def _read_body(receive: Receive) -> bytes | None:
    """The request's body, or ``None`` past ``MAX_BODY_BYTES`` (read no further)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        parts.append(chunk)
        if not message.get("more_body"):
            return b"".join(parts)


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _respond(send: Send, status: int, body: bytes, content_type: str) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
