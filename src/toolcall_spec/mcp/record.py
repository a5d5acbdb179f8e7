"""The recorder behind ``toolcall-spec record``: it watches the JSON-RPC messages a proxy
forwards (it never changes them) and turns each ``tools/call`` into a fixture entry.

Transport-free: the stdio and streamable HTTP proxies (``.stdio_proxy``, ``.http_proxy``) hand
every message they forward to ``Recorder.from_client`` / ``Recorder.from_server`` with the
session it belongs to, and tell it when a session or the server ends. The recorder

- numbers each session's ``tools/call`` requests in the order the client sent them (the order of
  ``from_client``: a proxy reports a request before it forwards it);
- completes a call when its response arrives: a result is recorded as received (an error exactly
  when its ``isError`` is the JSON boolean ``true``, ``rules.is_tool_error``); a JSON-RPC error,
  or no answer at all (the server died, the session ended first), is recorded as a failure and
  named in a warning;
- appends the completed call to the journal (``replay.journal``: one line, made durable) before
  the proxy forwards the response, so whatever the client has seen answered is on disk even if
  the proxy is then killed with SIGKILL, at a cost that does not grow with the session;
- at ``close``, writes the suite built from the journal's records (in send order) atomically and
  durably, and removes the journal;
- never stops the session it records: a recording failure (a full disk, an I/O error, a result
  JSON cannot hold) is a warning on stderr and a count (``failures``), the call stays queued for
  the next write when the disk was at fault, and forwarding goes on;
- keeps secrets out of what it records unless told ``keep_secrets`` (``.secrets``: a value
  under a secret's name, a key or credential spelled out in any string), in the arguments and the
  answer alike, so neither the journal nor the suite ever holds one;
- optionally strips PII from the recorded responses and emits one analytics ``tool_call`` event
  per call.

The suite is built by ``replay.journal.Recording`` and ``replay.promote.recorded_suite``, the
functions every recorder and every reader of a journal uses.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_spec import filesystem
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
from toolcall_spec.mcp.secrets import redact_secrets
from toolcall_spec.replay.journal import (
    FIRST_PAGE,
    NEXT_PAGE,
    JournalWriter,
    Recording,
    encode_line,
    header,
    journal_path,
    suite_bytes,
)
from toolcall_spec.replay.promote import RecordedCall

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
    return isinstance(obj.get("method"), str) and "id" in obj and is_id(obj["id"])


def is_response(obj: Mapping[str, Any]) -> bool:
    return "method" not in obj and "id" in obj and ("result" in obj or "error" in obj)


def is_id(value: Any) -> bool:
    """A JSON-RPC id: a string, a number or null. A message with another (an object, a list)
    is passed on and answered by the server, never tracked: it could not be looked up."""
    return value is None or isinstance(value, (str, int, float))


@dataclass
class _Call:
    number: int
    """The call's place among the session's calls, in the order the client sent them."""
    tool: str
    args: Any
    started: float
    cancelled: bool = False


@dataclass
class _Session:
    number: int
    label: str
    calls: int = 0
    """How many ``tools/call`` requests the client has sent in the session."""
    pending: dict[RequestKey, tuple[str, _Call | None]] = field(default_factory=dict)
    """Every request of the client still waiting for its answer: method, and the call it is."""
    event_session: str = field(default_factory=new_uuid)
    """The analytics ``session_id`` of this session's events."""
    list_cursors: dict[RequestKey, bool] = field(default_factory=dict)
    """Open ``tools/list`` requests: whether each asks for a later page (has a cursor)."""


