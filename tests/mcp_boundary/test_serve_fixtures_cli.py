"""``toolcall-spec serve-fixtures`` as a process: the real ``mcp`` Python client over stdio and
streamable HTTP, a live MCP server behind ``-- CMD`` and ``--upstream URL``, the log written when
the session ends (stdin closed, SIGTERM), and clear errors for bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from support.cli import CLI, run_cli
from support.replay import one_task_suite
from support.repo import REPO

from toolcall_spec.cli.serve_fixtures_cmd import MISSED
from toolcall_spec.validation import validate

RULES = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-rules")
MISSES = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-miss")
LOG = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-log")

LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
TIMEOUT = 60


def mcp_text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def write_suite(path: Path, entries: list[dict[str, Any]], on_miss: str = "fail") -> Path:
    suite = one_task_suite(entries, "demo.evals.serve-cli", onMiss=on_miss)
    path.write_text(json.dumps(suite), encoding="utf-8")
    return path


FAIL_THEN_SUCCEED: list[dict[str, Any]] = [
    {"tool": "lookup", "args": {"id": 1}, "isError": True, "response": mcp_text("upstream down")},
    {"tool": "lookup", "args": {"id": 1}, "response": mcp_text("record 1")},
]


def text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def session(target: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[Any, str]]:
    """One client session: each call's flag and text (or its JSON-RPC error code), in order."""
    seen: list[tuple[Any, str]] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(target) as client:
                for tool, args in calls:
                    try:
                        result = await client.call_tool(tool, args)
                    except MCPError as exc:
                        seen.append(("json-rpc error", str(exc.error.code)))
                        continue
                    seen.append((result.is_error, text(result)))

    anyio.run(main)
    return seen


def stdio(*args: str | Path, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "serve-fixtures", *map(str, args)], env=env
    )


def wait_for(path: Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The log, once its writer has renamed it into place (the client may return first)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.05)
    log: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return log


@RULES
@LOG
def test_over_stdio_a_client_gets_the_failure_then_the_success_and_the_log(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED)
    log_file = tmp_path / "run.json"
    seen = session(
        stdio(suite, "--log", log_file, "--agent-id", "claude-desktop"),
        [("lookup", {"id": 1})] * 3,
    )
    assert seen[:2] == [(True, "upstream down"), (False, "record 1")]
    assert seen[2][0] is True
    assert "fixture miss" in seen[2][1]
    log = wait_for(log_file)
    assert log["summary"]["fixtureMissCount"] == 1
    assert log["summary"]["callCount"] == 3
    assert len(log["events"]) == 6
    for event in log["events"]:
        assert [p for p in validate(event, "run-event") if p.severity == "error"] == []
        assert event["payload"]["agentId"] == "claude-desktop"


