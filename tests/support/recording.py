"""Running ``toolcall-spec record`` as a real process in the tests of tests/mcp_boundary."""

from __future__ import annotations

import functools
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from toolcall_spec.replay.journal import read_suite_source
from toolcall_spec.validation import validate

SUPPORT = Path(__file__).parent
SERVERS = SUPPORT / "record_servers.py"
RAW_SERVER = SUPPORT / "raw_mcp_server.py"
CLI = [sys.executable, "-m", "toolcall_spec.cli"]


def record_argv(out: Path, *server: str | Path, options: tuple[str, ...] = ()) -> list[str]:
    """The command a client launches: the proxy in front of ``server``."""
    return [*CLI, "record", "--out", str(out), *options, "--", *map(str, server)]


def python_server(framework: str, *extra: str) -> list[str]:
    return [sys.executable, str(SERVERS), framework, *extra]


def load_suite(path: Path) -> dict[str, Any]:
    """The suite on disk (or the one its journal holds, when a killed recorder left it), which
    must be valid whenever it can be read."""
    suite: dict[str, Any] = read_suite_source(str(path))[0]
    errors = [p for p in validate(suite, "suite") if p.severity == "error"]
    assert not errors, errors
    return suite


def entries(suite: dict[str, Any], task: int = 0) -> list[dict[str, Any]]:
    return list(suite["tasks"][task]["fixtures"]["toolResponses"])


def flags(suite: dict[str, Any], task: int = 0) -> list[tuple[str, bool]]:
    return [(e["tool"], e.get("isError", False)) for e in entries(suite, task)]


class RawClient:
    """Speaks JSON-RPC lines to a proxy process by hand, for the tests no SDK client can drive
    (killing the proxy mid-session, sending what is not JSON)."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.next_id = 0
        self._pending = b""

    @property
    def stdin(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    def send_line(self, line: bytes) -> None:
        self.stdin.write(line)
        self.stdin.flush()

    def send(self, method: str, params: Any = None, *, notify: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        request_id = None
        if not notify:
            self.next_id += 1
            request_id = message["id"] = self.next_id
        self.send_line(json.dumps(message).encode() + b"\n")
        return request_id

    def read_line(self, timeout: float = 30.0) -> bytes:
        """The next line the proxy writes (``b""`` at its end); fails rather than hangs. Reads
        the pipe itself: a buffered reader could hold lines a ``select`` does not see."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                raise TimeoutError("the proxy wrote nothing in time")
            chunk = os.read(fd, 65_536)
            if not chunk:
                line, self._pending = self._pending, b""
                return line
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line + b"\n"

    def read_answer(self, request_id: int, timeout: float = 30.0) -> dict[str, Any]:
        """The response to ``request_id``, skipping other messages."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.read_line(deadline - time.monotonic())
            if not line:
                raise EOFError("the proxy ended before answering")
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
        raise TimeoutError(f"no answer to {request_id}")

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        request_id = self.send(method, params)
        assert request_id is not None
        return self.read_answer(request_id)

    def handshake(self) -> None:
        self.call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-client", "version": "1"},
            },
        )
        self.send("notifications/initialized", notify=True)

    def finish(self, timeout: float = 30.0) -> tuple[int, str]:
        """Close stdin, wait for the proxy to exit: its status and its stderr."""
        if not self.stdin.closed:
            self.stdin.close()
        try:
            self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        assert self.process.stderr is not None
        assert self.process.stdout is not None
        self.process.stdout.close()
        stderr = self.process.stderr.read().decode()
        self.process.stderr.close()
        return self.process.returncode, stderr


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


# --- streamable HTTP: a real upstream server and the proxy, each its own process ----------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {port}")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def upstream(framework: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(
        python_server(framework, "http", str(port)),
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        stop(process)


@contextmanager
def recording_proxy(
    url: str, out: Path, log: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The proxy on a free loopback port; yields the URL it serves (read from its stderr)."""
    argv = [*CLI, "record", "--out", str(out), "--upstream", url, "--port", "0"]
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stderr=sink, env=env or child_env())
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"serving on (\S+)", log.read_text("utf-8"))):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the proxy did not start: {log.read_text('utf-8')}")
            time.sleep(0.05)
        yield found.group(1), process
    finally:
        stop(process)


def client_sees(target: Any, calls: list[tuple[str, dict[str, Any]]], mode: str) -> list[Any]:
    """What the real ``mcp`` client receives from ``target`` (a URL, or stdio server
    parameters): the sorted tool names it lists, then each call's result (a JSON-RPC error as its
    code and message)."""
    import anyio
    import mcp
    from mcp.shared.exceptions import MCPError

    seen: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with mcp.Client(target, mode=mode) as client:
                seen.append(sorted(t.name for t in (await client.list_tools()).tools))
                for name, arguments in calls:
                    try:
                        result = await client.call_tool(name, arguments)
                        seen.append(
                            result.model_dump(mode="json", by_alias=True, exclude_none=True)
                        )
                    except MCPError as exc:
                        seen.append({"jsonrpc-error": exc.error.code, "message": exc.error.message})

    anyio.run(main)
    return seen


RAW_HTTP_SERVER = SUPPORT / "raw_http_mcp_server.py"


@contextmanager
def raw_http_upstream(*, sessions: bool) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``raw_http_mcp_server.py`` on a free port: answers leave when the test says."""
    port = free_port()
    argv = [sys.executable, str(RAW_HTTP_SERVER), str(port), *(["sessions"] if sessions else [])]
    process = subprocess.Popen(argv, env=child_env(), stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        stop(process)


@functools.cache
def http_client() -> Any:
    """One ``httpx.Client`` for every test request (thread-safe): a client made per request
    takes long enough to start (its TLS context) to reorder requests sent 0.1 s apart."""
    import httpx

    return httpx.Client()


def post_jsonrpc(
    url: str, message: Any, session: str | None = None, timeout: float = 60.0
) -> tuple[list[dict[str, Any]], str | None]:
    """POST one JSON-RPC message (or a batch) as a streamable HTTP client does: the answers it
    gets (from a JSON body or an event stream, in the order they came) and the session id."""
    headers = {"accept": "application/json, text/event-stream"}
    if session is not None:
        headers["mcp-session-id"] = session
    response = http_client().post(
        url, content=json.dumps(message), headers=headers, timeout=timeout
    )
    answers: list[dict[str, Any]] = []
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for event in response.text.replace("\r\n", "\n").split("\n\n"):
            data = [line[5:].strip() for line in event.split("\n") if line.startswith("data:")]
            if data:
                answers.append(json.loads("\n".join(data)))
    elif response.content:
        parsed = json.loads(response.content)
        answers = parsed if isinstance(parsed, list) else [parsed]
    return answers, response.headers.get("mcp-session-id") or session


def call_message(request_id: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def initialize_message(request_id: Any, client: str = "raw-client") -> dict[str, Any]:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": client, "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def echoed(result: dict[str, Any]) -> Any:
    """The arguments (stdio raw server) or the tag (HTTP raw server) an echo answer holds."""
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and "tag" in structured:
        return structured["tag"]
    return json.loads(result["content"][0]["text"]).get("tag")


def recorded_tags(suite: dict[str, Any]) -> list[list[tuple[Any, Any]]]:
    """Per task, each recorded echo call as (the tag it was called with, the tag of the answer
    recorded for it), in the suite's order."""
    return [
        [
            (entry["args"].get("tag"), echoed(entry["response"]))
            for entry in task["fixtures"]["toolResponses"]
            if entry["tool"] == "echo"
        ]
        for task in suite["tasks"]
    ]
