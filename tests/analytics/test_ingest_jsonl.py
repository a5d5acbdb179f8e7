"""Ingest of JSONL streams: every line checked on its own, rejections with line numbers."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.repo import EXAMPLES
from support.strategies.analytics_inputs import defective_events, repairable_events, small_events

from toolcall_spec.analytics.ingest import ingest_jsonl, iter_jsonl_rejections
from toolcall_spec.typed import EventWarning
from toolcall_spec.validation import validate

PER_EVENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.per-event-answer")
AS_SENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.indices-as-sent")


def stream(*lines: bytes) -> io.BytesIO:
    return io.BytesIO(b"\n".join(lines) + b"\n")


def good(number: int) -> bytes:
    return orjson.dumps(
        {
            "event_id": f"00000000-0000-4000-8000-{number:012d}",
            "event_type": "tool_call",
            "trace_id": "t",
            "session_id": "s",
            "timestamp": "2026-11-30T12:00:00Z",
            "source": "server",
        }
    )


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


def test_progress_is_reported_after_each_block_of_valid_lines() -> None:
    """Progress comes once per block read (about 1 MiB), with the running counts."""
    lines = [good(n) for n in range(1, 15001)]  # about 2.4 MB: well over one block
    seen: list[tuple[int, int, int]] = []
    ingest_jsonl(stream(*lines), on_progress=lambda *c: seen.append(c))
    assert len(seen) >= 2
    assert seen[-1] == (15000, 15000, 0)
    assert all(read == accepted and rejected == 0 for read, accepted, rejected in seen)
    assert [read for read, _, _ in seen] == sorted({read for read, _, _ in seen})


@PER_EVENT
@AS_SENT
@pytest.mark.requirement("toolcall-spec.requirement.ingest.repairs-with-warning")
@given(
    st.lists(
        st.one_of(
            small_events(),
            defective_events(small_events()),
            repairable_events(small_events()).map(lambda pair: [*pair]),
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
