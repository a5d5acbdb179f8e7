"""Cassettes of other MCP recorders, each recorded in the test by the peer itself against a small
real server (tests/support/mcp_stdio_server.py), imported with ``toolcall-spec promote --from``,
failures kept, then served by ``serve-fixtures`` to a client that gets what the peer recorded.

How each peer records here (its limits on this machine, see docs/record-replay.md):

- mcp-recorder 0.5: its own scenario runner (``record-scenarios``: its proxy, its client, its
  cassette writer). Its proxy app passes ``on_startup``/``on_shutdown`` to Starlette, which
  Starlette 1.x no longer accepts, so it dies at start beside the Starlette this package installs;
  the test gives the peer's module a Starlette that maps those two onto a lifespan, nothing else.
- agent-vcr 0.1: its own recorder (``MCPRecorder``) through support/agent_vcr_recording.py, whose
  docstring says why the documented ``agent-vcr record`` command cannot serve a client over stdio.
- mcp-vcr 0.2 needs Python 3.12 or newer and is not installed on this Python (3.11).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
pytest.importorskip("mcp_recorder", reason="mcp-recorder is not installed")

import anyio
import mcp
import mcp_recorder.proxy as mcp_recorder_proxy
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent
from mcp_recorder.scenarios import load_scenarios_file, run_scenarios
from starlette.applications import Starlette
from support.cli import run_cli
from support.repo import REPO

from toolcall_spec.mcp.cassettes import detect_format, import_cassette
from toolcall_spec.mcp.fixture_server import FixtureReplay, build_server, select_task
from toolcall_spec.validation import validate

IMPORT = pytest.mark.requirement("toolcall-spec.requirement.mcp.cassettes-import")

LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
AGENT_VCR_RECORDING = REPO / "tests" / "support" / "agent_vcr_recording.py"
TIMEOUT = 60

Call = tuple[str, dict[str, Any]]
CALLS: list[Call] = [
    ("flaky", {"key": "a"}),  # a tool result with isError: true
    ("flaky", {"key": "a"}),  # the same call, now a success
    ("lookup", {"id": 1}),
    ("lookup", {"id": "x"}),  # refused by the tool's input model: isError: true
    ("quota", {}),  # a JSON-RPC error, no result at all
    ("lookup", {"id": 2}),
]
RECORDED_FAILURES = [True, False, False, True, True, False]


class StarletteWithStartupHooks(Starlette):
    """Starlette 1.x with the ``on_startup``/``on_shutdown`` arguments mcp-recorder 0.5 passes."""

    def __init__(
        self,
        *args: Any,
        on_startup: Sequence[Callable[[], Awaitable[None]]] = (),
        on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
        **kwargs: Any,
    ) -> None:
        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[None]:
            for hook in on_startup:
                await hook()
            try:
                yield
            finally:
                for hook in on_shutdown:
                    await hook()

        super().__init__(*args, **{**kwargs, "lifespan": lifespan})


def record_with_mcp_recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(mcp_recorder_proxy, "Starlette", StarletteWithStartupHooks)
    actions = [{"call_tool": {"name": tool, "arguments": args}} for tool, args in CALLS]
    scenarios = {
        "schema_version": "1.0",
        "target": {"command": sys.executable, "args": [str(LIVE_SERVER)]},
        "scenarios": {"session": {"actions": ["list_tools", *actions]}},
    }
    path = tmp_path / "scenarios.yaml"
    path.write_text(json.dumps(scenarios), encoding="utf-8")  # JSON is YAML
    run_scenarios(load_scenarios_file(path), tmp_path / "cassettes")
    return tmp_path / "cassettes" / "session.json"


def client_session(target: Any, calls: list[Call], mode: str = "auto") -> list[Any]:
    """What a real client receives for each call: (isError, text), or the JSON-RPC error."""
    seen: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(target, mode=mode) as client:
                for tool, args in calls:
                    try:
                        result = await client.call_tool(tool, args)
                    except MCPError as exc:
                        seen.append(("json-rpc error", exc.error.code))
                        continue
                    texts = [b.text for b in result.content if isinstance(b, TextContent)]
                    seen.append((result.is_error, " ".join(texts)))

    anyio.run(main)
    return seen


def imported(cassette: Path, fmt: str) -> dict[str, Any]:
    """The suite ``toolcall-spec promote --from FMT`` prints; warnings name the failures."""
    run = run_cli("promote", "--from", fmt, cassette, timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr
    assert "'quota' recorded as a failure: answered with a JSON-RPC error" in run.stderr
    suite: dict[str, Any] = json.loads(run.stdout)
    assert [p for p in validate(suite, "suite") if p.severity == "error"] == []
    return suite


def check_entries(suite: dict[str, Any]) -> list[dict[str, Any]]:
    (task,) = suite["tasks"]
    entries: list[dict[str, Any]] = task["fixtures"]["toolResponses"]
    assert [(entry["tool"], entry["args"]) for entry in entries] == CALLS
    assert [entry.get("isError", False) for entry in entries] == RECORDED_FAILURES
    assert entries[0]["response"]["content"][0]["text"] == "a: upstream unavailable"
    assert "quota exceeded" in entries[4]["response"]["content"][0]["text"]
    assert [tool["name"] for tool in task["input"]["mcp"]["tools"]] == [
        "lookup",
        "flaky",
        "quota",
    ]
    return entries


def replayed(suite: dict[str, Any]) -> list[Any]:
    replay = FixtureReplay(suite, select_task(suite, None))
    seen = client_session(build_server(replay), CALLS)
    assert replay.summary()["fixtureMissCount"] == 0
    return seen


@IMPORT
def test_a_cassette_mcp_recorder_recorded_imports_with_its_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = record_with_mcp_recorder(tmp_path, monkeypatch)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    assert detect_format(document) == "mcp-recorder"
    suite = imported(cassette, "mcp-recorder")
    check_entries(suite)
    seen = replayed(suite)
    assert [flag for flag, _ in seen] == RECORDED_FAILURES  # the JSON-RPC error as a tool error
    assert seen[0] == (True, "a: upstream unavailable")
    assert seen[1] == (False, "a: done")


@IMPORT
@pytest.mark.skipif(
    importlib.util.find_spec("agent_vcr") is None,  # not imported here: it records in its process
    reason="agent-vcr is not installed",
)
def test_a_cassette_agent_vcr_recorded_imports_with_its_failures(tmp_path: Path) -> None:
    cassette = tmp_path / "session.vcr"
    recorder = StdioServerParameters(
        command=sys.executable,
        args=[str(AGENT_VCR_RECORDING), str(cassette), sys.executable, str(LIVE_SERVER)],
    )
    live = client_session(recorder, CALLS, mode="legacy")
    assert live[4] == ("json-rpc error", -32001)
    for _ in range(100):  # the recorder saves once the client has gone
        if cassette.exists():
            break
        anyio.run(anyio.sleep, 0.1)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    assert detect_format(document) == "agent-vcr"
    suite = imported(cassette, "cassette")
    check_entries(suite)
    seen = replayed(suite)
    assert [seen[i] for i in (0, 1, 2, 3, 5)] == [live[i] for i in (0, 1, 2, 3, 5)]
    assert seen[4][0] is True  # a recorded JSON-RPC error is replayed as a tool error


@IMPORT
@pytest.mark.parametrize(
    ("document", "fmt", "message"),
    [
        ({"events": []}, None, "not a cassette of a known format"),
        ({"version": "1.0", "interactions": []}, "agent-vcr", "not a cassette of agent-vcr"),
        (
            {
                "version": "1.0",
                "interactions": [
                    {"type": "jsonrpc_request", "request": {"method": "tools/call", "params": {}}}
                ],
            },
            None,
            "interactions[0].request.params.name",
        ),
    ],
)
def test_what_is_not_a_readable_cassette_is_a_problem_with_a_path(
    document: Any, fmt: str | None, message: str
) -> None:
    result = import_cassette(document, fmt=fmt, suite_id="recorded.evals.x")
    assert result.suite is None
    assert message in str(result.problems[0])


@IMPORT
def test_a_call_without_a_response_is_a_failure_named_in_a_warning() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
    document = {"version": "1.0", "interactions": [{"type": "jsonrpc_request", "request": request}]}
    result = import_cassette(document, suite_id="recorded.evals.x")
    assert result.suite is not None
    (entry,) = result.suite["tasks"][0]["fixtures"]["toolResponses"]
    assert entry["isError"] is True
    assert "no response" in str(result.warnings[0])
