"""Malformed traffic through ``toolcall-spec record`` (stdio): what is not JSON and what answers
nothing is passed on and logged, a server that dies mid-call leaves the client with a JSON-RPC
error for its open call and the suite with a failure; the proxy never hangs."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from support.recording import (
    RAW_SERVER,
    SERVERS,
    RawClient,
    entries,
    flags,
    load_suite,
    record_argv,
)

SERVER_DEATH = pytest.mark.requirement("toolcall-spec.requirement.record.server-death-answered")
FAILURES = pytest.mark.requirement("toolcall-spec.requirement.record.failures-kept")
TRANSPARENT = pytest.mark.requirement("toolcall-spec.requirement.record.transparent")


@SERVER_DEATH
@TRANSPARENT
def test_non_json_lines_and_unknown_ids_pass_through_and_are_logged(tmp_path: Path) -> None:
    out = tmp_path / "recorded.json"
    client = RawClient(record_argv(out, sys.executable, RAW_SERVER))
    try:
        client.handshake()
        client.send_line(b"{this is not json\n")
        parse_error = json.loads(client.read_line())
        assert parse_error["error"]["code"] == -32700  # the server's answer, passed on
        request_id = client.send("tools/call", {"name": "ghost", "arguments": {"n": 1}})
        assert json.loads(client.read_line())["id"] == "no-such-id"  # passed on as sent
        assert client.read_line() == b"this line is not JSON\n"  # passed on byte for byte
        answer = json.loads(client.read_line())
        assert answer["id"] == request_id
        client.call("tools/call", {"name": "echo", "arguments": {"x": [1, 2]}})
    finally:
        status, stderr = client.finish()
    assert status == 0
    assert "a line from the client is not JSON" in stderr
    assert "a line from the server is not JSON" in stderr
    assert "'no-such-id', which no open request has" in stderr
    suite = load_suite(out)
    assert flags(suite) == [("ghost", False), ("echo", False)]
    assert entries(suite)[1]["response"]["content"][0]["text"] == '{"x": [1, 2]}'


@SERVER_DEATH
@FAILURES
def test_a_server_that_dies_mid_call_gets_the_client_an_error_and_the_suite_a_failure(
    tmp_path: Path,
) -> None:
    out = tmp_path / "recorded.json"
    client = RawClient(record_argv(out, sys.executable, RAW_SERVER))
    try:
        client.handshake()
        client.call("tools/call", {"name": "echo", "arguments": {"a": 1}})
        answer = client.call("tools/call", {"name": "die", "arguments": {"b": 2}})
        assert answer["error"]["code"] == -32000
        assert "exited (status 7)" in answer["error"]["message"]
        assert client.read_line() == b""  # then the proxy ends, as the server did
    finally:
        status, stderr = client.finish()
    assert status == 1
    assert "tools/call 'die' (id 3) recorded as a failure" in stderr
    suite = load_suite(out)
    assert flags(suite) == [("echo", False), ("die", True)]
    die = entries(suite)[1]
    assert die["args"] == {"b": 2}
    assert "exited (status 7)" in die["response"]["content"][0]["text"]


@FAILURES
@TRANSPARENT
def test_a_cancelled_call_is_passed_on_and_recorded_as_an_unanswered_failure(
    tmp_path: Path,
) -> None:
    out = tmp_path / "recorded.json"
    argv = record_argv(out, sys.executable, SERVERS, "mcp", options=("--shutdown-timeout", "2"))
    client = RawClient(argv)
    try:
        client.handshake()
        slow = client.send("tools/call", {"name": "slow", "arguments": {"seconds": 0.5}})
        client.send("notifications/cancelled", {"requestId": slow, "reason": "user"}, notify=True)
        time.sleep(1.0)  # the server would have answered by now; a cancelled call it does not
    finally:
        status, stderr = client.finish()
    assert status == 0
    suite = load_suite(out)
    assert flags(suite) == [("slow", True)]
    text = entries(suite)[0]["response"]["content"][0]["text"]
    assert "the client cancelled the call" in text
    assert "tools/call 'slow'" in stderr
