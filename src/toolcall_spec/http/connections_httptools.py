"""The slow-client guard (``toolcall_spec.http.connections``) on uvicorn's httptools protocol, in
a module of its own: importing it needs httptools. The protocol also writes each response's head
and body in one piece (``HeadWithBody``)."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolcall_spec.http.connections import BODY, HEAD, ReadGuard

STATUS_LINE_START = b"HTTP/1."


class HeadWithBody:
    """What uvicorn's request cycle writes to: a response head is held until the first write of
    its body, so both leave in one ``send`` (one segment, one wake-up of the client) instead of
    two. Whatever is held goes out at the response's end, at close, or at the end of this turn
    of the event loop, whichever comes first; the order of the bytes never changes."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held = b""

    def write(self, data: bytes) -> None:
        if self._held:
            data, self._held = self._held + data, b""
        elif data.startswith(STATUS_LINE_START):  # a head: its body follows in this turn
            self._held = data
            self._loop.call_soon(self.flush)
            return
        self._transport.write(data)

    def flush(self) -> None:
        if self._held:
            data, self._held = self._held, b""
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpToolsProtocol(ReadGuard, HttpToolsProtocol):
    """uvicorn's httptools protocol with the guard: the parser's callbacks say what is owed.
    A head is owed from the connection's start and after each response (unless the next request
    is already in), a body from the end of its head to the end of its message."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._start_guard()
        self._in_message = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if self._turn_away_if_full(transport):
            return
        super().connection_made(transport)
        self._writer = HeadWithBody(transport, self.loop)
        self._await(HEAD)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if not self._turned_away:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._turned_away:
            return
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_message = True
        self._await(HEAD)  # still the deadline armed when the wait began

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.cycle is not None:  # None: the request asked for an upgrade (refused later)
            self.cycle.transport = self._writer  # type: ignore[assignment]
        self._await(BODY)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_message = False
        self._await(None)

    def on_response_complete(self) -> None:
        self._writer.flush()  # the response is whole: nothing waits for more of it
        super().on_response_complete()
        if not self._in_message and not self.pipeline:
            self._await(HEAD)

    def _response_started(self) -> bool:
        return self.cycle is not None and self.cycle.response_started
