"""Real MCP servers run as their own processes behind ``toolcall-spec record`` (the tests of
``toolcall_spec.mcp.record``): ``python record_servers.py mcp|fastmcp [stdio|http PORT]``.

Both frameworks serve the same tools, so one expectation holds for either:

- ``add(a, b)``: a success;
- ``flaky(key)``: fails (``isError: true``) on the first call with a key, succeeds after;
- ``lookup(reference)``: always ``isError: true``, with an e-mail address in its text;
- ``quota()``: a JSON-RPC error (``MCPError`` / ``McpError`` with code -32001);
- ``die()``: the server process exits in the middle of the call;
- ``slow(seconds)``: answers after ``seconds``;
- (MCPServer only) ``count(n)``: reports progress ``1..n`` before answering; a resource
  ``memo://greeting`` and a prompt ``greet(name)``.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

SEEN: set[str] = set()


def mcp_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("record-demo")

    @server.tool()
    async def count(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
        return f"counted to {n}"

    @server.resource("memo://greeting")
    def greeting() -> str:
        return "hello from a resource"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Say hello to {name}."

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def flaky(key: str) -> CallToolResult:
        first = key not in SEEN
        SEEN.add(key)
        text = f"{key}: try again" if first else f"{key}: ok"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=first)

    @server.tool()
    def lookup(reference: str) -> CallToolResult:
        text = f"offer {reference} expired for max@example.com"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    @server.tool()
    def quota() -> str:
        raise MCPError(code=-32001, message="quota exceeded")

    @server.tool()
    def die() -> str:
        os._exit(3)

    @server.tool()
    def slow(seconds: float) -> str:
        time.sleep(seconds)
        return "done"

    return server


def fastmcp_server() -> Any:
    from fastmcp import FastMCP

    server = FastMCP("record-demo-fastmcp")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def flaky(key: str) -> CallToolResult:
        first = key not in SEEN
        SEEN.add(key)
        text = f"{key}: try again" if first else f"{key}: ok"
        return CallToolResult(content=[TextContent(type="text", text=text)], isError=first)

    @server.tool
    def lookup(reference: str) -> CallToolResult:
        text = f"offer {reference} expired for max@example.com"
        return CallToolResult(content=[TextContent(type="text", text=text)], isError=True)

    @server.tool
    def quota() -> str:
        raise MCPError(code=-32001, message="quota exceeded")

    @server.tool
    def die() -> str:
        os._exit(3)

    @server.tool
    def slow(seconds: float) -> str:
        time.sleep(seconds)
        return "done"

    return server


def main(argv: list[str]) -> None:
    framework, transport = argv[0], argv[1] if len(argv) > 1 else "stdio"
    server = mcp_server() if framework == "mcp" else fastmcp_server()
    if transport == "stdio":
        server.run()
    elif framework == "mcp":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[2]))
    else:
        server.run(transport="http", host="127.0.0.1", port=int(argv[2]), show_banner=False)


if __name__ == "__main__":
    main(sys.argv[1:])
