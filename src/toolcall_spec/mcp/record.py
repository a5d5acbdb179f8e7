"""The recorder behind ``toolcall-spec record``: it watches the JSON-RPC messages a proxy
forwards (it never changes them) and turns each ``tools/call`` into a fixture entry.

Transport-free: the stdio and streamable HTTP proxies (``.stdio_proxy``, ``.http_proxy``) hand
every message they forward to ``Recorder.from_client`` / ``Recorder.from_server`` with the
session it belongs to, and tell it when a session or the server ends. The recorder

- keeps each session's ``tools/call`` requests in the order the client sent them;
- completes a call when its response arrives: a result is recorded as received (an error exactly
  when its ``isError`` is the JSON boolean ``true``, ``rules.is_tool_error``); a JSON-RPC error,
  or no answer at all (the server died, the session ended first), is recorded as a failure and
  named in a warning;
- rewrites the whole suite atomically (a temporary file, then ``os.replace``) each time a call
  completes, before the proxy forwards the response, so whatever the client has seen answered is
  on disk even if the proxy is then killed with SIGKILL;
- optionally strips PII from the recorded responses and emits one analytics ``tool_call`` event
  per call.

The suite is built by ``replay.promote.recorded_suite``, the one function every recorder uses.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec.analytics.classify import (
    Classification,
    classify_exception,
    classify_pre_handler_failure,
    classify_result,
    classify_server_failure,
)
from toolcall_spec.analytics.events import EventFactory
from toolcall_spec.analytics.pii import strip_pii, strip_pii_deep
from toolcall_spec.analytics.sinks import Sink, deliver
from toolcall_spec.clock import new_uuid
from toolcall_spec.replay.promote import RecordedCall, RecordedTask, recorded_suite

TOOLS_CALL = "tools/call"
TOOLS_LIST = "tools/list"
INITIALIZE = "initialize"
CANCELLED = "notifications/cancelled"
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

Warn = Callable[[str], None]
RequestKey = tuple[str, Any]
"""A JSON-RPC id made hashable without confusing ``1`` and ``"1"``."""


CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
"""Where a 2026-07-28 request names its client: every request's ``_meta`` carries the stamp."""


def client_name(method: str, params: Any) -> str | None:
    """The name a request gives its client: ``initialize``'s ``clientInfo``, or (2026-07-28,
    no handshake) the ``clientInfo`` stamp in any request's ``_meta``."""
    if not isinstance(params, Mapping):
        return None
    meta = params.get("_meta")
    if method == INITIALIZE:
        info = params.get("clientInfo")
    else:
        info = meta.get(CLIENT_INFO_META) if isinstance(meta, Mapping) else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return name if isinstance(name, str) and name.strip() else None


def request_key(request_id: Any) -> RequestKey:
    return (type(request_id).__name__, request_id)


def jsonrpc_objects(message: Any) -> Iterator[Mapping[str, Any]]:
    """The JSON-RPC objects in a message (a batch is a list of them); anything else is none."""
    items = message if isinstance(message, list) else [message]
    yield from (item for item in items if isinstance(item, Mapping))


def is_request(obj: Mapping[str, Any]) -> bool:
    return isinstance(obj.get("method"), str) and "id" in obj


def is_response(obj: Mapping[str, Any]) -> bool:
    return "method" not in obj and "id" in obj and ("result" in obj or "error" in obj)


@dataclass
class _Call:
    tool: str
    args: Any
    started: float
    recorded: RecordedCall | None = None
    cancelled: bool = False


@dataclass
class _Session:
    label: str
    calls: list[_Call] = field(default_factory=list)
    pending: dict[RequestKey, tuple[str, _Call | None]] = field(default_factory=dict)
    """Every request of the client still waiting for its answer: method, and the call it is."""
    event_session: str = field(default_factory=new_uuid)
    """The analytics ``session_id`` of this session's events."""
    list_cursors: dict[RequestKey, bool] = field(default_factory=dict)
    """Open ``tools/list`` requests: whether each asks for a later page (has a cursor)."""
    tools: list[Any] | None = None
    """The tools the server listed (the pages of the last listing, in order), if it did."""


