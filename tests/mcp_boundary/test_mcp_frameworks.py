"""One probe of tool calls, driven by real clients (the ``mcp`` Python client and fastmcp's own
``Client``) over stdio (the server a subprocess) and over streamable HTTP (uvicorn on a free
loopback port), against the same demo tools on the ``mcp`` SDK's ``MCPServer`` and on standalone
FastMCP 4, each instrumented: the same events, by the same rules, on every framework."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
pytest.importorskip("fastmcp", reason="the fastmcp extra is not installed")

import anyio
import fastmcp
import mcp
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError
from support.mcp_servers import (
    DEMO_CALLS,
    FRAMEWORKS,
    Call,
    assert_probe_events,
    event_summary,
    framework_server,
)

from toolcall_spec.analytics.sinks import MemorySink
from toolcall_spec.http.server import BackgroundServer
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.mcp import derive_session_id, instrument

ONE_EVENT = pytest.mark.requirement("toolcall-spec.requirement.analytics.one-event-per-call")
TOOL_ERROR = pytest.mark.requirement("toolcall-spec.requirement.analytics.tool-error-category")
THROWN = pytest.mark.requirement("toolcall-spec.requirement.analytics.thrown-unknown")
PRE_HANDLER = pytest.mark.requirement("toolcall-spec.requirement.analytics.pre-handler-validation")
SESSIONS = pytest.mark.requirement("toolcall-spec.requirement.analytics.session-per-client")
FRAMEWORK_COVERAGE = pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")

PROBE_SERVER = Path(__file__).resolve().parent.parent / "support" / "mcp_probe_server.py"
TIMEOUT = 60

PROBE = DEMO_CALLS


def assert_client_saw_errors(framework: str, outcomes: list[Any]) -> None:
    """What the client received: every failure as ``isError: true``, except that MCPServer
    answers a tool's ``MCPError`` with a JSON-RPC error."""
    errors = [outcome if isinstance(outcome, str) else outcome.is_error for outcome in outcomes]
    quota = "jsonrpc-error" if framework == "mcp" else True
    assert errors == [False, True, True, True, True, quota, True, True, False, True]


# --- clients --------------------------------------------------------------------------------

Driver = Callable[[Any, list[Call]], Awaitable[list[Any]]]


async def with_mcp_client(target: Any, calls: list[Call], mode: str = "auto") -> list[Any]:
    outcomes: list[Any] = []
    async with mcp.Client(target, mode=mode) as client:
        for name, arguments in calls:
            try:
                outcomes.append(await client.call_tool(name, arguments))
            except MCPError:
                outcomes.append("jsonrpc-error")
    return outcomes


async def with_fastmcp_client(
    target: Any, calls: list[Call], mode: str = "auto", sessions: list[str | None] | None = None
) -> list[Any]:
    """The calls through fastmcp's ``Client``; ``sessions`` gets the transport's
    ``Mcp-Session-Id`` while connected (it is forgotten on close)."""
    outcomes: list[Any] = []
    async with fastmcp.Client(target, mode=mode) as client:
        for name, arguments in calls:
            try:
                outcomes.append(await client.call_tool_mcp(name, arguments))
            except MCPError:
                outcomes.append("jsonrpc-error")
        if sessions is not None:
            sessions.append(target.get_session_id())
    return outcomes


def drive(driver: Callable[[], Awaitable[list[Any]]]) -> list[Any]:
    async def bounded() -> list[Any]:
        with anyio.fail_after(TIMEOUT):
            return await driver()

    return anyio.run(bounded)


# --- stdio: the server is a subprocess ------------------------------------------------------


