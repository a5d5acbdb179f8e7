"""The engine for scale: a ClickHouse server, through ``clickhouse-driver`` (the native TCP
protocol), which talks to old servers too (tested against Debian's 18.16).

The table is a ``ReplacingMergeTree`` ordered by the dedupe key; a retried row is a second row
until a background merge folds it, so every read uses ``FINAL``, which folds at query time. The
version column ``keep_rank`` makes the first row written win, as ``INSERT OR IGNORE`` does on
DuckDB. ``INSERT`` returns once the server has written the data part; the server, not this
process, then holds the events, so they survive this process being killed.

The times are ``DateTime64(3, 'UTC')``, milliseconds kept, on every server that has
``DateTime64`` (ClickHouse 20.1 and later); the server is asked (``supports_datetime64``: it
evaluates ``toDateTime64``), not guessed from its version string. Only a server without it gets
``DateTime('UTC')``, times cut to the second: Debian's 18.16, which stays the wire-protocol test.
A table created earlier keeps the type it was created with; ``time_type`` says which it has. The
rest of the DDL uses only what 18.16 knows too: ``Nullable``, no ``LowCardinality``, and the
``ORDER BY`` form of the MergeTree engine clause; the metric SQL is the same text on both.

The same store runs on an in-process ClickHouse 26 engine (``chdb://PATH``, ``.chdb_engine``),
which is how the DDL and the metric SQL are shown to run on today's ClickHouse.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from clickhouse_driver import Client
from clickhouse_driver.errors import Error, TypeMismatchError

from toolcall_spec.analytics.store.base import EventStore, StoreError, UnstorableRowsError
from toolcall_spec.analytics.store.chdb_engine import EmbeddedEngineError
from toolcall_spec.analytics.store.clickhouse_ddl import (
    DDL,
    LOCAL_TABLE,
    MILLISECOND_TIME,
    SECOND_TIME,
    WRITE_SETTINGS,
    check_name,
    cluster_ddl,
    create_on_nodes,
    shard_nodes,
)
from toolcall_spec.analytics.store.layout import COLUMNS, TABLE, Columns, Row

__all__ = [
    "DDL",
    "FSYNC_SETTINGS",
    "MILLISECOND_TIME",
    "SECOND_TIME",
    "UNKNOWN_FUNCTION",
    "ClickHouseStore",
    "make_inserts_durable",
    "supports_datetime64",
    "within_time_range",
]

DEFAULT_NATIVE_PORT = 9000
UNKNOWN_FUNCTION = 46
"""ClickHouse's error code for a function the server does not have."""
_FAILURES = (Error, OSError, EOFError, EmbeddedEngineError)
_VALUE_ERRORS = (TypeMismatchError, struct.error, OverflowError, TypeError, ValueError)
"""What the driver raises for a value a column cannot hold (the rows, not the server)."""
"""What a failed statement raises: the driver's errors, a lost connection, or chDB's refusal."""

# The driver logs each failed connection attempt as a warning with a traceback; the failure
# reaches the caller as a StoreError with the same reason, so the warning only adds noise.
logging.getLogger("clickhouse_driver.connection").setLevel(logging.ERROR)