class Recorder:
    """Records the ``tools/call`` traffic of any number of sessions into one suite file, through
    its journal (``SUITE.journal``, see ``replay.journal``)."""

    def __init__(
        self,
        out: Path,
        *,
        suite_id: str,
        redact: bool = False,
        keep_secrets: bool = False,
        timings: bool = False,
        events: Sink | None = None,
        warn: Warn | None = None,
        sync: bool = True,
    ) -> None:
        """``sync``: each answered call is made durable (``fdatasync``) before its answer is
        forwarded, so it survives an OS crash; otherwise it is written (it survives the
        proxy's death) and made durable at ``close``."""
        self.out = out
        self.journal = journal_path(out)
        self.suite_id = suite_id
        self.redact = redact
        self.keep_secrets = keep_secrets
        self.timings = timings
        """Keep each call's duration (``ms`` in the journal, ``input.mcp.durationsMs`` in the
        suite), which makes every recording of a session differ."""
        self.events = events
        self.warn: Warn = warn or (lambda _message: None)
        self.factory = EventFactory()
        self.mode = 0o666 & ~filesystem.current_umask()
        self.failures = 0
        """Recording failures so far (each warned about; a run of disk failures warned once)."""
        self.dropped = 0
        """Answered calls the suite lacks: their result could not be written at all."""
        self.unexpected = 0
        """Failures of the recorder itself (not of the disk): what they touched may be lost."""
        self.suite_written: bool | None = None
        """After ``close``: whether the suite file was written (``None`` when there was none)."""
        self._recording = Recording(suite_id)
        first = encode_line(header(suite_id))
        self._writer = JournalWriter(self.journal, first, mode=self.mode, sync=sync)
        self._failing = False
        self._closed = False
        self._changed = False
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.RLock()

    # --- what the proxies report ------------------------------------------------------------

    def open_session(self, session: str, label: str | None = None) -> None:
        """Start a session (a task of the suite); a session the recorder has seen is kept."""
        with self._guarded("a session"):
            if session not in self._sessions:
                self._new_session(session, label or "session")

    def from_client(self, session: str, message: Any) -> None:
        """A message the client sent, parsed (before it is forwarded)."""
        with self._guarded("a request"):
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
        with self._guarded("an answer"):
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
            with self._guarded("the open calls"):
                self._fail_open(state, reason)
            return ids

    def close(self, reason: str = "the session ended before the server answered") -> None:
        """Every session ends: open calls are failures, the suite is written from the journal's
        records (atomically, durably) and the journal removed. Never raises: a suite that
        cannot be written is a warning, and the journal stays (``suite_written`` is false)."""
        with self._lock:
            for session in list(self._sessions):
                self.fail_pending(session, reason)
            if self._closed and not self._changed:
                return
            self._closed, self._changed = True, False
            self.suite_written = False  # until it is
            with self._guarded("the suite at exit"):
                self._write_suite()

    # --- the messages -----------------------------------------------------------------------

    def _session(self, session: str) -> _Session:
        state = self._sessions.get(session)
        return state if state is not None else self._new_session(session, "session")

    def _new_session(self, session: str, label: str) -> _Session:
        state = _Session(len(self._sessions), label)
        self._sessions[session] = state
        self._keep({"session": state.number, "label": label}, "a session")
        return state

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
        self._name_session(state, method, params)

    @staticmethod
    def _new_call(state: _Session, params: Any) -> _Call:
        params = params if isinstance(params, Mapping) else {}
        name = params.get("name")
        # A call without arguments is a call with none: recorded as {} and matched exactly.
        arguments = params.get("arguments")
        tool = name if isinstance(name, str) and name else "?"
        call = _Call(state.calls, tool, arguments or {}, time.perf_counter())
        state.calls += 1
        return call

    def _listed(self, state: _Session, key: RequestKey, result: Any) -> None:
        """A ``tools/list`` page: a listing without a cursor starts over, a later page extends
        it; journaled, so the recorded tool list is on disk too."""
        next_page = state.list_cursors.pop(key, False)
        tools = result.get("tools") if isinstance(result, Mapping) else None
        if isinstance(tools, list):
            page = NEXT_PAGE if next_page else FIRST_PAGE
            self._keep({"session": state.number, "tools": tools, "page": page}, "a tool list")

    def _name_session(self, state: _Session, method: str, params: Any) -> None:
        """A session still unnamed takes the client's name from its request (``initialize``'s
        clientInfo, or the 2026-07-28 ``_meta`` stamp), journaled so a rebuilt suite has it."""
        name = client_name(method, params) if state.label == "session" else None
        if name is not None:
            state.label = name
            self._keep({"session": state.number, "label": name}, "a session's name")

    @staticmethod
    def _client_cancelled(state: _Session, params: Any) -> None:
        if isinstance(params, Mapping) and is_id(params.get("requestId", [])):
            entry = state.pending.get(request_key(params["requestId"]))
            if entry is not None and entry[1] is not None:
                entry[1].cancelled = True

    def _server_response(self, state: _Session, obj: Mapping[str, Any]) -> bool:
        if not is_id(obj.get("id")):
            return False
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

    def _fail_open(self, state: _Session, reason: str) -> None:
        failed = 0
        for key in list(state.pending):
            _method, call = state.pending.pop(key)
            if call is not None:
                error = {"unanswered": reason}
                if call.cancelled:
                    error["cancelled"] = "the client cancelled the call"
                self._complete(state, key[1], call, failure=error, durable=False)
                failed += 1
        if failed:  # once for all, before the caller forwards any of their errors
            self._flush("the open calls")

    # --- a completed call ---------------------------------------------------------------------

    def _complete(
        self,
        state: _Session,
        request_id: Any,
        call: _Call,
        *,
        result: Any = None,
        failure: dict[str, Any] | None = None,
        durable: bool = True,
    ) -> None:
        """Record the call's outcome: its journal line, durable (``durable``) before its answer
        is forwarded."""
        latency_ms = (time.perf_counter() - call.started) * 1000.0
        call.args = self._without_secrets(call.args)
        if failure is None:
            recorded = RecordedCall.answered(call.tool, call.args, self._redacted(result))
        else:
            self.warn(
                f"tools/call {call.tool!r} (id {request_id!r}) recorded as a failure: "
                f"{_describe(failure)}"
            )
            recorded = RecordedCall.failed(call.tool, call.args, self._redacted(failure))
        line = {
            "session": state.number,
            "call": call.number,
            "tool": recorded.tool,
            "args": recorded.args,
            "isError": recorded.is_error,
            "response": recorded.response,
        }
        if self.timings:
            line["ms"] = round(latency_ms, 3)
        if not self._keep(line, f"tools/call {call.tool!r} (id {request_id!r})", durable=durable):
            self.dropped += 1
        self._emit(state, call, result, failure, latency_ms)

    def _without_secrets(self, value: Any) -> Any:
        return value if self.keep_secrets else redact_secrets(value)

    def _redacted(self, value: Any) -> Any:
        value = self._without_secrets(value)
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

    # --- the journal and the suite --------------------------------------------------------------

    def _keep(self, record: dict[str, Any], what: str, *, durable: bool = True) -> bool:
        """Journal ``record`` (durably unless ``durable`` is false: a later flush does it);
        whether it could be encoded at all. A disk failure keeps it queued for the next write."""
        try:
            line = encode_line(record)
        except TypeError as exc:  # orjson.JSONEncodeError: too deep, or not JSON at all
            self._failed(
                f"{what} cannot be recorded (left out of the suite): {exc}", permanent=True
            )
            return False
        self._recording.apply(record)
        self._changed = True
        self._writer.queue(line)
        if durable:
            self._flush(what)
        return True

    def _flush(self, what: str) -> None:
        try:
            self._writer.flush()
        except OSError as exc:
            self._failed(
                f"cannot write {self.journal} ({what}): {exc.strerror or exc}; "
                f"{self._writer.queued} lines kept in memory for the next write"
            )
            return
        if self._failing:
            self._failing = False
            self.warn(f"the journal {self.journal} is written again: nothing queued is lost")

    def _failed(self, message: str, *, permanent: bool = False) -> None:
        """Count a recording failure and warn: always for a call left out, once per run of disk
        failures (a full disk fails every call until it is freed)."""
        self.failures += 1
        if permanent or not self._failing:
            self.warn(f"recording failure (the session goes on): {message}")
        if not permanent:
            self._failing = True

    @contextlib.contextmanager
    def _guarded(self, what: str) -> Iterator[None]:
        """The lock, and a recorder that never stops the session it records: whatever fails
        while it handles a message (a bug of its own included) is warned about and counted,
        and the proxy forwards the message as it would have."""
        with self._lock:
            try:
                yield
            except Exception as exc:
                self.failures += 1
                self.unexpected += 1
                self.warn(
                    f"recording failure (the session goes on): {what}: {type(exc).__name__}: {exc}"
                )

    @property
    def unwritten(self) -> int:
        """Journal lines a failed write keeps queued (0: the journal holds every record)."""
        with self._lock:
            return self._writer.queued

    def suite(self) -> dict[str, Any] | None:
        """The suite recorded so far (answered calls only, in send order), or ``None`` before
        any session: what the journal holds (and lines a disk failure still queues)."""
        with self._lock:
            return None if self._recording.empty else self._recording.suite()

    def _write_suite(self) -> None:
        suite = self.suite()
        try:
            self._writer.flush(sync=True)  # the journal whole and durable, whatever follows
        except OSError as exc:
            self._failed(f"cannot write {self.journal} at exit: {exc.strerror or exc}")
        if suite is None:
            self.suite_written = None
            self._remove_journal()
            return
        try:
            data = suite_bytes(suite)
            filesystem.write_file_atomically(self.out, data, mode=self.mode)
        except (OSError, ValueError, TypeError, RecursionError) as exc:
            self.failures += 1
            self.suite_written = False
            self._writer.close()
            keep = "keeps the calls it could write" if self._writer.queued else "keeps every call"
            self.warn(
                f"cannot write the suite {self.out}: {getattr(exc, 'strerror', None) or exc}; "
                f"the journal {self.journal} {keep}: serve-fixtures, replay and promote read it"
            )
            return
        self.suite_written = True
        self._remove_journal()

    def _remove_journal(self) -> None:
        try:
            self._writer.remove()
        except OSError as exc:  # the suite is whole: a journal left beside it is only clutter
            self.warn(f"cannot remove {self.journal}: {exc.strerror or exc}")


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
