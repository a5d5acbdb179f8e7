"""MCP servers and an in-process client shared by the tests of toolcall_spec.mcp and its sinks:
the same demo tools on the ``mcp`` SDK's ``MCPServer`` (``demo_server``) and on standalone
``fastmcp`` 4.x (``fastmcp_demo_server``), so one probe of calls drives both frameworks."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import anyio
import mcp
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from toolcall_spec.analytics.ingest import ingest_batch
from toolcall_spec.validation import validate

Call = tuple[str, dict[str, Any]]


class Offer(BaseModel):
    price: int


DEMO_CALLS: list[Call] = [
    ("add", {"a": 1, "b": 2}),
    ("lookup_offer", {"reference": "A-17"}),
    ("silent_failure", {}),
    ("crash", {}),
    ("async_crash", {}),
    ("quota", {}),
    ("no_such_tool", {"x": 1}),
    ("add", {"a": "max@example.com"}),
    ("dict_with_flag", {}),
    ("bad_output", {}),
]
"""One call of each kind ``demo_server`` (and the FastMCP probe server) answers: a success, a
tool error, a silent one, raised exceptions, an MCP error, an unknown tool, invalid arguments, a
dict that only looks like an error, and an output that fails conversion."""


def event_summary(event: dict[str, Any]) -> tuple[Any, ...]:
    """What the tests compare of a ``tool_call`` event: the tool, status, category, message,
    and whether it has a ``latency_ms``."""
    return (
        event["event_name"],
        event["status"],
        event.get("error_category"),
        event.get("error_message"),
        "latency_ms" in event,
    )


def demo_server() -> MCPServer:
    server = MCPServer("demo")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def lookup_offer(reference: str) -> CallToolResult:
        return CallToolResult(
            content=[
                TextContent(type="text", text=f"  Offer {reference} expired for max@example.com ")
            ],
            is_error=True,
        )

    @server.tool()
    def silent_failure() -> CallToolResult:
        return CallToolResult(content=[], is_error=True)

    @server.tool()
    def crash() -> str:
        raise RuntimeError("customer max@example.com not found")

    @server.tool()
    async def async_crash() -> str:
        raise ToolError("card 4111 1111 1111 1111 was declined")

    @server.tool()
    def quota() -> str:
        raise MCPError(code=-32001, message="quota exceeded for max@example.com")

    @server.tool()
    def dict_with_flag() -> dict[str, Any]:
        return {"content": [], "isError": True}

    @server.tool()
    def bad_output() -> Offer:
        return "not an offer"  # type: ignore[return-value]  # fails output conversion

    return server


def fastmcp_demo_server() -> Any:
    """The tools of ``demo_server`` on a standalone ``fastmcp`` ``FastMCP`` (imported here: the
    ``fastmcp`` extra is optional)."""
    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError as FastMCPToolError

    server = FastMCP("demo")

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def lookup_offer(reference: str) -> CallToolResult:
        return CallToolResult(
            content=[
                TextContent(type="text", text=f"  Offer {reference} expired for max@example.com ")
            ],
            is_error=True,
        )

    @server.tool
    def silent_failure() -> CallToolResult:
        return CallToolResult(content=[], is_error=True)

    @server.tool
    def crash() -> str:
        raise RuntimeError("customer max@example.com not found")

    @server.tool
    async def async_crash() -> str:
        raise FastMCPToolError("card 4111 1111 1111 1111 was declined")

    @server.tool
    def quota() -> str:
        raise MCPError(code=-32001, message="quota exceeded for max@example.com")

    @server.tool
    def dict_with_flag() -> dict[str, Any]:
        return {"content": [], "isError": True}

    @server.tool
    def bad_output() -> Offer:
        return "not an offer"  # type: ignore[return-value]  # fails output conversion

    return server


def lowlevel_demo_server() -> Server[Any]:
    """The tools of ``demo_server`` on the low-level ``Server``, dispatched by hand: the twin of
    the TypeScript probe's low-level server (tests/support/ts/probe_server.mjs, ``lowlevel``),
    answering what it answers. The handler is the tool, so an unknown tool or bad arguments are
    the tool's own ``isError`` results here."""
    import json

    from mcp.server import ServerRequestContext
    from mcp.types import CallToolRequestParams, ListToolsResult, PaginatedRequestParams, Tool

    def text(value: str) -> TextContent:
        return TextContent(type="text", text=value)

    flagged = {"content": [], "isError": True}

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> Any:
        arguments = params.arguments or {}
        name = params.name
        if name == "add":
            a, b = arguments.get("a"), arguments.get("b")
            if not (type(a) is int and type(b) is int):
                return CallToolResult(content=[text("Invalid arguments for add")], is_error=True)
            return CallToolResult(
                content=[text(str(a + b))], structured_content={"result": a + b}, is_error=False
            )
        if name == "lookup_offer":
            reference = arguments.get("reference")
            message = f"  Offer {reference} expired for max@example.com "
            return CallToolResult(content=[text(message)], is_error=True)
        if name == "silent_failure":
            return CallToolResult(content=[], is_error=True)
        if name == "crash":
            raise RuntimeError("customer max@example.com not found")
        if name == "async_crash":
            raise RuntimeError("card 4111 1111 1111 1111 was declined")
        if name == "quota":
            raise MCPError(code=-32001, message="quota exceeded for max@example.com")
        if name == "dict_with_flag":
            dumped = json.dumps(flagged, indent=2)
            return CallToolResult(
                content=[text(dumped)], structured_content=flagged, is_error=False
            )
        if name == "bad_output":
            return CallToolResult(content=[text("not an offer")], is_error=False)
        return CallToolResult(content=[text(f"Unknown tool: {name}")], is_error=True)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        names = [name for name, _ in DEMO_CALLS if name != "no_such_tool"]
        tools = [Tool(name=name, input_schema={"type": "object"}) for name in dict.fromkeys(names)]
        return ListToolsResult(tools=tools)

    return Server("demo", on_list_tools=list_tools, on_call_tool=call_tool)


