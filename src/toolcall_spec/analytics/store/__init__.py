"""A store for accepted ``tool_call`` events: one interface (:class:`EventStore`), two engines.

- DuckDB, embedded, the default: ``events.duckdb`` (a file path; ``:memory:`` for a throwaway);
- ClickHouse, for scale: ``clickhouse://[user[:password]@]host[:port]/database`` (the native
  protocol, port 9000 by default, through ``clickhouse-driver``).

Both keep the same table (:mod:`.layout`) and answer the same metric queries. The engines' drivers
come with the ``store`` extra and are imported only when a store is opened.
"""

from __future__ import annotations

from toolcall_spec.analytics.store.base import EventStore, StoreError
from toolcall_spec.analytics.store.layout import StoreMetrics, event_row

CLICKHOUSE_SCHEME = "clickhouse://"
DUCKDB_SCHEME = "duckdb://"


def open_store(url: str) -> EventStore:
    """The store at ``url``, its table created when missing. :class:`StoreError` when the engine's
    driver is not installed or the store cannot be opened."""
    try:
        if url.startswith(CLICKHOUSE_SCHEME):
            from toolcall_spec.analytics.store.clickhouse import ClickHouseStore  # noqa: PLC0415

            return ClickHouseStore.connect(url)
        from toolcall_spec.analytics.store.duckdb import DuckDBStore  # noqa: PLC0415
    except ImportError as exc:
        raise StoreError(
            f"{url}: the store needs {exc.name}: pip install 'toolcall-spec[store]'"
        ) from None
    path = url.removeprefix(DUCKDB_SCHEME)
    if not path:
        raise StoreError(f"{url}: no database file named (e.g. duckdb://events.duckdb)")
    return DuckDBStore.open(path)


__all__ = ["EventStore", "StoreError", "StoreMetrics", "event_row", "open_store"]
