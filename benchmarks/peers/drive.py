"""The client side: start the probe server (``benchmarks.peers.serve``) in its own process, drive
the 22 probe calls with the real ``mcp`` client over stdio or streamable HTTP, and say what the
client received for each call. Every wait is bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from benchmarks.peers.probe import CALLS

TRANSPORTS = ("stdio", "http")
CALL_TIMEOUT = 15.0
"""Seconds for one call; a server that stops answering fails the run, it does not hang it."""
START_TIMEOUT = 30.0
"""Seconds for the server process to import its peer and listen."""
RUN_TIMEOUT = 120.0
"""Seconds for a whole run, start to last answer (one takes about 5 s on two busy cores)."""
SETTLE_SECONDS = 1.0
"""Time given after the last call for exporters that hand records over on a worker thread."""


@dataclass
class Outcome:
    """What the client received for one call: ``error`` is ``isError: true`` or a JSON-RPC
    error (``rpc_error`` then holds its code)."""

    tool: str
    kind: str
    error: bool
    rpc_error: int | None = None
    text: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "error": self.error,
            "rpc_error": self.rpc_error,
            "text": self.text,
        }


@dataclass
class Run:
    """One peer on one framework over one transport: the client's outcomes and what the peer
    recorded (``records``), or why the run failed (``failure``)."""

    peer: str
    framework: str
    transport: str
    outcomes: list[Outcome] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    failure: str | None = None
    seconds: float = 0.0


def server_command(peer: str, framework: str, transport: str, records: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmarks.peers.serve",
        peer,
        framework,
        transport,
        str(records),
    ]


def server_environment() -> dict[str, str]:
    """The server's environment: the harness importable, no peer phoning home."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PYTHONPATH": root if not path else f"{root}{os.pathsep}{path}",
        "DISABLE_DIAGNOSTICS": "true",  # AgentCat's setup beacon
        "OTEL_TRACES_EXPORTER": "none",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "LOGFIRE_SEND_TO_LOGFIRE": "false",
        "PYTHONUNBUFFERED": "1",
    }


async def call_all(client: Any) -> list[Outcome]:
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415

    outcomes = []
    for call in CALLS:
        with anyio.fail_after(CALL_TIMEOUT):
            try:
                result = await client.call_tool(call.tool, call.arguments)
            except MCPError as exc:
                outcomes.append(
                    Outcome(call.tool, call.kind, True, exc.error.code, exc.error.message)
                )
                continue
        text = next((getattr(block, "text", "") for block in result.content), "")
        outcomes.append(Outcome(call.tool, call.kind, result.is_error is True, None, text))
    return outcomes


async def drive_stdio(command: list[str], stderr: Any) -> list[Outcome]:
    import mcp  # noqa: PLC0415
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415

    parameters = StdioServerParameters(
        command=command[0], args=command[1:], env=server_environment()
    )
    # The server's stderr (the tracebacks its framework logs for failing tools) goes to a file.
    transport = stdio_client(parameters, errlog=stderr)
    with anyio.fail_after(RUN_TIMEOUT):
        async with mcp.Client(transport) as client:
            outcomes = await call_all(client)
            await anyio.sleep(SETTLE_SECONDS)
            return outcomes


async def drive_http(port: int) -> list[Outcome]:
    import mcp  # noqa: PLC0415

    with anyio.fail_after(RUN_TIMEOUT):
        async with mcp.Client(f"http://127.0.0.1:{port}/mcp") as client:
            outcomes = await call_all(client)
    await anyio.sleep(SETTLE_SECONDS)
    return outcomes


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a killed process
            continue
    return records


def wait_for_port(path: Path, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for record in read_records(path):
            if record.get("kind") == "listening":
                return int(record["port"])
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode} before listening")
        time.sleep(0.1)
    raise TimeoutError(f"the server did not listen within {START_TIMEOUT:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def run_once(peer: str, framework: str, transport: str, workdir: Path) -> Run:
    """One peer, framework and transport, in a fresh server process; never raises."""
    run = Run(peer, framework, transport)
    records = workdir / f"{peer}-{framework}-{transport}.jsonl"
    records.unlink(missing_ok=True)
    log = workdir / f"{peer}-{framework}-{transport}.stderr.log"
    command = server_command(peer, framework, transport, records)
    started = time.monotonic()
    try:
        if transport == "stdio":
            with log.open("w", encoding="utf-8") as errlog:
                run.outcomes = anyio.run(drive_stdio, command, errlog)
        else:
            with log.open("wb") as stderr:
                process = subprocess.Popen(
                    command, env=server_environment(), stdout=stderr, stderr=stderr
                )
                try:
                    run.outcomes = anyio.run(drive_http, wait_for_port(records, process))
                finally:
                    stop(process)
    except BaseException as exc:  # a broken run is a finding, never the end of the comparison
        if isinstance(exc, KeyboardInterrupt):
            raise
        run.failure = _failure_text(exc)
    run.seconds = round(time.monotonic() - started, 2)
    run.records = read_records(records)
    return run


def _failure_text(exc: BaseException) -> str:
    # An exception group (anyio's task groups raise them): its first member says what failed.
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {exc}"[:300]
