"""``serve-fixtures`` in process: the real ``mcp`` client against the fixture server built on the
SDK's low-level ``Server``. The replay rules are the package's (replay/fixtures.py); these tests
check that a real MCP client sees them: order, consumption, failures, misses, tools/list, and the
event log."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from support.mcp_servers import demo_server
from support.replay import one_task_suite

from toolcall_spec.mcp.fixture_server import (
    FixtureReplay,
    NoTaskError,
    build_server,
    derived_tools,
    select_task,
)
from toolcall_spec.validation import validate

RULES = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-rules")
MISSES = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-miss")
TOOLS_LIST = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-tools-list")
LOG = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-log")


def text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def suite_of(entries: list[dict[str, Any]], **fixtures: Any) -> dict[str, Any]:
    return one_task_suite(entries, **fixtures)


def mcp_text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


FAIL_THEN_SUCCEED: list[dict[str, Any]] = [
    {"tool": "lookup", "args": {"id": 1}, "isError": True, "response": mcp_text("upstream down")},
    {"tool": "lookup", "args": {"id": 1}, "response": mcp_text("record 1")},
    {"tool": "lookup", "args": {"id": 2}, "response": mcp_text("record 2")},
]


def replay_of(suite: dict[str, Any], **options: Any) -> FixtureReplay:
    return FixtureReplay(suite, select_task(suite, None), **options)


def with_client(
    replay: FixtureReplay, body: Callable[[mcp.Client], Awaitable[Any]], mode: str = "auto"
) -> Any:
    """Run ``body`` against the fixture server through a real in-process client."""
    outcome: list[Any] = []

    async def main() -> None:
        async with mcp.Client(build_server(replay), mode=mode) as client:
            outcome.append(await body(client))

    anyio.run(main)
    return outcome[0]


def calls(replay: FixtureReplay, sequence: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def body(client: mcp.Client) -> list[CallToolResult]:
        return [await client.call_tool(tool, args) for tool, args in sequence]

    result: list[Any] = with_client(replay, body)
    return result


@RULES
@pytest.mark.requirement("toolcall-spec.requirement.replay.agent-receives-tool-error")
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_recorded_failure_then_success_in_declaration_order(mode: str) -> None:
    replay = replay_of(suite_of(FAIL_THEN_SUCCEED))

    async def body(client: mcp.Client) -> list[CallToolResult]:
        return [
            await client.call_tool("lookup", {"id": 2}),
            await client.call_tool("lookup", {"id": 1}),
            await client.call_tool("lookup", {"id": 1.0}),  # 1 == 1.0 as JSON values
        ]

    second, first, then = with_client(replay, body, mode)
    assert (second.is_error, text(second)) == (False, "record 2")
    assert (first.is_error, text(first)) == (True, "upstream down")
    assert (then.is_error, text(then)) == (False, "record 1")
    assert replay.server.served == [2, 0, 1]
    assert replay.misses == 0


@RULES
def test_a_consumed_entry_never_answers_again() -> None:
    replay = replay_of(suite_of(FAIL_THEN_SUCCEED[:2]))
    results = calls(replay, [("lookup", {"id": 1})] * 3)
    assert [result.is_error for result in results] == [True, False, True]
    assert "fixture miss" in text(results[2])
    assert replay.misses == 1


@RULES
def test_subset_and_argless_entries_match_by_the_package_rules() -> None:
    entries = [
        {"tool": "search", "args": {"q": "a"}, "argsMatch": "subset", "response": mcp_text("A")},
        {"tool": "search", "response": mcp_text("any")},
    ]
    replay = replay_of(suite_of(entries))
    results = calls(replay, [("search", {"q": "b", "page": 2}), ("search", {"q": "a", "page": 1})])
    assert [text(result) for result in results] == ["any", "A"]


@RULES
def test_the_entrys_own_flag_decides_not_an_is_error_inside_its_response() -> None:
    inside = {"content": [{"type": "text", "text": "looks failed"}], "isError": True}
    replay = replay_of(suite_of([{"tool": "t", "response": inside}]))
    (result,) = calls(replay, [("t", {})])
    assert result.is_error is False
    assert text(result) == "looks failed"


@RULES
def test_a_response_keeps_its_structured_content_and_a_plain_one_becomes_text() -> None:
    structured = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"n": 7}}
    entries = [{"tool": "a", "response": structured}, {"tool": "b", "response": {"sum": 3}}]
    replay = replay_of(suite_of(entries))
    first, second = calls(replay, [("a", {}), ("b", {})])
    assert first.structured_content == {"n": 7}
    assert text(second) == '{"sum":3}'


@RULES
def test_a_failure_without_a_response_is_still_a_tool_error() -> None:
    replay = replay_of(suite_of([{"tool": "t", "isError": True}]))
    (result,) = calls(replay, [("t", {})])
    assert result.is_error is True
    assert text(result)  # the host's fixed message: never an empty error


@MISSES
@pytest.mark.requirement("toolcall-spec.requirement.replay.miss-handling")
@pytest.mark.parametrize("on_miss", ["fail", "error"])
def test_a_miss_under_fail_is_a_tool_error_naming_it_and_counted(on_miss: str) -> None:
    replay = replay_of(suite_of(FAIL_THEN_SUCCEED, onMiss=on_miss))
    (result,) = calls(replay, [("lookup", {"id": 9})])
    assert result.is_error is True
    assert "fixture miss" in text(result)
    assert "lookup" in text(result)
    assert replay.summary()["fixtureMissCount"] == 1


def live_call_counter() -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    """A live side (the demo MCP server, through a real client) that records what reached it."""
    reached: list[tuple[str, dict[str, Any]]] = []
    server = demo_server()

    async def live(tool: str, args: dict[str, Any]) -> CallToolResult:
        reached.append((tool, args))
        async with mcp.Client(server) as client:
            return await client.call_tool(tool, args)

    return reached, live


@MISSES
@pytest.mark.requirement("toolcall-spec.requirement.replay.error-never-live")
def test_under_live_a_miss_goes_upstream_and_a_recorded_failure_never_does() -> None:
    recorded = mcp_text("recorded failure")
    entries = [{"tool": "add", "args": {"a": 1, "b": 2}, "isError": True, "response": recorded}]
    reached, live = live_call_counter()
    replay = replay_of(suite_of(entries, onMiss="live"), live=live)
    failed, live_sum, live_failure = calls(
        replay,
        [
            ("add", {"a": 1, "b": 2}),
            ("add", {"a": 2, "b": 3}),
            ("lookup_offer", {"reference": "x"}),
        ],
    )
    assert (failed.is_error, text(failed)) == (True, "recorded failure")
    assert (live_sum.is_error, text(live_sum)) == (False, "5")
    assert live_failure.is_error is True  # the live server's own isError passes through
    assert reached == [("add", {"a": 2, "b": 3}), ("lookup_offer", {"reference": "x"})]
    summary = replay.summary()
    assert (summary["fixtureMissCount"], summary["liveCallCount"]) == (2, 2)


@MISSES
def test_under_live_the_live_servers_json_rpc_error_reaches_the_client_unchanged() -> None:
    _, live = live_call_counter()
    replay = replay_of(suite_of([], onMiss="live"), live=live)

    async def body(client: mcp.Client) -> int:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("quota", {})
        return raised.value.error.code

    assert with_client(replay, body) == -32001  # the demo server's own code
    returned = replay.report()["events"][1]["payload"]
    assert returned["error"]["code"].endswith("tool_raised")
    assert replay.summary()["fixtureMissCount"] == 1


@TOOLS_LIST
def test_tools_list_answers_the_recorded_list() -> None:
    recorded = [
        {
            "name": "lookup",
            "description": "find a record",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}},
        }
    ]
    suite = suite_of(FAIL_THEN_SUCCEED)
    suite["tasks"][0]["input"] = {"mcp": {"tools": recorded}}
    replay = replay_of(suite)

    async def body(client: mcp.Client) -> Any:
        return await client.list_tools()

    listed = with_client(replay, body)
    assert [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools] == recorded


@TOOLS_LIST
def test_without_a_recorded_list_tools_come_from_the_entries_in_first_appearance_order() -> None:
    entries = [{"tool": "b"}, {"tool": "a"}, {"tool": "b"}]
    assert [tool["name"] for tool in derived_tools(entries)] == ["b", "a"]
    replay = replay_of(suite_of(entries))

    async def body(client: mcp.Client) -> Any:
        return await client.list_tools()

    listed = with_client(replay, body).tools
    assert [tool.name for tool in listed] == ["b", "a"]
    # A description each, and any arguments taken: clients that give the tools to a model need
    # a description, and Inspect AI reads a bare {"type": "object"} as taking no arguments.
    assert [tool.description for tool in listed] == [
        "b, answered from the suite's fixtures",
        "a, answered from the suite's fixtures",
    ]
    assert [tool.input_schema for tool in listed] == [
        {"type": "object", "additionalProperties": True}
    ] * 2


@LOG
def test_the_log_pairs_every_call_with_its_return_and_validates() -> None:
    replay = replay_of(suite_of(FAIL_THEN_SUCCEED))
    calls(replay, [("lookup", {"id": 1}), ("lookup", {"id": 1}), ("other", {})])
    report = copy.deepcopy(replay.report())
    events = report["events"]
    assert [event["type"] for event in events] == [
        "agent.tool-called",
        "agent.tool-returned",
    ] * 3
    for event in events:
        assert [p for p in validate(event, "run-event") if p.severity == "error"] == []
    returned = [event["payload"] for event in events[1::2]]
    assert "error" in returned[0]
    assert "outcome" not in returned[0]
    assert returned[0]["error"]["message"] != "upstream down"  # a fixed text, not the payload
    assert returned[1]["outcome"] == mcp_text("record 1")
    assert returned[2]["error"]["code"].endswith("fixture_miss")
    assert {event["payload"]["callId"] for event in events[::2]} == {
        event["payload"]["callId"] for event in events[1::2]
    }
    assert report["summary"]["fixtureMissCount"] == 1
    assert report["summary"]["unconsumedEntries"] == [2]


def test_a_suite_with_several_tasks_needs_a_task_id() -> None:
    suite = suite_of([])
    suite["tasks"].append({**suite["tasks"][0], "taskId": "session-2"})
    with pytest.raises(NoTaskError, match="session-1, session-2"):
        select_task(suite, None)
    assert select_task(suite, "session-2")["taskId"] == "session-2"
    with pytest.raises(NoTaskError, match="no task 'nope'"):
        select_task(suite, "nope")
