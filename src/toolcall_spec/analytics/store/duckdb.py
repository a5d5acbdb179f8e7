"""The embedded engine: one DuckDB database file, zero setup.

A write is one ``INSERT OR IGNORE ... SELECT`` from an Arrow table of the rows (the first row of
each key, ``first_of_each_key``: DuckDB 1.1 refuses a whole insert that holds a key twice; the
columns handed to DuckDB in one piece, each built by Arrow from a Python list: binding Python values
per row or per column costs far more), in one transaction; DuckDB writes the transaction to its
write-ahead log at commit, so a batch is acknowledged only after it would survive the process
being killed (the next open replays the log). One process opens a file for writing at a time;
this store serialises its threads on a lock, as a DuckDB connection is not meant to be shared by
concurrent threads.

DuckDB's memory is capped (``DEFAULT_MEMORY_LIMIT``, or ``?memory_limit=1GB`` after the file
name): past the cap it evicts buffers, the primary-key index's included, to its file, so loading
a file of any size stays within a bounded memory.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import duckdb
import pyarrow

from toolcall_spec.analytics.store.base import EventStore, StoreError, UnstorableRowsError
from toolcall_spec.analytics.store.layout import COLUMNS, TABLE, Columns, Row, first_of_each_key

DDL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    project_id VARCHAR NOT NULL,
    event_id VARCHAR NOT NULL,
    timestamp TIMESTAMP NOT NULL,
    event_name VARCHAR,
    status VARCHAR,
    error_category VARCHAR,
    error_message VARCHAR,
    latency_ms DOUBLE,
    output_is_error UTINYINT NOT NULL,
    trace_id VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    user_id VARCHAR,
    platform VARCHAR,
    sdk_version VARCHAR,
    tokens_in BIGINT,
    tokens_out BIGINT,
    is_retry UTINYINT NOT NULL,
    ingested_at TIMESTAMP NOT NULL,
    keep_rank UBIGINT NOT NULL,
    event_json VARCHAR NOT NULL,
    PRIMARY KEY (project_id, event_id)
)
"""

ARROW_TYPES: dict[str, Any] = {
    "timestamp": pyarrow.timestamp("us"),
    "latency_ms": pyarrow.float64(),
    "output_is_error": pyarrow.uint8(),
    "tokens_in": pyarrow.int64(),
    "tokens_out": pyarrow.int64(),
    "is_retry": pyarrow.uint8(),
    "ingested_at": pyarrow.timestamp("us"),
    "keep_rank": pyarrow.uint64(),
}
"""The Arrow type of each column that is not text (``VARCHAR``), as in ``DDL``."""
_ARROW_SCHEMA = pyarrow.schema(
    [(name, ARROW_TYPES.get(name, pyarrow.string())) for name in COLUMNS]
)
_BATCH_VIEW = "incoming_rows"
_INSERT = f"INSERT OR IGNORE INTO {TABLE} ({', '.join(COLUMNS)}) SELECT * FROM {_BATCH_VIEW}"

DEFAULT_MEMORY_LIMIT = "128MB"
_VALUE_ERRORS = (duckdb.ConversionException, duckdb.OutOfRangeException, duckdb.ConstraintException)
"""What DuckDB raises for rows it refuses whatever the retry (the rows, not the engine): a value
its column cannot hold, a constraint the rows break. The loader writes such rows apart."""

_UTC = pyarrow.timestamp("us", tz="UTC")
_TIME_COLUMNS = frozenset(COLUMNS.index(name) for name in ("timestamp", "ingested_at"))
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


class DuckDBStore(EventStore):
    engine = "duckdb"

    def __init__(self, connection: Any, path: str) -> None:
        self._connection = connection
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: str, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> DuckDBStore:
        try:
            connection = duckdb.connect(path)
            connection.execute("SET memory_limit = $limit", {"limit": memory_limit})
            connection.execute(DDL)
        except duckdb.Error as exc:
            raise StoreError(f"{path}: cannot open the DuckDB store: {exc}") from None
        return cls(connection, path)

    def write_columns(self, columns: Columns) -> None:
        if not columns or not columns[0]:
            return
        try:
            table = _arrow_table(first_of_each_key(columns))
        except (pyarrow.ArrowException, OverflowError, TypeError, ValueError) as exc:
            raise UnstorableRowsError(f"{self.path}: a value does not fit: {exc}") from None
        with self._lock:
            try:
                self._connection.register(_BATCH_VIEW, table)
                self._connection.execute(_INSERT)  # one statement: its own transaction
            except _VALUE_ERRORS as exc:
                raise UnstorableRowsError(f"{self.path}: a value does not fit: {exc}") from None
            except duckdb.Error as exc:
                raise StoreError(f"{self.path}: write failed: {exc}") from None
            finally:
                self._connection.unregister(_BATCH_VIEW)

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        text = _PLACEHOLDER.sub(r"$\1", sql.replace("{events}", TABLE))
        with self._lock:
            try:
                return [tuple(row) for row in self._connection.execute(text, parameters).fetchall()]
            except duckdb.Error as exc:
                raise StoreError(f"{self.path}: query failed: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _arrow_table(columns: Columns) -> Any:
    """The rows as one Arrow table. DuckDB's ``TIMESTAMP`` has no zone: the UTC wall time goes
    in (Arrow converts the aware datetimes to UTC, then drops the zone, column at a time)."""
    return pyarrow.Table.from_arrays(
        [
            pyarrow.array(column, type=_UTC).cast(field.type)
            if index in _TIME_COLUMNS
            else pyarrow.array(column, type=field.type)
            for index, (column, field) in enumerate(zip(columns, _ARROW_SCHEMA, strict=True))
        ],
        schema=_ARROW_SCHEMA,
    )
