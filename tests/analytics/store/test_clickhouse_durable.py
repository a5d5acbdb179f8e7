"""Durable ClickHouse loads: where the engine has ``fsync_after_insert`` (chDB 26, the current
engine), every insert of the store fsyncs its part and the part's directory before it returns,
counted by the engine itself (``system.events``: ``FileSync``, ``DirectorySync``), a table
created earlier included; where it has not (Debian's 18.16 server), the store says it cannot, and
the loader warns at start."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.store import fresh_database_url, tool_call

from toolcall_spec.analytics.store import open_store
from toolcall_spec.analytics.store.clickhouse import FSYNC_SETTINGS, ClickHouseStore
from toolcall_spec.analytics.store.layout import TABLE, event_columns


def syncs(store: ClickHouseStore) -> dict[str, int]:
    rows = store.query(
        "SELECT event, value FROM system.events WHERE event IN ('FileSync', 'DirectorySync')", {}
    )
    return {str(name): int(value) for name, value in rows}


def write_some(store: ClickHouseStore, first: int) -> None:
    events = [tool_call(first + i) for i in range(50)]
    store.write_columns(event_columns(events, "p", datetime.now(timezone.utc)))


@pytest.mark.requirement("toolcall-spec.requirement.store.clickhouse-durable-insert")
def test_every_insert_is_fsynced_where_the_engine_can(tmp_path: Path) -> None:
    pytest.importorskip("chdb", reason="chdb-core (the current ClickHouse engine) is missing")
    url = f"chdb://{tmp_path / 'chdb'}"
    with open_store(url) as store:
        assert isinstance(store, ClickHouseStore)
        assert store.durable_writes
        assert store.durability_note is None
        # A table from before this version: MergeTree's default, no fsync.
        off = ", ".join(f"{name} = 0" for name in FSYNC_SETTINGS)
        store._client().execute(f"ALTER TABLE {TABLE} MODIFY SETTING {off}")
        before = syncs(store)
        write_some(store, 0)
        unsynced = syncs(store)
        assert unsynced.get("FileSync", 0) == before.get("FileSync", 0)  # the default: none
    with open_store(url) as store:  # opened again: the table gets the settings
        assert isinstance(store, ClickHouseStore)
        for first in (100, 200):
            before = syncs(store)
            write_some(store, first)
            after = syncs(store)
            assert after["FileSync"] > before.get("FileSync", 0)
            assert after["DirectorySync"] > before.get("DirectorySync", 0)
        assert store.count() == 150


@pytest.mark.requirement("toolcall-spec.requirement.store.clickhouse-durable-insert")
def test_an_engine_without_the_setting_is_named_and_the_loader_warns(
    clickhouse_base_url: str, tmp_path: Path
) -> None:
    url = fresh_database_url(clickhouse_base_url)
    with open_store(url) as store:
        assert isinstance(store, ClickHouseStore)
        if store.durable_writes:
            pytest.skip("this ClickHouse server has fsync_after_insert")
        assert store.durability_note is not None
        assert "has no fsync_after_insert" in store.durability_note
    command = [sys.executable, "-m", "toolcall_spec.analytics.store.loader", url, str(tmp_path)]
    loader = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    assert loader.stdout is not None
    assert loader.stdout.readline().strip() == b"ready"
    loader.terminate()
    _, errors = loader.communicate(timeout=60)
    assert b"warning: " in errors
    assert b"has no fsync_after_insert" in errors
