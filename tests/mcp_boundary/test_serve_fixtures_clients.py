"""Clients nobody here wrote, against ``serve-fixtures``: the MCP TypeScript SDK's client (node)
over stdio, and an agent loop over the ``mcp`` client whose recorded session (through the real
``toolcall-spec record``) is replayed to it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
from mcp.client.stdio import StdioServerParameters
from support.agent_loop import Seen, Step, run_agent
from support.cli import CLI
from support.repo import REPO

from toolcall_spec.mcp.fixture_server import FixtureReplay, build_server, select_task

RULES = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-rules")
ROUND_TRIP = pytest.mark.requirement("toolcall-spec.requirement.mcp.record-replay-round-trip")

LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
TS_CLIENT = REPO / "tests" / "support" / "ts" / "fixtures_client.mjs"
TS_SDK = REPO / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
TIMEOUT = 60


def mcp_text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def needs_node_sdk() -> str:
    """The node binary; the test is skipped without node or the SDK (``npm ci`` installs it),
    except in CI, where their absence is a failure."""
    node = shutil.which("node")
    if node is None or not TS_SDK.exists():
        if os.environ.get("CI"):
            pytest.fail("node and node_modules/@modelcontextprotocol/sdk are needed (npm ci)")
        pytest.skip("node or the MCP TypeScript SDK is not installed (npm ci)")
    return node


CHARGE_SUITE: dict[str, Any] = {
    "suiteId": "demo.evals.ts-client",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [
        {
            "taskId": "session-1",
            "input": {},
            "expected": {"kind": "golden"},
            "fixtures": {
                "toolResponses": [
                    {
                        "tool": "charge",
                        "args": {"cents": 500},
                        "isError": True,
                        "response": mcp_text("card declined"),
                    },
                    {"tool": "charge", "args": {"cents": 500}, "response": mcp_text("paid")},
                ]
            },
        }
    ],
}
CHARGE_CALLS = [{"tool": "charge", "args": {"cents": 500}}] * 2 + [
    {"tool": "charge", "args": {"cents": 1}}
]


def ts_client(node: str, target: list[str]) -> dict[str, Any]:
    run = subprocess.run(
        [node, str(TS_CLIENT), json.dumps(CHARGE_CALLS), *target],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    answer: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return answer


def check_charges(answer: dict[str, Any]) -> None:
    assert answer["tools"] == ["charge"]
    results = answer["results"]
    assert results[0] == {"isError": True, "content": mcp_text("card declined")["content"]}
    assert results[1] == {"isError": False, "content": mcp_text("paid")["content"]}
    assert results[2]["isError"] is True
    assert "fixture miss" in results[2]["content"][0]["text"]


@RULES
def test_the_typescript_sdk_client_over_stdio(tmp_path: Path) -> None:
    node = needs_node_sdk()
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(CHARGE_SUITE), encoding="utf-8")
    check_charges(ts_client(node, [*CLI, "serve-fixtures", str(path)]))


@RULES
def test_the_typescript_sdk_client_over_streamable_http(tmp_path: Path) -> None:
    node = needs_node_sdk()
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(CHARGE_SUITE), encoding="utf-8")
    child = subprocess.Popen(
        [*CLI, "serve-fixtures", str(path), "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().removeprefix("serving on ").strip()
        assert url.startswith("http://127.0.0.1:"), url
        check_charges(ts_client(node, [url]))
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


PLAN = [
    Step("flaky", {"key": "a"}),
    Step("lookup", {"id": 1}),
    Step("flaky", {"key": "b"}),
    Step("not-listed", {}),
    Step("lookup", {"id": 2}),
]


def agent_session(target: Any) -> list[Seen]:
    transcript: list[Seen] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(target) as client:
                transcript.extend(await run_agent(client, PLAN))

    anyio.run(main)
    return transcript


@ROUND_TRIP
def test_an_agent_loop_replayed_through_serve_fixtures_does_what_it_did_live(
    tmp_path: Path,
) -> None:
    recorded = tmp_path / "agent.json"
    record = StdioServerParameters(
        command=sys.executable,
        args=[
            *CLI[1:],
            "record",
            "--out",
            str(recorded),
            "--",
            sys.executable,
            str(LIVE_SERVER),
        ],
    )
    live = agent_session(record)
    # The flaky tool failed once per key, and the agent retried each time.
    assert [(seen.tool, seen.is_error) for seen in live] == [
        ("flaky", True),
        ("flaky", False),
        ("lookup", False),
        ("flaky", True),
        ("flaky", False),
        ("lookup", False),
    ]
    suite = json.loads(recorded.read_text(encoding="utf-8"))
    # Replayed in process (the serve side of serve-fixtures, no live server at all).
    replay = FixtureReplay(suite, select_task(suite, None))
    assert agent_session(build_server(replay)) == live
    assert replay.summary()["fixtureMissCount"] == 0
    # And by the command, over stdio, as the agent's configured server.
    command = StdioServerParameters(
        command=sys.executable, args=[*CLI[1:], "serve-fixtures", str(recorded)]
    )
    assert agent_session(command) == live
