"""``toolcall-spec record --upstream URL`` between the real ``mcp`` client over streamable HTTP
and a real MCP server over HTTP (MCPServer and FastMCP 4, each in its own process on loopback):
the client sees what it sees without the proxy, each session is a task, failures are kept."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from support.recording import (
    client_sees,
    entries,
    flags,
    free_port,
    load_suite,
    recording_proxy,
    stop,
    upstream,
)

TRANSPARENT = pytest.mark.requirement("toolcall-spec.requirement.record.transparent")
ENTRIES = pytest.mark.requirement("toolcall-spec.requirement.record.one-entry-per-call")
FAILURES = pytest.mark.requirement("toolcall-spec.requirement.record.failures-kept")
SERVER_DEATH = pytest.mark.requirement("toolcall-spec.requirement.record.server-death-answered")

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 1, "b": 2}),
    ("flaky", {"key": "h"}),
    ("flaky", {"key": "h"}),
    ("lookup", {"reference": "R2"}),
]
FLAGS = [("add", False), ("flaky", True), ("flaky", False), ("lookup", True)]


def run_client(url: str, calls: list[tuple[str, dict[str, Any]]], mode: str) -> list[Any]:
    return client_sees(url, calls, mode)


@TRANSPARENT
@ENTRIES
@pytest.mark.parametrize(
    ("framework", "mode"), [("mcp", "legacy"), ("mcp", "auto"), ("fastmcp", "legacy")]
)
def test_http_sessions_are_recorded_one_task_each(
    tmp_path: Path, framework: str, mode: str
) -> None:
    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    with upstream(framework) as (url, _):
        direct = run_client(url, CALLS, mode)
    with upstream(framework) as (url, _), recording_proxy(url, out, log) as (proxy_url, proxy):
        first = run_client(proxy_url, CALLS, mode)
        second = run_client(proxy_url, CALLS[:1], mode)
        stop(proxy)
        # uvicorn stops gracefully on SIGTERM, then re-raises it (its own exit convention).
        assert proxy.returncode in (0, -signal.SIGTERM)
    assert first == direct
    assert second == direct[:2]
    suite = load_suite(out)
    if mode == "legacy":  # each session has its Mcp-Session-Id: a task of its own
        assert [flags(suite, i) for i in range(len(suite["tasks"]))] == [FLAGS, [("add", False)]]
    else:  # the 2026-07-28 protocol has no sessions: one stateless task
        assert flags(suite) == [*FLAGS, ("add", False)]
    assert [e["args"] for e in entries(suite)[:4]] == [args for _, args in CALLS]


@SERVER_DEATH
@FAILURES
def test_an_upstream_that_dies_mid_call_gets_the_client_an_error_and_the_suite_a_failure(
    tmp_path: Path,
) -> None:
    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    with upstream("mcp") as (url, _), recording_proxy(url, out, log) as (proxy_url, _proxy):
        seen = run_client(proxy_url, [("add", {"a": 1, "b": 1}), ("die", {})], "legacy")
    assert seen[1]["structuredContent"] == {"result": 2}
    assert seen[2]["jsonrpc-error"] == -32000
    suite = load_suite(out)
    assert flags(suite) == [("add", False), ("die", True)]
    assert "tools/call 'die'" in log.read_text("utf-8")


@SERVER_DEATH
@FAILURES
def test_an_unreachable_upstream_answers_the_call_with_an_error_and_records_it(
    tmp_path: Path,
) -> None:
    import httpx

    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    nowhere = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add"}}
    with recording_proxy(nowhere, out, log) as (proxy_url, _proxy):
        answer = httpx.post(proxy_url, json=call, timeout=30)
    assert answer.status_code == 200
    assert answer.json()["id"] == 7
    assert answer.json()["error"]["code"] == -32000
    suite = load_suite(out)
    assert flags(suite) == [("add", True)]
    assert entries(suite)[0]["args"] == {}  # no arguments: none, matched exactly
    assert "cannot reach the MCP server" in log.read_text("utf-8")


@pytest.mark.requirement("toolcall-spec.requirement.record.loopback-guard")
@pytest.mark.parametrize(
    "headers",
    [{"Host": "evil.example"}, {"Origin": "http://evil.example"}],
    ids=["host", "origin"],
)
def test_a_request_from_a_foreign_host_or_origin_is_refused(
    tmp_path: Path, headers: dict[str, str]
) -> None:
    import httpx

    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}
    with upstream("mcp") as (url, _), recording_proxy(url, out, log) as (proxy_url, _proxy):
        refused = httpx.post(proxy_url, json=call, headers=headers, timeout=30)
        allowed = httpx.post(
            proxy_url,
            json=call,
            headers={
                "Origin": "http://localhost:3000",
                "Accept": "application/json, text/event-stream",
            },
            timeout=30,
        )
    assert refused.status_code == 403
    assert "not a loopback" in refused.text
    assert allowed.status_code != 403  # a loopback origin passes (the upstream answers it)
