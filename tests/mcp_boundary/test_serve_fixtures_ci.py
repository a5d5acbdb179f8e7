"""``serve-fixtures`` for CI and resilience, as processes: a run that missed the fixtures exits with
the status ``--help`` documents for it (over stdio when the client closes stdin or SIGTERM comes,
over streamable HTTP on SIGTERM; Ctrl-C stays 130), and ``--inject`` answers the calls it selects
with a tool error the real ``mcp`` client sees as ``isError: true``, counted apart from recorded
failures and misses, or late; a bad spec is refused naming its bad part."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
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
from support.recording import RawClient, child_env
from support.replay import one_task_suite

from toolcall_spec.cli.serve_fixtures_cmd import MISSED
from toolcall_spec.mcp.fixture_server import FixtureReplay, build_server, select_task
from toolcall_spec.replay.injection import parse_injection
from toolcall_spec.validation import validate

MISS_EXIT = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-miss-exit")
INJECT = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-inject")

TIMEOUT = 60


def mcp_text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


FAIL_THEN_SUCCEED: list[dict[str, Any]] = [
    {"tool": "lookup", "args": {"id": 1}, "isError": True, "response": mcp_text("upstream down")},
    {"tool": "lookup", "args": {"id": 1}, "response": mcp_text("record 1")},
]


def write_suite_text() -> str:
    return json.dumps(one_task_suite(FAIL_THEN_SUCCEED, "demo.evals.serve-ci"))


def write_suite(path: Path) -> Path:
    path.write_text(write_suite_text(), encoding="utf-8")
    return path


def documented_status(wanted: str) -> int:
    """The status ``serve-fixtures --help``'s exit-status table gives the line starting so."""
    text = run_cli("serve-fixtures", "--help").stdout
    table = text[text.index("exit status:") :]
    for match in re.finditer(r"^\s+(\d+)\s+(.+)$", table, re.M):
        if match.group(2).startswith(wanted):
            return int(match.group(1))
    raise AssertionError(f"no exit status line starting {wanted!r} in:\n{table}")


def missed_status() -> int:
    return documented_status("the session ended (stdin closed, SIGTERM) but a call missed")


def text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def timed_session(
    target: Any, calls: list[tuple[str, dict[str, Any]]]
) -> list[tuple[bool, str, float]]:
    """One ``mcp`` client session: each call's ``isError``, text and seconds taken, in order."""
    seen: list[tuple[bool, str, float]] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(target) as client:
                for tool, args in calls:
                    start = time.monotonic()
                    result = await client.call_tool(tool, args)
                    seen.append((result.is_error, text(result), time.monotonic() - start))

    anyio.run(main)
    return seen


def wait_for(path: Path) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.05)
    log: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return log


