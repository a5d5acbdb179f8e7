"""The event store on both engines: a real DuckDB file and a real ClickHouse server on loopback.
The same rows go into both; the dedupe key holds on both; the metric SQL answers the same on both
and the same as the JSONL reader over the same events."""

from __future__ import annotations

import importlib.abc
import io
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.store import fresh_database_url, tool_call

from toolcall_spec import validate
from toolcall_spec.analytics.metrics import jsonl_error_metrics
from toolcall_spec.analytics.store import EventStore, StoreError, event_row, open_store
from toolcall_spec.analytics.store.layout import TABLE

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")
pytest.importorskip("clickhouse_driver", reason="the store extra (clickhouse-driver) is missing")

from toolcall_spec.analytics.store.clickhouse import (
    DDL,
    MILLISECOND_TIME,
    SECOND_TIME,
    UNKNOWN_FUNCTION,
    ClickHouseStore,
    supports_datetime64,
)

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
ENGINES = ("duckdb", "clickhouse", "chdb")
"""DuckDB; the ClickHouse server (Debian's 18.16 in .ci/run: the wire protocol, the fallback
DDL); ClickHouse 26's engine in process (chdb-core: the current DDL and SQL)."""
MILLISECONDS = pytest.mark.requirement(
    "toolcall-spec.requirement.store.clickhouse-millisecond-time"
)


