"""The event store on both engines: a real DuckDB file and a real ClickHouse server on loopback.
The same rows go into both; the dedupe key holds on both; the metric SQL answers the same on both
and the same as the JSONL reader over the same events."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.store import fresh_database_url, tool_call

from toolcall_spec.analytics.metrics import jsonl_error_metrics
from toolcall_spec.analytics.store import EventStore, StoreError, event_row, open_store

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
ENGINES = ("duckdb", "clickhouse")


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    if request.param == "duckdb":
        url = str(tmp_path / "events.duckdb")
    else:
        url = fresh_database_url(request.getfixturevalue("clickhouse_base_url"))
    with open_store(url) as opened:
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
def test_one_query_answers_the_same_on_both_engines(
    tmp_path: Path, clickhouse_base_url: str
) -> None:
    events = [tool_call(index) for index in range(1, 301)]
    answers = []
    for url in (str(tmp_path / "e.duckdb"), fresh_database_url(clickhouse_base_url)):
        with open_store(url) as opened:
            opened.write(rows(events))
            opened.write(rows(events[::3]))
            answers.append(opened.metrics("p1").as_dict())
    assert answers[0] == answers[1]
    assert answers[0]["tool_calls"] == 300


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
