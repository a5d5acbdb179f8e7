"""``toolcall-spec record`` pairs every answer with the request that caused it, whatever the ids:
two requests in flight with equal JSON-RPC ids (two session-less clients, two POSTs of one
session, one batch, one stdio pipe) each get their own answer recorded, and calls are kept in
the order the requests were sent, not the order the server answered them (hand-written servers
that answer when the test says: tests/support/raw_mcp_server.py, raw_http_mcp_server.py)."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.recording import (
    RAW_SERVER,
    RawClient,
    call_message,
    echoed,
    initialize_message,
    load_suite,
    post_jsonrpc,
    raw_http_upstream,
    record_argv,
    recorded_tags,
    recording_proxy,
    stop,
)

pytest.importorskip("httpx", reason="the http extra is not installed")

PAIRED = pytest.mark.requirement("toolcall-spec.requirement.record.one-entry-per-call")

SLOW, QUICK = 0.6, 0.0
"""The first request sent is answered last: send order and answer order differ."""
STAGGER = 0.25
"""Between sending the first request and the second, so the send order is known."""


def send_staggered(sends: list[Any]) -> list[Any]:
    """Run each send in a thread of its own, started ``STAGGER`` apart; their results."""
    results: list[Any] = [None] * len(sends)

    def run(i: int) -> None:
        results[i] = sends[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(sends))]
    for thread in threads:
        thread.start()
        time.sleep(STAGGER)
    for thread in threads:
        thread.join(60)
    return results


def http_case(url: str, shape: str, sse: bool) -> list[tuple[str, list[dict[str, Any]]]]:
    """Drive one collision shape; per POST, the tags sent and the answers the client got."""
    # A first request pays the processes' start-up (lazy imports, the first connection), which
    # could let a request sent later be read first: the order sent is the order the proxy reads.
    post_jsonrpc(url, {"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    slow = call_message(1, "echo", tag="first", delay=SLOW, sse=sse)
    quick = call_message(1, "echo", tag="second", delay=QUICK, sse=sse)
    if shape == "two session-less clients":
        got = send_staggered([lambda: post_jsonrpc(url, slow), lambda: post_jsonrpc(url, quick)])
        return [("first", got[0][0]), ("second", got[1][0])]
    if shape == "one session, two POSTs":
        _, session = post_jsonrpc(url, initialize_message(10))
        assert session is not None
        post_jsonrpc(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        sends = [
            lambda: post_jsonrpc(url, slow, session),
            lambda: post_jsonrpc(url, quick, session),
        ]
        got = send_staggered(sends)
        return [("first", got[0][0]), ("second", got[1][0])]
    # one batch holding the id twice, answered in the order sent (nothing else could tell them
    # apart): both calls kept, each with its own answer
    in_order = [
        call_message(1, "echo", tag="first", delay=QUICK, sse=sse),
        call_message(1, "echo", tag="second", delay=SLOW, sse=sse),
    ]
    answers, _ = post_jsonrpc(url, in_order)
    return [("batch", answers)]


SHAPES = ["two session-less clients", "one session, two POSTs", "one batch"]


@pytest.mark.requirement("toolcall-spec.requirement.record.paired-by-exchange")
@PAIRED
@pytest.mark.parametrize("sse", [False, True], ids=["json", "event-stream"])
@pytest.mark.parametrize("shape", SHAPES)
def test_http_requests_with_equal_ids_are_each_paired_with_their_own_answer(
    tmp_path: Path, shape: str, sse: bool
) -> None:
    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    sessions = shape == "one session, two POSTs"
    with (
        raw_http_upstream(sessions=sessions) as (url, _),
        recording_proxy(url, out, log) as (
            proxy_url,
            proxy,
        ),
    ):
        seen = http_case(proxy_url, shape, sse)
        stop(proxy)
    # Forwarded unchanged: each POST got the answers to its own requests.
    for tag, answers in seen:
        tags = sorted(echoed(a["result"]) for a in answers)
        assert tags == (["first", "second"] if tag == "batch" else [tag])
    # Recorded: each call once, with its own answer, in the order sent.
    calls = [pair for task in recorded_tags(load_suite(out)) for pair in task]
    assert calls == [("first", "first"), ("second", "second")], log.read_text("utf-8")


@pytest.mark.requirement("toolcall-spec.requirement.record.paired-by-exchange")
@PAIRED
def test_stdio_requests_with_equal_ids_are_paired_in_send_order_and_kept_in_send_order(
    tmp_path: Path,
) -> None:
    out = tmp_path / "recorded.json"
    client = RawClient(record_argv(out, sys.executable, RAW_SERVER))
    client.handshake()
    # Two requests with id 7 in flight, answered in the order sent (a pipe has no other way to
    # tell them apart); then two with distinct ids, the first answered last.
    for tag, delay in (("a", QUICK), ("b", 0.3)):
        message = call_message(7, "echo", tag=tag, delay=delay)
        client.send_line(json.dumps(message).encode() + b"\n")
    got = [echoed(client.read_answer(7)["result"]), echoed(client.read_answer(7)["result"])]
    late = client.send("tools/call", {"name": "echo", "arguments": {"tag": "c", "delay": SLOW}})
    early = client.send("tools/call", {"name": "echo", "arguments": {"tag": "d"}})
    assert late is not None
    assert early is not None
    assert echoed(client.read_answer(early)["result"]) == "d"
    assert echoed(client.read_answer(late)["result"]) == "c"
    status, stderr = client.finish()
    assert (status, got) == (0, ["a", "b"]), stderr
    assert recorded_tags(load_suite(out)) == [[("a", "a"), ("b", "b"), ("c", "c"), ("d", "d")]]
