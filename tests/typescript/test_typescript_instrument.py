"""``instrument()`` of the npm package against the Python ``toolcall_spec.mcp.instrument``: the
same probe (tests/support/mcp_servers.py and its TypeScript twin tests/support/ts/probe_server.mjs)
on the ``mcp`` SDK and on the MCP TypeScript SDK, driven by the real clients of both languages
over stdio and streamable HTTP. Every run's events, without ids, timestamps and latency values,
equal every other run's: the same events, by the same rules, from either instrumentation.

The one part that differs is text the SDKs themselves write (an unknown tool, invalid arguments,
an output that fails its schema): each SDK words it its own way. Those messages are checked
against each SDK's wording and then set aside; everything else is compared as it is. The
low-level servers write every text themselves, so their events are compared whole.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError
from support.mcp_servers import DEMO_CALLS, demo_server, lowlevel_demo_server
from support.node import TS_SUPPORT, node_with_mcp_sdk, tool, ts_client, unavailable
from support.repo import REPO

from toolcall_spec.analytics.ingest import ingest_batch
from toolcall_spec.analytics.sinks import MemorySink
from toolcall_spec.http.server import BackgroundServer
from toolcall_spec.loading import iter_jsonl
from toolcall_spec.mcp import instrument
from toolcall_spec.validation import validate

ONE_EVENT = pytest.mark.requirement("toolcall-spec.requirement.analytics.one-event-per-call")
EVERY_FRAMEWORK = pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")

PY_PROBE = Path(__file__).resolve().parents[1] / "support" / "mcp_probe_server.py"
TS_PROBE = TS_SUPPORT / "probe_server.mjs"
CALLS = DEMO_CALLS
KINDS = ("mcp", "lowlevel")
"""``mcp``: the SDKs' high-level servers (MCPServer, McpServer); ``lowlevel``: their ``Server``."""

# What each SDK's high-level server writes itself, per call of the probe (a prefix of it).
SDK_TEXTS = {
    "python": {
        6: "Unknown tool: no_such_tool",
        7: "Error executing tool add: 2 validation errors for addArguments",
        9: "Error executing tool bad_output",
    },
    "typescript": {
        6: "MCP error -32602: Tool no_such_tool not found",
        7: "MCP error -32602: Input validation error: Invalid arguments for tool add:",
        9: "MCP error -32602: Output validation error: Tool bad_output has an output schema",
    },
}
SDK_TEXT = "(the SDK's own text)"


# --- the servers ----------------------------------------------------------------------------------


@contextmanager
def python_server(kind: str, transport: str, folder: Path) -> Iterator[tuple[Any, Any]]:
    """The Python probe: ``(target, events)``; ``events()`` reads what it recorded."""
    if transport == "stdio":
        events = folder / "python-events.jsonl"
        command = [sys.executable, str(PY_PROBE), kind, str(events)]
        yield command, lambda: read_jsonl(events)
        return
    server = lowlevel_demo_server() if kind == "lowlevel" else demo_server()
    sink = MemorySink()
    instrument(server, sink)
    with BackgroundServer(server.streamable_http_app()) as background:
        yield f"{background.url}/mcp", lambda: sink.events


@contextmanager
def typescript_server(
    kind: str, transport: str, folder: Path, sdk: Path | None = None
) -> Iterator[tuple[Any, Any]]:
    """The TypeScript probe: ``(target, events)``; on the repository's SDK, or the matrix
    entry installed in ``sdk``."""
    events = folder / "typescript-events.jsonl"
    command = [node_with_mcp_sdk(), str(TS_PROBE), kind, transport, str(events)]
    command += [str(sdk)] if sdk is not None else []
    if transport == "stdio":
        yield command, lambda: read_jsonl(events)
        return
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving on "), line
        yield line.removeprefix("serving on ").strip(), lambda: read_jsonl(events)
    finally:
        process.terminate()
        process.wait(30)


SERVERS = {"python": python_server, "typescript": typescript_server}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open("rb") as handle:
        return [value for _, value, _ in iter_jsonl(handle)]


# --- the clients ----------------------------------------------------------------------------------


