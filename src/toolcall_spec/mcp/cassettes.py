"""Cassettes of other MCP recorders into suites (``toolcall-spec promote --from FORMAT``).

A cassette is recorded MCP traffic: JSON-RPC requests paired with the responses the server sent.
Each format is read into the same exchanges ``(where, request, response)``, and every
``tools/call`` among them becomes a ``replay.promote.RecordedCall`` exactly as
``toolcall-spec record`` makes one (``mcp.record``): a result is recorded as received, a failure
exactly when its ``isError`` is the JSON boolean ``true``; a JSON-RPC error, or a request the
cassette holds no response for, is a failure too, named in a warning. The suite is then built by
``replay.promote.recorded_suite``, the one function every recorder uses.

Formats read (each tested on a cassette the peer itself recorded, tests/mcp_boundary):

- ``mcp-recorder`` (PyPI ``mcp-recorder`` 0.5): ``{"version": "1.x", "metadata": {...},
  "interactions": [{"type": "jsonrpc_request", "request": {...}, "response": {...}}, ...]}``;
- ``agent-vcr`` (PyPI ``agent-vcr`` 0.1): ``{"format_version": ..., "metadata": {...},
  "session": {"initialize_request": ..., "interactions": [{"request": ..., "response": ...}]}}``;
- ``mcp-vcr`` (PyPI ``mcp-vcr`` 0.2): a transcript of every message in arrival order, each with
  its direction, ``{"t": ms, "dir": "c2s"|"s2c", "payload": {...}}``: its NDJSON form (a
  ``{"_type": "meta", ...}`` line, then one message a line; read as the list of the lines' values)
  or its YAML form converted to JSON (``{"meta": {...}, "messages": [...]}``). A client request is
  paired with the next server response of the same id.
- ``mcp-cassette`` (PyPI ``mcp-cassette`` 0.4, Python 3.12+): ``{"format_version": 3,
  "transport": "stdio"|"http", ..., "messages": [{"seq": n, "sender": "client"|"server",
  "kind": "request"|"response"|"notification", "payload": {...}}, ...]}``, paired the same way;
- ``mcp-rec`` (PyPI ``mcp-rec`` 0.1): JSON lines ``{"ts": s, "dir":
  "client->server"|"server->client", "msg": {...}}`` (read as the list of the lines' values),
  paired the same way.

The recorded ``tools/list`` result, when the cassette has one, is kept in the task's input as
``input.mcp.tools``, which ``serve-fixtures`` lists.

This module reads JSON only; it needs neither the ``mcp`` SDK nor the peers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from toolcall_spec.json_paths import format_path
from toolcall_spec.mcp.record import INITIALIZE, TOOLS_CALL, TOOLS_LIST, client_name
from toolcall_spec.mcp.secrets import redact_secrets
from toolcall_spec.problems import Problem
from toolcall_spec.replay.promote import RecordedCall, RecordedTask, recorded_suite

__all__ = ["FORMATS", "CassetteImport", "detect_format", "import_cassette"]

Place = list[str | int]
Exchange = tuple[Place, Any, Any]
"""Where a request sits in the cassette, the request, and the response recorded for it."""


@dataclass(frozen=True, slots=True)
class CassetteImport:
    """The suite (``None`` when the document is not a cassette of the format), the problems
    that prevented it, and warnings about calls recorded as failures without a result."""

    suite: dict[str, Any] | None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def _mcp_recorder(document: Mapping[str, Any]) -> Iterator[Exchange]:
    interactions = document.get("interactions")
    for i, interaction in enumerate(interactions if isinstance(interactions, list) else []):
        if isinstance(interaction, Mapping) and interaction.get("type") == "jsonrpc_request":
            where: Place = ["interactions", i, "request"]
            yield where, interaction.get("request"), interaction.get("response")


def _agent_vcr(document: Mapping[str, Any]) -> Iterator[Exchange]:
    session = document.get("session")
    if not isinstance(session, Mapping):
        return
    request, response = session.get("initialize_request"), session.get("initialize_response")
    yield ["session", "initialize_request"], request, response
    interactions = session.get("interactions")
    for i, interaction in enumerate(interactions if isinstance(interactions, list) else []):
        if isinstance(interaction, Mapping):
            where: Place = ["session", "interactions", i, "request"]
            yield where, interaction.get("request"), interaction.get("response")


Message = tuple[Place, bool, Any]
"""A transcript's message: where it is, whether the client sent it, and its JSON-RPC payload."""


