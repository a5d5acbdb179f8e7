"""``POST /v1/events`` through the write-ahead log, on a real uvicorn server and a real DuckDB file:
the answer waits for the log, the loader fills the store, the backlog bound answers 503 with
``Retry-After`` while the engine is down, a full disk (ENOSPC injected at the write) answers 507,
and ``GET /v1/health`` reports the backlog."""

from __future__ import annotations

import errno
import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from support.store import tool_call

from toolcall_spec.analytics.store import EventStore, StoreError, open_store
from toolcall_spec.analytics.store.layout import Columns, Row
from toolcall_spec.analytics.store.wal import LogLoader, WriteAheadLog, start_loader_thread
from toolcall_spec.filesystem import Call, intercepted
from toolcall_spec.http.ingest_app import (
    EVENTS_PATH,
    HEALTH_PATH,
    IngestSettings,
    create_ingest_app,
)
from toolcall_spec.http.server import BackgroundServer

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

KEY = "key-of-the-log-tests-0123456789"
HEADERS = {"Authorization": f"Bearer {KEY}"}


class SwitchableStore(EventStore):
    """A real DuckDB store whose engine can be taken down (every write fails) and brought back."""

    engine = "duckdb"

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner
        self.down = threading.Event()

    def write_columns(self, columns: Columns) -> None:
        if self.down.is_set():
            raise StoreError("the engine is down")
        self.inner.write_columns(columns)

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        return self.inner.query(sql, parameters)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SwitchableStore]:
    with open_store(str(tmp_path / "events.duckdb")) as opened:
        yield SwitchableStore(opened)


@contextmanager
def serve(store: EventStore, log: WriteAheadLog) -> Iterator[BackgroundServer]:
    """The endpoint on the log (no store of its own: as under ``serve-ingest``), its loader in
    a thread filling ``store``."""
    stop = start_loader_thread([LogLoader(log.directory, store)])
    try:
        with BackgroundServer(create_ingest_app(IngestSettings(None, {KEY: "p"}, log))) as server:
            yield server
    finally:
        stop()
        log.close()


class SegmentWriteFails:
    """The disk is full for the writer's next write to a segment (the loader, in a thread of
    the same process, writes its own files meanwhile: they are left alone)."""

    injected = False

    def before(self, call: Call) -> None:
        if call.op == "write" and str(call.path).endswith(".log") and not self.injected:
            self.injected = True
            raise OSError(errno.ENOSPC, "No space left on device (injected)")


def post(server: BackgroundServer, events: list[Any]) -> httpx.Response:
    body = orjson.dumps({"events": events})
    return httpx.post(server.url + EVENTS_PATH, content=body, headers=HEADERS, timeout=30)


def health(server: BackgroundServer) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.get(server.url + HEALTH_PATH, headers=HEADERS, timeout=30).json()
    return answer


