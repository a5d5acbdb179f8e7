"""Slow and surplus clients, handled below the app: uvicorn's HTTP/1.1 protocols (httptools, the
default when installed, and h11) with read deadlines and a connection cap.

uvicorn times out idle keep-alive connections, but not a request head or body that arrives
slowly: 300 clients sending one header byte now and then would hold 300 connections forever
(slowloris). Here each request head must arrive within ``head_timeout`` seconds of the moment the
server starts waiting for it, and its body within ``body_timeout`` seconds of the head; otherwise
the connection gets ``408`` and is closed. Past ``max_connections`` open connections, a new one
gets ``503`` and is closed at once, so the server's memory and file descriptors stay bounded.
Deadlines are absolute, not idle timers: trickling a byte at a time does not extend them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    head_timeout: float = 10.0
    """Seconds a client has to send a whole request head (request line and headers)."""

    body_timeout: float = 30.0
    """Seconds a client has, once its head is in, to send the whole body."""

    max_connections: int = 512
    """Connections open at once; one more is answered ``503`` and closed."""

    def __post_init__(self) -> None:
        if not (self.head_timeout > 0 and self.body_timeout > 0):
            raise ValueError("head_timeout and body_timeout must be positive")
        if self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")


def _plain_answer(status: str, text: str, *headers: str) -> bytes:
    """A whole HTTP/1.1 answer written straight to the socket, for connections that never reach
    the app (the request is incomplete, or there is no room for it)."""
    body = text.encode() + b"\n"
    head = [
        f"HTTP/1.1 {status}",
        "content-type: text/plain; charset=utf-8",
        "connection: close",
        *headers,
        f"content-length: {len(body)}",
    ]
    return "\r\n".join(head).encode() + b"\r\n\r\n" + body


REQUEST_TIMEOUT = _plain_answer("408 Request Timeout", "the request did not arrive in time")
BUSY = _plain_answer(
    "503 Service Unavailable", "too many open connections; retry", "retry-after: 1"
)


HttpImplementation = Literal["httptools", "h11"]


class ReadGuard:
    """The deadline and the connection cap both guarded protocols share. A deadline is set for
    what the client owes now (``HEAD`` or ``BODY``) and dropped once it is in.

    One timer per connection, armed lazily: it is moved only when a deadline comes before it, and
    when it fires it looks at what is owed then (nothing: it is done; a later deadline: it is
    re-armed for that). A connection serving requests one after another arms and cancels no
    timer per request; the deadlines stay exactly those of the requests."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    connections: set[Any]

    def _start_guard(self) -> None:
        self._deadline: asyncio.TimerHandle | None = None
        self._timer_at = 0.0  # when the timer fires (loop time)
        self._due = 0.0  # the deadline of what is owed (loop time), when something is
        self._waiting_for: object = None
        self._turned_away = False

    def _turn_away_if_full(self, transport: asyncio.Transport) -> bool:
        """Past the connection cap: answer 503 and close, without a word to uvicorn."""
        if len(self.connections) < self.limits.max_connections:
            return False
        self._turned_away = True
        self.transport = transport
        transport.write(BUSY)
        transport.close()
        return True

    def _await(self, owed: object) -> None:
        """Arm the deadline for ``owed`` (``HEAD``, ``BODY``, or ``None``: nothing owed)."""
        if self.transport.is_closing():
            self._disarm()
            return
        if owed is self._waiting_for:
            return
        self._waiting_for = owed
        if owed is None:
            return  # the timer stays: it finds nothing owed, or a later deadline, when it fires
        seconds = self.limits.head_timeout if owed is HEAD else self.limits.body_timeout
        self._due = self.loop.time() + seconds
        if self._deadline is None or self._timer_at > self._due:
            self._arm(self._due)

    def _arm(self, when: float) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._timer_at = when
        self._deadline = self.loop.call_at(when, self._deadline_passed)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting_for = None, None

    def _deadline_passed(self) -> None:
        self._deadline = None
        if self._waiting_for is None:
            return
        if self.loop.time() < self._due:
            self._arm(self._due)
            return
        self._too_slow()

    def _too_slow(self) -> None:
        if self.transport.is_closing():
            return
        if self._waiting_for is HEAD or not self._response_started():
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()

    def _response_started(self) -> bool:
        raise NotImplementedError


HEAD = h11.IDLE
"""The client owes a request head (h11 calls that state ``IDLE``)."""
BODY = h11.SEND_BODY
"""The client owes the rest of a body."""


class GuardedH11Protocol(ReadGuard, H11Protocol):
    """uvicorn's h11 protocol with the guard: the state h11 tracks says what is owed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._start_guard()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if self._turn_away_if_full(transport):
            return
        super().connection_made(transport)
        self._follow_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if not self._turned_away:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._turned_away:
            return
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_request()

    def _follow_request(self) -> None:
        state = self.conn.their_state
        self._await(state if state in (HEAD, BODY) else None)

    def _response_started(self) -> bool:
        return self.conn.our_state is not h11.SEND_RESPONSE
