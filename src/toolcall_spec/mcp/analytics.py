"""One ``tool_call`` event per tool call of a real MCP server (``mcp`` 2.3, the ``mcp`` extra).

``instrument(server, sink)`` observes an ``mcp.server.mcpserver.MCPServer`` (or a low-level
``mcp.server.lowlevel.Server``) at two places, because neither sees everything alone:

- the ``tools/call`` request handler sees every call, including the ones refused before any tool
  runs (unknown tool, invalid arguments), and the result the handler produced;
- each tool function (wrapped on its first call) is the only place that sees the exception a tool
  raised with its own message (the client is only shown ``Error executing tool <name>``) and how
  long the tool itself ran.

A context variable carries one record per call from the first place to the second, and the
handler wrapper emits exactly one event when the call ends:

=====================================  =======  ==========  =================================
what happened                          status   category    error_message
=====================================  =======  ==========  =================================
the tool returned a result             success  -           -
the tool returned ``isError: true``    error    tool_error  the result's first text
the tool raised (``ToolError`` too)    error    unknown     the exception's own message
refused before the tool ran            error    validation  the result's text (pydantic's)
the tool returned, its output failed   error    server      the result's text
=====================================  =======  ==========  =================================

``latency_ms`` is the tool function's own run time, absent when it never ran. Messages are
PII-stripped and clamped (``toolcall_spec.analytics.classify``).

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

**Sessions.** By default a call that came over the streamable HTTP transport is in the session of
its ``Mcp-Session-Id`` header (``derive_session_id``); other calls share one id per server.

Caveats: the ``MCPServer`` internals this relies on are private (``_lowlevel_server``,
``_tool_manager``), so an ``mcp`` upgrade may need this module to follow; a request whose params
are malformed (no tool name) is answered with a JSON-RPC error before any handler and yields no
event; sinks are called synchronously on the event loop, so a sink should be quick.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from toolcall_spec.analytics.classify import (
    SUCCESS,
    Classification,
    classify_exception,
    classify_pre_handler_failure,
    classify_result,
    classify_server_failure,
    exception_text,
    first_text,
)
from toolcall_spec.analytics.events import EventFactory
from toolcall_spec.analytics.sinks import Sink, deliver, logger
from toolcall_spec.clock import Clock, new_uuid, utc_now
from toolcall_spec.rules import is_tool_error

TOOLS_CALL = "tools/call"
_OBSERVED = "__toolcall_spec_observed__"
"""Attribute set on every function this module wraps, so nothing is wrapped twice."""

Handler = Callable[[Any, Any], Awaitable[Any]]


@dataclass
class _Call:
    """What is known about one tool call while it runs."""

    tool: str
    ran: bool = False
    started: float = 0.0
    latency_ms: float | None = None
    raised: BaseException | None = None
    returned: Any = None

    def start(self) -> None:
        self.ran = True
        self.started = time.perf_counter()

    def stop(self, *, raised: BaseException | None = None, returned: Any = None) -> None:
        self.latency_ms = (time.perf_counter() - self.started) * 1000.0
        self.raised = raised
        self.returned = returned


_CURRENT: ContextVar[_Call | None] = ContextVar("toolcall_spec_tool_call", default=None)


class ToolCallAnalytics:
    """The observer ``instrument`` installs; ``events_emitted`` counts what it sent."""

    def __init__(
        self,
        server: Any,
        sink: Sink,
        factory: EventFactory,
        session_of: Callable[[Any], str] | None = None,
    ) -> None:
        self.sink = sink
        self.factory = factory
        self.session_of = session_of
        self.events_emitted = 0
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
            call = _Call(str(params.name))
            token = _CURRENT.set(call)
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
                _CURRENT.reset(token)
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
        self, call: _Call, ctx: Any, params: Any, *, returned: Any = None, raised: Any = None
    ) -> None:
        try:
            wire = None if raised is not None else _wire_result(returned, ctx)
            classification = self._classify(call, wire, raised)
            arguments = params.arguments if isinstance(params.arguments, Mapping) else None
            event = self.factory.tool_call(
                call.tool,
                classification,
                latency_ms=call.latency_ms,
                arguments=arguments,
                output=wire if call.raised is None else None,
                session_id=self._session_id(ctx),
            )
        except Exception:  # analytics must never break the call it observes
            logger.exception("could not build the tool_call event for %r", call.tool)
            return
        if deliver(self.sink, event):
            self.events_emitted += 1

    def _classify(
        self, call: _Call, wire: dict[str, Any] | None, raised: BaseException | None
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
            return classify_server_failure("the handler returned an invalid result")
        if not call.ran:
            if is_tool_error(wire):
                return classify_pre_handler_failure(first_text(wire), capture_output=capture)
            return SUCCESS
        if not is_tool_error(wire):
            return SUCCESS
        if self._tools is None or _reports_error(call.returned):
            return classify_result(wire, capture_output=capture)
        return classify_server_failure(first_text(wire), capture_output=capture)

    def _session_id(self, ctx: Any) -> str:
        return self.session_of(ctx) if self.session_of is not None else self.factory.session_id


MCP_SESSION_ID_HEADER = "mcp-session-id"


def transport_session_key(ctx: Any) -> str | None:
    """The ``Mcp-Session-Id`` the client sent with this request over the streamable HTTP
    transport, or ``None`` (stdio, in-process, stateless HTTP)."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    value = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
    return value if isinstance(value, str) and value else None


