"""A small live MCP server, run as a script by the tests: ``python THIS_FILE`` over stdio,
``python THIS_FILE --http PORT`` over streamable HTTP on 127.0.0.1. The live side behind
``serve-fixtures -- CMD`` (onMiss: live) and the server a peer recorder records.

Each invocation of a tool is appended, as one JSON line, to the file named by ``LIVE_CALLS_FILE``
(when set), so a test can see which calls reached the live server and which did not.
"""

from __future__ import annotations

import json
import os
import sys
from functools import partial

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

server = MCPServer("live")
_flaky_calls: dict[str, int] = {}


def _count(tool: str, args: dict[str, object]) -> None:
    target = os.environ.get("LIVE_CALLS_FILE")
    if target:
        with open(target, "a", encoding="utf-8") as handle:  # noqa: PTH123
            handle.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool()
def lookup(id: int) -> str:
    """The record with this id."""
    _count("lookup", {"id": id})
    return f"live record {id}"


@server.tool()
def flaky(key: str) -> CallToolResult:
    """Fails on the first call for a key, succeeds after."""
    _count("flaky", {"key": key})
    _flaky_calls[key] = _flaky_calls.get(key, 0) + 1
    if _flaky_calls[key] == 1:
        return CallToolResult(
            content=[TextContent(type="text", text=f"{key}: upstream unavailable")], is_error=True
        )
    return CallToolResult(content=[TextContent(type="text", text=f"{key}: done")])


@server.tool()
def quota() -> str:
    """Always refused with a JSON-RPC error (not a tool result)."""
    _count("quota", {})
    raise MCPError(code=-32001, message="quota exceeded")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:  # streamable HTTP on 127.0.0.1:PORT, PORT the next argument
        anyio.run(
            partial(server.run_streamable_http_async, host="127.0.0.1", port=int(sys.argv[2]))
        )
    else:
        server.run()
