"""One ``tool_call`` event per tool call of a real MCP server: ``instrument(server, sink)``.

Supported frameworks (each tested against its oldest and newest supported release by
``nox -s mcp_matrix``):

- the ``mcp`` SDK 2.x (``mcp>=2.3,<3``, the ``mcp`` extra): ``MCPServer`` and the low-level
  ``Server`` (``sdk_adapter``);
- standalone FastMCP 4.x (``fastmcp>=4,<5``, the ``fastmcp`` extra): ``FastMCP``, through its
  public middleware API (``fastmcp_adapter``).

Not supported: the ``mcp`` SDK 1.x (its own ``mcp.server.fastmcp.FastMCP`` included) and
``fastmcp`` before 4; ``instrument`` refuses them with a ``TypeError`` that says so.

Every framework gives the same events by the same rules (the shared core is ``tool_calls``):

=====================================  =======  ==========  =================================
what happened                          status   category    error_message
=====================================  =======  ==========  =================================
the tool returned a result             success  -           -
the tool returned ``isError: true``    error    tool_error  the result's first text
the tool raised (``ToolError`` too)    error    unknown     the exception's own message
refused before the tool ran            error    validation  the framework's text
the tool returned, its output failed   error    server      the framework's text
=====================================  =======  ==========  =================================

``latency_ms`` is absent when the tool never ran. Messages are PII-stripped and clamped
(``toolcall_spec.analytics.classify``). Exactly one event per call; a tool that calls another
tool in process is one call.

**Sessions.** By default a call that came over the streamable HTTP transport is in the session of
its ``Mcp-Session-Id`` header (``derive_session_id``); other calls share one id per server.

Sinks are called synchronously on the event loop, so a sink should be quick.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

from toolcall_spec.analytics.events import EventFactory
from toolcall_spec.analytics.sinks import Sink
from toolcall_spec.clock import Clock, new_uuid, utc_now
from toolcall_spec.mcp.sdk_adapter import SdkToolCallAnalytics, is_sdk_server
from toolcall_spec.mcp.tool_calls import (
    ToolCallAnalytics,
    derive_session_id,
    per_transport_session,
    transport_session_key,
)

__all__ = [
    "ToolCallAnalytics",
    "derive_session_id",
    "instrument",
    "transport_session_key",
]

ACCEPTED = (
    "an mcp 2.x MCPServer or low-level Server (mcp>=2.3,<3), or a fastmcp 4.x FastMCP "
    "(fastmcp>=4,<5)"
)


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

    ``server`` is an ``mcp`` ``MCPServer``, a low-level ``mcp`` ``Server`` or a ``fastmcp``
    ``FastMCP``; anything else is a ``TypeError``. Call this once, before serving (tools added
    later are observed too). ``capture_input`` and ``capture_output`` control ``input_*`` and
    ``output_content``; with output capture off, an error message taken from the result is
    dropped, while ``status`` and ``error_category`` stay.

    ``session_id`` is the events' session. By default, a call that came over the streamable HTTP
    transport with an ``Mcp-Session-Id`` gets an id derived from it (``derive_session_id``),
    so each client session is its own analytics session; any other call gets one new id for this
    server. A string fixes the id for every call; a callable gets the framework's request context
    of the call (the ``mcp`` SDK's ``ServerRequestContext``, or FastMCP's request context; both
    have ``request``, the HTTP request when there is one) and returns the session of that call."""
    adapter = _adapter_for(server)
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
        session_of = per_transport_session(factory.session_id)
    analytics = adapter(server, sink, factory, session_of)
    analytics.install()
    return analytics


def _adapter_for(server: Any) -> Callable[..., ToolCallAnalytics]:
    """The adapter for ``server``'s framework, or a ``TypeError`` naming what is accepted."""
    module = type(server).__module__
    if module == "fastmcp" or module.startswith("fastmcp."):
        return _fastmcp_adapter(server)
    if module.startswith("mcp.server.fastmcp"):
        raise TypeError(
            f"cannot instrument the mcp 1.x FastMCP ({module}): mcp 1.x is not supported; "
            f"expected {ACCEPTED}"
        )
    if is_sdk_server(server):
        return SdkToolCallAnalytics
    if module == "mcp" or module.startswith("mcp."):
        version = _installed_version("mcp")
        if version.startswith("1."):
            raise TypeError(
                f"cannot instrument {type(server).__name__} of mcp {version}: mcp 1.x is not "
                f"supported; expected {ACCEPTED}"
            )
    raise TypeError(f"cannot instrument {type(server).__name__}: expected {ACCEPTED}")


def _installed_version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def _fastmcp_adapter(server: Any) -> Callable[..., ToolCallAnalytics]:
    import fastmcp  # noqa: PLC0415 - the fastmcp extra is imported only for a FastMCP server

    version = _installed_version("fastmcp")
    if not version.startswith("4.") or not isinstance(server, fastmcp.FastMCP):
        # e.g. FastMCP's own low-level server: observed there, every failure would look alike
        raise TypeError(
            f"cannot instrument {type(server).__name__} of fastmcp {version}: expected {ACCEPTED}; "
            "for a FastMCP server, pass the FastMCP object itself"
        )
    from toolcall_spec.mcp.fastmcp_adapter import FastMCPToolCallAnalytics  # noqa: PLC0415

    return FastMCPToolCallAnalytics
