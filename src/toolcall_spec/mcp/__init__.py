"""Everything that speaks MCP, in one place (needs the ``mcp`` extra).

Modules, one concern each:

- ``.analytics``: ``instrument(server, sink)``, one ``tool_call`` event per tool call of a real
  MCP server, classified by the one rule; it picks the framework's adapter:
- ``.sdk_adapter``: the ``mcp`` SDK's ``MCPServer`` and low-level ``Server``;
- ``.fastmcp_adapter``: standalone ``fastmcp`` 4.x ``FastMCP`` (its middleware API);
- ``.tool_calls``: the core both adapters share (the call record, sessions, the event).
- ``.record``: ``Recorder``, what ``toolcall-spec record`` keeps of the traffic it forwards: each
  ``tools/call`` as a fixture entry of a suite rewritten atomically as calls are answered.
- ``.stdio_proxy``: ``StdioProxy``, the recording proxy over stdio (it launches the server).
- ``.http_proxy``: ``RecordingProxy``, the recording proxy over streamable HTTP (an ASGI app).
- ``.fixture_server``: ``FixtureReplay`` and ``build_server``, the MCP server of
  ``toolcall-spec serve-fixtures``: a task's fixtures answering ``tools/call`` by the replay rules.
- ``.verify``: ``verify``, ``judge_call``, ``judge_contract``: what ``toolcall-spec verify``
  does, a recording's calls sent to the live server and judged against what was recorded.
- ``.cassettes``: ``import_cassette``, cassettes of other MCP recorders (mcp-recorder, agent-vcr,
  mcp-vcr) into suites (``toolcall-spec promote --from``); plain JSON, no SDK needed.

This package sits above ``analytics``, ``replay`` and ``host`` (it uses their rules) and beside
``http``; nothing below it imports it, so ``import toolcall_spec`` never loads the ``mcp`` SDK.
The names below load their module on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolcall_spec.mcp.analytics import ToolCallAnalytics, derive_session_id, instrument

_EXPORTS = {
    "ToolCallAnalytics": "analytics",
    "derive_session_id": "analytics",
    "instrument": "analytics",
}

__all__ = ["ToolCallAnalytics", "derive_session_id", "instrument"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(import_module(f"{__name__}.{module}"), name)
