"""``instrument`` for servers built on the ``mcp`` SDK (2.3): ``MCPServer`` and the low-level
``Server``.

The adapter observes the server at two places, because neither sees everything alone:

- the ``tools/call`` request handler sees every call, including the ones refused before any tool
  runs (unknown tool, invalid arguments), and the result the handler produced;
- each tool function (wrapped on its first call) is the only place that sees the exception a tool
  raised with its own message (the client is only shown ``Error executing tool <name>``) and how
  long the tool itself ran.

The call's record (``tool_calls.CURRENT_CALL``) carries what the second place saw to the first,
which emits exactly one event when the call ends (``ToolCallAnalytics.emit``).

**Which value the rule classifies: what the client receives.** The rule (``isError`` is the JSON
boolean ``true``) is applied to the result as the SDK puts it on the wire, because the point is
to count the errors the model sees. The SDK coerces on the way out, so this differs from the
handler's return value in two known cases, both tested:

- a low-level handler that returns ``{"isError": "true"}`` sends ``isError: true``: an error
  (``tool_error``), although ``classify_result`` on the returned mapping says success;
- an ``MCPServer`` tool that returns a plain dict ``{"content": [], "isError": true}`` sends it as
  data with ``isError: false``: a success. Return ``CallToolResult(..., is_error=True)`` to report
  a tool error.

A result the SDK refuses to send (e.g. a 2026-protocol result without ``resultType``) reaches the
client as a JSON-RPC error; its event says ``server``.

Caveats: the ``MCPServer`` internals this relies on are private (``_lowlevel_server``,
``_tool_manager``), so an ``mcp`` upgrade may need this module to follow (``nox -s mcp_matrix``
runs the tests against each supported version); a request whose params are malformed (no tool
name) is answered with a JSON-RPC error before any handler and yields no event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from toolcall_spec.analytics.classify import (
    SUCCESS,
    Classification,
    classify_exception,
    classify_pre_handler_failure,
    classify_server_failure,
    exception_text,
    first_text,
)
from toolcall_spec.mcp.tool_calls import (
    CURRENT_CALL,
    TOOLS_CALL,
    Outcome,
    ToolCall,
    ToolCallAnalytics,
    classify_delivered,
    wire_result,
)
from toolcall_spec.rules import is_tool_error

_OBSERVED = "__toolcall_spec_observed__"
"""Attribute set on every function this module wraps, so nothing is wrapped twice."""

Handler = Callable[[Any, Any], Awaitable[Any]]


def is_sdk_server(server: Any) -> bool:
    """Whether ``server`` is an ``MCPServer`` or a low-level ``Server`` (duck-typed: both expose
    the low-level request handler table, an ``MCPServer`` through ``_lowlevel_server``)."""
    return callable(getattr(_lowlevel_server(server), "get_request_handler", None))


class SdkToolCallAnalytics(ToolCallAnalytics):
    """Observes the ``tools/call`` handler and the tool functions of an ``mcp`` SDK server."""

    def __init__(self, server: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lowlevel = _lowlevel_server(server)
        self._tools = getattr(server, "_tool_manager", None)

    def install(self) -> None:
        entry = self._lowlevel.get_request_handler(TOOLS_CALL)
        if entry is None:
            raise ValueError("the server has no tools/call handler to observe")
        if getattr(entry.handler, _OBSERVED, False):
            raise ValueError("this server is already instrumented")
        self._lowlevel.add_request_handler(
            TOOLS_CALL, entry.params_type, self._observe(entry.handler)
        )

    # --- the tools/call handler -------------------------------------------------------------

    def _observe(self, handler: Handler) -> Handler:
        async def observed(ctx: Any, params: Any) -> Any:
            call = ToolCall(str(params.name))
            token = CURRENT_CALL.set(call)
            try:
                if self._tools is None:
                    call.start()  # a low-level server: the handler is the tool
                else:
                    self._observe_tool(call.tool)
                returned = await handler(ctx, params)
            except BaseException as exc:
                if self._tools is None:
                    call.stop(raised=exc)
                self._emit(call, ctx, params, raised=exc)
                raise
            finally:
                CURRENT_CALL.reset(token)
            if self._tools is None:
                call.stop(returned=returned)
            self._emit(call, ctx, params, returned=returned)
            return returned

        setattr(observed, _OBSERVED, True)
        return observed

    # --- the tool functions -----------------------------------------------------------------

    def _observe_tool(self, name: str) -> None:
        """Wrap the tool's function on its first call; an unknown tool has nothing to wrap."""
        tool = self._tools.get_tool(name) if self._tools is not None else None
        if tool is not None and not getattr(tool.fn, _OBSERVED, False):
            tool.fn = _observed_function(name, tool.fn, is_async=bool(tool.is_async))

    # --- the event ----------------------------------------------------------------------------

    def _emit(
        self, call: ToolCall, ctx: Any, params: Any, *, returned: Any = None, raised: Any = None
    ) -> None:
        def outcome() -> Outcome:
            protocol = str(getattr(ctx, "protocol_version", ""))
            wire = None if raised is not None else wire_result(returned, protocol)
            return self._classify(call, wire, raised), wire if call.raised is None else None

        self.emit(call, outcome, arguments=params.arguments, request_context=ctx)

    def _classify(
        self, call: ToolCall, wire: dict[str, Any] | None, raised: BaseException | None
    ) -> Classification:
        capture = self.factory.capture_output
        if call.raised is not None:
            return classify_exception(call.raised)
        if raised is not None:  # not from the tool: the SDK refused the call or its result
            text = exception_text(raised)
            if call.ran:
                return classify_server_failure(text)
            return classify_pre_handler_failure(text)
        if wire is None:
            return classify_delivered(wire, capture_output=capture)
        if not call.ran:
            if is_tool_error(wire):
                return classify_pre_handler_failure(first_text(wire), capture_output=capture)
            return SUCCESS
        if self._tools is None or not is_tool_error(wire) or _reports_error(call.returned):
            return classify_delivered(wire, capture_output=capture)
        # MCPServer made this error result itself: the tool's return value failed conversion.
        return classify_server_failure(first_text(wire), capture_output=capture)


