"""The slow-client guard (``toolcall_spec.http.connections``) on uvicorn's httptools protocol, in
a module of its own: importing it needs httptools."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolcall_spec.http.connections import BODY, HEAD, ReadGuard


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
        self._await(BODY)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_message = False
        self._await(None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self._in_message and not self.pipeline:
            self._await(HEAD)

    def _response_started(self) -> bool:
        return self.cycle is not None and self.cycle.response_started
