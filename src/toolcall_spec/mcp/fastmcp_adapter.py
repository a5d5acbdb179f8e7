"""``instrument`` for standalone FastMCP (``fastmcp`` 4.x, the ``fastmcp`` extra), through FastMCP's
public middleware API only.

``instrument`` puts one ``fastmcp.server.middleware.Middleware`` first in the server's chain
(``FastMCP.middleware``), so its ``on_call_tool`` wraps every ``tools/call``: the other
middleware, the tool lookup, argument validation, the tool and FastMCP's conversion of its value.
FastMCP turns every failure below that point into an ``isError: true`` result for the client
(``Unknown tool: 'x'``, pydantic's text, ``Error calling tool 'x': <message>``); the middleware
sees the exception instead, and files it by who raised it:

=============================================  =======  ==========  ===========================
what happened                                  status   category    error_message
=============================================  =======  ==========  ===========================
the tool returned a result                     success  -           -
the tool returned ``isError: true``            error    tool_error  the result's first text
the tool raised (``ToolError`` too)            error    unknown     the exception's own message
unknown or disabled tool, invalid arguments    error    validation  FastMCP's text
the tool returned, FastMCP failed to convert   error    server      FastMCP's text
another middleware of the server raised        error    unknown     the exception's own message
=============================================  =======  ==========  ===========================

"The tool raised" means the exception passed through the tool function (its frame is in the
exception's traceback). FastMCP wraps an ordinary exception as ``ToolError("Error calling tool
'x': ...")`` with the original as ``__cause__``; the event takes the original's message, which
is what the server knows, PII-stripped (FastMCP sends the wrapper text, or only ``Error calling
tool 'x'`` with ``mask_error_details``). A tool FastMCP holds without a plain function (a proxy
or mounted server's tool) is judged by where the exception was raised: outside FastMCP's own
modules means by the tool.

``latency_ms`` is the time the call took below the middleware (lookup, validation, the tool,
conversion), absent when the call was refused before the tool ran. A tool that calls another
tool through ``ctx.fastmcp.call_tool`` runs the middleware again; only the outer call is counted.

**OpenTelemetry.** FastMCP traces each request with one SERVER span and, when a call raised
below it, writes its own ``error.type`` (``NotFoundError``, ``ValidationError``...) on that
span *after* every middleware has returned. With a sink that records ``tools/call`` spans
(``OpenTelemetrySink``, which says so with ``records_tool_call_spans = True``), the middleware
runs the call under FastMCP's public ``suppress_fastmcp_telemetry()``: FastMCP's span for the
request stays the one SERVER span, the sink names and annotates it by the event, and FastMCP
neither enriches it with its component attributes nor overwrites ``error.type``; spans FastMCP
would open inside the tool body are not recorded either.

A request whose params are malformed (no tool name) fails before ``on_call_tool`` and yields no
event, as on the ``mcp`` SDK.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from types import CodeType, TracebackType
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import DisabledError, NotFoundError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.telemetry import suppress_fastmcp_telemetry
from fastmcp.tools.base import ToolResult
from mcp_types import CallToolRequestParams, CallToolResult

from toolcall_spec.analytics.classify import (
    SUCCESS,
    Classification,
    classify_exception,
    classify_pre_handler_failure,
    classify_server_failure,
    exception_text,
)
from toolcall_spec.mcp.tool_calls import (
    CURRENT_CALL,
    Outcome,
    ToolCall,
    ToolCallAnalytics,
    classify_delivered,
    wire_result,
)

REFUSALS = (NotFoundError, DisabledError, ValidationError)
"""What FastMCP raises when it refuses a call before the tool runs (unknown or disabled tool,
arguments that fail the tool's input schema)."""

MAX_CAUSES = 16
"""How far down an exception's ``__cause__`` chain the tool's own exception is looked for."""


class ToolCallAnalyticsMiddleware(Middleware):
    """One ``tool_call`` event per ``tools/call`` (``toolcall_spec.mcp.instrument`` installs it)."""

    def __init__(self, analytics: FastMCPToolCallAnalytics) -> None:
        self.analytics = analytics

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        return await self.analytics.observe(context, call_next)


class FastMCPToolCallAnalytics(ToolCallAnalytics):
    """Observes every ``tools/call`` of a ``FastMCP`` server from one middleware."""

    def __init__(self, server: FastMCP, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._server = server
        self._own_span = bool(getattr(self.sink, "records_tool_call_spans", False))

    def install(self) -> None:
        if any(isinstance(m, ToolCallAnalyticsMiddleware) for m in self._server.middleware):
            raise ValueError("this server is already instrumented")
        # First in the chain: it sees the calls the other middleware refuse too.
        self._server.middleware.insert(0, ToolCallAnalyticsMiddleware(self))

    async def observe(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        outer = CURRENT_CALL.get()
        if outer is not None and outer.observer is self:  # a tool calling a tool: one call
            return await call_next(context)
        params = context.message
        call = ToolCall(str(params.name), observer=self)
        request_context = _request_context(context)
        token = CURRENT_CALL.set(call)
        call.start()
        try:
            with self._fastmcp_spans():
                result = await call_next(context)
        except BaseException as exc:
            call.stop(raised=exc)
            # A cancelled call is counted too, without awaiting anything more in it.
            codes = await self._tool_codes(call.tool) if isinstance(exc, Exception) else None
            self._emit_failure(call, exc, codes, params, request_context)
            raise
        finally:
            CURRENT_CALL.reset(token)
        call.stop(returned=result)
        self._emit_result(call, result, params, request_context)
        return result

    def _fastmcp_spans(self) -> AbstractContextManager[Any]:
        """FastMCP's own spans suppressed below the middleware when the sink records the span
        (see the module text), untouched otherwise."""
        return suppress_fastmcp_telemetry() if self._own_span else nullcontext()

    def _emit_result(self, call: ToolCall, result: Any, params: Any, request_context: Any) -> None:
        def outcome() -> Outcome:
            if not isinstance(result, ToolResult):
                return SUCCESS, None  # an extension's own answer (a task), not a tool result
            wire = _client_result(result, request_context)
            return classify_delivered(wire, capture_output=self.factory.capture_output), wire

        self.emit(call, outcome, arguments=params.arguments, request_context=request_context)

    def _emit_failure(
        self,
        call: ToolCall,
        error: BaseException,
        codes: frozenset[CodeType] | None,
        params: Any,
        request_context: Any,
    ) -> None:
        def outcome() -> Outcome:
            classification, ran = classify_fastmcp_failure(
                error, codes, capture_output=self.factory.capture_output
            )
            if not ran:  # read by emit after this returns: no latency for a refused call
                call.latency_ms = None
            return classification, None

        self.emit(call, outcome, arguments=params.arguments, request_context=request_context)

    async def _tool_codes(self, name: str) -> frozenset[CodeType] | None:
        """The code of the tool's function (and of what it wraps), ``None`` when FastMCP has no
        such tool or holds it without a plain function."""
        try:
            tool = await self._server.get_tool(name)
        except Exception:  # the lookup failed as the call did: judge without the code
            return None
        return function_codes(getattr(tool, "fn", None))


def classify_fastmcp_failure(
    error: BaseException, codes: frozenset[CodeType] | None, *, capture_output: bool
) -> tuple[Classification, bool]:
    """A call that raised below the middleware, and whether the tool ran (see the module text)."""
    refused = isinstance(error, REFUSALS) and _raised_in_fastmcp(error)
    own = None if refused else raised_exception(error, codes)
    if own is not None:
        return classify_exception(own), True
    text = exception_text(error)
    if refused:
        return classify_pre_handler_failure(text, capture_output=capture_output), False
    return classify_server_failure(text, capture_output=capture_output), True


def raised_exception(
    error: BaseException, codes: frozenset[CodeType] | None
) -> BaseException | None:
    """The exception a tool (or another middleware) raised, found in ``error``'s cause chain
    (FastMCP's wrapper first, the original as its cause), or ``None`` when FastMCP itself failed
    (e.g. converting the tool's return value).

    ``codes`` are the tool function's: the exception that passed through the tool is the tool's.
    Without them (a tool FastMCP holds without a plain function), the first exception in the
    chain that was raised outside FastMCP's own modules is taken as the tool's."""
    chain = list(_causes(error))
    if codes is not None:
        through_tool = next((cause for cause in chain if _passes_through(cause, codes)), None)
        if through_tool is not None:
            return through_tool
    if not _raised_in_fastmcp(error):
        return error  # not the tool, not FastMCP: a middleware of the server's raised it
    if codes is not None:
        return None
    return next((cause for cause in chain if not _raised_in_fastmcp(cause)), None)


def function_codes(function: Any) -> frozenset[CodeType] | None:
    """The code objects of ``function`` and of every function it wraps (``__wrapped__``)."""
    if function is None:
        return None
    codes: set[CodeType] = set()
    for candidate in (function, inspect.unwrap(function)):
        code = getattr(getattr(candidate, "__func__", candidate), "__code__", None)
        if isinstance(code, CodeType):
            codes.add(code)
    return frozenset(codes) or None


def _causes(error: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = error
    for _ in range(MAX_CAUSES):
        if current is None:
            return
        yield current
        current = current.__cause__


def _frames(traceback: TracebackType | None) -> Iterator[TracebackType]:
    while traceback is not None:
        yield traceback
        traceback = traceback.tb_next


def _passes_through(error: BaseException, codes: frozenset[CodeType]) -> bool:
    return any(entry.tb_frame.f_code in codes for entry in _frames(error.__traceback__))


def _raised_in_fastmcp(error: BaseException) -> bool:
    entries = list(_frames(error.__traceback__))
    if not entries:
        return False
    module = str(entries[-1].tb_frame.f_globals.get("__name__", ""))
    return module == "fastmcp" or module.startswith("fastmcp.")


def _request_context(context: MiddlewareContext[Any]) -> Any:
    """FastMCP's request context of the call (``request`` with the HTTP headers,
    ``protocol_version``), or ``None`` outside a client request."""
    fastmcp_context = context.fastmcp_context
    return fastmcp_context.request_context if fastmcp_context is not None else None


def _client_result(result: ToolResult, request_context: Any) -> dict[str, Any] | None:
    """What the client receives for ``result``, as FastMCP sends a ``ToolResult``."""
    converted = result.to_mcp_result()
    if isinstance(converted, tuple):
        content, structured = converted
        converted = CallToolResult(content=content, structured_content=structured)
    elif isinstance(converted, list):
        converted = CallToolResult(content=converted)
    protocol = str(getattr(request_context, "protocol_version", "") or "")
    return wire_result(converted, protocol)