class ClickHouseStore(EventStore):
    engine = "clickhouse"

    def __init__(self, client_factory: Any, url: str) -> None:
        self._factory = client_factory
        self.url = url
        self.time_type = MILLISECOND_TIME
        """The type the table's time columns have (``MILLISECOND_TIME`` or ``SECOND_TIME``)."""
        self.durable_writes = False
        """Whether an insert returns only once the server has fsynced it (see the module)."""
        # A native-protocol client runs one query at a time: one client per thread.
        self._local = threading.local()

    @classmethod
    def connect(cls, url: str) -> ClickHouseStore:
        """The store on a server: ``clickhouse://[user[:password]@]host[:port]/database``, or
        on a cluster of the server's ``remote_servers`` with ``?cluster=NAME``
        (``.clickhouse_ddl``)."""
        parts = urlsplit(url)
        database = parts.path.strip("/") or "default"
        cluster = _cluster_option(url, parts.query)
        options: dict[str, Any] = {
            "host": parts.hostname or "127.0.0.1",
            "port": parts.port or DEFAULT_NATIVE_PORT,
            "user": unquote(parts.username or "default"),
            "password": unquote(parts.password or ""),
            "connect_timeout": 5,
        }
        if cluster is not None:
            options["settings"] = WRITE_SETTINGS
            check_name(f"{_redacted(url)}: database", database)
        try:
            bootstrap = Client(**options)
            bootstrap.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            bootstrap.disconnect()
            store = cls(lambda: Client(database=database, **options), _redacted(url))
            if cluster is None:
                store._check_engine(None)
                store._create_table()
            else:
                node = {key: value for key, value in options.items() if key not in ("host", "port")}
                store._create_cluster_tables(
                    cluster, database, lambda host, port: Client(host=host, port=port, **node)
                )
                store._check_engine(cluster)
        except StoreError as exc:
            raise StoreError(f"{_redacted(url)}: {exc}") from None
        except _FAILURES as exc:
            raise StoreError(f"{_redacted(url)}: cannot open the ClickHouse store: {exc}") from None
        return store

    @classmethod
    def embedded(cls, url: str) -> ClickHouseStore:
        """The store on chDB's in-process engine: ``chdb://PATH[?database=NAME]``."""
        from toolcall_spec.analytics.store.chdb_engine import (  # noqa: PLC0415
            CHDB_SCHEME,
            EmbeddedClient,
        )

        path, _, query = url.removeprefix(CHDB_SCHEME).partition("?")
        options = parse_qs(query)
        unknown = sorted(set(options) - {"database"})
        if not path or unknown:
            problem = f"unknown option {unknown[0]}" if unknown else "no data directory named"
            raise StoreError(f"{url}: {problem} (chdb://PATH[?database=NAME])")
        database = options.get("database", ["default"])[-1]
        try:
            client = EmbeddedClient(path, database)
            client.execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
            store = cls(lambda: client, url)
            store._create_table()
        except ImportError:
            raise StoreError(
                f"{url}: the embedded engine needs chdb-core: pip install chdb-core"
            ) from None
        except _FAILURES as exc:
            raise StoreError(f"{url}: cannot open the embedded ClickHouse store: {exc}") from None
        return store

    def _create_table(self) -> None:
        """The table, with millisecond times where the server has ``DateTime64``; then the type
        the table really has (it may predate this version, or the server's upgrade)."""
        client = self._client()
        wanted = MILLISECOND_TIME if supports_datetime64(client) else SECOND_TIME
        client.execute(DDL.format(time=wanted))
        self.time_type = self._time_type_of(TABLE, wanted)
        self._note_durability(make_inserts_durable(client))

    def _create_cluster_tables(
        self, cluster: str, database: str, node_client: Callable[[str, int], Any]
    ) -> None:
        """The local table and the ``Distributed`` table on every node of ``cluster`` (see
        ``.clickhouse_ddl``), and the ``Distributed`` table on this node, which may be none of
        them."""
        client = self._client()
        wanted = MILLISECOND_TIME if supports_datetime64(client) else SECOND_TIME
        statements = cluster_ddl(cluster, database, wanted)
        durable = create_on_nodes(
            shard_nodes(client, cluster),
            node_client,
            statements,
            lambda node: make_inserts_durable(node, f"`{database}`.{LOCAL_TABLE}"),
        )
        client.execute(statements[-1])  # the Distributed table
        self.time_type = self._time_type_of(TABLE, wanted)
        self._note_durability(durable)

    def _time_type_of(self, table: str, wanted: str) -> str:
        """The type ``table``'s time columns really have (it may predate this version)."""
        found = self._client().execute(
            "SELECT type FROM system.columns WHERE database = currentDatabase() "
            f"AND table = '{table}' AND name = 'timestamp'"
        )
        return str(found[0][0]) if found else wanted

    def _check_engine(self, cluster: str | None) -> None:
        """A single server's table opened as a cluster's, or a cluster's ``Distributed`` table
        opened without its cluster (whose inserts would then be queued, not synchronous), is
        refused: the database holds the other kind of store."""
        found = self._client().execute(
            "SELECT engine FROM system.tables WHERE database = currentDatabase() "
            f"AND name = '{TABLE}'"
        )
        distributed = bool(found) and str(found[0][0]) == "Distributed"
        if cluster is not None and not distributed:
            raise StoreError(
                f"{TABLE} is a single server's table, not a Distributed one: a cluster's store "
                "needs a database of its own"
            )
        if cluster is None and distributed:
            raise StoreError(
                f"{TABLE} is a cluster's Distributed table: open it with ?cluster=NAME"
            )

    def _note_durability(self, durable: bool) -> None:
        self.durable_writes = durable
        if not self.durable_writes:
            version = self._client().execute("SELECT version()")[0][0]
            self.durability_note = (
                f"{self.url}: ClickHouse {version} has no fsync_after_insert: the server does "
                "not fsync an insert, so a power loss on its host can lose the events of the "
                "last loads (the log has deleted them); a server that has the setting makes "
                "every load durable"
            )

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._factory()
        return client

    def write_columns(self, columns: Columns) -> None:
        if not columns or not columns[0]:
            return
        # Column by column: the driver encodes a column at a time (measured into the 18.16
        # server, 20,000 events a write: 4.6 us of the loader's CPU per event against 5.6 for
        # rows, and no slower on the wall clock).
        columns = within_time_range(columns, self.time_type)
        insert = f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES"
        try:
            self._client().execute(insert, columns, columnar=True)
        except _VALUE_ERRORS as exc:  # the driver's encoding of a value, not the server
            raise UnstorableRowsError(f"{self.url}: a value does not fit: {exc}") from None
        except _FAILURES as exc:
            raise StoreError(f"{self.url}: write failed: {exc}") from None

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        try:
            rows = self._client().execute(sql.replace("{events}", f"{TABLE} FINAL"), parameters)
        except _FAILURES as exc:
            raise StoreError(f"{self.url}: query failed: {exc}") from None
        return [tuple(row) for row in rows]

    def close(self) -> None:
        client = getattr(self._local, "client", None)
        if client is not None:
            client.disconnect()
            self._local.client = None


