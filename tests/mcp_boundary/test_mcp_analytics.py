"""A real MCP server (mcp 2.3, in process, no network) wrapped by ``instrument``: every tool call
yields exactly one tool_call event, classified as the client received the result."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    Tool,
)
from support.mcp_servers import (
    DEMO_CALLS,
    assert_probe_events,
    demo_server,
    event_summary,
    ids,
    run_calls,
)

from toolcall_spec.analytics.classify import classify_result
from toolcall_spec.analytics.ingest import ingest_batch
from toolcall_spec.analytics.sinks import JsonlFileSink, MemorySink
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.mcp import instrument

ONE_EVENT = pytest.mark.requirement("toolcall-spec.requirement.analytics.one-event-per-call")
TOOL_ERROR = pytest.mark.requirement("toolcall-spec.requirement.analytics.tool-error-category")
THROWN = pytest.mark.requirement("toolcall-spec.requirement.analytics.thrown-unknown")
PRE_HANDLER = pytest.mark.requirement("toolcall-spec.requirement.analytics.pre-handler-validation")


CALLS = DEMO_CALLS


@ONE_EVENT
@TOOL_ERROR
@THROWN
@PRE_HANDLER
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_call_yields_exactly_one_event_classified_by_its_outcome(mode: str) -> None:
    server = demo_server()
    sink = MemorySink()
    analytics = instrument(server, sink)
    run_calls(server, CALLS, mode)
    assert len(sink.events) == len(CALLS) == analytics.events_emitted
    assert_probe_events("mcp", sink.events)
    rows = [event_summary(event) for event in sink.events]
    assert "validation error" in rows[7][3]
    assert rows[9] == ("bad_output", "error", "server", "Error executing tool bad_output", True)


@THROWN
def test_the_event_keeps_the_exceptions_own_message_the_client_never_sees() -> None:
    server = demo_server()
    sink = MemorySink()
    instrument(server, sink)
    (result,) = run_calls(server, [("crash", {})])
    assert result.is_error is True
    assert result.content[0].text == "Error executing tool crash"
    assert sink.events[0]["error_message"] == "customer [EMAIL_REDACTED] not found"
    assert "output_content" not in sink.events[0]


@TOOL_ERROR
def test_a_tool_error_event_captures_inputs_and_the_output_the_model_saw() -> None:
    server = demo_server()
    sink = MemorySink()
    instrument(server, sink)
    (result,) = run_calls(server, [("lookup_offer", {"reference": "max@example.com"})])
    event = sink.events[0]
    assert event["input_values"] == {"reference": "[EMAIL_REDACTED]"}
    assert event["input_types"] == {"reference": "string"}
    assert event["output_content"]["isError"] is True
    assert "@" not in event["output_content"]["content"][0]["text"]
    assert result.content[0].text.strip().startswith("Offer max@example.com")  # unchanged


@pytest.mark.requirement("toolcall-spec.requirement.analytics.status-without-capture")
def test_without_output_capture_status_and_category_stay() -> None:
    server = demo_server()
    sink = MemorySink()
    instrument(server, sink, capture_input=False, capture_output=False)
    run_calls(server, [("lookup_offer", {"reference": "A"}), ("crash", {}), ("nope", {})])
    assert [event_summary(event) for event in sink.events] == [
        ("lookup_offer", "error", "tool_error", None, True),
        ("crash", "error", "unknown", "customer [EMAIL_REDACTED] not found", True),
        ("nope", "error", "validation", None, False),
    ]
    for event in sink.events:
        assert not {"output_content", "input_keys", "input_values"} & set(event)


# --- what the handler returned versus what the client received -------------------------------


def lowlevel_server(answer: dict[str, Any]) -> Server[Any]:
    """A low-level server whose only tool answers with ``answer`` as it stands (a mapping, not a
    typed result: the SDK coerces it on the way out)."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[Tool(name="raw", input_schema={"type": "object"})])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> dict[str, Any]:
        return answer

    # Deliberately against the SDK's declared handler type: what is under test is how the SDK
    # coerces (or refuses) a raw mapping on the way out.
    return Server("low", on_list_tools=list_tools, on_call_tool=call_tool)  # type: ignore[arg-type]


