"""An MCP server that answers ``tools/call`` from one task's fixtures (``toolcall-spec
serve-fixtures``), by the rules of spec/replay.md.

The rules themselves are not here: ``replay.fixtures.FixtureServer`` selects and consumes entries
(first unconsumed match in declaration order, under ``argsMatch``), ``replay.events`` builds the
event payloads, and ``host.reference`` says what a served failure and a miss look like. This module
only puts them behind the ``mcp`` SDK's low-level ``Server``, so initialize, capability negotiation
and both transports (stdio, streamable HTTP) are the SDK's own:

- a served ``isError: true`` entry goes back as a ``CallToolResult`` with ``isError: true`` and the
  recorded content; it is never forwarded live, whatever ``onMiss`` says;
- a miss under ``onMiss: fail`` is a tool error naming the miss; under ``onMiss: live`` the call
  goes to the upstream server (``LiveUpstream``) and its answer goes back unchanged;
- ``tools/list`` answers the recorded tool list (``tasks[i].input.mcp.tools``) or, without one,
  one tool per tool name of the fixtures.

One ``FixtureReplay`` is one replay run: every connection of the process shares its entries, so a
consumed entry stays consumed for the process's life (over streamable HTTP too). Its ``report()``
is what ``--log`` writes: ``{"events": [...], "summary": {...}}``.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types as types
import orjson
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from toolcall_spec.clock import Clock, IdSource, elapsed_ms, random_id, utc_now
from toolcall_spec.host.reference import (
    CallResult,
    failure,
    live_result,
    served_failure,
    served_success,
)
from toolcall_spec.json_values import milliseconds
from toolcall_spec.mcp.secrets import redact_secrets, serve_matching
from toolcall_spec.processes import STOP_SIGNALS, StopSignals
from toolcall_spec.replay.events import (
    CALL_CANCELLED,
    FIXTURE_MISS,
    INJECTED_FAILURE,
    TOOL_CALLED,
    TOOL_RAISED,
    TOOL_RETURNED,
    EventLog,
    tool_called_payload,
    tool_returned_payload,
)
from toolcall_spec.replay.fixtures import FixtureServer, Miss
from toolcall_spec.replay.injection import Injection, selected

if TYPE_CHECKING:
    import socket
    from datetime import datetime

    from mcp.server.context import ServerRequestContext

__all__ = [
    "DEFAULT_AGENT_ID",
    "FixtureReplay",
    "LiveCall",
    "NoTaskError",
    "build_server",
    "derived_tools",
    "innermost",
    "jsonrpc_error",
    "live_upstream",
    "recorded_tools",
    "select_task",
    "serve_http",
    "serve_stdio",
]

DEFAULT_AGENT_ID: Final = "mcp-client"
"""The ``agentId`` of the tool events when the caller names none: serve-fixtures cannot know which
agent is behind the MCP client."""

SERVER_NAME: Final = "toolcall-spec-fixtures"

LIVE_ON_MISS: Final = "live"

LiveCall = Callable[[str, dict[str, Any]], Awaitable[types.CallToolResult]]
"""How a miss reaches the live server under ``onMiss: live``: tool name and arguments in, the
live server's result out (a JSON-RPC error raises ``MCPError``, passed on to the client)."""


class NoTaskError(ValueError):
    """The suite has no task to serve under the name asked for (or several and none was named)."""


def select_task(suite: Mapping[str, Any], task_id: str | None) -> Mapping[str, Any]:
    """The task named ``task_id``; with ``None``, the suite's only task."""
    tasks = [task for task in suite.get("tasks") or [] if isinstance(task, Mapping)]
    ids = [str(task.get("taskId")) for task in tasks]
    if task_id is None:
        if len(tasks) == 1:
            return tasks[0]
        raise NoTaskError(
            f"the suite has {len(tasks)} tasks; name one with --task ({', '.join(ids)})"
        )
    for task in tasks:
        if task.get("taskId") == task_id:
            return task
    raise NoTaskError(f"the suite has no task {task_id!r} (its tasks: {', '.join(ids)})")


