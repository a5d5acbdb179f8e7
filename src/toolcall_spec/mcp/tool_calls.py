"""The core every framework adapter of ``instrument`` shares: the record of one tool call while it
runs, the sessions, the result as the client receives it, and the one place an event is built and
delivered. The adapters (``sdk_adapter`` for the ``mcp`` SDK, ``fastmcp_adapter`` for standalone
FastMCP) only decide *what happened*, with ``toolcall_spec.analytics.classify``; how that becomes
an event is decided here, once.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from toolcall_spec.analytics.classify import (
    SUCCESS,
    Classification,
    classify_result,
    classify_server_failure,
)
from toolcall_spec.analytics.events import EventFactory
from toolcall_spec.analytics.sinks import Sink, deliver, logger
from toolcall_spec.rules import is_tool_error

TOOLS_CALL = "tools/call"
MCP_SESSION_ID_HEADER = "mcp-session-id"


@dataclass
class ToolCall:
    """What is known about one tool call while it runs."""

    tool: str
    observer: object = None
    """The observer that opened the record: a call it sees inside its own call is nested."""
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


Outcome = tuple[Classification, Mapping[str, Any] | None]
"""How a call ended (its classification) and the result the client received, when it received
one (captured as ``output_content`` when the factory captures output)."""

CURRENT_CALL: ContextVar[ToolCall | None] = ContextVar("toolcall_spec_tool_call", default=None)
"""The call being observed in this context: how an inner place (a tool function, a nested
``call_tool``) finds the record the outer place opened, so a call is counted once."""


class ToolCallAnalytics:
    """The observer ``instrument`` installs; ``events_emitted`` counts what it sent.

    ``session_of`` gets the ``mcp`` SDK's request context of the call (``None`` outside a
    request) and returns its session id; without it every event has the factory's session."""

    def __init__(
        self,
        sink: Sink,
        factory: EventFactory,
        session_of: Callable[[Any], str] | None = None,
    ) -> None:
        self.sink = sink
        self.factory = factory
        self.session_of = session_of
        self.events_emitted = 0

    def install(self) -> None:
        """Attach to the server (each adapter knows how)."""
        raise NotImplementedError

    def emit(
        self,
        call: ToolCall,
        outcome: Callable[[], Outcome],
        *,
        arguments: Any,
        request_context: Any,
    ) -> None:
        """Build the call's one event and give it to the sink. ``outcome`` (the classification
        and the output to capture) is worked out here, so that a failure there is handled like
        any other: logged, never raised into the call it observes."""
        try:
            classification, output = outcome()
            event = self.factory.tool_call(
                call.tool,
                classification,
                latency_ms=call.latency_ms,
                arguments=arguments if isinstance(arguments, Mapping) else None,
                output=output,
                session_id=self.session_id(request_context),
            )
        except Exception:  # analytics must never break the call it observes
            logger.exception("could not build the tool_call event for %r", call.tool)
            return
        if deliver(self.sink, event):
            self.events_emitted += 1

    def session_id(self, request_context: Any) -> str:
        if self.session_of is None:
            return self.factory.session_id
        return self.session_of(request_context)


def transport_session_key(request_context: Any) -> str | None:
    """The ``Mcp-Session-Id`` the client sent with this request over the streamable HTTP
    transport, or ``None`` (stdio, in-process, stateless HTTP)."""
    headers = getattr(getattr(request_context, "request", None), "headers", None)
    value = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
    return value if isinstance(value, str) and value else None


def per_transport_session(fallback: str) -> Callable[[Any], str]:
    """Sessions by ``Mcp-Session-Id`` (derived, see ``derive_session_id``), ``fallback`` for a
    call that came without one."""

    def session_of(request_context: Any) -> str:
        key = transport_session_key(request_context)
        return derive_session_id(key) if key is not None else fallback

    return session_of


def derive_session_id(key: str) -> str:
    """A ``session_id`` derived from a transport session key: ``ses_`` and 21 characters of the
    key's SHA-256 in base64url, as Yavio's SDK derives it (``packages/sdk/src/core/ids.ts``), so
    every server instance maps one client session to one id without shared state, and the raw
    transport id (a bearer-like secret for that session) never reaches analytics."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(key.encode("utf-8")).digest()).decode()
    return f"ses_{digest[:21]}"


def wire_result(returned: Any, protocol_version: str) -> dict[str, Any] | None:
    """The result as the ``mcp`` SDK sends it for ``protocol_version`` (coercions included), or
    ``None`` when the SDK would refuse it as invalid."""
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
        wire: dict[str, Any] = methods.serialize_server_result(TOOLS_CALL, protocol_version, dumped)
    except ValidationError:
        return None
    except (ValueError, KeyError):  # a protocol version this SDK does not describe
        return dumped
    return wire


INVALID_RESULT = "the handler returned an invalid result"


def classify_delivered(wire: Mapping[str, Any] | None, *, capture_output: bool) -> Classification:
    """A result the tool produced, by the one rule, as the client receives it (``wire``);
    ``None`` (a result the SDK refuses to send) is a ``server`` failure."""
    if wire is None:
        return classify_server_failure(INVALID_RESULT)
    if is_tool_error(wire):
        return classify_result(wire, capture_output=capture_output)
    return SUCCESS
