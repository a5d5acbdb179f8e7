"""``instrument`` on a standalone FastMCP 4 server, in process (fastmcp's own ``Client``): the
cases only FastMCP has (its wrapper text, masked error details, a tool calling a tool through
``ctx.fastmcp``, its middleware chain), and what ``instrument`` refuses."""

from __future__ import annotations

import types
from typing import Any

import pytest

pytest.importorskip("fastmcp", reason="the fastmcp extra is not installed")

import anyio
import fastmcp
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware
from support.mcp_servers import Call, demo_server, event_summary, fastmcp_demo_server

from toolcall_spec.analytics.sinks import MemorySink
from toolcall_spec.mcp import instrument

ONE_EVENT = pytest.mark.requirement("toolcall-spec.requirement.analytics.one-event-per-call")
THROWN = pytest.mark.requirement("toolcall-spec.requirement.analytics.thrown-unknown")
PRE_HANDLER = pytest.mark.requirement("toolcall-spec.requirement.analytics.pre-handler-validation")
FRAMEWORK_COVERAGE = pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")


def call_all(server: FastMCP, calls: list[Call]) -> list[Any]:
    """Each call through fastmcp's in-process client; the raw ``CallToolResult`` of each."""
    results: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(30):
            async with fastmcp.Client(server) as client:
                for name, arguments in calls:
                    results.append(await client.call_tool_mcp(name, arguments))

    anyio.run(main)
    return results


@THROWN
def test_masked_details_the_client_sees_the_wrapper_the_event_the_tools_message() -> None:
    server = FastMCP("masked", mask_error_details=True)

    @server.tool
    def crash() -> str:
        raise RuntimeError("customer max@example.com not found")

    sink = MemorySink()
    instrument(server, sink)
    (result,) = call_all(server, [("crash", {})])
    assert result.is_error is True
    assert result.content[0].text == "Error calling tool 'crash'"
    assert [event_summary(event) for event in sink.events] == [
        ("crash", "error", "unknown", "customer [EMAIL_REDACTED] not found", True)
    ]
    assert "output_content" not in sink.events[0]


@THROWN
def test_a_tool_error_raised_from_another_exception_keeps_its_own_message() -> None:
    server = FastMCP("chained")

    @server.tool
    def lookup(key: str) -> str:
        try:
            return {"a": "1"}[key]
        except KeyError as exc:
            raise ToolError(f"no entry for {key}") from exc

    sink = MemorySink()
    instrument(server, sink)
    call_all(server, [("lookup", {"key": "max@example.com"})])
    assert [event_summary(event) for event in sink.events] == [
        ("lookup", "error", "unknown", "no entry for [EMAIL_REDACTED]", True)
    ]


@ONE_EVENT
def test_a_tool_calling_a_tool_through_the_server_is_one_call() -> None:
    server = fastmcp_demo_server()
    sink = MemorySink()
    instrument(server, sink)

    async def twice(a: int, ctx: Context) -> int:
        inner = await ctx.fastmcp.call_tool("add", {"a": a, "b": a})
        assert inner.structured_content is not None
        return int(inner.structured_content["result"])

    async def calls_a_missing_tool(ctx: Context) -> str:
        await ctx.fastmcp.call_tool("no_such_tool", {})
        return "unreachable"

    server.tool(twice)
    server.tool(calls_a_missing_tool)

    call_all(server, [("twice", {"a": 4}), ("calls_a_missing_tool", {})])
    rows = [event_summary(event) for event in sink.events]
    assert rows[0] == ("twice", "success", None, None, True)
    # The inner refusal went through the outer tool: the outer tool raised.
    assert rows[1] == (
        "calls_a_missing_tool",
        "error",
        "unknown",
        "Unknown tool: 'no_such_tool'",
        True,
    )
    assert len(rows) == 2


class Refusing(Middleware):
    """A user's middleware that refuses one tool before it runs."""

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        if context.message.name == "crash":
            raise ToolError("crash is switched off")
        return await call_next(context)


@ONE_EVENT
@PRE_HANDLER
def test_calls_other_middleware_refuses_are_counted_too() -> None:
    server = fastmcp_demo_server()
    server.add_middleware(Refusing())
    sink = MemorySink()
    instrument(server, sink)  # after the user's middleware: still first in the chain
    call_all(server, [("crash", {}), ("add", {"a": 1, "b": 1})])
    assert [event_summary(event) for event in sink.events] == [
        ("crash", "error", "unknown", "crash is switched off", True),
        ("add", "success", None, None, True),
    ]


