"""``toolcall-spec record`` with the MCP TypeScript SDK on either side: its client driving the
proxy, and its server behind the proxy (node, the SDK from the repo's package-lock.json)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.recording import entries, flags, load_suite, python_server, record_argv
from support.repo import REPO

TRANSPARENT = pytest.mark.requirement("toolcall-spec.requirement.record.transparent")
ENTRIES = pytest.mark.requirement("toolcall-spec.requirement.record.one-entry-per-call")

TS = Path(__file__).parents[1] / "support" / "ts"
SDK = REPO / "node_modules" / "@modelcontextprotocol" / "sdk"
NODE = shutil.which("node")
if NODE is None or not SDK.is_dir():
    if os.environ.get("CI"):
        raise RuntimeError("CI must provide node and `npm ci` (the MCP TypeScript SDK)")
    pytest.skip("node or the MCP TypeScript SDK (npm ci) is missing", allow_module_level=True)

CALLS: list[list[Any]] = [
    ["add", {"a": 1, "b": 2}],
    ["flaky", {"key": "k"}],
    ["flaky", {"key": "k"}],
    ["lookup", {"reference": "R"}],
]
FLAGS = [("add", False), ("flaky", True), ("flaky", False), ("lookup", True)]


def ts_server() -> list[str]:
    assert NODE is not None
    return [NODE, str(TS / "record_server.mjs")]


def ts_client(command: list[str] | str, calls: list[list[Any]]) -> list[Any]:
    """What the TypeScript SDK client receives, one JSON value per call (tool list first); it
    launches ``command`` over stdio, or connects to it over streamable HTTP when it is a URL."""
    assert NODE is not None
    target = {"url": command} if isinstance(command, str) else {"command": command}
    done = subprocess.run(
        [NODE, str(TS / "record_client.mjs"), json.dumps({**target, "calls": calls})],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@TRANSPARENT
@ENTRIES
def test_the_typescript_client_and_server_through_the_proxy(tmp_path: Path) -> None:
    out = tmp_path / "recorded.json"
    direct = ts_client(ts_server(), CALLS)
    proxied = ts_client(record_argv(out, *ts_server()), CALLS)
    assert proxied == direct
    suite = load_suite(out)
    assert flags(suite) == FLAGS
    assert [e["response"] for e in entries(suite)] == direct[1:]
    assert suite["tasks"][0]["taskId"] == "ts-client"  # named by the client's clientInfo
    assert sorted(t["name"] for t in suite["tasks"][0]["input"]["mcp"]["tools"]) == direct[0]


@TRANSPARENT
@ENTRIES
def test_the_typescript_client_records_a_python_server(tmp_path: Path) -> None:
    out = tmp_path / "recorded.json"
    seen = ts_client(record_argv(out, *python_server("mcp")), CALLS)
    assert [r.get("isError") for r in seen[1:]] == [failed for _, failed in FLAGS]
    assert flags(load_suite(out)) == FLAGS


@TRANSPARENT
@ENTRIES
def test_the_python_client_records_a_typescript_server(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    import mcp
    from mcp import StdioServerParameters

    out = tmp_path / "recorded.json"
    argv = record_argv(out, *ts_server())
    flags_seen: list[bool] = []

    async def main() -> None:
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))
        with anyio.fail_after(60):
            async with mcp.Client(params) as client:
                for name, arguments in CALLS:
                    flags_seen.append((await client.call_tool(name, arguments)).is_error)

    anyio.run(main)
    assert flags_seen == [failed for _, failed in FLAGS]
    assert flags(load_suite(out)) == FLAGS


@TRANSPARENT
@ENTRIES
def test_the_typescript_client_over_streamable_http_through_the_proxy(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from support.recording import recording_proxy, upstream

    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    with upstream("mcp") as (url, _):
        direct = ts_client(url, CALLS)
    with upstream("mcp") as (url, _), recording_proxy(url, out, log) as (proxy_url, _proxy):
        proxied = ts_client(proxy_url, CALLS)
    assert proxied == direct
    suite = load_suite(out)
    assert [t["taskId"] for t in suite["tasks"]] == ["ts-client"]  # its Mcp-Session-Id
    assert flags(suite) == FLAGS
