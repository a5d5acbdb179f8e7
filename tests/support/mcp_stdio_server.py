"""A small live MCP server, run as a script by the tests: ``python THIS_FILE`` over stdio,
``python THIS_FILE --http`` over streamable HTTP on a free loopback port (its URL is the
first line of output). The live side behind
``serve-fixtures -- CMD`` (onMiss: live) and the server a peer recorder records.

Each invocation of a tool is appended, as one JSON line, to the file named by ``LIVE_CALLS_FILE``
(when set), so a test can see which calls reached the live server and which did not.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from functools import partial

import anyio
import uvicorn
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


def serve_http() -> None:
    """Streamable HTTP on a free loopback port, named on the first line of standard output."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(f"serving on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    anyio.run(partial(uvicorn.Server(config).serve, sockets=[sock]))


if __name__ == "__main__":
    if sys.argv[1:] == ["--http"]:
        serve_http()
    else:
        server.run()
