"""Load and faults, against the real service on loopback and both real engines.

Load: 8 concurrent clients send 200 batches each, a quarter of them twice (an SDK retrying after a
lost answer): the rows stored equal the events accepted, with no duplicates. Fault: the service
(``toolcall-spec serve-ingest`` in its own process) is killed with SIGKILL during a load; after a
restart every event it acknowledged is in the store."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import pytest
from support.store import Service, fresh_database_url, tool_call

from toolcall_spec.analytics.store import open_store
from toolcall_spec.http.ingest_app import EVENTS_PATH, IngestSettings, create_ingest_app
from toolcall_spec.http.server import BackgroundServer

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

KEY = "load-test-key-0123456789"
CLIENTS, BATCHES, EVENTS_PER_BATCH = 8, 200, 5
HEADERS = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(params=["duckdb", "clickhouse"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "duckdb":
        return str(tmp_path / "events.duckdb")
    return fresh_database_url(request.getfixturevalue("clickhouse_base_url"))


def stored_ids(url: str) -> list[str]:
    with open_store(url) as store:
        return [str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})]


def send_batches(url: str, client_number: int) -> set[str]:
    """One client's batches; every 4th is sent again. The ids of the events acknowledged."""
    acknowledged: set[str] = set()
    with httpx.Client(base_url=url, headers=HEADERS, timeout=60) as client:
        for number in range(BATCHES):
            events = [tool_call(client_number * 10_000 + number) for _ in range(EVENTS_PER_BATCH)]
            body = orjson.dumps({"events": events})
            for _ in range(2 if number % 4 == 0 else 1):
                response = client.post(EVENTS_PATH, content=body)
                assert response.status_code == 200, response.text
                assert response.json()["accepted"] == EVENTS_PER_BATCH
            acknowledged.update(event["event_id"] for event in events)
    return acknowledged


@pytest.mark.requirement("toolcall-spec.requirement.store.dedupe-event-id")
def test_concurrent_clients_with_retries_store_each_event_once(store_url: str) -> None:
    """Slow on purpose (over 10 s): concurrent clients with retries against a real server and a
    real engine are what exactly-once storage must survive."""
    with open_store(store_url) as store:
        app = create_ingest_app(IngestSettings(store, {KEY: "load"}))
        with BackgroundServer(app) as server, ThreadPoolExecutor(CLIENTS) as pool:
            sent = list(pool.map(lambda n: send_batches(server.url, n), range(CLIENTS)))
        accepted = set().union(*sent)
        assert len(accepted) == CLIENTS * BATCHES * EVENTS_PER_BATCH
        assert store.count("load") == len(accepted)
        ids = [str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})]
    assert len(ids) == len(set(ids))
    assert set(ids) == accepted


def load_until_killed(url: str, stop: threading.Event, acknowledged: set[str]) -> None:
    """Send batches until the service is gone; keep the ids of the acknowledged ones only."""
    with httpx.Client(base_url=url, headers=HEADERS, timeout=10) as client:
        number = 0
        while not stop.is_set():
            number += 1
            events = [tool_call(number) for _ in range(EVENTS_PER_BATCH)]
            try:
                response = client.post(EVENTS_PATH, content=orjson.dumps({"events": events}))
            except httpx.TransportError:
                return  # killed: this batch was never acknowledged
            if response.status_code == 200:
                acknowledged.update(event["event_id"] for event in events)


@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_every_acknowledged_event_survives_kill_9(store_url: str, tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps({"faults": KEY}))
    service = Service(store_url, keys_file)
    stop = threading.Event()
    acknowledged: list[set[str]] = [set() for _ in range(4)]
    threads = [
        threading.Thread(target=load_until_killed, args=(service.url, stop, acks))
        for acks in acknowledged
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while sum(map(len, acknowledged)) < 500 and time.monotonic() < deadline:
        time.sleep(0.05)
    service.kill()  # during the load: batches are in flight
    stop.set()
    for thread in threads:
        thread.join(30)
    acked = set().union(*acknowledged)
    assert len(acked) >= 500
    restarted = Service(store_url, keys_file)  # the store opens again (DuckDB replays its log)
    restarted.stop()
    stored = set(stored_ids(store_url))
    assert acked <= stored