def _per_transport_session(fallback: str) -> Callable[[Any], str]:
    def session_of(ctx: Any) -> str:
        key = transport_session_key(ctx)
        return derive_session_id(key) if key is not None else fallback

    return session_of


def derive_session_id(key: str) -> str:
    """A ``session_id`` derived from a transport session key: ``ses_`` and 21 characters of the
    key's SHA-256 in base64url, as Yavio's SDK derives it (``packages/sdk/src/core/ids.ts``), so
    every server instance maps one client session to one id without shared state, and the raw
    transport id (a bearer-like secret for that session) never reaches analytics."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(key.encode("utf-8")).digest()).decode()
    return f"ses_{digest[:21]}"


def instrument(
    server: Any,
    sink: Sink,
    *,
    capture_input: bool = True,
    capture_output: bool = True,
    clock: Clock = utc_now,
    new_id: Callable[[], str] = new_uuid,
    session_id: str | Callable[[Any], str] | None = None,
) -> ToolCallAnalytics:
    """Make every tool call of ``server`` yield exactly one ``tool_call`` event to ``sink``.

    ``server`` is an ``MCPServer`` or a low-level ``Server``; call this once, before serving
    (tools added later are observed too). ``capture_input`` and ``capture_output`` control
    ``input_*`` and ``output_content``; with output capture off, an error message taken from the
    result is dropped, while ``status`` and ``error_category`` stay.

    ``session_id`` is the events' session. By default, a call that came over the streamable HTTP
    transport with an ``Mcp-Session-Id`` gets an id derived from it (``derive_session_id``),
    so each client session is its own analytics session; any other call gets one new id for this
    server. A string fixes the id for every call; a callable gets the SDK's request context and
    returns the session of that call."""
    factory = EventFactory(
        session_id=session_id if isinstance(session_id, str) else new_id(),
        capture_input=capture_input,
        capture_output=capture_output,
        clock=clock,
        new_id=new_id,
    )
    session_of: Callable[[Any], str] | None = None
    if callable(session_id):
        session_of = session_id
    elif session_id is None:
        session_of = _per_transport_session(factory.session_id)
    analytics = ToolCallAnalytics(server, sink, factory, session_of)
    analytics.install()
    return analytics


def _lowlevel_server(server: Any) -> Any:
    lowlevel = getattr(server, "_lowlevel_server", server)
    if not callable(getattr(lowlevel, "get_request_handler", None)):
        raise TypeError(
            f"cannot instrument {type(server).__name__}: expected an mcp MCPServer or a "
            "low-level mcp Server"
        )
    return lowlevel


def _observed_function(name: str, function: Callable[..., Any], *, is_async: bool) -> Any:
    """``function`` reporting its run to the current call's record, when the record is for this
    tool and not yet claimed (a tool that calls another tool only reports the outer call)."""

    def claim() -> _Call | None:
        call = _CURRENT.get()
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


def _wire_result(returned: Any, ctx: Any) -> dict[str, Any] | None:
    """The result as the SDK sends it for the request's protocol version (coercions included),
    or ``None`` when the SDK would refuse it as invalid."""
    from mcp_types import methods  # noqa: PLC0415 - the mcp extra is imported only when used

    if isinstance(returned, BaseModel):
        dumped = returned.model_dump(by_alias=True, mode="json", exclude_none=True)
    elif isinstance(returned, Mapping):
        dumped = dict(returned)
    elif returned is None:
        dumped = {}
    else:
        return None
    try:
        wire: dict[str, Any] = methods.serialize_server_result(
            TOOLS_CALL, str(getattr(ctx, "protocol_version", "")), dumped
        )
    except ValidationError:
        return None
    except (ValueError, KeyError):  # a protocol version this SDK does not describe
        return dumped
    return wire


def _reports_error(value: Any) -> bool:
    """Whether a tool function's return value is itself an error result. ``MCPServer`` sends a
    returned ``CallToolResult`` as it is; any other value (a dict included) is data."""
    return isinstance(value, BaseModel) and is_tool_error(
        value.model_dump(by_alias=True, mode="json")
    )