def recorded_tools(task: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The tool list the recording kept (``input.mcp.tools``: MCP ``Tool`` objects as
    ``tools/list`` returned them), or ``None`` when the task has none."""
    task_input = task.get("input")
    mcp_part = task_input.get("mcp") if isinstance(task_input, Mapping) else None
    tools = mcp_part.get("tools") if isinstance(mcp_part, Mapping) else None
    if not isinstance(tools, list):
        return None
    return [dict(tool) for tool in tools if isinstance(tool, Mapping)]


def recorded_durations(task: Mapping[str, Any]) -> list[float | None] | None:
    """How long each entry's call took when recorded (``input.mcp.durationsMs``, in entry
    order, ``null`` where unknown: ``record --timings``), or ``None`` when the task has none."""
    task_input = task.get("input")
    mcp_part = task_input.get("mcp") if isinstance(task_input, Mapping) else None
    durations = mcp_part.get("durationsMs") if isinstance(mcp_part, Mapping) else None
    if not isinstance(durations, list):
        return None
    return [milliseconds(value) for value in durations]


def derived_tools(entries: Sequence[Any]) -> list[dict[str, Any]]:
    """One tool per distinct tool name of the fixture entries, in order of first appearance: what
    ``tools/list`` answers when the recording kept no tool list. Each has a description, which
    MCP leaves optional but clients that hand the tools to a model require (Inspect AI refuses a
    tool without one), and says it takes any arguments: Inspect AI reads a bare ``{"type":
    "object"}`` as taking none."""
    names = dict.fromkeys(
        entry["tool"]
        for entry in entries
        if isinstance(entry, Mapping) and isinstance(entry.get("tool"), str)
    )
    return [
        {
            "name": name,
            "description": f"{name}, answered from the suite's fixtures",
            "inputSchema": {"type": "object", "additionalProperties": True},
        }
        for name in names
    ]


def _on_miss(task: Mapping[str, Any]) -> str:
    fixtures = task.get("fixtures")
    value = fixtures.get("onMiss", "fail") if isinstance(fixtures, Mapping) else "fail"
    return LIVE_ON_MISS if value == LIVE_ON_MISS else "fail"  # `error`: fail's 0.1 spelling


@dataclass
class FixtureReplay:
    """One replay run of one task: answers calls by the replay rules and keeps the event log."""

    suite: Mapping[str, Any]
    task: Mapping[str, Any]
    live: LiveCall | None = None
    agent_id: str = DEFAULT_AGENT_ID
    clock: Clock = utc_now
    ids: IdSource = random_id
    injections: Sequence[Injection] = ()
    """``--inject``: calls answered with an injected tool error, or late."""
    pace: bool = False
    """``--pace recorded``: each served entry waits as long as its call took when recorded
    (``input.mcp.durationsMs``, ``record --timings``)."""
    log: EventLog = field(init=False)
    server: FixtureServer = field(init=False)
    calls: int = field(default=0, init=False)
    misses: int = field(default=0, init=False)
    live_calls: int = field(default=0, init=False)
    injected_errors: int = field(default=0, init=False)
    injected_delays: int = field(default=0, init=False)
    tool_calls: dict[str, int] = field(default_factory=dict, init=False)
    """Calls so far, by tool name: the ordinals ``--inject call=N`` counts."""
    durations: list[float | None] = field(default_factory=list, init=False)
    """Each entry's recorded duration (``recorded_durations``), read once."""

    def __post_init__(self) -> None:
        self.server = FixtureServer.for_task(self.task)
        self.durations = recorded_durations(self.task) or []
        self.log = EventLog(f"local/{self.ids()}", self.clock)

    @property
    def task_id(self) -> str:
        return str(self.task.get("taskId"))

    @property
    def on_miss(self) -> str:
        return _on_miss(self.task)

    def tools(self) -> list[dict[str, Any]]:
        """What ``tools/list`` answers: the recorded list, else tools derived from the entries."""
        recorded = recorded_tools(self.task)
        return recorded if recorded is not None else derived_tools(self.server.entries)

    async def call(self, tool: str, args: dict[str, Any]) -> types.CallToolResult:
        """Answer one ``tools/call`` and log it (``agent.tool-called``, then
        ``agent.tool-returned``). A JSON-RPC error of the live server is logged, then raised; so is
        the cancellation of a call the client gave up on (its timeout, during an injected delay)."""
        self.calls += 1
        call_id = f"{self.task_id}-{self.calls}"
        # The log keeps no secret of the call either (what record would not write).
        called = tool_called_payload(self.agent_id, tool, call_id, redact_secrets(args), hooks=True)
        called["transport"] = "mcp"
        self.log.append(TOOL_CALLED, called)
        start = self.clock()
        raised: BaseException | None = None
        try:
            answer, result = await self._injected_or_resolved(tool, args)
        except anyio.get_cancelled_exc_class():
            self._returned(tool, call_id, failure(CALL_CANCELLED), start)  # every call pairs
            raise
        except Exception as exc:  # the live server's JSON-RPC error (or failure), passed on
            raised = jsonrpc_error(exc)
            answer = failure(TOOL_RAISED, miss=True, live=True)
            result = _wire_result(answer)
        if answer.miss:
            self.misses += 1
        self._returned(tool, call_id, answer, start)
        if raised is not None:
            raise raised
        return result

    def _returned(self, tool: str, call_id: str, answer: CallResult, start: datetime) -> None:
        returned = tool_returned_payload(
            self.agent_id,
            tool,
            call_id,
            error=answer.error,
            outcome=answer.outcome,
            hooks=True,
            duration_ms=elapsed_ms(start, self.clock()),
        )
        self.log.append(TOOL_RETURNED, returned)

    async def _injected_or_resolved(
        self, tool: str, args: dict[str, Any]
    ) -> tuple[CallResult, types.CallToolResult]:
        """The answer by the replay rules, after the delay the injections give this call, or
        their tool error instead (which consumes no entry: the next call gets the recorded one)."""
        self.tool_calls[tool] = self.tool_calls.get(tool, 0) + 1
        delay_ms, error = selected(self.injections, tool, self.tool_calls[tool], self.calls)
        if delay_ms:
            self.injected_delays += 1
            await anyio.sleep(delay_ms / 1000)
        if error is None:
            return await self._resolve(tool, args)
        self.injected_errors += 1
        answer = failure(INJECTED_FAILURE, [{"type": "text", "text": error}])
        return answer, _wire_result(answer)

    async def _resolve(
        self, tool: str, args: dict[str, Any]
    ) -> tuple[CallResult, types.CallToolResult]:
        served = serve_matching(self.server, tool, args)
        if isinstance(served, Miss):
            return await self._answer_miss(tool, args)
        if self.pace:
            await anyio.sleep(self._recorded_ms(served.index) / 1000)
        answer = served_failure(served) if served.is_error else served_success(served)
        return answer, _wire_result(answer, served.response if "response" in served.entry else None)

    def _recorded_ms(self, index: int) -> float:
        duration = self.durations[index] if index < len(self.durations) else None
        return duration if duration is not None else 0.0

    async def _answer_miss(
        self, tool: str, args: dict[str, Any]
    ) -> tuple[CallResult, types.CallToolResult]:
        if self.on_miss != LIVE_ON_MISS or self.live is None:
            text = (
                f"fixture miss: no unconsumed fixture entry of task {self.task_id!r} matches "
                f"this call of {tool!r} (onMiss: {self.on_miss})"
            )
            answer = failure(FIXTURE_MISS, [{"type": "text", "text": text}], miss=True)
            return answer, _wire_result(answer)
        self.live_calls += 1
        result = await self.live(tool, args)
        wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return replace(live_result(wire), miss=True), result

    def summary(self) -> dict[str, Any]:
        """The run's figures: calls, misses (``fixtureMissCount``), live calls, the calls
        ``--inject`` answered with an error or delayed (apart from recorded failures and misses),
        and the fixture entries served (in serving order) and left unconsumed (by index in
        ``toolResponses``)."""
        return {
            "suiteId": self.suite.get("suiteId"),
            "suiteVersion": self.suite.get("version"),
            "taskId": self.task_id,
            "onMiss": self.on_miss,
            "callCount": self.calls,
            "fixtureMissCount": self.misses,
            "liveCallCount": self.live_calls,
            "injectedErrorCount": self.injected_errors,
            "injectedDelayCount": self.injected_delays,
            "injections": [injection.spec() for injection in self.injections],
            "servedEntries": list(self.server.served),
            "unconsumedEntries": self.server.unconsumed(),
        }

    def report(self) -> dict[str, Any]:
        """``{"events": [...], "summary": {...}}``, the shape ``toolcall-spec replay`` prints."""
        return {"events": copy.deepcopy(self.log.events), "summary": self.summary()}


