"""``toolcall-spec record`` over stdio between the real ``mcp`` Python client and real servers
(the ``mcp`` SDK's MCPServer and FastMCP 4), each in its own process: the client sees exactly
what it sees without the proxy, and the suite on disk holds every call in order, failures kept."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
from mcp import StdioServerParameters
from support.recording import (
    RawClient,
    client_sees,
    entries,
    flags,
    load_suite,
    python_server,
    record_argv,
)

from toolcall_spec.analytics.pii import EMAIL_TOKEN
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.validation import validate

TRANSPARENT = pytest.mark.requirement("toolcall-spec.requirement.record.transparent")
ENTRIES = pytest.mark.requirement("toolcall-spec.requirement.record.one-entry-per-call")
FAILURES = pytest.mark.requirement("toolcall-spec.requirement.record.failures-kept")
ON_DISK = pytest.mark.requirement("toolcall-spec.requirement.record.written-as-answered")
REDACT = pytest.mark.requirement("toolcall-spec.requirement.record.redact")
EVENTS = pytest.mark.requirement("toolcall-spec.requirement.record.events")

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 1, "b": 2}),
    ("flaky", {"key": "k"}),
    ("flaky", {"key": "k"}),
    ("lookup", {"reference": "R1"}),
    ("quota", {}),
    ("add", {"a": 2, "b": 40}),
]
EXPECTED_FLAGS = [
    ("add", False),
    ("flaky", True),
    ("flaky", False),
    ("lookup", True),
    ("quota", True),
    ("add", False),
]


def logged(argv: list[str], log: Path) -> list[str]:
    """``argv`` with its stderr appended to ``log`` (the client keeps the proxy's stderr)."""
    return ["sh", "-c", 'exec "$@" 2>>"$0"', str(log), *argv]


def run_client(argv: list[str], calls: list[tuple[str, dict[str, Any]]], mode: str) -> list[Any]:
    """What the real client receives for each call (a JSON-RPC error as its message)."""
    return client_sees(StdioServerParameters(command=argv[0], args=argv[1:]), calls, mode)


@TRANSPARENT
@ENTRIES
@FAILURES
@pytest.mark.parametrize(
    ("framework", "mode"), [("mcp", "auto"), ("mcp", "legacy"), ("fastmcp", "legacy")]
)
def test_the_client_sees_what_it_sees_without_the_proxy_and_every_call_is_recorded(
    tmp_path: Path, framework: str, mode: str
) -> None:
    out, log = tmp_path / "recorded.json", tmp_path / "stderr.log"
    direct = run_client(python_server(framework), CALLS, mode)
    proxied = run_client(logged(record_argv(out, *python_server(framework)), log), CALLS, mode)
    assert proxied == direct
    suite = load_suite(out)
    assert len(suite["tasks"]) == 1  # one client session
    listed = suite["tasks"][0]["input"]["mcp"]["tools"]  # the tools/list result, as received
    assert sorted(tool["name"] for tool in listed) == direct[0]
    assert {"a", "b"} <= set(
        next(t for t in listed if t["name"] == "add")["inputSchema"]["properties"]
    )
    assert flags(suite) == EXPECTED_FLAGS
    recorded = entries(suite)
    assert [e["args"] for e in recorded] == [args for _, args in CALLS]
    assert {e["argsMatch"] for e in recorded} == {"exact"}
    # A result is recorded as the client received it, isError included.
    answered = [(e, r) for e, r in zip(recorded, direct[1:], strict=True) if "content" in r]
    assert [e["response"]["content"] for e, _ in answered] == [r["content"] for _, r in answered]
    assert [e["response"]["isError"] is True for e, _ in answered] == [
        r["isError"] for _, r in answered
    ]
    if framework == "mcp":  # MCPError is a JSON-RPC error there (FastMCP makes it a result):
        # recorded as a failure, its error kept as text, and named in a warning.
        assert direct[5] == {"jsonrpc-error": -32001, "message": "quota exceeded"}
        assert "-32001" in recorded[4]["response"]["content"][0]["text"]
        assert "tools/call 'quota'" in log.read_text("utf-8")


@ON_DISK
def test_a_proxy_killed_mid_session_keeps_every_call_answered_so_far(tmp_path: Path) -> None:
    """The call open at the kill sleeps 2 s: the killed proxy's server lives on until it ends and
    holds stderr open meanwhile (30 s made this the slowest test of the suite)."""
    out = tmp_path / "recorded.json"
    client = RawClient(record_argv(out, *python_server("mcp")))
    try:
        client.handshake()
        client.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        answered = client.call("tools/call", {"name": "flaky", "arguments": {"key": "x"}})
        assert answered["result"]["isError"] is True
        client.send("tools/call", {"name": "slow", "arguments": {"seconds": 2}})
        client.process.send_signal(signal.SIGKILL)
    finally:
        client.finish()
    assert not out.exists()  # killed: the suite was never written, its journal holds the calls
    suite = load_suite(out)
    assert flags(suite) == [("add", False), ("flaky", True)]
    assert [p.name for p in tmp_path.iterdir()] == [f"{out.name}.journal"]  # no temporary left


@ON_DISK
@FAILURES
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_ctrl_c_writes_the_open_call_as_a_failure(tmp_path: Path, stop: int) -> None:
    out = tmp_path / "recorded.json"
    client = RawClient(record_argv(out, *python_server("mcp"), options=("--shutdown-timeout", "2")))
    client.handshake()
    client.call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    client.send("tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    time.sleep(0.5)  # the slow call reaches the server
    client.process.send_signal(stop)
    client.process.wait(30)  # the signal alone ends it: the client has not closed stdin
    status, stderr = client.finish()
    assert status == (130 if stop == signal.SIGINT else 0)
    suite = load_suite(out)
    assert flags(suite) == [("add", False), ("slow", True)]
    assert "'slow'" in stderr


@REDACT
@EVENTS
def test_redact_strips_pii_from_responses_and_events_count_every_call(tmp_path: Path) -> None:
    out, events = tmp_path / "recorded.json", tmp_path / "events.jsonl"
    options = ("--redact", "--events", str(events))
    run_client(record_argv(out, *python_server("mcp"), options=options), CALLS, "legacy")
    suite = load_suite(out)
    lookup = entries(suite)[3]
    assert lookup["isError"] is True
    assert lookup["response"]["content"][0]["text"] == f"offer R1 expired for {EMAIL_TOKEN}"
    assert "max@example.com" not in out.read_text("utf-8")
    with events.open("rb") as handle:
        lines = [value for _, value, error in iter_jsonl(handle) if error is None]
    assert [(e["event_name"], e["status"]) for e in lines] == [
        (tool, "error" if failed else "success") for tool, failed in EXPECTED_FLAGS
    ]
    assert [e.get("error_category") for e in lines] == [
        None,
        "tool_error",
        None,
        "tool_error",
        "unknown",
        None,
    ]
    assert all(not validate(e, "tool-call-event") for e in lines)
    assert len({e["session_id"] for e in lines}) == 1


def test_a_server_command_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    from support.cli import run_cli

    run = run_cli("record", "--out", tmp_path / "s.json", "--", "/no/such/server")
    assert run.returncode == 2
    assert "cannot start '/no/such/server'" in run.stderr
    assert sys.executable  # the interpreter running the tests runs the proxy too


@EVENTS
def test_events_are_posted_to_a_real_ingest_endpoint_under_the_key(tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

    from toolcall_spec.analytics.store import open_store
    from toolcall_spec.http.ingest_app import IngestSettings, create_ingest_app
    from toolcall_spec.http.server import BackgroundServer

    out, key = tmp_path / "recorded.json", "key-of-the-recording-0123456789"
    with (
        open_store(str(tmp_path / "events.duckdb")) as store,
        BackgroundServer(create_ingest_app(IngestSettings(store, {key: "recorded"}))) as ingest,
    ):
        # Clients give a server only a few environment variables: the key goes as a flag.
        options = ("--events", ingest.url, "--events-key", key)
        # A raw client that waits for the proxy to exit: the mcp client terminates its server
        # 2 s after closing its input, and events still being posted then are lost (the
        # posting sink's close waits up to 10 s); this test is about what is posted.
        client = RawClient(record_argv(out, *python_server("mcp"), options=options))
        try:
            client.handshake()
            for name, arguments in CALLS:
                client.call("tools/call", {"name": name, "arguments": arguments})
        finally:
            status, stderr = client.finish()
        assert status == 0, stderr
        by_tool = store.metrics("recorded").by_tool
    assert {tool: (b.calls, b.errors) for tool, b in by_tool.items()} == {
        "add": (2, 0),
        "flaky": (2, 1),
        "lookup": (1, 1),
        "quota": (1, 1),
    }


@TRANSPARENT
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_resources_prompts_progress_and_ping_pass_through_unchanged(
    tmp_path: Path, mode: str
) -> None:
    """Everything that is not a tool call reaches the client as it would without the proxy, and
    only the tool call is recorded."""

    def session(argv: list[str]) -> list[Any]:
        seen: list[Any] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(("progress", progress, total, message))

        async def main() -> None:
            params = StdioServerParameters(command=argv[0], args=argv[1:])
            with anyio.fail_after(60):
                async with mcp.Client(params, mode=mode) as client:
                    seen.append(
                        (await client.list_resources()).model_dump(
                            mode="json", by_alias=True, exclude_none=True
                        )
                    )
                    seen.append(
                        (await client.read_resource("memo://greeting")).model_dump(
                            mode="json", by_alias=True, exclude_none=True
                        )
                    )
                    seen.append(
                        (await client.list_prompts()).model_dump(
                            mode="json", by_alias=True, exclude_none=True
                        )
                    )
                    prompt = await client.get_prompt("greet", {"name": "Ada"})
                    seen.append(prompt.model_dump(mode="json", by_alias=True, exclude_none=True))
                    if mode == "legacy":  # ping is gone from the 2026-07-28 protocol
                        await client.send_ping()
                    result = await client.call_tool(
                        "count", {"n": 3}, progress_callback=on_progress
                    )
                    seen.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))

        anyio.run(main)
        return seen

    out = tmp_path / "recorded.json"
    direct = session(python_server("mcp"))
    proxied = session(record_argv(out, *python_server("mcp")))
    assert proxied == direct
    assert [s[:3] for s in proxied if isinstance(s, tuple)] == [
        ("progress", 1.0, 3.0),
        ("progress", 2.0, 3.0),
        ("progress", 3.0, 3.0),
    ]
    assert "hello from a resource" in json.dumps(proxied[1])
    suite = load_suite(out)
    assert flags(suite) == [("count", False)]
    assert entries(suite)[0]["args"] == {"n": 3}