def engine_url(engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if engine == "duckdb":
        return str(tmp_path / f"{uuid.uuid4().hex[:8]}.duckdb")
    return fresh_database_url(request.getfixturevalue(f"{engine}_base_url"))


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    with open_store(engine_url(request.param, request, tmp_path)) as opened:
        yield opened


def rows(events: list[dict[str, Any]], project: str = "p1") -> list[tuple[Any, ...]]:
    return [event_row(event, project, NOW) for event in events]


@pytest.mark.requirement("toolcall-spec.requirement.store.dedupe-event-id")
def test_a_retried_batch_is_stored_once(store: EventStore) -> None:
    events = [tool_call(index) for index in range(50)]
    store.write(rows(events))
    store.write(rows(events))  # the retry
    store.write(rows(events[:10]))
    assert store.count("p1") == 50


@pytest.mark.requirement("toolcall-spec.requirement.store.dedupe-event-id")
def test_event_ids_compare_case_insensitively_and_the_first_write_wins(store: EventStore) -> None:
    first = tool_call(1, status="success")
    retry = dict(first, event_id=first["event_id"].upper(), status="error", error_category="auth")
    store.write(rows([first]))
    store.write([event_row(retry, "p1", NOW.replace(second=5))])  # written later
    metrics = store.metrics("p1")
    assert (metrics.totals.tool_calls, metrics.totals.errors) == (1, 0)


def test_the_same_event_id_in_two_projects_is_two_events(store: EventStore) -> None:
    event = tool_call(3)
    store.write(rows([event], "p1") + rows([event], "p2"))
    assert (store.count("p1"), store.count("p2"), store.count()) == (1, 1, 2)


@pytest.mark.requirement("toolcall-spec.requirement.store.same-metrics")
def test_store_metrics_equal_the_jsonl_reader(store: EventStore) -> None:
    events = [tool_call(index) for index in range(1, 211)]
    store.write(rows(events))
    jsonl = b"".join(orjson.dumps(event) + b"\n" for event in events)
    expected = jsonl_error_metrics(io.BytesIO(jsonl)).as_dict()
    got = store.metrics("p1").as_dict()
    assert {key: got[key] for key in expected} == expected


@pytest.mark.requirement("toolcall-spec.requirement.store.same-metrics")
def test_breakdowns_by_tool_and_day_count_what_was_written(store: EventStore) -> None:
    events = [tool_call(index) for index in range(1, 101)]
    store.write(rows(events))
    metrics = store.metrics("p1")
    calls_by_tool = Counter(event["event_name"] for event in events)
    errors_by_day = Counter(
        date.fromisoformat(event["timestamp"][:10])
        for event in events
        if event["status"] == "error"
    )
    blind = sum(
        1
        for event in events
        if event["status"] != "error" and event.get("output_content", {}).get("isError") is True
    )
    assert {tool: row.calls for tool, row in metrics.by_tool.items()} == dict(calls_by_tool)
    assert {day: row.errors for day, row in metrics.by_day.items()} == dict(errors_by_day)
    assert metrics.totals.reclassified == blind
    assert sum(row.reclassified for row in metrics.by_tool.values()) == blind


def test_metrics_of_an_empty_store_are_zero(store: EventStore) -> None:
    metrics = store.metrics("nobody")
    assert (metrics.totals.tool_calls, metrics.by_tool, metrics.by_day) == (0, {}, {})


@pytest.mark.requirement("toolcall-spec.requirement.store.same-metrics")
@MILLISECONDS
def test_one_query_answers_the_same_on_every_engine(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    events = [tool_call(index) for index in range(1, 301)]
    answers = []
    for engine in ENGINES:
        with open_store(engine_url(engine, request, tmp_path)) as opened:
            opened.write(rows(events))
            opened.write(rows(events[::3]))
            answers.append(opened.metrics("p1").as_dict())
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["tool_calls"] == 300


def stored_times(store: EventStore) -> tuple[datetime, datetime]:
    ((moment, ingested),) = store.query("SELECT timestamp, ingested_at FROM {events}", {})
    return _as_datetime(moment), _as_datetime(ingested)


def _as_datetime(value: object) -> datetime:
    """chDB hands a second-precision ``DateTime`` over Arrow as its epoch seconds."""
    if isinstance(value, int):
        return datetime.fromtimestamp(value, timezone.utc)
    assert isinstance(value, datetime)
    return value


@MILLISECONDS
def test_a_current_clickhouse_keeps_the_milliseconds(chdb_base_url: str) -> None:
    with open_store(fresh_database_url(chdb_base_url)) as opened:
        assert isinstance(opened, ClickHouseStore)
        assert opened.time_type == MILLISECOND_TIME
        event = tool_call(1, timestamp="2026-11-30T23:59:59.250Z")
        opened.write([event_row(event, "p1", NOW.replace(microsecond=987_654))])
        moment, ingested = stored_times(opened)
        metrics = opened.metrics("p1")
    assert moment == datetime(2026, 11, 30, 23, 59, 59, 250_000, tzinfo=timezone.utc)
    assert ingested == NOW.replace(microsecond=987_000)
    assert list(metrics.by_day) == [date(2026, 11, 30)]  # the day of the UTC time


@MILLISECONDS
def test_the_server_gets_the_time_type_it_has(clickhouse_base_url: str) -> None:
    """Debian's 18.16 has no DateTime64: the fallback, times cut to the second; a server that
    has it (TOOLCALL_CLICKHOUSE_URL may name one) keeps the milliseconds."""
    with open_store(fresh_database_url(clickhouse_base_url)) as opened:
        assert isinstance(opened, ClickHouseStore)
        ((version,),) = opened.query("SELECT version()", {})
        has_it = supports_datetime64(opened._client())
        assert has_it is not str(version).startswith("18.")
        assert opened.time_type == (MILLISECOND_TIME if has_it else SECOND_TIME)
        event = tool_call(1, timestamp="2026-11-30T23:59:59.250Z")
        opened.write([event_row(event, "p1", NOW)])
        moment, _ = stored_times(opened)
        day = list(opened.metrics("p1").by_day)
    assert moment.replace(tzinfo=timezone.utc) == datetime(
        2026, 11, 30, 23, 59, 59, 250_000 if has_it else 0, tzinfo=timezone.utc
    )
    assert day == [date(2026, 11, 30)]


@MILLISECONDS
def test_a_table_created_with_second_times_is_kept_and_reported(chdb_base_url: str) -> None:
    """A table an older version (or server) created keeps its type: the store says which."""
    url = fresh_database_url(chdb_base_url)
    with open_store(url) as first:
        assert isinstance(first, ClickHouseStore)
        first.query(f"DROP TABLE {TABLE}", {})
        first.query(DDL.format(time=SECOND_TIME), {})
    with open_store(url) as reopened:
        assert isinstance(reopened, ClickHouseStore)
        assert reopened.time_type == SECOND_TIME
        reopened.write(rows([tool_call(1, timestamp="2026-11-30T12:00:00.250Z")]))
        moment, _ = stored_times(reopened)
    assert moment == datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)


class Refusing:
    """A client whose server answers every statement with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def execute(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        raise self.error


def test_datetime64_is_found_by_asking_the_server() -> None:
    from clickhouse_driver.errors import NetworkError, ServerException

    unknown = ServerException("Unknown function toDateTime64", code=UNKNOWN_FUNCTION)
    assert supports_datetime64(Refusing(unknown)) is False
    with pytest.raises(NetworkError):  # no answer is not a "no": the store fails to open
        supports_datetime64(Refusing(NetworkError("connection refused")))


def test_an_unreachable_clickhouse_is_a_clear_error() -> None:
    with pytest.raises(StoreError, match=r"127\.0\.0\.1:1/x: cannot open the ClickHouse store"):
        open_store("clickhouse://127.0.0.1:1/x")


def test_a_password_is_not_repeated_in_errors() -> None:
    with pytest.raises(StoreError) as caught:
        open_store("clickhouse://u:secret@127.0.0.1:1/x")
    assert "secret" not in str(caught.value)


def test_a_duckdb_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.duckdb"
    bogus.write_text("not a database")
    with pytest.raises(StoreError, match="cannot open the DuckDB store"):
        open_store(str(bogus))


class _BrokenEngine(importlib.abc.MetaPathFinder):
    """Fails the import of one module as an installed but broken driver does: an ImportError
    with no module name (pyarrow 14 under numpy 2: "numpy.core.multiarray failed to import")."""

    def __init__(self, module: str) -> None:
        self.module = module

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == self.module:
            raise ImportError("numpy.core.multiarray failed to import")


@pytest.mark.parametrize("url", ["duckdb://events.duckdb", "clickhouse://127.0.0.1:1/x"])
def test_a_driver_that_fails_inside_its_import_is_named_by_what_failed(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store said "the store needs None" when the engine's driver was installed but broke."""
    engine = "duckdb" if url.startswith("duckdb") else "clickhouse"
    module = f"toolcall_spec.analytics.store.{engine}"
    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenEngine(module), *sys.meta_path])
    with pytest.raises(StoreError) as caught:
        open_store(url)
    assert "None" not in str(caught.value)
    assert "numpy.core.multiarray failed to import" in str(caught.value)
    assert "pip install 'toolcall-spec[store]'" in str(caught.value)


