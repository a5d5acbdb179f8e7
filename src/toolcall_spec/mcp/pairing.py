"""Which request an answer answers, for the recording proxies (``stdio_proxy``, ``http_proxy``).

A JSON-RPC id is unique only among one sender's requests in flight, and not even that when a
client reuses one: two session-less HTTP clients both send id 1, a client sends two POSTs with
the same id, a batch holds an id twice. So the proxies never pair an answer by its id alone:

- an **exchange** is what carries a request and its answer: over streamable HTTP one POST (its
  JSON answer or event stream answers that POST's requests, and nothing else); over stdio the
  one pipe of the session;
- each request the client sends gets a **token**, unique over the proxy's life, in the order the
  requests were sent; the recorder sees a copy of the client's message with each request id
  replaced by its token, and a copy of each answer with its id replaced by the token of the
  request it answers: the oldest open request of the same exchange with that id;
- an answer no open request of its exchange has (an id the client never sent, or one answered
  already) is not given to the recorder: the proxy logs it and forwards it unchanged. An answer
  on a stream of no exchange (an HTTP GET stream) is paired only when exactly one open request
  of its session has the id.

What is forwarded is never changed: the copies are for the recorder only. Since tokens rise in
send order, a recorder that sorts calls by token keeps them in the order they were sent.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from itertools import count
from typing import Any

import orjson

from toolcall_spec.mcp.record import CANCELLED, is_request, is_response, jsonrpc_objects

RequestKey = tuple[str, Any]


class Token(str):
    """``"<n>:<the client's id as JSON>"``, n rising in send order. Its ``repr`` is the client's
    id's, so what the recorder logs about a call names the id the client sent."""

    __slots__ = ("request_id",)
    request_id: Any

    @classmethod
    def of(cls, number: int, request_id: Any) -> Token:
        token = cls(f"{number}:{_json_text(request_id)}")
        token.request_id = request_id
        return token

    def __repr__(self) -> str:
        return repr(self.request_id)


@dataclass(frozen=True)
class OpenRequest:
    token: Token
    request_id: Any
    """The id as the client sent it."""
    session: str
    exchange: Hashable


class RequestPairing:
    """The client's requests in flight, each paired with the exchange that carries it."""

    def __init__(self) -> None:
        self._numbers = count(1)
        self._open: dict[str, OpenRequest] = {}
        self._by_exchange: dict[tuple[Hashable, RequestKey], deque[Token]] = {}
        self._lock = threading.Lock()

    def sent(self, session: str, exchange: Hashable, message: Any) -> Any:
        """The recorder's copy of a message the client sent on ``exchange``."""
        with self._lock:
            return _mapped(message, lambda obj: self._request(session, exchange, obj))

    def answered(
        self, session: str, exchange: Hashable | None, message: Any
    ) -> tuple[list[Any], list[Any]]:
        """The recorder's copy of a message the server sent on ``exchange`` (``None``: a stream
        of no exchange), holding only the answers paired with an open request, and the ids of
        the answers that no open request has (the caller logs them)."""
        unknown: list[Any] = []
        paired: list[Any] = []
        with self._lock:
            for obj in jsonrpc_objects(message):
                if not is_response(obj):
                    continue
                token = self._pop(session, exchange, request_key(obj["id"]))
                if token is None:
                    unknown.append(obj["id"])
                else:
                    paired.append({**obj, "id": token})
        return paired, unknown

    def open_requests(self, exchange: Hashable) -> list[OpenRequest]:
        """The requests of ``exchange`` still waiting, in the order they were sent."""
        with self._lock:
            return [r for r in self._open.values() if r.exchange == exchange]

    def forget(self, token: Any) -> Any:
        """The client's id of the request ``token`` names, now answered by other means (the
        recorder failed it); the token itself when it names none."""
        with self._lock:
            request = self._open.get(token) if isinstance(token, str) else None
            if request is None:
                return token
            self._drop(request)
            return request.request_id

    # --- the indexes ---------------------------------------------------------------------

    def _request(self, session: str, exchange: Hashable, obj: Mapping[str, Any]) -> Any:
        if is_request(obj):
            token = Token.of(next(self._numbers), obj["id"])
            request = OpenRequest(token, obj["id"], session, exchange)
            self._open[token] = request
            self._by_exchange.setdefault((exchange, request_key(obj["id"])), deque()).append(token)
            return {**obj, "id": token}
        if obj.get("method") == CANCELLED:
            return self._cancellation(session, exchange, obj)
        return obj

    def _cancellation(self, session: str, exchange: Hashable, obj: Mapping[str, Any]) -> Any:
        """A cancellation names a request by id, from any exchange of the session (an HTTP
        cancellation comes in a POST of its own): the newest open one with that id."""
        params = obj.get("params")
        if not isinstance(params, Mapping) or "requestId" not in params:
            return obj
        key = request_key(params["requestId"])
        named = [
            r
            for r in self._open.values()
            if r.session == session and request_key(r.request_id) == key
        ]
        if not named:
            return obj
        same = [r for r in named if r.exchange == exchange]
        target = (same or named)[-1]
        return {**obj, "params": {**params, "requestId": target.token}}

    def _pop(self, session: str, exchange: Hashable | None, key: RequestKey) -> Token | None:
        if exchange is not None:
            waiting = self._by_exchange.get((exchange, key))
            if not waiting:
                return None
            request = self._open[waiting[0]]
        else:
            candidates = [
                r
                for r in self._open.values()
                if r.session == session and request_key(r.request_id) == key
            ]
            if len(candidates) != 1:
                return None
            request = candidates[0]
        self._drop(request)
        return request.token

    def _drop(self, request: OpenRequest) -> None:
        del self._open[request.token]
        index = (request.exchange, request_key(request.request_id))
        waiting = self._by_exchange[index]
        waiting.remove(request.token)
        if not waiting:
            del self._by_exchange[index]


def _mapped(message: Any, change: Any) -> Any:
    """``message`` with ``change`` applied to each of its JSON-RPC objects (a batch stays a
    list, anything else is left as it is)."""
    if isinstance(message, list):
        return [change(item) if isinstance(item, Mapping) else item for item in message]
    return change(message) if isinstance(message, Mapping) else message


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def request_key(request_id: Any) -> RequestKey:
    """A JSON-RPC id made hashable without confusing ``1`` and ``"1"`` (an id that is no
    scalar, which JSON-RPC forbids but a client may send, by its JSON text)."""
    if isinstance(request_id, (list, dict)):
        return ("json", _json_text(request_id))
    return (type(request_id).__name__, request_id)


def record_safely(log: Callable[[str], None], call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``, a call into the recorder: a recording that fails never breaks the
    session. The failure is logged and forwarding goes on; ``None`` stands for the result."""
    try:
        return call(*args)
    except Exception as exc:  # whatever the recorder raises, the client keeps its server
        log(f"recording failed, the session goes on: {type(exc).__name__}: {exc}")
        return None
