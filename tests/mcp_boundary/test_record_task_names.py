"""The tasks ``toolcall-spec record`` writes are named as docs/record-replay.md says, for the real
``mcp`` client in both protocol eras on both transports: a session is named after its client
(``initialize``'s ``clientInfo``, or the 2026-07-28 ``_meta`` stamp), session-less HTTP traffic
is the task ``stateless``, and a session that did nothing (the client's ``server/discover``
probe before it falls back to the handshake) leaves no task, so ``serve-fixtures`` needs no
``--task``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from support.recording import (
    client_sees,
    load_suite,
    python_server,
    raw_http_upstream,
    record_argv,
    recording_proxy,
    stop,
    upstream,
)

NAMED = pytest.mark.requirement("toolcall-spec.requirement.record.one-entry-per-call")
DEFAULT_CLIENT = "mcp"
"""The name the ``mcp`` client gives itself when the caller names none."""


@contextmanager
def http_server(kind: str) -> Iterator[str]:
    if kind == "raw, sessions, handshake only":
        with raw_http_upstream(sessions=True) as (url, _):
            yield url
    else:
        with upstream(kind) as (url, _):
            yield url


def record_http(tmp_path: Path, kind: str, mode: str, calls: list[Any]) -> dict[str, Any]:
    out, log = tmp_path / "recorded.json", tmp_path / "proxy.log"
    with http_server(kind) as url, recording_proxy(url, out, log) as (proxy_url, proxy):
        client_sees(proxy_url, calls, mode)
        stop(proxy)
    return load_suite(out)


def record_stdio(tmp_path: Path, mode: str, calls: list[Any]) -> dict[str, Any]:
    from mcp import StdioServerParameters

    out = tmp_path / "recorded.json"
    argv = record_argv(out, *python_server("mcp"))
    # The whole environment: the proxy must import the code under test.
    client_sees(
        StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ)), calls, mode
    )
    return load_suite(out)


CASES = [
    # transport, server, client mode (auto: the client's default), the expected task names
    ("http", "raw, sessions, handshake only", "auto", [DEFAULT_CLIENT]),
    ("http", "mcp", "auto", ["stateless"]),
    ("http", "mcp", "legacy", [DEFAULT_CLIENT]),
    ("stdio", "mcp", "auto", [DEFAULT_CLIENT]),
    ("stdio", "mcp", "legacy", [DEFAULT_CLIENT]),
]


@NAMED
@pytest.mark.parametrize(("transport", "server", "mode", "names"), CASES)
def test_tasks_are_named_as_the_docs_say_and_none_is_empty(
    tmp_path: Path, transport: str, server: str, mode: str, names: list[str]
) -> None:
    calls = [("echo", {"tag": "t"})] if server.startswith("raw") else [("add", {"a": 1, "b": 2})]
    if transport == "http":
        suite = record_http(tmp_path, server, mode, calls)
    else:
        suite = record_stdio(tmp_path, mode, calls)
    assert [task["taskId"] for task in suite["tasks"]] == names
    assert all(task["fixtures"]["toolResponses"] for task in suite["tasks"])
