"""The HTTP sink of the npm package (``IngestHttpSink``, typescript/sinks.js) against a real
``toolcall-spec serve-ingest`` started by the test, on a DuckDB store: the endpoint killed with
SIGKILL while events keep coming, then started again on the same port; nothing the sink was
given is lost, and what it sent twice is stored once. The bounded buffer: a down endpoint never
makes a tool call wait, and what does not fit is dropped and counted."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support.store import start_service_on, write_keys_file

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

from support.node import tool
from support.repo import REPO
from support.store import free_port

from toolcall_spec.analytics.store import open_store

DRIVER = Path(__file__).parent / "ingest_sink_driver.mjs"
PROJECT, KEY = "ts-project", "ts-key-0123456789"
FAST_RETRIES = {"minBackoffMs": 20, "maxBackoffMs": 300, "requestTimeoutMs": 5000}
BLOCKED_MS = 5000
"""A write that waited for the network would take at least a request's timeout; the bounds on
write times are that, not a guess at the machine's speed (two cores shared with other work)."""


class Driver:
    """The node process that owns one IngestHttpSink."""

    def __init__(self, url: str, options: dict[str, Any]) -> None:
        config = json.dumps({"url": url, "key": KEY, "options": options})
        self.process = subprocess.Popen(
            [tool("node"), str(DRIVER), config],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "the sink driver died"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> dict[str, Any]:
        answer = self.send(close=True)
        self.process.wait(30)
        return answer


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    return write_keys_file(tmp_path, PROJECT, KEY)


def stored_ids(store: str) -> list[str]:
    rows = open_store(store).query("SELECT event_id FROM tool_call_events", {})
    return [str(row[0]) for row in rows]


def test_the_http_sink_survives_the_endpoint_going_away_and_coming_back(
    keys_file: Path, tmp_path: Path
) -> None:
    """Over 10 s: a real serve-ingest started, killed with SIGKILL mid-stream and started again
    on its port, with the node sink retrying through the gap and the store drained at the end."""
    store, log_dir, port = str(tmp_path / "events.duckdb"), tmp_path / "log", free_port()
    service = start_service_on(store, keys_file, port, log_dir)
    driver = Driver(f"http://127.0.0.1:{port}/v1/events", FAST_RETRIES)
    try:
        assert driver.send(write=300)["ms"] < BLOCKED_MS  # buffered, not sent on the caller's time
        assert driver.send(flush=20_000)["done"]
        driver.send(write=200)  # some of these are in flight when the endpoint dies
        service.kill()
        away = driver.send(write=300)  # nobody answers now
        assert away["ms"] < BLOCKED_MS
        time.sleep(1.0)
        assert driver.send(flush=100)["done"] is False  # still held, retried, not dropped
        service = start_service_on(store, keys_file, port, log_dir)
        driver.send(resend=100)  # a batch sent twice, as after a lost answer
        answer = driver.close()
        service.wait_loaded()
    finally:
        if driver.process.poll() is None:
            driver.process.kill()
        service.stop()
    assert answer["done"] is True
    assert (answer["lost"], answer["dropped"], answer["rejected"]) == (0, 0, 0)
    assert answer["retries"] > 0  # it did retry while the endpoint was away
    ids = stored_ids(store)
    assert sorted(ids) == sorted(answer["ids"])  # all 800, each once (the resent 100 too)


def test_a_full_buffer_drops_and_counts_without_making_the_caller_wait() -> None:
    # An endpoint that takes the connection and never answers: a write that waited on the
    # network would hang for a request timeout at least.
    with socket.socket() as hanging:
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(64)
        options = {**FAST_RETRIES, "maxBuffered": 50, "closeTimeoutMs": 300}
        driver = Driver(f"http://127.0.0.1:{hanging.getsockname()[1]}/v1/events", options)
        written = driver.send(write=5000)
        answer = driver.close()
    assert written["ms"] < BLOCKED_MS
    assert written["dropped"] == 5000 - 50
    assert answer["done"] is False
    assert answer["lost"] == 50  # what was still held when close gave up, counted


def test_the_file_callback_and_retry_after_rules_under_node_test() -> None:
    """tests/typescript/sinks.test.mjs: the JSONL and callback sinks, Retry-After honoured on a
    503 (the batch sent again whole), a 401 counted as lost without a retry."""
    done = subprocess.run(
        [tool("node"), "--test", str(Path(__file__).parent / "sinks.test.mjs")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
