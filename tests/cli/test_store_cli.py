"""``toolcall-spec load``, ``metrics --store`` and ``serve-ingest`` as a user runs them, against a
DuckDB file and a real ClickHouse server."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from support.cli import run_cli
from support.store import fresh_database_url, tool_call

from toolcall_spec.analytics.store import open_store

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")


@pytest.fixture(params=["duckdb", "clickhouse"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "duckdb":
        return str(tmp_path / "events.duckdb")
    return fresh_database_url(request.getfixturevalue("clickhouse_base_url"))


def write_jsonl(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_load_validates_dedupes_and_reports_each_rejected_line(
    store_url: str, tmp_path: Path
) -> None:
    events = [tool_call(index) for index in range(1, 41)]
    lines = [orjson.dumps(event) for event in events]
    lines.insert(3, b"{broken")
    lines.insert(10, orjson.dumps({"event_type": "tool_call"}))
    lines += lines[:5]  # the archive repeats itself: its events are stored once
    archive = write_jsonl(tmp_path / "archive.jsonl", lines)
    first = run_cli("load", archive, "--store", store_url, "--project", "shop")
    assert first.returncode == 1
    assert json.loads(first.stdout) == {"accepted": 44, "rejected": 3, "warnings": 0, "stored": 40}
    assert f"{archive}:4: (root): invalid JSON" in first.stderr
    assert f"{archive}:11: " in first.stderr
    again = run_cli("load", archive, "--store", store_url, "--project", "shop")
    assert json.loads(again.stdout)["stored"] == 40  # a reload adds nothing


def test_load_stores_what_ingest_repairs_as_repaired_and_reports_each_change(
    store_url: str, tmp_path: Path
) -> None:
    long_message = "the upstream call failed; " * 40
    overlong = tool_call(5, error_message=long_message, sdk_name="yavio")
    uncategorised = tool_call(10)
    del uncategorised["error_category"]
    valid = tool_call(1)
    lines = [orjson.dumps(event) for event in (valid, overlong, uncategorised)]
    archive = write_jsonl(tmp_path / "archive.jsonl", lines)
    run = run_cli("load", archive, "--store", store_url, "--project", "shop")
    assert run.returncode == 0
    assert json.loads(run.stdout) == {"accepted": 3, "rejected": 0, "warnings": 3, "stored": 3}
    assert f"{archive}:2: warning: sdk_name: not a tool_call member; dropped" in run.stderr
    assert f"{archive}:2: warning: error_message: 1,040 characters" in run.stderr
    assert f"{archive}:3: warning: error_category: missing on an error event" in run.stderr
    with open_store(store_url) as store:
        rows = store.query(
            "SELECT event_id, error_category, error_message, event_json FROM {events}", {}
        )
    stored = {row[0]: row[1:] for row in rows}
    _, message, kept = stored[overlong["event_id"]]
    assert len(message) <= 500 < len(long_message)
    assert orjson.loads(kept)["error_message"] == message
    assert "sdk_name" not in orjson.loads(kept)
    assert stored[uncategorised["event_id"]][0] == "unknown"
    assert orjson.loads(stored[valid["event_id"]][2]) == valid


def test_metrics_in_the_store_equal_metrics_of_the_file(store_url: str, tmp_path: Path) -> None:
    lines = [orjson.dumps(tool_call(index)) for index in range(1, 121)]
    archive = write_jsonl(tmp_path / "archive.jsonl", lines)
    assert run_cli("load", archive, "--store", store_url).returncode == 0
    from_file = json.loads(run_cli("metrics", archive, "--format", "json").stdout)
    in_store = json.loads(run_cli("metrics", "--store", store_url, "--format", "json").stdout)
    assert {key: in_store[key] for key in from_file} == from_file
    assert sum(tool["tool_calls"] for tool in in_store["by_tool"].values()) == 120
    assert sorted(in_store["by_day"]) == ["2026-11-01", "2026-11-02", "2026-11-03"]
    text = run_cli("metrics", "--store", store_url)
    assert text.returncode == 0
    assert "tool calls: 120" in text.stdout
    assert "by tool:" in text.stdout


def test_metrics_for_one_project_only(tmp_path: Path) -> None:
    store = str(tmp_path / "events.duckdb")
    archive = write_jsonl(tmp_path / "a.jsonl", [orjson.dumps(tool_call(1))])
    run_cli("load", archive, "--store", store, "--project", "a")
    run_cli("load", archive, "--store", store, "--project", "b")
    only_a = json.loads(
        run_cli("metrics", "--store", store, "--project", "a", "--format", "json").stdout
    )
    both = json.loads(run_cli("metrics", "--store", store, "--format", "json").stdout)
    assert (only_a["tool_calls"], both["tool_calls"]) == (1, 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["metrics"], "give either FILE or --store URL"),
        (["metrics", "x.jsonl", "--store", "y.duckdb"], "give either FILE or --store URL"),
        (["metrics", "x.jsonl", "--project", "a"], "--project needs --store"),
        (["metrics", "--store", "clickhouse://127.0.0.1:1/db"], "cannot open the ClickHouse store"),
        (["load", "missing.jsonl", "--store", "clickhouse://127.0.0.1:1/db"], "cannot open"),
    ],
)
def test_usage_and_store_errors_exit_2_with_a_message(args: list[str], message: str) -> None:
    run = run_cli(*args)
    assert run.returncode == 2
    assert message in run.stderr


def test_load_of_a_missing_file_exits_2(tmp_path: Path) -> None:
    run = run_cli("load", tmp_path / "missing.jsonl", "--store", tmp_path / "e.duckdb")
    assert run.returncode == 2
    assert "missing.jsonl: cannot read" in run.stderr


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("[]", "(root): expected a non-empty object"),
        ('{"shop": "short"}', "/shop: the key must be a string of at least 16 characters"),
        ('{"a": "same-key-0123456789", "b": "same-key-0123456789"}', "/b: the same key"),
        ("{", "keys.json: "),
    ],
)
def test_serve_ingest_refuses_a_bad_keys_file(tmp_path: Path, keys: str, message: str) -> None:
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(keys)
    run = run_cli("serve-ingest", "--store", tmp_path / "e.duckdb", "--keys-file", keys_file)
    assert run.returncode == 2
    assert message in run.stderr
