"""The store on a ClickHouse cluster (``clickhouse://host:port/db?cluster=NAME``), on two real
``clickhouse-server`` processes (Debian's 18.16 here and in CI), each a shard of one cluster: the
DDL the package prints is the DDL the store runs; a write returns only once every shard holds it;
a store of the wrong kind is refused. Two endpoints writing the cluster at once, one killed:
``test_wal_service.py``."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from datetime import datetime, timezone

import pytest
from support.cli import run_cli
from support.store import CLUSTER, ClickHouseCluster, tool_call, unavailable

from toolcall_spec.analytics.store import EventStore, StoreError, open_store
from toolcall_spec.analytics.store.clickhouse_ddl import LOCAL_TABLE, SHARDING_KEY
from toolcall_spec.analytics.store.layout import TABLE

pytest.importorskip("clickhouse_driver", reason="the store extra (clickhouse-driver) is missing")

from toolcall_spec.analytics.store.clickhouse import (
    ClickHouseStore,
    supports_datetime64,
)

PROJECT = "cluster"


def engines(store: EventStore) -> dict[str, str]:
    """The engine clause of each of the store's tables on the node it is connected to."""
    rows = store.query(
        "SELECT name, engine_full FROM system.tables WHERE database = currentDatabase()", {}
    )
    return {str(name): str(engine) for name, engine in rows}


def columns(store: EventStore) -> list[tuple[str, str, str]]:
    """Each column of the store's tables: table, name, type, in order."""
    rows = store.query(
        "SELECT table, name, type FROM system.columns WHERE database = currentDatabase()", {}
    )
    return [(str(table), str(name), str(kind)) for table, name, kind in rows]


@pytest.mark.requirement("toolcall-spec.requirement.store.clickhouse-cluster")
def test_the_printed_ddl_makes_the_cluster_store(two_shards: ClickHouseCluster) -> None:
    """``store-ddl --cluster`` run by an operator on each node (clickhouse-client) makes the
    tables the store opens as its own: a retried batch through either node is stored once."""
    client = shutil.which("clickhouse-client")
    if client is None:
        unavailable("clickhouse-client is not installed (apt-get install clickhouse-client)")
    database = f"t_{uuid.uuid4().hex[:12]}"
    first, second = (f"{node}/{database}?cluster={CLUSTER}" for node in two_shards.urls)
    from clickhouse_driver import Client

    seconds = not supports_datetime64(Client(host="127.0.0.1", port=two_shards.ports[0]))
    options = ["--second-times"] if seconds else []
    printed = run_cli("store-ddl", "--cluster", CLUSTER, "--database", database, *options)
    assert printed.returncode == 0
    for port in two_shards.ports:
        subprocess.run(
            [client, "--port", str(port), "--multiquery"],
            input=printed.stdout, text=True, check=True, timeout=60,
        )  # fmt: skip
    events = [tool_call(index) for index in range(30)]
    now = datetime.now(timezone.utc)
    for url in (first, second, first):
        with open_store(url) as store:
            assert isinstance(store, ClickHouseStore)
            found = engines(store)
            assert sorted(found) == [TABLE, LOCAL_TABLE]
            # the local table's SETTINGS follow (index_granularity; the fsync ones where known)
            assert found[LOCAL_TABLE].startswith(
                "ReplacingMergeTree(keep_rank) ORDER BY (project_id, event_id)"
            )
            assert found[TABLE] == (
                f"Distributed('{CLUSTER}', '{database}', '{LOCAL_TABLE}', {SHARDING_KEY})"
            )
            store.write_events(events, PROJECT, now)
    made_by_the_store = f"{two_shards.urls[1]}/{database}_made?cluster={CLUSTER}"
    with open_store(made_by_the_store) as made, open_store(second) as printed_ddl:
        assert columns(made) == columns(printed_ddl)
        named = engines(printed_ddl)[TABLE].replace(f"'{database}'", f"'{database}_made'")
        assert engines(made)[TABLE] == named
    with open_store(second) as store:
        [(rows, keys)] = store.query(
            "SELECT count(*), uniqExact(project_id, event_id) FROM {events}", {}
        )
        assert rows == keys == len(events)
        assert store.metrics().totals.tool_calls == len(events)


def test_store_ddl_refuses_a_name_it_cannot_put_in_sql() -> None:
    run = run_cli("store-ddl", "--cluster", "two words")
    assert run.returncode == 2
    assert "cluster 'two words': not a plain name" in run.stderr


@pytest.mark.requirement("toolcall-spec.requirement.store.clickhouse-cluster")
def test_a_cluster_store_is_refused_with_the_reason(two_shards: ClickHouseCluster) -> None:
    """An unknown cluster, an unknown option, and a cluster's database opened as a single
    server's (its inserts would be queued, not synchronous), each with its reason."""
    node, other = two_shards.urls
    database = f"t_{uuid.uuid4().hex[:12]}"
    with pytest.raises(StoreError, match="no cluster 'nowhere' in its remote_servers"):
        open_store(f"{node}/{database}?cluster=nowhere")
    with pytest.raises(StoreError, match="unknown option shards"):
        open_store(f"{node}/{database}?shards=2")
    open_store(f"{node}/{database}?cluster={CLUSTER}").close()
    with pytest.raises(StoreError, match="a cluster's Distributed table: open it with"):
        open_store(f"{other}/{database}")
    open_store(f"{node}/{database}_single").close()
    with pytest.raises(StoreError, match="a single server's table, not a Distributed one"):
        open_store(f"{node}/{database}_single?cluster={CLUSTER}")


@pytest.mark.requirement("toolcall-spec.requirement.store.clickhouse-cluster")
@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_a_cluster_write_returns_only_once_every_shard_holds_it(
    two_shards: ClickHouseCluster,
) -> None:
    """With a shard down, a write fails (nothing is queued on the entry node to be sent later,
    as an asynchronous Distributed insert would, which the loader would take for stored); the
    same write once the shard is back stores each event once, the rows the failed write left
    on the other shard folded by ``FINAL``."""
    url = f"{two_shards.urls[0]}/t_{uuid.uuid4().hex[:12]}?cluster={CLUSTER}"
    events = [tool_call(index) for index in range(40)]
    now = datetime.now(timezone.utc)
    with open_store(url) as store:
        two_shards.kill(1)
        try:
            with pytest.raises(StoreError, match="write failed"):
                store.write_events(events, PROJECT, now)
        finally:
            two_shards.restart(1)
        store.close()  # a fresh connection: the failed insert may have left the old one broken
        store.write_events(events, PROJECT, now)
        [(rows, keys)] = store.query(
            "SELECT count(*), uniqExact(project_id, event_id) FROM {events}", {}
        )
    assert rows == keys == len(events)