def python_client(target: Any, transport: str) -> list[Any]:
    """The ``mcp`` Python client: each call's ``isError``, or ``"jsonrpc-error"``."""
    outcomes: list[Any] = []
    if isinstance(target, list):
        target = StdioServerParameters(command=target[0], args=target[1:])

    async def calls() -> None:
        with anyio.fail_after(60):
            async with mcp.Client(
                target, mode="legacy" if transport == "http" else "auto"
            ) as client:
                for name, arguments in CALLS:
                    try:
                        outcomes.append((await client.call_tool(name, arguments)).is_error)
                    except MCPError:
                        outcomes.append("jsonrpc-error")

    anyio.run(calls)
    return outcomes


def typescript_client(target: Any, transport: str) -> list[Any]:
    """The MCP TypeScript SDK client: each call's ``isError``, or ``"jsonrpc-error"``."""
    _, *answers = ts_client(target, CALLS)
    return [
        "jsonrpc-error" if "jsonrpcError" in answer else answer.get("isError", False)
        for answer in answers
    ]


CLIENTS = {"python": python_client, "typescript": typescript_client}


# --- comparing ------------------------------------------------------------------------------------


def comparable(
    language: str, kind: str, events: list[dict[str, Any]], texts: dict[int, str] | None = None
) -> list[dict[str, Any]]:
    """The events without what differs by nature: ids, the time, the latency's value (whether
    there is one stays), the 2026 protocol's ``resultType`` (the Python SDK adds it for a client
    that speaks that version), and, checked first, the texts the high-level SDKs write."""
    out = []
    for index, recorded in enumerate(events):
        event = {key: value for key, value in recorded.items() if key not in DIFFERENT_BY_NATURE}
        event["latency_ms"] = "latency_ms" in event
        output = event.get("output_content")
        if isinstance(output, dict):
            event["output_content"] = {k: v for k, v in output.items() if k != "resultType"}
        expected = (texts or SDK_TEXTS[language]).get(index) if kind == "mcp" else None
        if expected is not None:
            assert event["error_message"].startswith(expected), (index, event)
            event["error_message"] = SDK_TEXT
            if "output_content" in event:  # none where the SDK answered a JSON-RPC error
                (item,) = event["output_content"]["content"]
                assert item["text"].startswith(expected)
                event["output_content"]["content"] = [{**item, "text": SDK_TEXT}]
        out.append(event)
    return out


DIFFERENT_BY_NATURE = {"event_id", "trace_id", "session_id", "timestamp"}


def probe(
    server: str, client: str, kind: str, transport: str, folder: Path
) -> tuple[list[Any], list[dict[str, Any]]]:
    """One run of the probe: what the client saw, and the server's events."""
    with SERVERS[server](kind, transport, folder) as (target, events):
        seen = CLIENTS[client](target, transport)
        recorded = events()
    return seen, recorded