_UTC = timezone.utc
TIME_RANGES = {
    SECOND_TIME: (datetime(1970, 1, 1, tzinfo=_UTC), datetime(2106, 2, 7, 6, 28, 15, tzinfo=_UTC)),
    MILLISECOND_TIME: (
        datetime(1900, 1, 1, tzinfo=_UTC),
        datetime(2299, 12, 31, 23, 59, 59, 999000, tzinfo=_UTC),
    ),
}
"""The moments each time type holds (``DateTime``: unsigned seconds since 1970)."""


def within_time_range(columns: Columns, time_type: str) -> Columns:
    """The columns with each event's timestamp moved into what the table's time type holds (the
    nearest end); the stored JSON keeps the timestamp as sent."""
    if not columns:
        return columns
    kind = MILLISECOND_TIME if time_type.startswith("DateTime64") else SECOND_TIME
    low, high = TIME_RANGES[kind]
    index = COLUMNS.index("timestamp")
    moments = columns[index]
    if all(low <= moment <= high for moment in moments):
        return columns
    clamped = [min(max(moment, low), high) for moment in moments]
    return [*columns[:index], clamped, *columns[index + 1 :]]


FSYNC_SETTINGS = ("fsync_after_insert", "fsync_part_directory")


def make_inserts_durable(client: Any, table: str = TABLE) -> bool:
    """Give ``table`` the MergeTree settings that fsync each inserted part and its directory,
    when the server has them; whether it has (see the module)."""
    names = ", ".join(f"'{name}'" for name in FSYNC_SETTINGS)
    found = client.execute(
        f"SELECT count() FROM system.merge_tree_settings WHERE name IN ({names})"
    )
    if int(found[0][0]) != len(FSYNC_SETTINGS):
        return False
    settings = ", ".join(f"{name} = 1" for name in FSYNC_SETTINGS)
    client.execute(f"ALTER TABLE {table} MODIFY SETTING {settings}")
    return True


def supports_datetime64(client: Any) -> bool:
    """Whether the server has ``DateTime64``: it evaluates ``toDateTime64`` (18.16 answers
    that the function is unknown). A failure to reach the server is not an answer: it raises."""
    try:
        client.execute("SELECT toDateTime64('2000-01-01 00:00:00', 3, 'UTC')")
    except (Error, EmbeddedEngineError) as exc:
        if _is_unknown_function(exc):
            return False
        raise
    return True


def _is_unknown_function(error: Exception) -> bool:
    code = getattr(error, "code", None)
    return (
        code == UNKNOWN_FUNCTION
        or "UNKNOWN_FUNCTION" in str(error)
        or "Unknown function" in str(error)
    )


def _cluster_option(url: str, query: str) -> str | None:
    """The ``cluster`` option of a server's URL, checked; ``None`` without one."""
    options = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(options) - {"cluster"})
    if unknown:
        raise StoreError(f"{_redacted(url)}: unknown option {unknown[0]} (known: cluster)")
    if "cluster" not in options:
        return None
    return check_name(f"{_redacted(url)}: cluster", options["cluster"][-1])


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()