class HttpServer:
    """``serve-fixtures --http`` in the background; ``stop(signal)`` gives its exit status."""

    def __init__(self, *args: str | Path) -> None:
        self.process = subprocess.Popen(
            [*CLI, "serve-fixtures", *map(str, args), "--http"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=child_env(),
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("serving on "), line
        self.url = line.removeprefix("serving on ").strip()

    def stop(self, signum: int = signal.SIGTERM) -> tuple[int, str]:
        self.process.send_signal(signum)
        _, stderr = self.process.communicate(timeout=TIMEOUT)
        return self.process.returncode, stderr

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def stdio_run(suite: Path, calls: list[dict[str, Any]], end: str) -> tuple[int, str]:
    """A raw stdio session making ``calls``, ended by closing stdin or by SIGTERM with stdin
    still open: the exit status and stderr."""
    client = RawClient([*CLI, "serve-fixtures", str(suite)], env=child_env())
    client.handshake()
    for call in calls:
        answer = client.call("tools/call", {"name": call["tool"], "arguments": call["args"]})
        assert "result" in answer, answer
    if end == "SIGTERM":
        client.process.send_signal(signal.SIGTERM)
        client.process.wait(TIMEOUT)
    return client.finish()


def test_the_documented_status_is_the_one_the_command_uses() -> None:
    assert missed_status() == MISSED == 3
    table = run_cli("serve-fixtures", "--help").stdout.split("exit status:")[1]
    codes = [int(code) for code in re.findall(r"^\s+(\d+)\s", table, re.M)]
    assert sorted(codes) == [0, 1, 2, 3, 130]  # 3 clashes with no other line


LOOKUP_1 = {"tool": "lookup", "args": {"id": 1}}
LOOKUP_9 = {"tool": "lookup", "args": {"id": 9}}


@MISS_EXIT
@pytest.mark.parametrize("end", ["stdin closed", "SIGTERM"])
@pytest.mark.parametrize(
    ("calls", "missed"),
    [
        ([], False),
        ([LOOKUP_1, LOOKUP_1], False),  # the recorded failure, then the success: no miss
        ([LOOKUP_1, LOOKUP_9], True),
        ([LOOKUP_1, LOOKUP_1, LOOKUP_1], True),  # both entries consumed: the third misses
    ],
)
def test_over_stdio_a_run_that_missed_exits_with_the_documented_status(
    tmp_path: Path, calls: list[dict[str, Any]], missed: bool, end: str
) -> None:
    status, stderr = stdio_run(write_suite(tmp_path / "suite.json"), calls, end)
    assert status == (missed_status() if missed else 0), stderr
    assert ("missed the fixtures" in stderr) is missed


@MISS_EXIT
def test_over_http_sigterm_after_a_miss_exits_with_the_documented_status(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    log_file = tmp_path / "run.json"
    server = HttpServer(suite, "--log", log_file)
    try:
        seen = timed_session(server.url, [("lookup", {"id": 9})])
        status, stderr = server.stop()
    finally:
        server.kill()
    assert seen[0][0] is True
    assert "fixture miss" in seen[0][1]
    assert status == missed_status()
    assert "1 of 1 calls missed the fixtures of task 'session-1'" in stderr
    assert wait_for(log_file)["summary"]["fixtureMissCount"] == 1


@MISS_EXIT
def test_ctrl_c_stays_130_after_a_miss(tmp_path: Path) -> None:
    server = HttpServer(write_suite(tmp_path / "suite.json"))
    try:
        timed_session(server.url, [("lookup", {"id": 9})])
        status, _ = server.stop(signal.SIGINT)
    finally:
        server.kill()
    assert status == documented_status("interrupted (Ctrl-C)") == 130


@INJECT
def test_an_injected_error_reaches_the_client_and_is_counted_apart(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    log_file = tmp_path / "run.json"
    server = StdioServerParameters(
        command=CLI[0],
        args=[
            *CLI[1:],
            "serve-fixtures",
            str(suite),
            "--log",
            str(log_file),
            "--inject",
            "tool=lookup,call=1,error=injected outage",
            "--inject",
            "tool=search,error",
        ],
        env=child_env(),
    )
    seen = timed_session(server, [("lookup", {"id": 1})] * 3 + [("search", {"q": "x"})])
    assert [(flag, message) for flag, message, _ in seen] == [
        (True, "injected outage"),
        (True, "upstream down"),  # the injection consumed no entry: the recording goes on
        (False, "record 1"),
        (True, "injected failure (--inject tool=search,call=*,error)"),
    ]
    log = wait_for(log_file)
    summary = log["summary"]
    assert summary["injectedErrorCount"] == 2
    assert summary["fixtureMissCount"] == 0
    assert summary["servedEntries"] == [0, 1]
    assert summary["injections"] == [
        "tool=lookup,call=1,error=injected outage",
        "tool=search,call=*,error",
    ]
    errors = [
        event["payload"].get("error", {}).get("code")
        for event in log["events"]
        if event["type"] == "agent.tool-returned"
    ]
    assert errors == [
        "toolcall-spec.injected_failure",
        "toolcall-spec.tool_failed",
        None,
        "toolcall-spec.injected_failure",
    ]
    for event in log["events"]:
        assert [p for p in validate(event, "run-event") if p.severity == "error"] == []


@INJECT
def test_a_delay_is_observed_by_the_client_over_http(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.json")
    log_file = tmp_path / "run.json"
    server = HttpServer(suite, "--log", log_file, "--inject", "tool=lookup,call=2,delay=1.5s")
    try:
        seen = timed_session(server.url, [("lookup", {"id": 1})] * 2)
        status, stderr = server.stop()
    finally:
        server.kill()
    assert status == 0, stderr
    assert [(flag, message) for flag, message, _ in seen] == [
        (True, "upstream down"),
        (False, "record 1"),  # late, but the recorded answer
    ]
    assert seen[1][2] >= 1.5
    summary = wait_for(log_file)["summary"]
    assert (summary["injectedDelayCount"], summary["injectedErrorCount"]) == (1, 0)
    returned = [e for e in wait_for(log_file)["events"] if e["type"] == "agent.tool-returned"]
    assert returned[1]["payload"]["durationMs"] >= 1500


@INJECT
@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("tool=lookup,call=0,error", "'call=0': not a call number"),
        ("tool=lookup,delay=2h", "'delay=2h': not a duration"),
        ("tool=lookup,when=1,error", "'when=1': unknown key 'when'"),
        ("tool=lookup", "nothing to inject"),
    ],
)
def test_a_bad_spec_is_refused_before_serving_naming_the_part(
    tmp_path: Path, spec: str, named: str
) -> None:
    run = run_cli(
        "serve-fixtures", write_suite(tmp_path / "suite.json"), "--inject", spec, stdin=""
    )
    assert run.returncode == 2
    assert f"bad --inject {spec!r}" in run.stderr
    assert named in run.stderr


@INJECT
def test_a_client_timeout_during_a_delay_is_logged_and_its_retry_gets_the_recording() -> None:
    """A timeout is a delay longer than the client waits: the client gives up (cancelling the
    call), the call is still paired with its return in the log, and no entry was consumed."""
    suite = json.loads(write_suite_text())
    replay = FixtureReplay(
        suite,
        select_task(suite, None),
        injections=[parse_injection("tool=lookup,call=1,delay=3s")],
    )
    seen: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(build_server(replay)) as client:
                with pytest.raises(MCPError, match="Timed out"):
                    await client.call_tool("lookup", {"id": 1}, read_timeout_seconds=0.3)
                with anyio.fail_after(10):  # the server cancels the call in its own time
                    while len(replay.log.events) < 2:
                        await anyio.sleep(0.02)
                retried = await client.call_tool("lookup", {"id": 1})
                seen.append((retried.is_error, text(retried)))

    anyio.run(main)
    assert seen == [(True, "upstream down")]  # the recorded failure: the first entry
    events = replay.log.events
    assert [event["type"] for event in events] == ["agent.tool-called", "agent.tool-returned"] * 2
    assert events[1]["payload"]["error"]["code"] == "toolcall-spec.call_cancelled"
    for event in events:
        assert [p for p in validate(event, "run-event") if p.severity == "error"] == []
    summary = replay.summary()
    assert (summary["injectedDelayCount"], summary["servedEntries"]) == (1, [0])
