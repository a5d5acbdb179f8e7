"""The engine for scale: a ClickHouse server, through ``clickhouse-driver`` (the native TCP
protocol), which talks to old servers too (tested against Debian's 18.16).

The table is a ``ReplacingMergeTree`` ordered by the dedupe key; a retried row is a second row
until a background merge folds it, so every read uses ``FINAL``, which folds at query time. The
version column ``keep_rank`` makes the first row written win, as ``INSERT OR IGNORE`` does on
DuckDB. ``INSERT`` returns once the server has written the data part; the server, not this
process, then holds the events, so they survive this process being killed.

The DDL uses only what 18.16 knows: ``DateTime('UTC')`` (no ``DateTime64``), ``Nullable``, no
``LowCardinality``, and the ``ORDER BY`` form of the MergeTree engine clause.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from clickhouse_driver import Client
from clickhouse_driver.errors import Error

from toolcall_spec.analytics.store.base import EventStore, StoreError
from toolcall_spec.analytics.store.layout import COLUMNS, TABLE, Row

DEFAULT_NATIVE_PORT = 9000

# The driver logs each failed connection attempt as a warning with a traceback; the failure
# reaches the caller as a StoreError with the same reason, so the warning only adds noise.
logging.getLogger("clickhouse_driver.connection").setLevel(logging.ERROR)

DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    project_id String,
    event_id String,
    timestamp DateTime('UTC'),
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
    ingested_at DateTime('UTC'),
    keep_rank UInt64,
    event_json String
) ENGINE = ReplacingMergeTree(keep_rank) ORDER BY (project_id, event_id)
"""


class ClickHouseStore(EventStore):
    engine = "clickhouse"

    def __init__(self, client_factory: Any, url: str) -> None:
        self._factory = client_factory
        self.url = url
        # A native-protocol client runs one query at a time: one client per thread.
        self._local = threading.local()

    @classmethod
    def connect(cls, url: str) -> ClickHouseStore:
        parts = urlsplit(url)
        database = parts.path.strip("/") or "default"
        options = {
            "host": parts.hostname or "127.0.0.1",
            "port": parts.port or DEFAULT_NATIVE_PORT,
            "user": unquote(parts.username or "default"),
            "password": unquote(parts.password or ""),
            "connect_timeout": 5,
        }
        try:
            bootstrap = Client(**options)
            bootstrap.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            bootstrap.disconnect()
            store = cls(lambda: Client(database=database, **options), _redacted(url))
            store._client().execute(DDL)
        except (Error, OSError, EOFError) as exc:
            raise StoreError(f"{_redacted(url)}: cannot open the ClickHouse store: {exc}") from None
        return store

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._factory()
        return client

    def write(self, rows: Sequence[Row]) -> None:
        if not rows:
            return
        try:
            self._client().execute(f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES", rows)
        except (Error, OSError, EOFError) as exc:
            raise StoreError(f"{self.url}: write failed: {exc}") from None

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        try:
            rows = self._client().execute(sql.replace("{events}", f"{TABLE} FINAL"), parameters)
        except (Error, OSError, EOFError) as exc:
            raise StoreError(f"{self.url}: query failed: {exc}") from None
        return [tuple(row) for row in rows]

    def close(self) -> None:
        client = getattr(self._local, "client", None)
        if client is not None:
            client.disconnect()
            self._local.client = None


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()
