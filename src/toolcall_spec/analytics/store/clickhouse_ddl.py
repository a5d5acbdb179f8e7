"""The ClickHouse DDL of the store, the one source of it: the table of a single server
(``DDL``), and the tables of a cluster (``cluster_ddl``), which the store runs itself on open and
``toolcall-spec store-ddl`` prints. No driver is imported here.

The store on a cluster: ``clickhouse://host:port/database?cluster=NAME``.

``NAME`` is a cluster of the server's ``remote_servers`` configuration (``system.clusters``). On
every shard of it the store creates, itself, the same ``ReplacingMergeTree`` as on a single
server under the name ``LOCAL_TABLE``, and beside it a ``Distributed`` table under the usual name
``TABLE`` over those local tables. Writes and the metric SQL go through the ``Distributed``
table, on any node (each node has one).

The sharding key is ``SHARDING_KEY``, a hash of the dedupe key ``(project_id, event_id)``: a
retried event (a second send, a log segment loaded again after a crash) goes to the shard that
holds its first copy, so the ``FINAL`` each shard applies to its own part of a query folds every
duplicate, and the cluster stores each event once, exactly as one server does. A key of anything
else (``rand()``) would put the copies of a retried event on two shards, where no ``FINAL`` sees
both.

An insert is synchronous (``insert_distributed_sync = 1``, which Debian's 18.16 has): it returns
once every shard has written its rows, not once the ``Distributed`` table has queued them on the
node's disk for sending later, so the loader deletes a log segment only once the shards hold it.
An insert that fails part way (a shard down) may have written some shards: the loader sends the
whole segment again, the same keys reach the same shards, and ``FINAL`` folds the copies.

No ``ON CLUSTER`` DDL: that needs ZooKeeper; the store connects to each shard instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from toolcall_spec.analytics.store.base import StoreError
from toolcall_spec.analytics.store.layout import TABLE

MILLISECOND_TIME = "DateTime64(3, 'UTC')"
SECOND_TIME = "DateTime('UTC')"
"""The time column types: with ``DateTime64`` (every current server), and without (18.16)."""

_COLUMNS_SQL = """(
    project_id String,
    event_id String,
    timestamp {time},
    event_name Nullable(String),
    status Nullable(String),
    error_category Nullable(String),
    error_message Nullable(String),
    latency_ms Nullable(Float64),
    output_is_error UInt8,
    trace_id String,
    session_id String,
    source String,
    user_id Nullable(String),
    platform Nullable(String),
    sdk_version Nullable(String),
    tokens_in Nullable(Int64),
    tokens_out Nullable(Int64),
    is_retry UInt8,
    ingested_at {time},
    keep_rank UInt64,
    event_json String
)"""
_REPLACING = "ReplacingMergeTree(keep_rank) ORDER BY (project_id, event_id)"


def table_ddl(table: str) -> str:
    """The ``CREATE TABLE`` of the events table named ``table`` (``{time}``: the time type)."""
    return f"\nCREATE TABLE IF NOT EXISTS {table} {_COLUMNS_SQL} ENGINE = {_REPLACING}\n"


DDL = table_ddl(TABLE)
"""The table of a single server (``{time}``: the time type)."""

LOCAL_TABLE = f"{TABLE}_local"
"""The ``ReplacingMergeTree`` on each shard."""
SHARDING_KEY = "cityHash64(project_id, event_id)"
"""Where the ``Distributed`` table sends a row: a hash of the dedupe key (see the module)."""
WRITE_SETTINGS = {"insert_distributed_sync": 1}
"""Every query of a cluster store runs with these: an insert returns once the shards hold it."""
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_name(kind: str, name: str) -> str:
    """``name`` when it is a plain identifier (it is put into DDL), else a ``StoreError``."""
    if not _NAME.match(name):
        raise StoreError(f"{kind} {name!r}: not a plain name (letters, digits, _)")
    return name


def distributed_ddl(cluster: str, database: str, time_type: str) -> str:
    """The ``Distributed`` table ``TABLE`` over ``LOCAL_TABLE`` on the shards of ``cluster``."""
    engine = f"Distributed('{cluster}', '{database}', '{LOCAL_TABLE}', {SHARDING_KEY})"
    columns = _COLUMNS_SQL.format(time=time_type)
    return f"CREATE TABLE IF NOT EXISTS `{database}`.{TABLE} {columns} ENGINE = {engine}"


def single_ddl(database: str, time_type: str) -> list[str]:
    """The statements of the store on a single server, as it runs them on open."""
    table = table_ddl(f"`{database}`.{TABLE}").format(time=time_type).strip()
    return [f"CREATE DATABASE IF NOT EXISTS `{database}`", table]


def cluster_ddl(cluster: str, database: str, time_type: str) -> list[str]:
    """The statements every node of ``cluster`` runs, in order: the database, the local
    ``ReplacingMergeTree``, the ``Distributed`` table (last)."""
    check_name("cluster", cluster)
    check_name("database", database)
    local = table_ddl(f"`{database}`.{LOCAL_TABLE}").format(time=time_type).strip()
    return [
        f"CREATE DATABASE IF NOT EXISTS `{database}`",
        local,
        distributed_ddl(cluster, database, time_type),
    ]


def shard_nodes(client: Any, cluster: str) -> list[tuple[str, int]]:
    """The ``(host, port)`` of every node of ``cluster`` (its shards and their replicas), as the
    server ``client`` is connected to configures it; a ``StoreError`` when it has no such
    cluster."""
    rows = client.execute(
        "SELECT host_address, port FROM system.clusters WHERE cluster = %(cluster)s "
        "ORDER BY shard_num, replica_num",
        {"cluster": cluster},
    )
    if not rows:
        raise StoreError(
            f"the server has no cluster {cluster!r} in its remote_servers (system.clusters)"
        )
    return [(str(host), int(port)) for host, port in rows]


def create_on_nodes(
    nodes: list[tuple[str, int]],
    node_client: Callable[[str, int], Any],
    statements: list[str],
    each: Callable[[Any], bool],
) -> bool:
    """Run ``statements`` on every node, then ``each`` (a node's client: whether the node makes
    inserts durable); whether every node does."""
    durable = True
    for host, port in nodes:
        client = node_client(host, port)
        try:
            for statement in statements:
                client.execute(statement)
            durable = each(client) and durable
        finally:
            client.disconnect()
    return durable
