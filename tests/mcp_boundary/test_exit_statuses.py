"""Every long-running MCP command ends with the exit status its ``--help`` documents, however it
ends: ``record`` (stdio and ``--upstream``) and ``serve-fixtures`` (stdio and ``--http``) x
(SIGTERM, SIGINT, the client closing stdin, the server dying), each where it applies (an HTTP
command has no client on stdin; ``serve-fixtures`` answers from its suite, no server of its own
can die). The expected status is read from ``--help``'s table, not written here: SIGTERM and a
closed stdin are an ordinary end (success), SIGINT the Ctrl-C line, a server that ends the
session first the status ``record --help`` gives for it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from support.cli import run_cli
from support.recording import (
    CLI,
    RAW_SERVER,
    RawClient,
    child_env,
    raw_http_upstream,
    record_argv,
)

from toolcall_spec.replay.promote import RecordedCall, RecordedTask, recorded_suite


def documented_statuses(command: str) -> dict[str, int]:
    """``--help``'s exit-status table: each line's text -> its status."""
    text = run_cli(command, "--help").stdout
    table = text[text.index("exit status:") :]
    return {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+(.+)$", table, re.M)}


def expected(command: str, end: str) -> int:
    table = documented_statuses(command)
    wanted = {
        "SIGTERM": "success",
        "stdin closed": "success",
        "SIGINT": "interrupted (Ctrl-C)",
        "server died": "the MCP server ended the session",
    }[end]
    return next(code for text, code in table.items() if text.startswith(wanted))


def suite_file(tmp_path: Path) -> Path:
    call = RecordedCall.answered("echo", {}, {"content": [{"type": "text", "text": "hi"}]})
    path = tmp_path / "suite.json"
    path.write_bytes(
        orjson.dumps(recorded_suite([RecordedTask("t", [call])], suite_id="recorded.evals.exit"))
    )
    return path


def wait_for(pattern: str, read: Callable[[], str], process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while not re.search(pattern, read()):
        assert process.poll() is None, read()
        assert time.monotonic() < deadline, read()
        time.sleep(0.05)


def end_stdio(argv: list[str], end: str) -> int:
    client = RawClient(argv)
    client.handshake()  # the command is up, its handlers installed
    if end in ("SIGTERM", "SIGINT"):
        client.process.send_signal(getattr(signal, end))
    elif end == "server died":
        request_id = client.send("tools/call", {"name": "die", "arguments": {}})
        assert request_id is not None
        assert client.read_answer(request_id)["error"]["code"] == -32000
        client.process.wait(30)  # it ends by itself: the client keeps stdin open
    status, _stderr = client.finish()  # closes stdin (the "stdin closed" end) and waits
    return status


def end_http(argv: list[str], end: str, tmp_path: Path) -> int:
    log = tmp_path / "command.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=child_env())
    try:
        wait_for(r"serving on", lambda: log.read_text("utf-8"), process)
        process.send_signal(getattr(signal, end))
        return process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


CASES = [
    ("record", "stdio", end) for end in ("SIGTERM", "SIGINT", "stdin closed", "server died")
] + [
    ("record", "http", "SIGTERM"),
    ("record", "http", "SIGINT"),
    ("serve-fixtures", "stdio", "SIGTERM"),
    ("serve-fixtures", "stdio", "SIGINT"),
    ("serve-fixtures", "stdio", "stdin closed"),
    ("serve-fixtures", "http", "SIGTERM"),
    ("serve-fixtures", "http", "SIGINT"),
]


@pytest.mark.parametrize(("command", "transport", "end"), CASES)
def test_a_long_running_command_exits_as_its_help_says(
    tmp_path: Path, command: str, transport: str, end: str
) -> None:
    if command == "record" and transport == "stdio":
        status = end_stdio(record_argv(tmp_path / "out.json", sys.executable, RAW_SERVER), end)
    elif command == "serve-fixtures" and transport == "stdio":
        status = end_stdio([*CLI, "serve-fixtures", str(suite_file(tmp_path))], end)
    elif command == "record":
        with raw_http_upstream(sessions=False) as (url, _):
            argv = [*CLI, "record", "--out", str(tmp_path / "out.json"), "--upstream", url]
            status = end_http([*argv, "--port", "0"], end, tmp_path)
    else:
        argv = [*CLI, "serve-fixtures", str(suite_file(tmp_path)), "--http"]
        status = end_http(argv, end, tmp_path)
    assert status == expected(command, end)
