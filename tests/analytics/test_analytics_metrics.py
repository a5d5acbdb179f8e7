"""Error rate and category breakdown (the dashboard rule), over events and over JSONL."""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.documents import numbered_event
from support.repo import EXAMPLES
from support.strategies.analytics import small_events

from toolcall_spec.analytics.metrics import error_metrics, jsonl_error_metrics

RATE = pytest.mark.requirement("toolcall-spec.requirement.analytics.error-rate")


call = numbered_event


@RATE
def test_error_rate_counts_tool_errors_and_groups_by_category() -> None:
    events = [
        call(1, status="success"),
        call(2, status="error", error_category="tool_error"),
        call(3, status="error", error_category="tool_error"),
        call(4, status="error", error_category="unknown"),
        call(5),  # no status: unreadable, reported, not in the rate
    ]
    metrics = error_metrics(events)
    assert (metrics.tool_calls, metrics.errors, metrics.error_rate) == (4, 3, 0.75)
    assert metrics.by_category == {"tool_error": 2, "unknown": 1}
    assert metrics.unreadable == 1


@RATE
def test_a_legacy_success_with_an_error_output_is_reported_and_corrected() -> None:
    """An SDK from before the rule recorded success although the model saw isError: true."""
    legacy = call(1, status="success", output_content={"content": [], "isError": True})
    text_flag = call(2, status="success", output_content={"content": [], "isError": "true"})
    metrics = error_metrics([legacy, text_flag, call(3, status="success")])
    assert (metrics.errors, metrics.error_rate) == (0, 0.0)
    assert metrics.reclassified == 1  # only the boolean true counts
    assert metrics.corrected_error_rate == pytest.approx(1 / 3)
    assert metrics.as_dict()["corrected_by_category"] == {"tool_error": 1}


@RATE
def test_nothing_is_dropped_silently() -> None:
    """An error event ingest would reject as sent still counts as an error; what cannot be read
    is counted as unreadable; another event type is skipped."""
    events = [
        call(1, status="error", error_category="exploded"),
        call(2, status="error", error_message="x" * 2_000),  # Yavio 0.3.x: no clamp, no category
        "junk",
        call(3),
        {**call(4, status="success"), "event_type": "connection"},
    ]
    metrics = error_metrics(events)
    assert (metrics.tool_calls, metrics.errors, metrics.unreadable, metrics.skipped) == (2, 2, 2, 1)
    assert metrics.by_category == {"unknown": 2}


@pytest.mark.requirement("toolcall-spec.requirement.analytics.metrics-nothing-dropped")
def test_seven_real_calls_four_errors_read_57_percent() -> None:
    """The issue's case: one of four errors had a thrown message over 500 characters."""
    events = [call(n, status="success") for n in range(3)]
    events += [call(3 + n, status="error", error_category="tool_error") for n in range(3)]
    events.append(call(9, status="error", error_category="unknown", error_message="e" * 700))
    metrics = error_metrics(events)
    assert (metrics.tool_calls, metrics.errors) == (7, 4)
    assert metrics.error_rate == pytest.approx(4 / 7)
    assert metrics.unreadable == 0


@RATE
def test_the_example_jsonl_file() -> None:
    with (EXAMPLES / "analytics" / "tool-calls.jsonl").open("rb") as handle:
        metrics = jsonl_error_metrics(handle)
    assert metrics.as_dict() == {
        "tool_calls": 3,
        "errors": 2,
        "error_rate": 2 / 3,
        "by_category": {"tool_error": 1, "unknown": 1},
        "reclassified": 0,
        "corrected_error_rate": 2 / 3,
        "corrected_by_category": {"tool_error": 1, "unknown": 1},
        "unreadable": 0,
        "skipped": 0,
    }


def test_no_calls_is_a_zero_rate_not_a_division_error() -> None:
    assert error_metrics([]).error_rate == 0.0
    assert jsonl_error_metrics(io.BytesIO(b"not json\n")).unreadable == 1


@RATE
@given(st.lists(small_events, max_size=40))
def test_the_rate_is_the_dashboard_rule_over_any_set_of_events(events: list[Any]) -> None:
    body = b"".join(orjson.dumps(event) + b"\n" for event in events)
    metrics = jsonl_error_metrics(io.BytesIO(body))
    errors = [e for e in events if e["status"] == "error"]
    assert metrics.tool_calls == len(events)
    assert metrics.errors == len(errors)
    assert metrics.by_category == Counter(e.get("error_category") or "unknown" for e in errors)
    if events:
        assert metrics.error_rate == len(errors) / len(events)