def _paired(messages: Iterator[Message]) -> Iterator[Exchange]:
    """The exchanges of a transcript that interleaves both directions: a server response settles
    the client request of its id still open (an id may be used again once answered); requests
    keep their order."""
    exchanges: list[list[Any]] = []
    open_requests: dict[str, list[Any]] = {}
    for where, from_client, payload in messages:
        if not isinstance(payload, Mapping) or payload.get("id") is None:
            continue  # a notification
        key = json.dumps(payload["id"], sort_keys=True)
        if from_client and "method" in payload:
            exchanges.append([where, payload, None])
            open_requests[key] = exchanges[-1]
        elif not from_client and "method" not in payload and key in open_requests:
            open_requests.pop(key)[2] = payload
    for where, request, response in exchanges:
        yield where, request, response


def _mcp_vcr(document: Any) -> Iterator[Exchange]:
    return _paired(
        ([*where, "payload"], message.get("dir") == "c2s", message.get("payload"))
        for where, message in _mcp_vcr_messages(document)
        if message.get("dir") in ("c2s", "s2c")
    )


def _mcp_cassette(document: Mapping[str, Any]) -> Iterator[Exchange]:
    messages = document["messages"]
    return _paired(
        (["messages", i, "payload"], message.get("sender") == "client", message.get("payload"))
        for i, message in enumerate(messages)
        if isinstance(message, Mapping) and message.get("sender") in ("client", "server")
    )


MCP_REC_DIRECTIONS: Final = ("client->server", "server->client")


def _mcp_rec(document: list[Any]) -> Iterator[Exchange]:
    return _paired(
        ([i, "msg"], line.get("dir") == MCP_REC_DIRECTIONS[0], line.get("msg"))
        for i, line in enumerate(document)
        if isinstance(line, Mapping) and line.get("dir") in MCP_REC_DIRECTIONS
    )


def _is_mcp_cassette(document: Any) -> bool:
    return (
        isinstance(document, Mapping)
        and isinstance(document.get("format_version"), int)
        and isinstance(document.get("messages"), list)
        and "transport" in document
    )


def _is_mcp_rec(document: Any) -> bool:
    first = document[0] if isinstance(document, list) and document else None
    return isinstance(first, Mapping) and first.get("dir") in MCP_REC_DIRECTIONS and "msg" in first


def _mcp_vcr_messages(document: Any) -> Iterator[tuple[Place, Mapping[str, Any]]]:
    """The messages of either form, with where each is: ``messages[i]`` (YAML as JSON) or
    ``[i]``, the value of line i + 1 (NDJSON)."""
    messages: Any = document
    at: Place = []
    if isinstance(document, Mapping):
        messages, at = document.get("messages"), ["messages"]
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(message, Mapping) and message.get("_type") != "meta":
            yield [*at, i], message


def _is_mcp_vcr(document: Any) -> bool:
    if isinstance(document, list):
        first = document[0] if document else None
        return isinstance(first, Mapping) and first.get("_type") == "meta"
    return (
        isinstance(document, Mapping)
        and isinstance(document.get("meta"), Mapping)
        and isinstance(document.get("messages"), list)
    )


def _is_mcp_recorder(document: Any) -> bool:
    if not isinstance(document, Mapping):
        return False
    version = document.get("version")
    return (
        isinstance(version, str)
        and version.startswith("1.")
        and isinstance(document.get("interactions"), list)
    )


def _is_agent_vcr(document: Any) -> bool:
    session = document.get("session") if isinstance(document, Mapping) else None
    return (
        isinstance(session, Mapping)
        and "format_version" in document
        and isinstance(session.get("interactions"), list)
    )


@dataclass(frozen=True, slots=True)
class _Format:
    recognizes: Callable[[Any], bool]
    exchanges: Callable[[Any], Iterator[Exchange]]
    shape: str


FORMATS: Final[Mapping[str, _Format]] = {
    "mcp-recorder": _Format(
        _is_mcp_recorder, _mcp_recorder, 'an object with "version" 1.x and "interactions"'
    ),
    "agent-vcr": _Format(
        _is_agent_vcr, _agent_vcr, 'an object with "format_version" and "session.interactions"'
    ),
    "mcp-vcr": _Format(
        _is_mcp_vcr,
        _mcp_vcr,
        'NDJSON lines from a "_type": "meta" line, or an object with "meta" and "messages"',
    ),
    "mcp-cassette": _Format(
        _is_mcp_cassette,
        _mcp_cassette,
        'an object with an integer "format_version", "transport" and "messages"',
    ),
    "mcp-rec": _Format(
        _is_mcp_rec, _mcp_rec, 'JSON lines of {"dir": "client->server"|"server->client", "msg"}'
    ),
}
"""Each cassette format read, by the name ``--from`` takes."""


