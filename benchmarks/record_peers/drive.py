"""The client side of ``nox -s record_peers``: the real ``mcp`` client makes the probe's calls
through a peer's recorder or against its replay server, over stdio (the client launches the
command) or streamable HTTP (the command runs on its own and is reached on loopback). Every wait
is bounded; nothing here raises out of a run: a failure is what the run reports."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[2]
LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
"""The live server recorded: the one the tests record (flaky, lookup, quota), as a script."""

Call = tuple[str, dict[str, Any]]
PROBE: list[Call] = [
    ("flaky", {"key": "a"}),  # isError: true
    ("flaky", {"key": "a"}),  # the same call, now a success
    ("lookup", {"id": 1}),
    ("quota", {}),  # a JSON-RPC error (-32001), no result at all
]
MISS: Call = ("lookup", {"id": 99})
"""Asked of the replay only: a call nothing recorded."""

CALL_TIMEOUT = 10.0
"""Seconds for one call: a replay that never answers a miss is a finding, not a hang."""
START_TIMEOUT = 30.0
SETTLE_TIMEOUT = 15.0
"""Seconds for a recorder to write its file once the client has gone or it was told to stop."""
SERVING = re.compile(
    r"(?:serving on|Streamable HTTP at|listening on) (http://127\.0\.0\.1:\d+/\S*)"
)


@dataclass
class Outcome:
    """What the client received: a result (``is_error``), a JSON-RPC error (``rpc_error``), or
    nothing (``failure``: a timeout, a closed connection)."""

    is_error: bool | None = None
    rpc_error: int | None = None
    text: str = ""
    failure: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "isError": self.is_error,
            "rpcError": self.rpc_error,
            "text": self.text[:200],
            "failure": self.failure,
        }


def environment() -> dict[str, str]:
    """The processes' environment: this one's (PYTHONPATH included, which the mcp client's
    default environment leaves out), unbuffered."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def failure_text(exc: BaseException) -> str:
    while getattr(exc, "exceptions", None):  # an exception group: its first member says what
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc) or ("no answer in time" if isinstance(exc, TimeoutError) else "")
    return f"{type(exc).__name__}: {text}"[:300]


async def _calls(client: Any, calls: list[Call]) -> list[Outcome]:
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415

    outcomes: list[Outcome] = []
    for tool, args in calls:
        try:
            with anyio.fail_after(CALL_TIMEOUT):
                result = await client.call_tool(tool, args)
        except MCPError as exc:
            outcomes.append(Outcome(rpc_error=exc.error.code, text=exc.error.message))
            continue
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            outcomes.append(Outcome(failure=failure_text(exc)))
            break  # the session is gone or stuck: no further call can be told apart
        text = " ".join(getattr(block, "text", "") for block in result.content)
        outcomes.append(Outcome(is_error=result.is_error is True, text=text))
    return outcomes


def session(target: str | list[str], calls: list[Call], errlog: Path) -> list[Outcome]:
    """The calls made by one client session (the 2025 handshake, which every peer records):
    ``target`` is a URL or the command the client launches over stdio."""
    import mcp  # noqa: PLC0415
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415

    outcomes: list[Outcome] = []

    async def main() -> None:
        with errlog.open("a", encoding="utf-8") as stderr:
            if isinstance(target, str):
                transport: Any = target
            else:
                parameters = StdioServerParameters(
                    command=target[0], args=target[1:], env=environment()
                )
                transport = stdio_client(parameters, errlog=stderr)
            with anyio.fail_after(START_TIMEOUT + CALL_TIMEOUT * (len(calls) + 1)):
                async with mcp.Client(transport, mode="legacy") as client:
                    outcomes.extend(await _calls(client, calls))

    try:
        anyio.run(main)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        if not outcomes:
            outcomes.append(Outcome(failure=failure_text(exc)))
    return outcomes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Background:
    """A command run on its own (an HTTP server or proxy), its output in a log file."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        self._handle = log.open("wb")
        self.process = subprocess.Popen(
            command, stdout=self._handle, stderr=subprocess.STDOUT, env=environment()
        )

    def url(self, port: int | None = None, path: str = "/mcp") -> str:
        """The URL it serves: the one it prints, or ``port`` once it accepts connections."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if port is None:
                found = SERVING.search(self.log.read_text("utf-8", errors="replace"))
                if found:
                    return found.group(1)
            else:
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        return f"http://127.0.0.1:{port}{path}"
            if self.process.poll() is not None:
                lines = self.log.read_text("utf-8", errors="replace").strip().splitlines()
                last = lines[-1] if lines else "no output"  # a traceback's last line: its error
                raise RuntimeError(f"exited with {self.process.returncode} at start: {last}")
            time.sleep(0.1)
        raise TimeoutError(f"not serving within {START_TIMEOUT:.0f} s")

    def stop(self) -> int | None:
        """Ctrl-C (what ends a recording), then SIGTERM, then SIGKILL; its exit status."""
        for sent in (signal.SIGINT, signal.SIGTERM):
            if self.process.poll() is None:
                self.process.send_signal(sent)
                try:
                    self.process.wait(timeout=SETTLE_TIMEOUT / 2)
                except subprocess.TimeoutExpired:
                    continue
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self._handle.close()
        return self.process.returncode


def wait_for_file(path: Path) -> bool:
    """Whether ``path`` appears (a recorder writes it once its client has gone) and stops
    growing."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    size = -1
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size > 0:
            if path.stat().st_size == size:
                return True
            size = path.stat().st_size
        time.sleep(0.3)
    return path.exists() and path.stat().st_size > 0
