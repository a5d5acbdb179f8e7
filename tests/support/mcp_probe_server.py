"""A demo MCP server, instrumented, serving over stdio: started by the tests as a subprocess.

    python mcp_probe_server.py FRAMEWORK EVENTS_FILE

FRAMEWORK is ``mcp`` (the SDK's ``MCPServer``), ``fastmcp`` (standalone FastMCP 4) or
``lowlevel`` (the SDK's low-level ``Server``, ``lowlevel_demo_server``); every ``tool_call`` event
is appended to EVENTS_FILE as one JSON line (flushed per event).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from toolcall_spec.analytics.sinks import JsonlFileSink
from toolcall_spec.mcp import instrument

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: `support` imports

from support.mcp_servers import framework_server, lowlevel_demo_server


def run_lowlevel(server: Any) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


def main(framework: str, events: str) -> None:
    server: Any = lowlevel_demo_server() if framework == "lowlevel" else framework_server(framework)
    with JsonlFileSink(events) as sink:
        instrument(server, sink)
        if framework == "lowlevel":
            run_lowlevel(server)
        elif framework == "fastmcp":
            server.run(transport="stdio", show_banner=False)
        else:
            server.run(transport="stdio")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