def innermost(exc: BaseException) -> BaseException:
    """The first exception inside the task-group exception groups that may wrap it: what went
    wrong."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, (list, tuple)) and inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def jsonrpc_error(exc: BaseException) -> MCPError:
    """What the client gets when the live server did not answer with a result: its own JSON-RPC
    error unchanged, or an internal error naming what went wrong."""
    leaf = innermost(exc)
    if isinstance(leaf, MCPError):
        return leaf
    return MCPError(
        code=types.INTERNAL_ERROR,
        message=f"the live server failed: {type(leaf).__name__}: {leaf}",
    )


_PASSED_ON: Final = ("structuredContent", "_meta")
"""Members of a recorded MCP-shaped response that go back to the client beside its content."""


def _wire_result(answer: CallResult, response: Any = None) -> types.CallToolResult:
    """The ``CallToolResult`` the client receives. ``isError`` is the entry's own flag (an
    ``isError`` inside a success's response changes nothing: spec/replay.md)."""
    wire: dict[str, Any] = {"content": answer.content, "isError": answer.is_error}
    if isinstance(response, Mapping) and isinstance(response.get("content"), list):
        wire.update({key: response[key] for key in _PASSED_ON if key in response})
    try:
        return types.CallToolResult.model_validate(wire)
    except ValidationError:
        # A recorded response that is not valid MCP content: the client gets its JSON as text.
        text = orjson.dumps(answer.content, option=orjson.OPT_SORT_KEYS).decode()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=answer.is_error
        )