class Recorder:
    """Records the ``tools/call`` traffic of any number of sessions into one suite file."""

    def __init__(
        self,
        out: Path,
        *,
        suite_id: str,
        redact: bool = False,
        events: Sink | None = None,
        warn: Warn | None = None,
    ) -> None:
        self.out = out
        self.suite_id = suite_id
        self.redact = redact
        self.events = events
        self.warn: Warn = warn or (lambda _message: None)
        self.factory = EventFactory()
        self.mode = file_mode()
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.RLock()

    # --- what the proxies report ------------------------------------------------------------

    def open_session(self, session: str, label: str | None = None) -> None:
        """Start a session (a task of the suite); a session the recorder has seen is kept."""
        with self._lock:
            if session not in self._sessions:
                self._sessions[session] = _Session(label or "session")
                self._write()

    def from_client(self, session: str, message: Any) -> None:
        """A message the client sent, parsed (before it is forwarded)."""
        with self._lock:
            state = self._session(session)
            for obj in jsonrpc_objects(message):
                if is_request(obj):
                    self._client_request(state, obj)
                elif obj.get("method") == CANCELLED:
                    self._client_cancelled(state, obj.get("params"))

    def from_server(self, session: str, message: Any) -> list[RequestKey]:
        """A message the server sent, parsed (before it is forwarded). Returns the ids it
        answers that no request of the client is waiting for (the proxy logs them)."""
        unknown: list[RequestKey] = []
        with self._lock:
            state = self._session(session)
            for obj in jsonrpc_objects(message):
                if is_response(obj) and not self._server_response(state, obj):
                    unknown.append(request_key(obj.get("id")))
        return unknown

    def pending_requests(self, session: str) -> list[Any]:
        """The ids of the client's requests in ``session`` still waiting for an answer."""
        with self._lock:
            state = self._sessions.get(session)
            return [] if state is None else [value for _, value in state.pending]

    def fail_pending(self, session: str, reason: str) -> list[Any]:
        """Nothing will answer the session's open requests (the server died, the session
        ended): each open call becomes a recorded failure. Returns the ids that were open."""
        with self._lock:
            state = self._sessions.get(session)
            if state is None:
                return []
            ids = [value for _, value in state.pending]
            failed = 0
            for key in list(state.pending):
                _method, call = state.pending.pop(key)
                if call is not None:
                    error = {"unanswered": reason}
                    if call.cancelled:
                        error["cancelled"] = "the client cancelled the call"
                    self._complete(state, key[1], call, failure=error, write=False)
                    failed += 1
            if failed:
                self._write()  # once for all, before the caller forwards any of their errors
            return ids

    def close(self, reason: str = "the session ended before the server answered") -> None:
        """Every session ends: open calls are failures and the suite is written a last time."""
        with self._lock:
            for session in list(self._sessions):
                self.fail_pending(session, reason)
            self._write()

    # --- the messages -----------------------------------------------------------------------

    def _session(self, session: str) -> _Session:
        if session not in self._sessions:
            self.open_session(session)
        return self._sessions[session]

    def _client_request(self, state: _Session, obj: Mapping[str, Any]) -> None:
        method, params = obj["method"], obj.get("params")
        key = request_key(obj["id"])
        if key in state.pending:
            self.warn(f"the client reused the id {obj['id']!r} of a request still open")
        call = None
        if method == TOOLS_CALL:
            call = self._new_call(state, params)
        elif method == TOOLS_LIST:
            state.list_cursors[key] = isinstance(params, Mapping) and "cursor" in params
        state.pending[key] = (method, call)
        if state.label == "session":
            state.label = client_name(method, params) or state.label

    def _new_call(self, state: _Session, params: Any) -> _Call:
        params = params if isinstance(params, Mapping) else {}
        name = params.get("name")
        # A call without arguments is a call with none: recorded as {} and matched exactly.
        arguments = params.get("arguments")
        call = _Call(name if isinstance(name, str) and name else "?", arguments or {}, 0.0)
        call.started = time.perf_counter()
        state.calls.append(call)
        return call

    def _listed(self, state: _Session, key: RequestKey, result: Any) -> None:
        """A ``tools/list`` page: a listing without a cursor starts over, a later page extends
        it; the suite is rewritten so the recorded tool list is on disk too."""
        next_page = state.list_cursors.pop(key, False)
        tools = result.get("tools") if isinstance(result, Mapping) else None
        if not isinstance(tools, list):
            return
        state.tools = [*(state.tools or []), *tools] if next_page else list(tools)
        self._write()

    @staticmethod
    def _client_cancelled(state: _Session, params: Any) -> None:
        if isinstance(params, Mapping) and "requestId" in params:
            entry = state.pending.get(request_key(params["requestId"]))
            if entry is not None and entry[1] is not None:
                entry[1].cancelled = True

    def _server_response(self, state: _Session, obj: Mapping[str, Any]) -> bool:
        key = request_key(obj.get("id"))
        entry = state.pending.pop(key, None)
        if entry is None:
            return False
        method, call = entry
        if method == TOOLS_LIST:
            self._listed(state, key, obj.get("result"))
        if call is not None:
            if "error" in obj:
                self._complete(state, obj["id"], call, failure={"error": obj["error"]})
            else:
                self._complete(state, obj["id"], call, result=obj["result"])
        return True

    # --- a completed call ---------------------------------------------------------------------

    def _complete(
        self,
        state: _Session,
        request_id: Any,
        call: _Call,
        *,
        result: Any = None,
        failure: dict[str, Any] | None = None,
        write: bool = True,
    ) -> None:
        """Record the call's outcome, then (``write``) rewrite the suite before its answer is
        forwarded."""
        latency_ms = (time.perf_counter() - call.started) * 1000.0
        if failure is None:
            call.recorded = RecordedCall.answered(call.tool, call.args, self._redacted(result))
        else:
            self.warn(
                f"tools/call {call.tool!r} (id {request_id!r}) recorded as a failure: "
                f"{_describe(failure)}"
            )
            call.recorded = RecordedCall.failed(call.tool, call.args, self._redacted(failure))
        if write:
            self._write()
        self._emit(state, call, result, failure, latency_ms)

    def _redacted(self, value: Any) -> Any:
        return redact_result(value) if self.redact else value

    def _emit(
        self,
        state: _Session,
        call: _Call,
        result: Any,
        failure: dict[str, Any] | None,
        latency_ms: float,
    ) -> None:
        if self.events is None:
            return
        try:
            answered = failure is None and isinstance(result, Mapping)
            event = self.factory.tool_call(
                call.tool,
                classify_result(result) if answered else _classify_failure(failure),
                latency_ms=latency_ms if failure is None or "error" in failure else None,
                arguments=call.args if isinstance(call.args, Mapping) else None,
                output=result if answered else None,
                session_id=state.event_session,
            )
        except Exception as exc:  # analytics never breaks the recording
            self.warn(f"no tool_call event for {call.tool!r}: {exc}")
            return
        deliver(self.events, event)

    # --- the suite on disk --------------------------------------------------------------------

    def suite(self) -> dict[str, Any] | None:
        """The suite recorded so far (answered calls only), or ``None`` before any session."""
        with self._lock:
            if not self._sessions:
                return None
            tasks = [
                RecordedTask(
                    s.label, [c.recorded for c in s.calls if c.recorded is not None], s.tools
                )
                for s in self._sessions.values()
            ]
            return recorded_suite(tasks, suite_id=self.suite_id)

    def _write(self) -> None:
        suite = self.suite()
        if suite is not None:
            data = orjson.dumps(suite, option=orjson.OPT_INDENT_2) + b"\n"
            write_atomically(self.out, data, self.mode)


