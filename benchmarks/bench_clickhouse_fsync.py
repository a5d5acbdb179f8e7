"""The cost of durable ClickHouse loads: the loader's writes of 20,000 events (one load) with the
table's ``fsync_after_insert`` and ``fsync_part_directory`` on (what the store sets where the
server has them) and off (MergeTree's default), the same events, alternating, in one run.

The engine is chDB 26 in this process (Debian's 18.16 server has no such setting), its data on
the working directory's disk (``--dir``; not a tmpfs, where an fsync costs nothing), so the CPU
figure is the loader's and the engine's together; the wall figure holds the wait for the disk.
``python -m benchmarks clickhouse_fsync [--loads=N] [--dir=DIR]`` (measured: 33.9 against 33.6 us of
CPU per event, 1.01x; wall 1.04x, on ext4).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.bench_store import event
from toolcall_spec.analytics.store import open_store
from toolcall_spec.analytics.store.clickhouse import FSYNC_SETTINGS, ClickHouseStore
from toolcall_spec.analytics.store.layout import TABLE, Columns, event_columns
from toolcall_spec.analytics.store.wal import LOAD_BATCH_EVENTS


def load(store: ClickHouseStore, columns: Columns) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one write."""
    cpu, wall = time.process_time(), time.perf_counter()
    store.write_columns(columns)
    return time.process_time() - cpu, time.perf_counter() - wall


def fsync(store: ClickHouseStore, on: bool) -> None:
    settings = ", ".join(f"{name} = {int(on)}" for name in FSYNC_SETTINGS)
    store._client().execute(f"ALTER TABLE {TABLE} MODIFY SETTING {settings}")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="benchmarks clickhouse_fsync")
    parser.add_argument("--loads", type=int, default=10, help="loads of each kind (default 10)")
    parser.add_argument("--dir", default=".", help="where chDB keeps its data (a real disk)")
    parser.add_argument("--quick", action="store_true", help="3 loads of each kind")
    args = parser.parse_args(argv)
    loads = 3 if args.quick else args.loads
    workdir = Path(tempfile.mkdtemp(prefix="bench-fsync-", dir=args.dir))
    try:
        store = open_store(f"chdb://{workdir / 'chdb'}")
        assert isinstance(store, ClickHouseStore)
        assert store.durable_writes
        now = datetime.now(timezone.utc)
        totals = {True: [0.0, 0.0], False: [0.0, 0.0]}
        for number in range(2 * loads):
            on = number % 2 == 0
            fsync(store, on)
            first = number * LOAD_BATCH_EVENTS
            events = [event(first + i) for i in range(LOAD_BATCH_EVENTS)]
            cpu, wall = load(store, event_columns(events, "bench", now))
            totals[on][0] += cpu
            totals[on][1] += wall
        store.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    events_each = loads * LOAD_BATCH_EVENTS
    for on in (False, True):
        cpu, wall = (1e6 * total / events_each for total in totals[on])
        label = "fsync on " if on else "fsync off"
        print(f"{label}: {cpu:6.2f} us CPU/event  {wall:6.2f} us wall/event  ({loads} loads)")
    cpu_ratio = totals[True][0] / totals[False][0]
    wall_ratio = totals[True][1] / totals[False][1]
    print(f"RATIO durable/default loads: CPU {cpu_ratio:.2f}x  wall {wall_ratio:.2f}x")