def test_a_missing_server_skips_with_its_reason_but_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from support.store import CLICKHOUSE_URL_ENV, unavailable

    monkeypatch.delenv(CLICKHOUSE_URL_ENV, raising=False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="ClickHouse tests skipped: no server"):
        unavailable("no server")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="ClickHouse is required here"):
        unavailable("no server")


@pytest.mark.parametrize(
    ("suffix", "says"),
    [("", "no data directory named"), ("/tmp/x?engine=old", "unknown option engine")],
)
def test_a_bad_chdb_url_is_a_clear_error(suffix: str, says: str) -> None:
    with pytest.raises(StoreError, match=says):
        open_store(f"chdb://{suffix}")


def test_a_second_chdb_directory_while_one_is_open_is_refused(
    chdb_base_url: str, tmp_path: Path
) -> None:
    refused = pytest.raises(StoreError, match="cannot open the embedded ClickHouse store")
    with open_store(fresh_database_url(chdb_base_url)), refused:
        open_store(f"chdb://{tmp_path / 'other'}")


EDGE_TIMESTAMPS = [
    "2016-12-31T23:59:60Z",  # a leap second: RFC 3339 has it, datetime does not
    "2016-12-31T18:59:60.250-05:00",
    "0001-01-01T00:00:00+01:00",  # before year 1 once in UTC
    "9999-12-31T23:59:59-01:00",  # after year 9999 once in UTC
    "1900-01-01T00:00:00Z",  # before what ClickHouse's DateTime (18.16) holds
    "2299-12-31T23:59:59Z",  # after it, within DateTime64
]
"""Valid timestamps a store's time column cannot hold as sent."""


@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_every_valid_event_is_stored_whatever_its_timestamp_and_counts(
    store: EventStore,
) -> None:
    """A schema-valid event the store could not hold would stop every load after it: the row
    takes the nearest time its column holds, and the stored JSON keeps what was sent."""
    events = [tool_call(i, timestamp=moment) for i, moment in enumerate(EDGE_TIMESTAMPS)]
    events.append(tool_call(99, tokens_in=2**63 - 1, tokens_out=2**63 - 1))
    for event in events:
        assert not [p for p in validate(event, "tool-call-event") if p.severity == "error"]
    store.write_events(events, "p1", NOW)
    assert store.count("p1") == len(events)
    kept = store.query("SELECT event_json FROM {events} WHERE project_id = %(p)s", {"p": "p1"})
    assert sorted(orjson.loads(row[0])["event_id"] for row in kept) == sorted(
        event["event_id"] for event in events
    )