def detect_format(document: Any) -> str | None:
    """The format whose shape ``document`` has, or ``None``."""
    return next((name for name, fmt in FORMATS.items() if fmt.recognizes(document)), None)


def import_cassette(
    document: Any,
    *,
    fmt: str | None = None,
    suite_id: str,
    label: str | None = None,
    keep_secrets: bool = False,
) -> CassetteImport:
    """The suite reproducing a cassette's ``tools/call`` traffic: one task (the cassette's
    session, named by ``label`` or the recorded client's name), one entry per call in order;
    its secrets redacted as ``record`` redacts them (``.secrets``) unless ``keep_secrets``."""
    name = fmt or detect_format(document)
    if name is None:
        shapes = "; ".join(f"{key}: {value.shape}" for key, value in FORMATS.items())
        return CassetteImport(
            None, [Problem(format_path([]), f"not a cassette of a known format ({shapes})")]
        )
    chosen = FORMATS.get(name)
    if chosen is None:
        return CassetteImport(None, [Problem(format_path([]), f"unknown cassette format {name!r}")])
    if not chosen.recognizes(document):
        return CassetteImport(
            None, [Problem(format_path([]), f"not a cassette of {name}: expected {chosen.shape}")]
        )
    reading = _Reading(keep_secrets=keep_secrets)
    for where, request, response in chosen.exchanges(document):
        reading.exchange(where, request, response)
    if reading.problems:
        return CassetteImport(None, reading.problems, reading.warnings)
    if not reading.calls:  # a suite without a call replays nothing: say so, never import it
        empty = f"the {name} cassette holds no tools/call: there is nothing to replay"
        return CassetteImport(None, [Problem(format_path([]), empty)], reading.warnings)
    task = RecordedTask(label or reading.client or "session", reading.calls, reading.tools)
    return CassetteImport(recorded_suite([task], suite_id=suite_id), [], reading.warnings)


@dataclass
class _Reading:
    calls: list[RecordedCall] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    client: str | None = None
    tools: list[Any] | None = None
    keep_secrets: bool = False

    def _kept(self, value: Any) -> Any:
        return value if self.keep_secrets else redact_secrets(value)

    def exchange(self, where: Place, request: Any, response: Any) -> None:
        if not isinstance(request, Mapping):
            return  # a lifecycle entry or a notification: no call
        method = request.get("method")
        if method == INITIALIZE:
            self.client = client_name(INITIALIZE, request.get("params")) or self.client
        elif method == TOOLS_LIST:
            result = response.get("result") if isinstance(response, Mapping) else None
            tools = result.get("tools") if isinstance(result, Mapping) else None
            if isinstance(tools, list):
                self.tools = tools
        elif method == TOOLS_CALL:
            self._call(where, request.get("params"), response)

    def _call(self, where: Place, params: Any, response: Any) -> None:
        name = params.get("name") if isinstance(params, Mapping) else None
        if not isinstance(name, str) or not name:
            self.problems.append(
                Problem(format_path([*where, "params", "name"]), "a tools/call names its tool")
            )
            return
        # A call without arguments is a call with none, as `record` records it: {} (exact).
        args = params.get("arguments") if isinstance(params, Mapping) else None
        args = self._kept({} if args is None else args)
        if isinstance(response, Mapping) and isinstance(response.get("result"), Mapping):
            self.calls.append(RecordedCall.answered(name, args, self._kept(response["result"])))
            return
        if isinstance(response, Mapping) and "error" in response:
            failure: dict[str, Any] = {"error": response["error"]}
            reason = "answered with a JSON-RPC error"
        else:
            failure = {"unanswered": "the cassette holds no response to this call"}
            reason = "the cassette holds no response"
        self.warnings.append(
            Problem(
                format_path(where),
                f"tools/call {name!r} recorded as a failure: {reason}",
                severity="warning",
            )
        )
        self.calls.append(RecordedCall.failed(name, args, self._kept(failure)))