def write_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` in one step: readers see the old file or the new one. The
    new file keeps the old one's permissions, or gets ``mode`` (a temporary file is private)."""
    directory = path.parent if str(path.parent) else Path()
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            try:
                os.fchmod(handle.fileno(), path.stat().st_mode & 0o777)
            except FileNotFoundError:
                os.fchmod(handle.fileno(), mode)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def file_mode() -> int:
    """The permissions a new file gets here (0o666 less the umask). Reading the umask means
    setting it, so call this once, before any thread starts."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def redact_result(value: Any) -> Any:
    """A copy of a recorded response with PII stripped from its text content items and its
    structured content (``analytics.pii``); the shape is kept, so it still replays."""
    if not isinstance(value, Mapping):
        return value
    copy = dict(value)
    content = copy.get("content")
    if isinstance(content, list):
        copy["content"] = [_redacted_item(item) for item in content]
    if "structuredContent" in copy:
        copy["structuredContent"] = strip_pii_deep(copy["structuredContent"])
    if isinstance(copy.get("error"), Mapping):  # a JSON-RPC error recorded as a failure
        copy["error"] = strip_pii_deep(copy["error"])
    return copy


def _redacted_item(item: Any) -> Any:
    if isinstance(item, Mapping) and isinstance(item.get("text"), str):
        return {**item, "text": strip_pii(item["text"])}
    return item


def _describe(failure: Mapping[str, Any]) -> str:
    error = failure.get("error")
    if isinstance(error, Mapping):
        return f"JSON-RPC error {error.get('code')!r}: {error.get('message')!r}"
    return str(failure.get("unanswered", "no answer"))


def _classify_failure(failure: Mapping[str, Any] | None) -> Classification:
    """A call without a result, classified as ``instrument`` classifies the same case on the
    server side: refused parameters are ``validation``, another JSON-RPC error is what the tool
    raised (``unknown``), no answer at all is the server's failure (``server``)."""
    error = (failure or {}).get("error")
    if isinstance(error, Mapping):
        message = error.get("message")
        text = message if isinstance(message, str) else None
        if error.get("code") in (INVALID_PARAMS, METHOD_NOT_FOUND):
            return classify_pre_handler_failure(text)
        return classify_exception(text or "JSON-RPC error")
    return classify_server_failure(str((failure or {}).get("unanswered", "no answer")))
