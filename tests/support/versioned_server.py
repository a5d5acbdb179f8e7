"""A real MCP server (the ``mcp`` SDK's ``MCPServer``) in two releases, for the tests of
``toolcall-spec verify``: ``python versioned_server.py v1|v2 [stdio|http PORT]``.

- ``add(a, b)``: a success, the same in both releases;
- ``greet(name, punctuation?)``: a success; v2 words it differently (content changed) and makes
  ``punctuation`` required (a breaking input schema);
- ``lookup(ref)``: a success in v1, ``isError: true`` in v2 (a flip);
- ``legacy()``: a success in v1; v2 removes the tool (the call is an error: a flip too);
- ``stats()`` (v2 only): an added tool.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent


def build(version: str) -> Any:
    server = MCPServer(f"versioned-{version}")
    v2 = version == "v2"

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    if v2:

        @server.tool()
        def greet(name: str, punctuation: str) -> str:
            return f"Hi, {name}{punctuation}"

    else:

        @server.tool()
        def greet(name: str, punctuation: str = "!") -> str:
            return f"Hello, {name}{punctuation}"

    @server.tool()
    def lookup(ref: str) -> CallToolResult:
        if v2:
            text = f"{ref}: no such record"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        return CallToolResult(content=[TextContent(type="text", text=f"{ref}: found")])

    if v2:

        @server.tool()
        def stats() -> str:
            return "0 calls"

    else:

        @server.tool()
        def legacy() -> str:
            return "still here"

    return server


def main(argv: list[str]) -> None:
    version, transport = argv[0], argv[1] if len(argv) > 1 else "stdio"
    server = build(version)
    if transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[2]))


if __name__ == "__main__":
    main(sys.argv[1:])