def read_events(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as handle:
        return [value for _, value, _ in iter_jsonl(handle)]


@FRAMEWORK_COVERAGE
@ONE_EVENT
@TOOL_ERROR
@THROWN
@PRE_HANDLER
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_mcp_client_over_stdio(framework: str, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    target = StdioServerParameters(
        command=sys.executable, args=[str(PROBE_SERVER), framework, str(events)]
    )
    outcomes = drive(lambda: with_mcp_client(target, PROBE))
    assert_client_saw_errors(framework, outcomes)
    recorded = read_events(events)
    assert_probe_events(framework, recorded)
    assert len({event["session_id"] for event in recorded}) == 1  # stdio: one session


@FRAMEWORK_COVERAGE
@ONE_EVENT
@THROWN
@PRE_HANDLER
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_fastmcp_client_over_stdio(framework: str, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    target = StdioTransport(
        command=sys.executable,
        args=[str(PROBE_SERVER), framework, str(events)],
        keep_alive=False,
    )
    outcomes = drive(lambda: with_fastmcp_client(target, PROBE))
    assert_client_saw_errors(framework, outcomes)
    assert_probe_events(framework, read_events(events))


# --- streamable HTTP: uvicorn on a free loopback port ---------------------------------------


@contextmanager
def serving_http(framework: str) -> Iterator[tuple[str, MemorySink]]:
    """The instrumented demo server over streamable HTTP: its ``/mcp`` URL and the sink."""
    server = framework_server(framework)
    sink = MemorySink()
    instrument(server, sink)
    app = server.streamable_http_app() if framework == "mcp" else server.http_app()
    with BackgroundServer(app) as background:
        yield f"{background.url}/mcp", sink


@FRAMEWORK_COVERAGE
@ONE_EVENT
@TOOL_ERROR
@THROWN
@PRE_HANDLER
@SESSIONS
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_mcp_client_over_streamable_http(framework: str) -> None:
    with serving_http(framework) as (url, sink):
        outcomes = drive(lambda: with_mcp_client(url, PROBE, mode="legacy"))
        drive(lambda: with_mcp_client(url, [("add", {"a": 2, "b": 2})], mode="legacy"))
    assert_client_saw_errors(framework, outcomes)
    first, second = sink.events[: len(PROBE)], sink.events[len(PROBE) :]
    assert_probe_events(framework, first)
    assert [event_summary(event) for event in second] == [("add", "success", None, None, True)]
    # One session per Mcp-Session-Id: the probe's connection, then the second connection.
    (first_session,) = {event["session_id"] for event in first}
    assert first_session.startswith("ses_")
    assert second[0]["session_id"].startswith("ses_")
    assert second[0]["session_id"] != first_session


@FRAMEWORK_COVERAGE
@ONE_EVENT
@SESSIONS
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_fastmcp_client_over_streamable_http(framework: str) -> None:
    transport_sessions: list[str | None] = []

    async def connection(url: str, calls: list[Call]) -> list[Any]:
        # legacy: the initialize handshake, where the server hands out an Mcp-Session-Id
        transport = StreamableHttpTransport(url)
        return await with_fastmcp_client(transport, calls, "legacy", transport_sessions)

    with serving_http(framework) as (url, sink):
        outcomes = drive(lambda: connection(url, PROBE))
        drive(lambda: connection(url, [("add", {"a": 2, "b": 2})]))
    assert_client_saw_errors(framework, outcomes)
    assert_probe_events(framework, sink.events[: len(PROBE)])
    first_key, second_key = transport_sessions
    assert first_key is not None
    assert second_key is not None
    assert first_key != second_key
    assert {event["session_id"] for event in sink.events[: len(PROBE)]} == {
        derive_session_id(first_key)
    }
    assert sink.events[len(PROBE)]["session_id"] == derive_session_id(second_key)


@FRAMEWORK_COVERAGE
@ONE_EVENT
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_mcp_client_over_streamable_http_in_the_2026_protocol(framework: str) -> None:
    # mode "auto" discovers the server and speaks the 2026-07-28 protocol: no handshake.
    with serving_http(framework) as (url, sink):
        outcomes = drive(lambda: with_mcp_client(url, PROBE, mode="auto"))
    assert_client_saw_errors(framework, outcomes)
    assert_probe_events(framework, sink.events)
