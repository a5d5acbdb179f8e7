"""``IngestPostSink`` (the Python HTTP sink) with the behaviour of the npm package's
``IngestHttpSink``: against a real ``serve-ingest`` killed with SIGKILL and started again on its
port, nothing it was given is lost and a batch sent twice is stored once; a 503 with
``Retry-After`` is waited out; a full buffer drops and counts without making the caller wait."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from support.store import free_port, start_service_on, tool_call, write_keys_file

from toolcall_spec.analytics.sinks import IngestPostSink, retry_after_seconds

PROJECT, KEY = "py-project", "py-key-0123456789"


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    return write_keys_file(tmp_path, PROJECT, KEY)


def events(count: int) -> list[dict[str, Any]]:
    return [tool_call(index, event_id=str(uuid.uuid4())) for index in range(count)]


def test_the_sink_survives_the_endpoint_going_away_and_coming_back(
    keys_file: Path, tmp_path: Path
) -> None:
    pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")
    from toolcall_spec.analytics.store import open_store

    store, log_dir, port = str(tmp_path / "events.duckdb"), tmp_path / "log", free_port()
    service = start_service_on(store, keys_file, port, log_dir)
    sink = IngestPostSink(
        f"http://127.0.0.1:{port}/v1/events", KEY, timeout=20, min_backoff=0.02, max_backoff=0.3
    )
    made = events(800)
    try:
        started = time.perf_counter()
        for event in made[:500]:
            sink(event)
        service.kill()
        for event in made[500:]:
            sink(event)
        # A write that waited on the network would take a request timeout (20 s) at least.
        assert time.perf_counter() - started < 10.0
        time.sleep(1.0)
        service = start_service_on(store, keys_file, port, log_dir)
        for event in made[:100]:  # sent again, as after an answer that was lost
            sink(event)
        sink.close()
        service.wait_loaded()
    finally:
        service.stop()
    assert (sink.lost, sink.dropped, sink.rejected) == (0, 0, 0)
    assert sink.retries > 0
    rows = open_store(store).query("SELECT event_id FROM tool_call_events", {})
    assert sorted(str(row[0]) for row in rows) == sorted(event["event_id"] for event in made)


class _Full(BaseHTTPRequestHandler):
    """503 with Retry-After: 1 for the first batch, then 200."""

    arrivals: ClassVar[list[float]] = []

    def do_POST(self) -> None:
        size = int(self.headers["Content-Length"])
        count = len(json.loads(self.rfile.read(size))["events"])
        self.arrivals.append(time.monotonic())
        if len(self.arrivals) == 1:
            self.send_response(503)
            self.send_header("Retry-After", "1")
            body = b'{"error":"backlog_full"}'
        else:
            self.send_response(200)
            body = json.dumps({"status": 200, "accepted": count, "rejected": 0}).encode()
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_503_with_retry_after_is_waited_out_and_the_batch_sent_again() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Full)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sink = IngestPostSink(f"http://127.0.0.1:{server.server_port}/v1/events", min_backoff=0.01)
        for event in events(5):
            sink(event)
        sink.close()
    finally:
        server.shutdown()
    first, second = _Full.arrivals
    assert second - first >= 0.9  # Retry-After honoured
    assert (sink.sent, sink.accepted, sink.retries, sink.lost) == (5, 5, 1, 0)


def test_a_full_buffer_drops_and_counts_without_making_the_caller_wait() -> None:
    made = events(2000)
    # An endpoint that takes the connection and never answers: a call that waited on the
    # network would hang for the request timeout (5 s) at least.
    with socket.socket() as hanging:
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(64)
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}/v1/events"
        sink = IngestPostSink(url, timeout=5.0, max_buffered=50, min_backoff=0.01)
        started = time.perf_counter()
        for event in made:
            sink(event)
        assert time.perf_counter() - started < 5.0
        sink.close()
    assert sink.dropped == 2000 - 50
    assert sink.lost == 50


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0) == 6.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None