@contextmanager
def process(
    *args: str | Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A command in the background, stopped with SIGTERM (then killed) when the block ends."""
    child = subprocess.Popen(
        [*map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        yield child
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def raw_stdio_session(suite: Path, log_file: Path) -> subprocess.Popen[bytes]:
    """``serve-fixtures SUITE --log LOG`` over stdio, its pipes ours to write raw messages to."""
    return subprocess.Popen(
        [*CLI, "serve-fixtures", str(suite), "--log", str(log_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def serving_url(child: subprocess.Popen[str]) -> str:
    assert child.stdout is not None
    line = child.stdout.readline()  # the first line, printed once the socket is bound
    assert line.startswith("serving on "), (line, child.stderr.read() if child.stderr else "")
    return line.removeprefix("serving on ").strip()


@RULES
@LOG
def test_over_streamable_http_until_sigterm_then_the_log(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED)
    log_file = tmp_path / "run.json"
    with process(*CLI, "serve-fixtures", suite, "--http", "--log", log_file) as child:
        url = serving_url(child)
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp")
        first = session(url, [("lookup", {"id": 1})])
        second = session(url, [("lookup", {"id": 1}), ("lookup", {"id": 1})])
        assert not log_file.exists()  # written when the server stops, not before
        child.send_signal(signal.SIGTERM)
        assert child.wait(TIMEOUT) == MISSED  # the last call missed
    # One process is one run: the second connection finds the first entry consumed.
    assert first == [(True, "upstream down")]
    assert second[0] == (False, "record 1")
    assert second[1][0] is True
    assert wait_for(log_file)["summary"]["fixtureMissCount"] == 1


@LOG
def test_sigterm_mid_session_over_stdio_still_writes_the_log(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED)
    log_file = tmp_path / "run.json"
    child = raw_stdio_session(suite, log_file)
    assert child.stdin is not None
    assert child.stdout is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"id": 1}},
        },
    ]
    try:
        for message in messages:
            child.stdin.write(json.dumps(message).encode() + b"\n")
            child.stdin.flush()
        answers = [json.loads(child.stdout.readline()) for _ in range(2)]
        assert answers[1]["result"]["isError"] is True
        child.send_signal(signal.SIGTERM)  # stdin still open: the session did not end by itself
        child.wait(TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    log = wait_for(log_file)
    assert log["summary"]["callCount"] == 1
    assert log["events"][1]["payload"]["status"] == "error"


@MISSES
@pytest.mark.requirement("toolcall-spec.requirement.replay.error-never-live")
def test_a_miss_goes_to_the_live_stdio_server_and_a_recorded_failure_does_not(
    tmp_path: Path,
) -> None:
    calls_file = tmp_path / "live-calls.jsonl"
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED, on_miss="live")
    log_file = tmp_path / "run.json"
    env = {**os.environ, "LIVE_CALLS_FILE": str(calls_file)}
    seen = session(
        stdio(suite, "--log", log_file, "--", sys.executable, LIVE_SERVER, env=env),
        [("lookup", {"id": 1}), ("lookup", {"id": 7}), ("flaky", {"key": "x"}), ("quota", {})],
    )
    assert seen == [
        (True, "upstream down"),
        (False, "live record 7"),
        (True, "x: upstream unavailable"),  # the live server's own failure, passed on
        ("json-rpc error", "-32001"),  # and its JSON-RPC error, unchanged
    ]
    reached = [json.loads(line) for line in calls_file.read_text().splitlines()]
    assert reached == [
        {"tool": "lookup", "args": {"id": 7}},
        {"tool": "flaky", "args": {"key": "x"}},
        {"tool": "quota", "args": {}},
    ]
    summary = wait_for(log_file)["summary"]
    assert (summary["fixtureMissCount"], summary["liveCallCount"]) == (3, 3)


@MISSES
def test_a_miss_goes_to_a_live_streamable_http_server(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED, on_miss="live")
    with process(sys.executable, LIVE_SERVER, "--http") as server:
        upstream = serving_url(server)
        seen = session(
            stdio(suite, "--upstream", upstream), [("lookup", {"id": 3}), ("lookup", {"id": 1})]
        )
    assert seen == [(False, "live record 3"), (True, "upstream down")]


@pytest.mark.parametrize(
    ("extra", "entries", "on_miss", "expected"),
    [
        (["--task", "nope"], FAIL_THEN_SUCCEED, "fail", "no task 'nope'"),
        (["--agent-id", "my agent"], FAIL_THEN_SUCCEED, "fail", "not an agent id"),
        ([], FAIL_THEN_SUCCEED, "live", "onMiss: live"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--", "x"], FAIL_THEN_SUCCEED, "live", "either"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    tmp_path: Path, extra: list[str], entries: list[dict[str, Any]], on_miss: str, expected: str
) -> None:
    suite = write_suite(tmp_path / "suite.json", entries, on_miss)
    run = run_cli("serve-fixtures", suite, *extra, timeout=TIMEOUT)
    assert run.returncode == 2
    assert expected in run.stderr


def test_an_invalid_suite_exits_1_naming_the_path(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", [{"tool": "t", "isError": "true"}])
    run = run_cli("serve-fixtures", suite, timeout=TIMEOUT)
    assert run.returncode == 1
    assert "tasks[0].fixtures.toolResponses[0].isError" in run.stderr


def test_an_unreadable_suite_exits_2(tmp_path: Path) -> None:
    run = run_cli("serve-fixtures", tmp_path / "missing.json", timeout=TIMEOUT)
    assert run.returncode == 2
    assert "missing.json" in run.stderr


@RULES
def test_quiet_does_not_silence_the_protocol_over_stdio(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED)
    seen = session(stdio(suite, "--quiet"), [("lookup", {"id": 1})] * 2)
    assert seen == [(True, "upstream down"), (False, "record 1")]


@pytest.mark.parametrize(
    "live",
    [["--", "/nonexistent/mcp-server"], ["--upstream", "http://127.0.0.1:9/mcp"]],
)
def test_a_live_server_that_cannot_be_reached_is_a_message_not_a_traceback(
    tmp_path: Path, live: list[str]
) -> None:
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED, on_miss="live")
    run = run_cli("serve-fixtures", suite, *live, stdin="", timeout=TIMEOUT)
    assert run.returncode == 2
    assert "connecting to the live server failed" in run.stderr


def test_malformed_traffic_is_answered_as_the_protocol_says_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    """A line that is not JSON is dropped by the SDK's transport, a ``tools/call`` whose
    arguments are not an object gets JSON-RPC ``-32602``; the next call is served, and closing
    stdin ends the session with its log."""
    suite = write_suite(tmp_path / "suite.json", FAIL_THEN_SUCCEED)
    log_file = tmp_path / "run.json"
    child = raw_stdio_session(suite, log_file)
    assert child.stdin is not None
    assert child.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    lines = [
        b"this is not JSON",
        json.dumps(initialize).encode(),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "lookup", "arguments": [1]},
            }
        ).encode(),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "lookup", "arguments": {"id": 1}},
            }
        ).encode(),
    ]
    try:
        child.stdin.write(b"\n".join(lines) + b"\n")
        child.stdin.flush()
        answers = {}
        for _ in range(3):
            answer = json.loads(child.stdout.readline())
            answers[answer["id"]] = answer
        assert answers[2]["error"]["code"] == -32602
        assert answers[3]["result"]["isError"] is True
        child.stdin.close()  # the client ends the session
        assert child.wait(TIMEOUT) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert wait_for(log_file)["summary"]["callCount"] == 1