FRAMEWORKS = ("mcp", "fastmcp")


def framework_server(framework: str) -> Any:
    """The demo server on ``framework`` (one of ``FRAMEWORKS``)."""
    return demo_server() if framework == "mcp" else fastmcp_demo_server()


def run_calls(server: Server[Any] | MCPServer, calls: list[Call], mode: str = "auto") -> list[Any]:
    """Call each tool through a real in-process client; a JSON-RPC error is kept as is."""
    outcomes: list[Any] = []

    async def main() -> None:
        async with mcp.Client(server, mode=mode) as client:
            for name, arguments in calls:
                try:
                    outcomes.append(await client.call_tool(name, arguments))
                except MCPError as exc:
                    outcomes.append(exc)

    anyio.run(main)
    return outcomes


def ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


UNKNOWN_TOOL = {
    "mcp": "Unknown tool: no_such_tool",  # MCPServer's text
    "fastmcp": "Unknown tool: 'no_such_tool'",  # FastMCP's: f"Unknown tool: {key!r}"
}
BAD_OUTPUT = {
    "mcp": "Error executing tool bad_output",
    "fastmcp": "Error calling tool 'bad_output': structured_content must be a dict",
}


def assert_probe_events(framework: str, events: list[dict[str, Any]]) -> None:
    """The events of one run of DEMO_CALLS: exactly one per call, each as the rules say."""
    assert len(events) == len(DEMO_CALLS)
    rows = [event_summary(event) for event in events]
    assert rows[:7] == [
        ("add", "success", None, None, True),
        ("lookup_offer", "error", "tool_error", "Offer A-17 expired for [EMAIL_REDACTED]", True),
        ("silent_failure", "error", "tool_error", None, True),
        ("crash", "error", "unknown", "customer [EMAIL_REDACTED] not found", True),
        ("async_crash", "error", "unknown", "card [CC_REDACTED] was declined", True),
        ("quota", "error", "unknown", "quota exceeded for [EMAIL_REDACTED]", True),
        ("no_such_tool", "error", "validation", UNKNOWN_TOOL[framework], False),
    ]
    name, status, category, message, has_latency = rows[7]
    assert (name, status, category, has_latency) == ("add", "error", "validation", False)
    assert "[EMAIL_REDACTED]" in message
    assert "max@example.com" not in message
    assert rows[8] == ("dict_with_flag", "success", None, None, True)
    name, status, category, message, has_latency = rows[9]
    assert (name, status, category, has_latency) == ("bad_output", "error", "server", True)
    assert message.startswith(BAD_OUTPUT[framework])
    for event in events:
        assert validate(event, "tool-call-event") == []
    assert ingest_batch({"events": events})["status"] == 200