@EVERY_FRAMEWORK
@ONE_EVENT
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("kind", KINDS)
def test_both_instrumentations_record_the_same_events_from_both_clients(
    kind: str, transport: str, tmp_path: Path
) -> None:
    """Four runs per server kind and transport: each server (Python, TypeScript) with each
    client (Python, TypeScript); every run's comparable events equal the first's."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for server in SERVERS:
        for client in CLIENTS:
            folder = tmp_path / f"{server}-{client}"
            folder.mkdir()
            seen, events = probe(server, client, kind, transport, folder)
            assert len(seen) == len(CALLS), (server, client, seen)
            assert len(events) == len(CALLS), (server, client, events)
            for event in events:
                assert validate(event, "tool-call-event") == [], event
            assert ingest_batch({"events": events})["status"] == 200
            assert len({event["session_id"] for event in events}) == 1  # one client session
            if transport == "http":
                assert events[0]["session_id"].startswith("ses_")  # derived from Mcp-Session-Id
            runs[(server, client)] = comparable(server, kind, events)
    first = runs[("python", "python")]
    for run, events in runs.items():
        assert events == first, run
    statuses = [(e["event_name"], e["status"], e.get("error_category")) for e in first]
    if kind == "mcp":
        assert statuses == [
            ("add", "success", None),
            ("lookup_offer", "error", "tool_error"),
            ("silent_failure", "error", "tool_error"),
            ("crash", "error", "unknown"),
            ("async_crash", "error", "unknown"),
            ("quota", "error", "unknown"),
            ("no_such_tool", "error", "validation"),
            ("add", "error", "validation"),
            ("dict_with_flag", "success", None),
            ("bad_output", "error", "server"),
        ]
        assert [event["latency_ms"] for event in first][6:8] == [False, False]  # never ran


@ONE_EVENT
def test_the_wiring_rules_hold_on_real_sdk_servers_in_memory() -> None:
    """tests/typescript/instrument.test.mjs under ``node --test``: results unchanged, tools
    registered later counted, nested calls once, twice refused, a failing sink harmless, output
    capture off, the low-level rules, the clamp."""
    script = Path(__file__).parent / "instrument.test.mjs"
    done = subprocess.run(
        [node_with_mcp_sdk(), "--test", str(script)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


# --- the SDK version matrix -----------------------------------------------------------------------

MATRIX = TS_SUPPORT / "matrix"
"""One folder per SDK version line, a package.json each: sdk-1 (the newest 1.x), sdk-2 (2.x)."""
MATRIX_ENTRIES = sorted(entry.name for entry in MATRIX.iterdir() if entry.is_dir())
# 2.x writes its refusals without 1.x's `MCP error <code>: ` and answers an unknown tool with a
# JSON-RPC error (so its event has no output_content) where 1.x and Python return a result.
MATRIX_SDK_TEXTS = {
    "sdk-1": SDK_TEXTS["typescript"],
    "sdk-2": {
        6: "Tool no_such_tool not found",
        7: "Input validation error: Invalid arguments for tool add:",
        9: "Output validation error: Tool bad_output has an output schema",
    },
}
ANSWERED_WITH_A_JSONRPC_ERROR = {"sdk-1": set(), "sdk-2": {6}}


@pytest.fixture(scope="session")
def installed_sdks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each matrix entry installed from the registry into a folder of its own (a few seconds
    each with npm's cache)."""
    npm = tool("npm")
    node_with_mcp_sdk()  # node itself, and the repository's own packages for the probe's imports
    root = tmp_path_factory.mktemp("ts-matrix")
    folders = {}
    for entry in MATRIX_ENTRIES:
        folder = root / entry
        folder.mkdir()
        shutil.copy(MATRIX / entry / "package.json", folder / "package.json")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            unavailable(f"npm install of matrix entry {entry} failed: {done.stderr[-2000:]}")
        folders[entry] = folder
    return folders


@EVERY_FRAMEWORK
@ONE_EVENT
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", MATRIX_ENTRIES)
def test_every_sdk_version_of_the_matrix_records_the_python_events(
    entry: str, kind: str, transport: str, installed_sdks: dict[str, Path], tmp_path: Path
) -> None:
    """The TypeScript probe on each SDK line of the matrix (the newest 1.x, 2.x), driven by the
    Python client over stdio and streamable HTTP: its events equal the Python
    instrumentation's, but for the texts each SDK writes itself."""
    _, python_events = probe("python", "python", kind, transport, tmp_path)
    with typescript_server(kind, transport, tmp_path, installed_sdks[entry]) as (target, recorded):
        seen = python_client(target, transport)
        events = recorded()
    line = (tmp_path / "typescript-events.jsonl.sdk").read_text().strip()
    assert line == entry.removeprefix("sdk-")  # the probe ran on the SDK line asked for
    assert len({event["session_id"] for event in events}) == 1
    if transport == "http":
        assert events[0]["session_id"].startswith("ses_")  # derived from Mcp-Session-Id
    assert len(events) == len(CALLS), events
    for event in events:
        assert validate(event, "tool-call-event") == [], event
    assert len(seen) == len(CALLS), seen
    if kind == "mcp":
        for index in ANSWERED_WITH_A_JSONRPC_ERROR[entry]:
            assert "output_content" not in events[index]
            python_events[index].pop("output_content")
    expected = comparable("python", kind, python_events)
    assert comparable("typescript", kind, events, MATRIX_SDK_TEXTS[entry]) == expected


@ONE_EVENT
@pytest.mark.parametrize("entry", MATRIX_ENTRIES)
def test_the_wiring_rules_hold_on_every_sdk_version_of_the_matrix(
    entry: str, installed_sdks: dict[str, Path]
) -> None:
    """tests/typescript/instrument_matrix.test.mjs under ``node --test`` on each matrix entry:
    results unchanged, tools added later and callbacks replaced by ``update()`` counted,
    instrumenting twice refused."""
    script = Path(__file__).parent / "instrument_matrix.test.mjs"
    done = subprocess.run(
        [node_with_mcp_sdk(), "--test", str(script)],
        cwd=REPO,
        env={**os.environ, "TOOLCALL_TS_SDK": str(installed_sdks[entry])},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
