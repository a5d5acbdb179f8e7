"""A current ClickHouse engine in this process: chDB (the ``chdb-core`` package), behind the two
calls ``ClickHouseStore`` makes of a ``clickhouse-driver`` client (``execute``, ``disconnect``).

``chdb-core`` 26.x embeds the ClickHouse 26 engine: the store's DDL, inserts and metric SQL run on
it unchanged, which is how the tests show they run on today's ClickHouse beside Debian's 18.16
server (the wire-protocol test). Open it with ``chdb://PATH`` (``?database=NAME``, default
``default``). chDB holds one engine per process with one data path: a second store on another
path, while the first is open, is refused with chDB's message.

The driver's calls map as follows: a query's ``%(name)s`` placeholders become server-side
``{name:String}`` parameters (every parameter the store passes is a string); an
``INSERT ... VALUES`` with rows (or columns: ``columnar=True``) sends them as ``JSONEachRow``,
times in RFC 3339 read with ``best_effort`` parsing, so a ``DateTime64(3)`` column keeps the
milliseconds; a ``SELECT`` answers rows as tuples of Python values (through Arrow).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import orjson

CHDB_SCHEME = "chdb://"
_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_INSERT_VALUES = re.compile(r"^\s*INSERT INTO (\S+) \(([^)]*)\) VALUES\s*$", re.IGNORECASE)
# chDB's engine is one per process: every statement of every store goes through one lock.
_ENGINE_LOCK = threading.Lock()


class EmbeddedEngineError(Exception):
    """chDB refused a statement; the message is the engine's."""


class EmbeddedClient:
    """``execute`` and ``disconnect`` of a ``clickhouse_driver.Client``, on chDB."""

    def __init__(self, path: str, database: str) -> None:
        import chdb.session  # noqa: PLC0415  # the test extra's chdb-core; imported on use

        try:
            self._session: Any = chdb.session.Session(path)  # type: ignore[no-untyped-call]
        except Exception as exc:  # chDB raises RuntimeError subclasses with the engine's text
            raise EmbeddedEngineError(str(exc)) from None
        self._database = database

    def execute(
        self, sql: str, params: Any = None, *, columnar: bool = False
    ) -> list[tuple[Any, ...]]:
        insert = _INSERT_VALUES.match(sql)
        if insert is not None and isinstance(params, Sequence):
            rows = list(zip(*params, strict=True)) if columnar else params
            self._run(_json_each_row(insert.group(1), insert.group(2), rows), "CSV", None)
            return []
        text = _PLACEHOLDER.sub(r"{\1:String}", sql)
        if not text.lstrip().upper().startswith("SELECT"):
            self._run(text, "CSV", params)
            return []
        table = self._run(text, "ArrowTable", params)
        columns = [column.to_pylist() for column in table.columns]
        return [tuple(row) for row in zip(*columns, strict=True)]

    def _run(self, sql: str, fmt: str, params: dict[str, str] | None) -> Any:
        with _ENGINE_LOCK:
            try:
                if not sql.lstrip().upper().startswith("CREATE DATABASE"):
                    self._session.query(f"USE `{self._database}`")
                return self._session.query(sql, fmt, params=params or None)
            except Exception as exc:
                raise EmbeddedEngineError(str(exc)) from None

    def disconnect(self) -> None:
        with _ENGINE_LOCK:
            self._session.close()


def _json_each_row(table: str, columns: str, rows: Sequence[Sequence[Any]]) -> str:
    names = [name.strip() for name in columns.split(",")]
    lines = [
        orjson.dumps(dict(zip(names, row, strict=True))).decode()  # times as RFC 3339
        for row in rows
    ]
    head = (
        f"INSERT INTO {table} ({', '.join(names)}) "
        "SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow"
    )
    return "\n".join([head, *lines])