def _lowlevel_server(server: Any) -> Any:
    return getattr(server, "_lowlevel_server", server)


def _observed_function(name: str, function: Callable[..., Any], *, is_async: bool) -> Any:
    """``function`` reporting its run to the current call's record, when the record is for this
    tool and not yet claimed (a tool that calls another tool only reports the outer call)."""

    def claim() -> ToolCall | None:
        call = CURRENT_CALL.get()
        if call is None or call.ran or call.tool != name:
            return None
        call.start()
        return call

    if is_async:

        async def observed_async(**kwargs: Any) -> Any:
            call = claim()
            if call is None:
                return await function(**kwargs)
            try:
                value = await function(**kwargs)
            except BaseException as exc:
                call.stop(raised=exc)
                raise
            call.stop(returned=value)
            return value

        setattr(observed_async, _OBSERVED, True)
        return observed_async

    def observed_sync(**kwargs: Any) -> Any:
        # Sync tools run on a worker thread with a copy of the context: the record is shared.
        call = claim()
        if call is None:
            return function(**kwargs)
        try:
            value = function(**kwargs)
        except BaseException as exc:
            call.stop(raised=exc)
            raise
        call.stop(returned=value)
        return value

    setattr(observed_sync, _OBSERVED, True)
    return observed_sync


def _reports_error(value: Any) -> bool:
    """Whether a tool function's return value is itself an error result. ``MCPServer`` sends a
    returned ``CallToolResult`` as it is; any other value (a dict included) is data."""
    return isinstance(value, BaseModel) and is_tool_error(
        value.model_dump(by_alias=True, mode="json")
    )
