"""A demo MCP server, instrumented, serving over stdio: started by the tests as a subprocess.

    python mcp_probe_server.py FRAMEWORK EVENTS_FILE

FRAMEWORK is ``mcp`` (the SDK's ``MCPServer``) or ``fastmcp`` (standalone FastMCP 4); every
``tool_call`` event is appended to EVENTS_FILE as one JSON line (flushed per event).
"""

from __future__ import annotations

import sys
from pathlib import Path

from toolcall_spec.analytics.sinks import JsonlFileSink
from toolcall_spec.mcp import instrument

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: `support` imports

from support.mcp_servers import framework_server


def main(framework: str, events: str) -> None:
    server = framework_server(framework)
    with JsonlFileSink(events) as sink:
        instrument(server, sink)
        if framework == "fastmcp":
            server.run(transport="stdio", show_banner=False)
        else:
            server.run(transport="stdio")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
