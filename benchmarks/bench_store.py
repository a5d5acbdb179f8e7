"""The event store, as ratios measured in one run.

1. Events/s through ``POST /v1/events`` (uvicorn on loopback, one client, batches of 100) into
   DuckDB and into ClickHouse, each as a ratio to the CLI's ingest alone (``ingest_body`` on the
   same bodies, no HTTP, no store).
2. Metrics over N stored events (default 1,000,000): the SQL inside DuckDB, inside ClickHouse,
   and the JSONL reader (``metrics FILE.jsonl``) over the same events.

ClickHouse: ``TOOLCALL_CLICKHOUSE_URL`` (e.g. ``clickhouse://127.0.0.1:19000``), else Debian's
``clickhouse-server`` is started on a free port, else the ClickHouse figures are left out.
``python -m benchmarks store [--quick] [--events N] [--batches N]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import orjson

from toolcall_spec.analytics.ingest import ingest_body
from toolcall_spec.analytics.metrics import jsonl_error_metrics
from toolcall_spec.analytics.store import EventStore, event_row, open_store
from toolcall_spec.http.ingest_app import EVENTS_PATH, IngestSettings, create_ingest_app
from toolcall_spec.http.server import BackgroundServer

KEY = "bench-key-0123456789abcdef"
BATCH_EVENTS = 100


def event(index: int) -> dict[str, Any]:
    failed = index % 5 == 0
    out: dict[str, Any] = {
        "event_id": str(uuid.UUID(int=index + 1, version=4)),
        "event_type": "tool_call",
        "trace_id": f"trace-{index}",
        "session_id": f"session-{index % 100}",
        "timestamp": f"2026-11-{1 + index % 28:02d}T12:00:00.000Z",
        "source": "server",
        "event_name": f"tool_{index % 20}",
        "latency_ms": float(index % 300),
        "status": "error" if failed else "success",
        "is_retry": 0,
    }
    if failed:
        out["error_category"] = ("tool_error", "timeout", "validation")[index % 3]
        out["error_message"] = "the tool failed"
    elif index % 7 == 0:
        out["output_content"] = {"content": [], "isError": True}
    return out


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


@contextmanager
def clickhouse() -> Iterator[str | None]:
    given = os.environ.get("TOOLCALL_CLICKHOUSE_URL")
    if given:
        yield given.rstrip("/")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from store_support import start_clickhouse, wait_for_clickhouse  # noqa: PLC0415

    if not Path("/usr/sbin/clickhouse-server").exists():
        yield None
        return
    workdir = Path(tempfile.mkdtemp(prefix="bench-clickhouse-"))
    process, port = start_clickhouse(workdir)
    try:
        yield None if wait_for_clickhouse(port, process) else f"clickhouse://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)


def endpoint_rate(store: EventStore, bodies: list[bytes]) -> float:
    app = create_ingest_app(IngestSettings(store, {KEY: "bench"}))
    headers = {"Authorization": f"Bearer {KEY}"}
    with BackgroundServer(app) as server, httpx.Client(base_url=server.url, headers=headers) as c:
        seconds = timed(lambda: [c.post(EVENTS_PATH, content=body) for body in bodies])
    return len(bodies) * BATCH_EVENTS / seconds


def fill(store: EventStore, count: int) -> None:
    now = datetime.now(timezone.utc)
    chunk = 50_000
    for start in range(0, count, chunk):
        store.write(
            [event_row(event(i), "bench", now) for i in range(start, min(count, start + chunk))]
        )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_store")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--events", type=int, help="stored events for the metrics (1,000,000)")
    parser.add_argument("--batches", type=int, help="batches through the endpoint (200)")
    args, _ = parser.parse_known_args(argv)
    stored = args.events or (100_000 if args.quick else 1_000_000)
    batches = args.batches or (50 if args.quick else 200)
    bodies = [
        orjson.dumps({"events": [event(b * BATCH_EVENTS + i) for i in range(BATCH_EVENTS)]})
        for b in range(batches)
    ]
    cli_rate = batches * BATCH_EVENTS / timed(lambda: [ingest_body(body) for body in bodies])
    print(f"CLI ingest alone: {cli_rate:,.0f} events/s")
    workdir = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        with clickhouse() as clickhouse_base:
            urls = {"duckdb": str(workdir / "endpoint.duckdb")}
            if clickhouse_base:
                urls["clickhouse"] = f"{clickhouse_base}/bench_{uuid.uuid4().hex[:8]}"
            for engine, url in urls.items():
                with open_store(url) as store:
                    rate = endpoint_rate(store, bodies)
                print(
                    f"endpoint -> {engine}: {rate:,.0f} events/s ({rate / cli_rate:.2f}x the CLI)"
                )
            metrics_figures(stored, workdir, clickhouse_base)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def metrics_figures(count: int, workdir: Path, clickhouse_base: str | None) -> None:
    jsonl = workdir / "events.jsonl"
    with jsonl.open("wb") as handle:
        for index in range(count):
            handle.write(orjson.dumps(event(index)) + b"\n")
    with jsonl.open("rb") as handle:
        reader = timed(lambda: jsonl_error_metrics(handle))
    print(f"metrics over {count:,} events: JSONL reader {reader:.2f} s")
    urls = {"duckdb": str(workdir / "metrics.duckdb")}
    if clickhouse_base:
        urls["clickhouse"] = f"{clickhouse_base}/bench_{uuid.uuid4().hex[:8]}"
    for engine, url in urls.items():
        with open_store(url) as store:
            fill(store, count)
            seconds = timed(lambda: store.metrics("bench"))
        print(f"  {engine} SQL {seconds:.2f} s ({reader / seconds:.1f}x faster than the reader)")


if __name__ == "__main__":
    main(sys.argv[1:])