def build_server(replay: FixtureReplay) -> Server[Any]:
    """The low-level MCP server answering ``tools/list`` and ``tools/call`` from ``replay``."""
    tools = [types.Tool.model_validate(tool) for tool in replay.tools()]
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await replay.call(params.name, dict(params.arguments or {}))

    return Server(
        SERVER_NAME,
        instructions=f"Recorded answers of task {replay.task_id!r}, served by toolcall-spec.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )


# -- the live server behind onMiss: live --------------------------------------------------------


@asynccontextmanager
async def live_upstream(
    command: Sequence[str] | None = None, url: str | None = None
) -> AsyncIterator[LiveCall | None]:
    """A connected MCP client to the live server (a stdio command, or a streamable HTTP URL),
    as a ``LiveCall``; ``None`` when neither is given."""
    if not command and url is None:
        yield None
        return
    import mcp  # noqa: PLC0415  (the SDK's client: only with a live server)
    from mcp.client.stdio import StdioServerParameters  # noqa: PLC0415

    target: Any = url
    if command:
        # The whole environment, as a shell would pass it (the SDK's default keeps only a few).
        target = StdioServerParameters(
            command=command[0], args=list(command[1:]), env=dict(os.environ)
        )
    async with mcp.Client(target) as client:

        async def call(tool: str, args: dict[str, Any]) -> types.CallToolResult:
            return await client.call_tool(tool, args)

        yield call


# -- running ------------------------------------------------------------------------------------


async def serve_stdio(
    server: Server[Any], *, on_stop: Callable[[int], int] = lambda status: status
) -> int:
    """Serve one client over stdin/stdout until it closes stdin, or SIGTERM/SIGINT arrives; the
    exit status by the CLI contract (0, or 130 after Ctrl-C).

    The SDK reads stdin in a worker thread that no cancellation reaches, so after a signal the
    process may be unable to leave by itself: if it has not ended ``STOP_GRACE_SECONDS`` later,
    ``on_stop`` (the caller's end of session, e.g. writing the log) runs with that status and the
    process exits with the status it returns (the caller may have its own, e.g. for misses)."""
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    stops = StopSignals()
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, group.cancel_scope, on_stop, stops)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()
    return stops.exit_status()


STOP_GRACE_SECONDS: Final = 1.0


async def _stop_on_signal(
    scope: anyio.CancelScope, on_stop: Callable[[int], int], stops: StopSignals
) -> None:
    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async for signum in signals:
            stops.note(signum)
            scope.cancel()
            watchdog = threading.Timer(STOP_GRACE_SECONDS, _stop_now, (on_stop, stops))
            watchdog.daemon = True
            watchdog.start()
            return


def _stop_now(on_stop: Callable[[int], int], stops: StopSignals) -> None:
    status = stops.exit_status()
    try:
        status = on_stop(status)
    finally:
        os._exit(status)  # the session ended on a signal: stdin may block forever


async def serve_http(
    server: Server[Any],
    sock: socket.socket,
    *,
    path: str = "/mcp",
    ready: Callable[[], None] = lambda: None,
) -> int:
    """Serve streamable HTTP on an already bound loopback socket until SIGTERM/SIGINT (uvicorn
    handles them and returns); the exit status by the CLI contract (0, or 130 after Ctrl-C).
    The SDK's DNS-rebinding guard stays on for loopback hosts; ``ready`` runs once a signal can
    no longer kill the process."""
    import uvicorn  # noqa: PLC0415

    host = sock.getsockname()[0]
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    # uvicorn stops gracefully on SIGTERM/SIGINT, then raises the signal again for the handler it
    # found: StopSignals notes it, so the caller writes the session's log and exits by the contract.
    uvicorn_server = uvicorn.Server(config)

    def stop() -> None:
        uvicorn_server.should_exit = True

    with StopSignals(stop) as stops:
        ready()
        await uvicorn_server.serve(sockets=[sock])
    return stops.exit_status()
