"""Built tool_call events are complete and schema-valid, with injectable clock and ids."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_spec.analytics.classify import (
    Classification,
    classify_exception,
    classify_pre_handler_failure,
    classify_result,
)
from toolcall_spec.analytics.events import (
    MAX_CAPTURED_BYTES,
    EventFactory,
)
from toolcall_spec.clock import format_timestamp
from toolcall_spec.json_values import json_type
from toolcall_spec.models import ToolCallEvent
from toolcall_spec.validation import validate

FIXED = datetime(2026, 11, 30, 12, 0, 0, 250000, tzinfo=timezone.utc)


def counting_ids() -> Any:
    counter = itertools.count()
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


def factory(**overrides: Any) -> EventFactory:
    settings: dict[str, Any] = {"session_id": "ses_1", "clock": lambda: FIXED}
    settings["new_id"] = counting_ids()
    settings.update(overrides)
    return EventFactory(**settings)


def assert_valid(event: Mapping[str, Any]) -> None:
    assert validate(event, "tool-call-event") == []
    ToolCallEvent.model_validate(event)


def test_an_event_has_every_base_member_from_the_injected_clock_and_ids() -> None:
    result = {"content": [{"type": "text", "text": "boom"}], "isError": True}
    event = factory().tool_call(
        "billing_lookup", classify_result(result), latency_ms=12.3456, arguments={"id": 7}
    )
    assert event == {
        "event_id": "00000000-0000-4000-8000-000000000000",
        "event_type": "tool_call",
        "trace_id": "00000000-0000-4000-8000-000000000001",
        "session_id": "ses_1",
        "timestamp": "2026-11-30T12:00:00.250Z",
        "source": "server",
        "event_name": "billing_lookup",
        "sdk_version": event["sdk_version"],
        "latency_ms": 12.346,
        "status": "error",
        "error_category": "tool_error",
        "error_message": "boom",
        "is_retry": 0,
        "input_keys": {"id": True},
        "input_types": {"id": "integer"},
        "input_values": {"id": 7},
    }
    assert_valid(event)


@pytest.mark.requirement("toolcall-spec.requirement.analytics.pre-handler-validation")
def test_no_latency_when_the_handler_never_ran() -> None:
    event = factory().tool_call("nope", classify_pre_handler_failure("Unknown tool: nope"))
    assert "latency_ms" not in event
    assert event["error_category"] == "validation"
    assert_valid(event)


@pytest.mark.requirement("toolcall-spec.requirement.analytics.status-without-capture")
def test_capture_switches_drop_inputs_and_output_but_never_the_status() -> None:
    result = {"content": [{"type": "text", "text": "expired"}], "isError": True}
    event = factory(capture_input=False, capture_output=False).tool_call(
        "t", classify_result(result, capture_output=False), arguments={"a": 1}, output=result
    )
    assert event["status"] == "error"
    assert event["error_category"] == "tool_error"
    assert not {"input_keys", "input_values", "output_content", "error_message"} & set(event)
    assert_valid(event)


@pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-stripped")
def test_captured_inputs_and_outputs_are_pii_stripped() -> None:
    result = {"content": [{"type": "text", "text": "sent to max@example.com"}]}
    event = factory().tool_call(
        "mail", classify_result(result), arguments={"to": "max@example.com"}, output=result
    )
    assert event["input_values"] == {"to": "[EMAIL_REDACTED]"}
    assert event["output_content"]["content"][0]["text"] == "sent to [EMAIL_REDACTED]"
    assert_valid(event)


def test_a_large_capture_is_cut_before_stripping_and_marked() -> None:
    big = {"blob": "x" * MAX_CAPTURED_BYTES}
    event = factory().tool_call("t", Classification("success"), arguments=big, output=big)
    for member in ("input_values", "output_content"):
        kept = event[member]
        assert kept["_truncated"] is True
        assert 0 < len(kept["blob"]) < MAX_CAPTURED_BYTES
        assert big["blob"].startswith(kept["blob"])
        assert len(orjson.dumps(kept)) <= MAX_CAPTURED_BYTES
    assert event["input_keys"] == {"blob": True}
    assert_valid(event)


def test_a_value_that_is_not_json_is_replaced_by_the_truncation_marker() -> None:
    event = factory().tool_call("t", Classification("success"), arguments={"when": object()})
    assert event["input_values"] == {"_truncated": True}


def test_long_names_and_ids_are_cut_to_the_schema_limits() -> None:
    event = factory(session_id="s" * 500).tool_call(
        "n" * 500, Classification("success"), trace_id="t" * 500
    )
    assert (len(event["event_name"]), len(event["trace_id"]), len(event["session_id"])) == (
        256,
        128,
        128,
    )
    assert_valid(event)


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), "2026-01-02T03:04:05.000Z"),
        (
            datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2))),
            "2026-01-02T01:04:05.678Z",
        ),
        (datetime(2026, 1, 2, 3, 4, 5), "2026-01-02T03:04:05.000Z"),
    ],
)
def test_timestamps_are_rfc3339_in_utc(moment: datetime, text: str) -> None:
    assert format_timestamp(moment) == text


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (3, "integer"),
        (2.5, "number"),
        (1.0, "integer"),
        (-0.0, "integer"),
        ((1, 2), "array"),
        ("a", "string"),
        ([1], "array"),
        ({}, "object"),
    ],
)
def test_json_type_names(value: object, name: str) -> None:
    assert json_type(value) == name


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@pytest.mark.requirement("toolcall-spec.requirement.analytics.error-fields-only-on-error")
@given(
    name=st.text(max_size=300),
    classification=st.one_of(
        st.just(Classification("success")),
        st.builds(classify_exception, st.text()),
        st.builds(classify_pre_handler_failure, st.none() | st.text()),
        st.builds(
            classify_result,
            st.fixed_dictionaries(
                {
                    "content": st.lists(
                        st.fixed_dictionaries({"type": st.just("text"), "text": st.text()}),
                        max_size=2,
                    ),
                    "isError": st.booleans(),
                }
            ),
        ),
    ),
    latency=st.none() | st.floats(-1, 1e9),
    arguments=st.none() | st.dictionaries(st.text(), _json, max_size=4),
    output=st.none() | st.dictionaries(st.text(), _json, max_size=4),
    moment=st.datetimes(timezones=st.timezones() | st.just(timezone.utc)),
)
def test_every_built_event_is_schema_valid(
    *,
    name: str,
    classification: Classification,
    latency: float | None,
    arguments: dict[str, Any] | None,
    output: dict[str, Any] | None,
    moment: datetime,
) -> None:
    event = EventFactory(clock=lambda: moment).tool_call(
        name, classification, latency_ms=latency, arguments=arguments, output=output
    )
    assert_valid(event)