def wait_loaded(server: BackgroundServer, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (answer := health(server))["log"]["backlog_events"]:
        assert time.monotonic() < deadline, answer
        time.sleep(0.02)
    return answer


def load_failed(server: BackgroundServer, timeout: float = 30) -> dict[str, Any]:
    """The health answer once the loader has tried to load and failed (a load waits until the
    writer is quiet: ``QUIET_SECONDS``)."""
    deadline = time.monotonic() + timeout
    while not (answer := health(server))["log"]["last_load_error"]:
        assert time.monotonic() < deadline, answer
        time.sleep(0.02)
    return answer


def stored_events(store: EventStore) -> dict[str, Any]:
    rows = store.query("SELECT event_id, event_json FROM {events}", {})
    return {str(event_id): orjson.loads(text) for event_id, text in rows}


@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_an_answer_means_the_batch_is_in_the_log_and_then_in_the_store(
    store: SwitchableStore, tmp_path: Path
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    unchanged = [tool_call(1), tool_call(2)]
    repaired = tool_call(3, status="error", error_message="x" * 600)
    repaired.pop("error_category", None)
    with serve(store, log) as server:
        store.down.set()  # nothing reaches the engine: the answers rest on the log alone
        first, second = post(server, unchanged), post(server, [repaired])
        assert (first.status_code, second.status_code) == (200, 200)
        assert second.json()["warnings"]
        assert health(server)["log"]["backlog_events"] == 3
        assert store.count() == 0
        store.down.clear()
        answer = wait_loaded(server)
    assert answer["log"]["loaded_events"] == 3
    stored = stored_events(store)
    assert stored[unchanged[0]["event_id"]] == unchanged[0]
    kept = stored[repaired["event_id"]]
    assert len(kept["error_message"]) == 500  # stored as accepted (repaired), not as sent
    assert kept["error_category"] == "unknown"


@pytest.mark.requirement("toolcall-spec.requirement.store.log-bounded")
def test_past_the_bound_the_endpoint_answers_503_with_retry_after(
    store: SwitchableStore, tmp_path: Path
) -> None:
    log = WriteAheadLog.open(tmp_path / "log", max_backlog_bytes=1)
    kept, refused = [tool_call(1)], [tool_call(2)]
    with serve(store, log) as server:
        store.down.set()
        assert post(server, kept).status_code == 200
        answer = post(server, refused)
        assert answer.status_code == 503
        assert answer.headers["Retry-After"].isdigit()
        assert "the ingest log is full" in answer.json()["error"]["message"]
        report = load_failed(server)
        assert report["status"] == "full"
        assert report["log"]["backlog_events"] == 1
        assert "the engine is down" in report["log"]["last_load_error"]
        store.down.clear()
        wait_loaded(server)
        assert post(server, refused).status_code == 200  # the client's retry
        wait_loaded(server)
    assert set(stored_events(store)) == {kept[0]["event_id"], refused[0]["event_id"]}


@pytest.mark.requirement("toolcall-spec.requirement.store.log-disk-full")
def test_a_full_disk_answers_507_and_keeps_what_was_acknowledged(
    store: SwitchableStore, tmp_path: Path
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    before, during, after = [tool_call(1)], [tool_call(2)], [tool_call(3)]

    with serve(store, log) as server:
        assert post(server, before).status_code == 200
        full = SegmentWriteFails()
        with intercepted(full):
            answer = post(server, during)
        assert full.injected
        assert answer.status_code == 507
        assert answer.json()["error"]["code"] == "insufficient_storage"
        assert "the disk is full" in answer.json()["error"]["message"]
        assert post(server, after).status_code == 200
        report = wait_loaded(server)
    assert report["log"]["corrupt_records"] == 0
    assert set(stored_events(store)) == {before[0]["event_id"], after[0]["event_id"]}


@pytest.mark.requirement("toolcall-spec.requirement.store.log-quarantine")
@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_batch_with_a_byte_order_mark_is_stored_and_stops_nothing(
    store: SwitchableStore, tmp_path: Path, gzipped: bool
) -> None:
    """The intake reads a body that starts with a UTF-8 byte-order mark (RFC 8259 lets a reader
    ignore it) and answers 200: the log must hold bytes the loader reads as the intake did.
    Once, the body was logged as received, the loader died on it at every start, nothing after
    it was stored, and health said ok."""
    marked, later = [tool_call(1)], [[tool_call(2 + i)] for i in range(3)]
    body = b"\xef\xbb\xbf" + orjson.dumps({"events": marked})
    headers = dict(HEADERS)
    if gzipped:
        body, headers["Content-Encoding"] = gzip.compress(body), "gzip"
    log = WriteAheadLog.open(tmp_path / "log")
    with serve(store, log) as server:
        answer = httpx.post(server.url + EVENTS_PATH, content=body, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        assert all(post(server, events).status_code == 200 for events in later)
        report = wait_loaded(server)
    sent = marked + [event for events in later for event in events]
    assert set(stored_events(store)) == {event["event_id"] for event in sent}
    assert report["status"] == "ok"
    assert report["log"]["loaded_events"] == 4
    assert (report["log"]["quarantined_records"], report["log"]["last_load_error"]) == (0, None)


def test_health_without_a_log_names_the_engine(store: SwitchableStore) -> None:
    app = create_ingest_app(IngestSettings(store, {KEY: "p"}))
    with BackgroundServer(app) as server:
        assert health(server) == {"status": "ok", "problems": [], "store": "duckdb"}


@pytest.mark.requirement("toolcall-spec.requirement.otlp.same-intake")
def test_otlp_traces_go_through_the_same_log(store: SwitchableStore, tmp_path: Path) -> None:
    """The mcp SDK's own spans, exported by the real OTLP exporter to ``/v1/traces``, are made
    durable the way batches are: in the log, then loaded; the errors are the client's."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from support.mcp_servers import demo_server, run_calls
    from support.otel import sdk_spans_to

    from toolcall_spec.http.otlp_route import TRACES_PATH

    log = WriteAheadLog.open(tmp_path / "log")
    calls = [("add", {"a": 1, "b": 2}), ("crash", {}), ("add", {"a": 2, "b": 3})]
    with serve(store, log) as server:
        exporter = OTLPSpanExporter(endpoint=server.url + TRACES_PATH, headers=HEADERS, timeout=30)
        with sdk_spans_to(SimpleSpanProcessor(exporter)):
            outcomes = run_calls(demo_server(), calls)
        report = wait_loaded(server)
    flagged = sum(1 for outcome in outcomes if getattr(outcome, "is_error", False) is True)
    assert flagged == 1
    assert report["log"]["appended_events"] == len(calls)
    metrics = store.metrics("p")
    assert (metrics.totals.tool_calls, metrics.totals.errors) == (len(calls), flagged)
