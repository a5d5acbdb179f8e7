"""One answer whatever represents a result (wire mapping, the mcp SDK's object, its aliased dump,
the generated model); exceptions whose str() raises; a session per Mcp-Session-Id."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from toolcall_spec.analytics.classify import classify_exception, classify_result
from toolcall_spec.analytics.events import EventFactory
from toolcall_spec.analytics.sinks import MemorySink
from toolcall_spec.mcp import derive_session_id, instrument
from toolcall_spec.models import CallToolResult as GeneratedCallToolResult

REPRESENTATIONS = pytest.mark.requirement(
    "toolcall-spec.requirement.analytics.result-representations"
)
UNPRINTABLE = pytest.mark.requirement("toolcall-spec.requirement.analytics.unprintable-exception")


@REPRESENTATIONS
@given(st.booleans(), st.lists(st.text(max_size=30), max_size=3))
def test_every_representation_of_one_result_classifies_the_same(
    is_error: bool, texts: list[str]
) -> None:
    sdk = CallToolResult(
        content=[TextContent(type="text", text=text) for text in texts], is_error=is_error
    )
    wire = sdk.model_dump(by_alias=True, mode="json", exclude_none=True)
    generated = GeneratedCallToolResult.model_validate(wire)
    answers = {
        classify_result(sdk),
        classify_result(wire),
        classify_result(sdk.model_dump(by_alias=True)),
        classify_result(generated),
    }
    assert len(answers) == 1
    assert answers.pop().is_error is is_error


@REPRESENTATIONS
def test_mypy_flags_an_argument_that_is_no_result(tmp_path: Path) -> None:
    """The overloads are the contract: mypy accepts a mapping and the SDK's object, and flags
    anything else."""
    pytest.importorskip("mypy")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from mcp.types import CallToolResult\n"
        "from toolcall_spec.analytics.classify import classify_result\n"
        'classify_result({"content": [], "isError": True})\n'
        "classify_result(CallToolResult(content=[], is_error=True))\n"
        "classify_result(42)\n"
        'classify_result("isError")\n',
        encoding="utf-8",
    )
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(snippet),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    flagged = sorted(
        {line.split(":")[1] for line in checked.stdout.splitlines() if ": error:" in line}
    )
    assert flagged == ["5", "6"], checked.stdout


@REPRESENTATIONS
def test_a_snake_case_dump_is_refused_with_the_fix_named() -> None:
    dumped = CallToolResult(content=[], is_error=True).model_dump()
    with pytest.raises(TypeError, match=r"model_dump\(by_alias=True\)"):
        classify_result(dumped)


@REPRESENTATIONS
def test_a_lax_flag_is_classified_as_the_sdk_sends_it() -> None:
    """pydantic coerces "true" when the SDK object is built; the client receives true."""
    coerced = CallToolResult.model_validate({"content": [], "isError": "true"})
    assert coerced.model_dump(by_alias=True, mode="json")["isError"] is True
    assert classify_result(coerced).is_error
    assert not classify_result({"content": [], "isError": "true"}).is_error


@REPRESENTATIONS
def test_an_event_built_from_the_sdk_object_captures_its_wire_form() -> None:
    sdk = CallToolResult(content=[TextContent(type="text", text="no")], is_error=True)
    event = EventFactory().tool_call("t", classify_result(sdk), output=sdk)
    assert event["status"] == "error"
    assert event["output_content"]["isError"] is True


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str fails")

    def __repr__(self) -> str:
        raise RuntimeError("repr fails")


@UNPRINTABLE
def test_an_exception_whose_str_raises_is_named_by_its_type() -> None:
    assert classify_exception(UnprintableError()).fields() == {
        "status": "error",
        "error_category": "unknown",
        "error_message": "UnprintableError",
    }


@UNPRINTABLE
def test_a_real_server_tool_raising_it_yields_exactly_one_event() -> None:
    server = MCPServer("demo")

    @server.tool()
    def explode() -> str:
        raise UnprintableError

    sink = MemorySink()
    instrument(server, sink)

    async def call() -> None:
        async with mcp.Client(server, mode="legacy") as client:
            await client.call_tool("explode", {})

    anyio.run(call)
    assert len(sink.events) == 1
    event = sink.events[0]
    assert (event["status"], event["error_category"]) == ("error", "unknown")
    assert event["error_message"] == "UnprintableError"


SESSIONS = pytest.mark.requirement("toolcall-spec.requirement.analytics.session-per-client")


@SESSIONS
def test_the_session_id_is_derived_as_yavio_derives_it() -> None:
    derived = derive_session_id("abc")
    assert derived.startswith("ses_")
    assert len(derived) == 25
    assert derived != derive_session_id("abd")
    assert derived == derive_session_id("abc")


@SESSIONS
def test_two_clients_over_streamable_http_get_two_sessions() -> None:
    uvicorn = pytest.importorskip("uvicorn")
    import socket
    import threading
    import time

    server = MCPServer("demo")

    @server.tool()
    def ping() -> str:
        return "pong"

    sink = MemorySink()
    instrument(server, sink)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning"
    )
    http = uvicorn.Server(config)
    thread = threading.Thread(target=http.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not http.started and time.monotonic() < deadline:
        time.sleep(0.05)

    async def two_clients() -> None:
        for _ in range(2):
            async with mcp.Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
                await client.call_tool("ping", {})
                await client.call_tool("ping", {})

    try:
        anyio.run(two_clients)
    finally:
        http.should_exit = True
        thread.join(10)
    sessions = [event["session_id"] for event in sink.events]
    assert len(sessions) == 4
    assert sessions[0] == sessions[1] != sessions[2] == sessions[3]
    assert all(session.startswith("ses_") for session in sessions)
