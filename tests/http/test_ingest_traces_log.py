"""``POST /v1/traces`` through the write-ahead log (after h-otlp and h-wal are merged): an OTLP
export is acknowledged once its events are in the log, the loader fills the store, a retried
export is stored once, and past the log's bound the answer is OTLP's 503 with ``Retry-After``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_ingest_log import KEY, SwitchableStore, health, serve, stored_events, wait_loaded
from test_ingest_traces import json_export, json_span, tools_call

from toolcall_spec.analytics.otlp_spans import span_event_id
from toolcall_spec.analytics.store import open_store
from toolcall_spec.analytics.store.wal import WriteAheadLog
from toolcall_spec.http.otlp_route import TRACES_PATH
from toolcall_spec.http.server import BackgroundServer

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

SAME_INTAKE = pytest.mark.requirement("toolcall-spec.requirement.otlp.same-intake")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SwitchableStore]:
    with open_store(str(tmp_path / "events.duckdb")) as opened:
        yield SwitchableStore(opened)


def post(server: BackgroundServer, body: bytes) -> httpx.Response:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    return httpx.post(server.url + TRACES_PATH, content=body, headers=headers, timeout=30)


@SAME_INTAKE
def test_an_export_is_acknowledged_from_the_log_and_loaded_once(
    store: SwitchableStore, tmp_path: Path
) -> None:
    spans = [json_span(attributes=tools_call(f"tool_{i}")) for i in range(3)]
    body = json_export(spans)
    with serve(store, WriteAheadLog.open(tmp_path / "log")) as server:
        store.down.set()  # the answer rests on the log alone
        assert post(server, body).status_code == 200
        assert health(server)["log"]["backlog_events"] == 3
        assert store.count() == 0
        store.down.clear()
        wait_loaded(server)
        assert post(server, body).status_code == 200  # the exporter's retry
        wait_loaded(server)
    expected = {span_event_id(span["traceId"], span["spanId"]) for span in spans}
    assert set(stored_events(store)) == expected


@SAME_INTAKE
def test_past_the_bound_the_answer_is_otlps_503(store: SwitchableStore, tmp_path: Path) -> None:
    log = WriteAheadLog.open(tmp_path / "log", max_backlog_bytes=1)
    with serve(store, log) as server:
        store.down.set()
        assert post(server, json_export([json_span(attributes=tools_call("a"))])).status_code == 200
        answer = post(server, json_export([json_span(attributes=tools_call("b"))]))
        assert answer.status_code == 503
        assert answer.headers["Retry-After"].isdigit()
        assert answer.json()["code"] == 14
        assert "the ingest log is full" in answer.json()["message"]
        store.down.clear()
        wait_loaded(server)