@pytest.mark.requirement("toolcall-spec.requirement.analytics.status-without-capture")
def test_without_output_capture_status_and_category_stay() -> None:
    server = fastmcp_demo_server()
    sink = MemorySink()
    instrument(server, sink, capture_input=False, capture_output=False)
    call_all(server, [("lookup_offer", {"reference": "A"}), ("crash", {}), ("nope", {})])
    assert [event_summary(event) for event in sink.events] == [
        ("lookup_offer", "error", "tool_error", None, True),
        ("crash", "error", "unknown", "customer [EMAIL_REDACTED] not found", True),
        ("nope", "error", "validation", None, False),
    ]
    for event in sink.events:
        assert not {"output_content", "input_keys", "input_values"} & set(event)


@ONE_EVENT
def test_a_failing_sink_never_breaks_the_call(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: Any) -> None:
        raise OSError("disk full")

    server = fastmcp_demo_server()
    analytics = instrument(server, broken)
    (result,) = call_all(server, [("add", {"a": 2, "b": 3})])
    assert result.structured_content == {"result": 5}
    assert analytics.events_emitted == 0
    assert "analytics sink" in caplog.text


@FRAMEWORK_COVERAGE
def test_instrumenting_twice_is_refused() -> None:
    server = fastmcp_demo_server()
    instrument(server, MemorySink())
    with pytest.raises(ValueError, match="already instrumented"):
        instrument(server, MemorySink())


@FRAMEWORK_COVERAGE
@pytest.mark.parametrize(
    ("module", "said"),
    [
        ("builtins", "cannot instrument Server"),
        ("mcp.server.fastmcp.server", "mcp 1.x is not supported"),
        ("fastmcp.server.server", "cannot instrument Server of fastmcp"),
    ],
    ids=["other", "mcp-1.x-fastmcp", "not-a-fastmcp-4-server"],
)
def test_an_object_it_cannot_instrument_is_a_type_error_naming_what_it_accepts(
    module: str, said: str
) -> None:
    impostor = types.new_class("Server", (), {})
    impostor.__module__ = module
    with pytest.raises(TypeError) as refused:
        instrument(impostor(), MemorySink())
    message = str(refused.value)
    assert said in message
    for accepted in ("MCPServer", "low-level Server", "FastMCP", "mcp>=2.3,<3", "fastmcp>=4,<5"):
        assert accepted in message


@FRAMEWORK_COVERAGE
def test_fastmcps_low_level_server_is_refused_in_favour_of_the_server_itself() -> None:
    # The workaround: the private low-level server filed every failure as tool_error.
    lowlevel = fastmcp_demo_server()._mcp_server
    with pytest.raises(TypeError, match="pass the FastMCP object itself"):
        instrument(lowlevel, MemorySink())


@FRAMEWORK_COVERAGE
def test_the_mcp_sdk_servers_are_still_accepted() -> None:
    server = demo_server()
    analytics = instrument(server, MemorySink())
    assert analytics.events_emitted == 0


@ONE_EVENT
def test_a_call_the_client_gives_up_on_is_counted_once() -> None:
    server = fastmcp_demo_server()
    started = anyio.Event()
    sink = MemorySink()
    instrument(server, sink)

    async def never_answers() -> str:
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    server.tool(never_answers)

    async def main() -> None:
        with anyio.fail_after(30):
            async with fastmcp.Client(server) as client:
                async with anyio.create_task_group() as group:

                    async def call() -> None:
                        await client.call_tool_mcp("never_answers", {})

                    group.start_soon(call)
                    await started.wait()
                    group.cancel_scope.cancel()  # the client gives up: it sends a cancellation
                await client.call_tool_mcp("add", {"a": 1, "b": 1})

    anyio.run(main)
    # The cancellation and the next call are handled concurrently: either may be recorded first.
    assert sorted(event["event_name"] for event in sink.events) == ["add", "never_answers"]
    (cancelled,) = [event for event in sink.events if event["event_name"] == "never_answers"]
    assert (cancelled["status"], cancelled["error_category"]) == ("error", "unknown")


@ONE_EVENT
def test_concurrent_calls_are_each_counted_once() -> None:
    server = fastmcp_demo_server()
    sink = MemorySink()
    instrument(server, sink)
    calls: list[Call] = [("add", {"a": n, "b": n}) for n in range(12)] + [("crash", {})] * 4

    async def main() -> None:
        with anyio.fail_after(30):
            async with fastmcp.Client(server) as client, anyio.create_task_group() as group:
                for name, arguments in calls:
                    group.start_soon(client.call_tool_mcp, name, arguments)

    anyio.run(main)
    assert sorted(event_summary(event) for event in sink.events) == sorted(
        [("add", "success", None, None, True)] * 12
        + [("crash", "error", "unknown", "customer [EMAIL_REDACTED] not found", True)] * 4
    )
    added = sorted(
        event["input_values"]["a"] for event in sink.events if event["event_name"] == "add"
    )
    assert added == list(range(12))
