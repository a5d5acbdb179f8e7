"""A store for accepted ``tool_call`` events: one interface (``EventStore``), two engines.

- DuckDB, embedded, the default: ``events.duckdb`` (a file path; ``:memory:`` for a throwaway;
  ``events.duckdb?memory_limit=1GB`` raises its memory cap);
- ClickHouse, for scale: ``clickhouse://[user[:password]@]host[:port]/database`` (the native
  protocol, port 9000 by default, through ``clickhouse-driver``);
- a ClickHouse cluster: ``clickhouse://host[:port]/database?cluster=NAME`` (``NAME`` in the
  servers' ``remote_servers``; a ``Distributed`` table over a table on each shard, see
  ``.clickhouse_ddl``);
- ClickHouse's engine in this process (chDB, the ``chdb-core`` package): ``chdb://PATH``
  (``?database=NAME``), the same store as a server's; the tests run the SQL on it.

Both keep the same table (``.layout``) and answer the same metric queries. The engines' drivers
come with the ``store`` extra and are imported only when a store is opened.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from toolcall_spec.analytics.store.base import EventStore, StoreError
from toolcall_spec.analytics.store.layout import StoreMetrics, event_row

CLICKHOUSE_SCHEME = "clickhouse://"
CHDB_SCHEME = "chdb://"
DUCKDB_SCHEME = "duckdb://"


def open_store(url: str) -> EventStore:
    """The store at ``url``, its table created when missing. ``StoreError`` when the engine's
    driver is not installed or the store cannot be opened."""
    try:
        if url.startswith(CLICKHOUSE_SCHEME):
            from toolcall_spec.analytics.store.clickhouse import ClickHouseStore  # noqa: PLC0415

            return ClickHouseStore.connect(url)
        if url.startswith(CHDB_SCHEME):
            from toolcall_spec.analytics.store.clickhouse import ClickHouseStore  # noqa: PLC0415

            return ClickHouseStore.embedded(url)
        from toolcall_spec.analytics.store.duckdb import DuckDBStore  # noqa: PLC0415
    except ImportError as exc:
        # No name: a driver that is installed failed inside its own import (pyarrow built
        # against another numpy): what failed is the message.
        needs = f"needs {exc.name}" if exc.name else f"cannot import its engine ({exc})"
        raise StoreError(f"{url}: the store {needs}: pip install 'toolcall-spec[store]'") from None
    path, _, query = url.removeprefix(DUCKDB_SCHEME).partition("?")
    if not path:
        raise StoreError(f"{url}: no database file named (e.g. duckdb://events.duckdb)")
    options = parse_qs(query)
    unknown = sorted(set(options) - {"memory_limit"})
    if unknown:
        raise StoreError(f"{url}: unknown option {unknown[0]} (known: memory_limit)")
    if "memory_limit" in options:
        return DuckDBStore.open(path, options["memory_limit"][-1])
    return DuckDBStore.open(path)


__all__ = ["EventStore", "StoreError", "StoreMetrics", "event_row", "open_store"]