@TOOL_ERROR
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_coerced_string_flag_is_classified_as_the_client_received_it(mode: str) -> None:
    answer = {"content": [{"type": "text", "text": "quota exhausted"}], "isError": "true"}
    if mode == "auto":
        answer["resultType"] = "complete"  # the 2026 protocol refuses a result without it
    server = lowlevel_server(answer)
    sink = MemorySink()
    instrument(server, sink)
    (result,) = run_calls(server, [("raw", {})], mode)
    # The handler returned the string "true": by the rule, on its own, not an error ...
    assert classify_result(answer).status == "success"
    # ... but the SDK coerced it, the client (the model) received isError: true ...
    assert result.is_error is True
    # ... and the event follows what the client received.
    assert event_summary(sink.events[0]) == ("raw", "error", "tool_error", "quota exhausted", True)


@ONE_EVENT
def test_a_result_the_sdk_refuses_to_send_is_a_server_error() -> None:
    answer = {"content": [{"type": "text", "text": "fine"}]}  # no resultType: invalid in 2026
    server = lowlevel_server(answer)
    sink = MemorySink()
    instrument(server, sink)
    (outcome,) = run_calls(server, [("raw", {})], "auto")
    assert isinstance(outcome, MCPError)  # the client got a JSON-RPC error, not the result
    assert event_summary(sink.events[0]) == (
        "raw",
        "error",
        "server",
        "the handler returned an invalid result",
        True,
    )


@TOOL_ERROR
def test_a_plain_dict_with_the_flag_is_data_for_the_client_and_a_success() -> None:
    server = demo_server()
    sink = MemorySink()
    instrument(server, sink)
    (result,) = run_calls(server, [("dict_with_flag", {})])
    returned = {"content": [], "isError": True}
    assert classify_result(returned).status == "error"  # what the tool function returned
    assert result.is_error is False  # what MCPServer sent: the dict as data
    assert sink.events[0]["status"] == "success"
    assert sink.events[0]["output_content"]["isError"] is False


@THROWN
def test_a_lowlevel_handler_that_raises_is_unknown_with_its_own_message() -> None:
    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> NoReturn:
        raise MCPError(code=-32002, message="backend for max@example.com is down")

    server: Server[Any] = Server("low", on_call_tool=call_tool)
    sink = MemorySink()
    instrument(server, sink)
    (outcome,) = run_calls(server, [("anything", {})])
    assert isinstance(outcome, MCPError)
    assert event_summary(sink.events[0]) == (
        "anything",
        "error",
        "unknown",
        "backend for [EMAIL_REDACTED] is down",
        True,
    )


# --- wiring -----------------------------------------------------------------------------------


@ONE_EVENT
def test_tools_added_after_instrumenting_and_nested_calls_count_once() -> None:
    server = demo_server()
    sink = MemorySink()
    instrument(server, sink)

    @server.tool()
    async def twice(a: int) -> int:
        inner = await server.call_tool("add", {"a": a, "b": a})
        assert isinstance(inner, CallToolResult)
        assert inner.structured_content is not None
        return int(inner.structured_content["result"])

    (result,) = run_calls(server, [("twice", {"a": 4})])
    assert result.structured_content == {"result": 8}
    assert [event_summary(event) for event in sink.events] == [
        ("twice", "success", None, None, True)
    ]


@ONE_EVENT
def test_a_failing_sink_never_breaks_the_call(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: Any) -> None:
        raise OSError("disk full")

    server = demo_server()
    analytics = instrument(server, broken)
    (result,) = run_calls(server, [("add", {"a": 2, "b": 3})])
    assert result.structured_content == {"result": 5}
    assert analytics.events_emitted == 0
    assert "analytics sink" in caplog.text


@ONE_EVENT
def test_events_go_to_a_jsonl_file_that_ingest_accepts(tmp_path: Path) -> None:
    server = demo_server()
    path = tmp_path / "events.jsonl"
    with JsonlFileSink(path) as sink:
        instrument(server, sink, new_id=ids(), session_id=lambda ctx: "ses-http-7")
        run_calls(server, CALLS)
    with path.open("rb") as handle:
        events = [value for _, value, _ in iter_jsonl(handle)]
    assert [event["event_name"] for event in events] == [name for name, _ in CALLS]
    assert {event["session_id"] for event in events} == {"ses-http-7"}
    assert len({event["event_id"] for event in events}) == len(CALLS)
    assert ingest_batch({"events": events})["accepted"] == len(CALLS)


def test_instrumenting_twice_or_something_else_is_refused() -> None:
    server = demo_server()
    instrument(server, MemorySink())
    with pytest.raises(ValueError, match="already instrumented"):
        instrument(server, MemorySink())
    with pytest.raises(TypeError, match="cannot instrument"):
        instrument(object(), MemorySink())
