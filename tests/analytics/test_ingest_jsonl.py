"""Ingest of JSONL streams: every line checked on its own, rejections with line numbers."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import run_cli
from support.documents import numbered_event
from support.repo import EXAMPLES
from support.strategies.analytics import defective_events, repairable_events, small_events

from toolcall_spec.analytics.ingest import ingest_jsonl, iter_jsonl_rejections
from toolcall_spec.loading import BLOCK_BYTES
from toolcall_spec.typed import EventWarning
from toolcall_spec.validation import validate

PER_EVENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.per-event-answer")
AS_SENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.indices-as-sent")


def stream(*lines: bytes) -> io.BytesIO:
    return io.BytesIO(b"\n".join(lines) + b"\n")


def good(number: int) -> bytes:
    return orjson.dumps(numbered_event(number))


@PER_EVENT
@AS_SENT
def test_the_example_file_names_the_rejected_line() -> None:
    with (EXAMPLES / "analytics" / "tool-calls.jsonl").open("rb") as handle:
        answer = ingest_jsonl(handle)
    assert validate(answer, "ingest-answer") == []
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (207, 2, 1)
    [rejection] = answer["errors"]
    assert (rejection["index"], rejection["line"]) == (2, 3)
    assert rejection["issues"][0].startswith("error_category: ")


@PER_EVENT
@AS_SENT
def test_blank_lines_count_as_lines_not_as_events_and_bad_json_is_one_rejection() -> None:
    answer = ingest_jsonl(stream(good(1), b"", b"{broken", b"   ", good(2), b"[1]"))
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (207, 2, 2)
    first, second = answer["errors"]
    assert (first["index"], first["line"]) == (1, 3)
    assert first["issues"][0].startswith("(root): invalid JSON")
    assert (second["index"], second["line"]) == (3, 6)
    assert validate(answer, "ingest-answer") == []


@PER_EVENT
def test_an_empty_stream_and_an_all_bad_stream_are_400() -> None:
    empty = ingest_jsonl(io.BytesIO(b"\n\n"))
    assert (empty["status"], empty["error"]["code"]) == (400, "no_events")
    bad = ingest_jsonl(stream(b"1", b"2"))
    assert (bad["status"], bad["accepted"], bad["rejected"]) == (400, 0, 2)


def test_progress_is_reported_with_the_running_counts() -> None:
    seen: list[tuple[int, int, int]] = []
    ingest_jsonl(stream(good(1), b"nope", good(2)), on_progress=lambda *c: seen.append(c))
    assert seen[-1] == (3, 2, 1)


def test_progress_is_reported_on_a_run_of_valid_lines() -> None:
    """Once per block read: a run of valid lines over two blocks and a bit is reported three
    times, with growing counts, the last one the whole run."""
    count = 2 * BLOCK_BYTES // (len(good(1)) + 1) + 10
    seen: list[tuple[int, int, int]] = []
    ingest_jsonl(stream(*(good(n) for n in range(count))), on_progress=lambda *c: seen.append(c))
    assert len(seen) == 3
    assert [read for read, _, _ in seen] == sorted({read for read, _, _ in seen})
    assert all(read == accepted for read, accepted, _ in seen)
    assert seen[-1] == (count, count, 0)


@PER_EVENT
@AS_SENT
@pytest.mark.requirement("toolcall-spec.requirement.ingest.repairs-with-warning")
@given(
    st.lists(
        st.one_of(
            small_events,
            defective_events(small_events),
            repairable_events(small_events).map(lambda pair: [*pair]),
        ),
        max_size=30,
    )
)
def test_every_line_is_accounted_for_at_its_own_number(items: list[Any]) -> None:
    events = [item if isinstance(item, dict) else item[0] for item in items]
    bad_lines = {number for number, item in enumerate(items, start=1) if isinstance(item, tuple)}
    fixed_lines = {number for number, item in enumerate(items, start=1) if isinstance(item, list)}
    counts = [0, 0]
    body = b"".join(orjson.dumps(event) + b"\n" for event in events)
    warnings: list[EventWarning] = []
    rejections = list(iter_jsonl_rejections(io.BytesIO(body), counts, None, warnings))
    assert sum(counts) == len(events)
    assert counts[1] == len(bad_lines)
    assert {rejection.get("line") for rejection in rejections} == bad_lines
    assert {warning.get("line") for warning in warnings} == fixed_lines
    assert all("line" in r and r["index"] == r["line"] - 1 for r in rejections)  # no blanks


def test_the_cli_spools_warnings_and_writes_them_all_whatever_the_workers(
    tmp_path: Path,
) -> None:
    """The JSONL CLI keeps no warning in memory: each is spooled, and every one is in the answer
    (with its line), the same with one worker or two."""
    lines = [good(1), orjson.dumps(orjson.loads(good(2)) | {"sdk_name": "yavio"}), b"{broken"]
    lines += [orjson.dumps(orjson.loads(good(number)) | {"foo": 1}) for number in range(3, 300)]
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    one = run_cli("ingest", path)
    two = run_cli("ingest", path, "--workers", "2")
    assert one.returncode == 1
    assert one.stdout == two.stdout
    answer = orjson.loads(one.stdout)
    assert validate(answer, "ingest-answer") == []
    assert [rejection["line"] for rejection in answer["errors"]] == [3]
    assert [warning["line"] for warning in answer["warnings"]] == [2, *range(4, 301)]
    assert answer["warnings"][0]["message"] == "sdk_name: not a tool_call member; dropped"
    assert (answer["accepted"], answer["rejected"]) == (299, 1)
