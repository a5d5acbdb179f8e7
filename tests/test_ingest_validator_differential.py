"""The fast validator used for bulk ingest (jsonschema-rs, compiled, formats on) agrees with the
pure-Python oracle (jsonschema's Draft202012Validator with its format checker and a registry of
the packaged schemas) on generated tool_call events, formats included."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from analytics_strategies import defective_events, tool_call_events
from checks import default_oracle
from hypothesis import find, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from toolcall_spec.analytics.ingest import event_issues
from toolcall_spec.catalog import load_schema, registry

FAITHFUL = pytest.mark.requirement("toolcall-spec.requirement.ingest.faithful-fast-validator")


def oracle() -> Draft202012Validator:
    return default_oracle("tool-call-event")


def fast_says_valid(event: Any) -> bool:
    return event_issues(event) == []


def format_variants() -> st.SearchStrategy[dict[str, Any]]:
    """A valid event whose uuid or date-time is replaced by a near miss or an unusual form."""
    uuids = st.sampled_from(
        [
            "0B6F3A52-9C1E-4D7A-8F0E-2F4B6C8D1E3A",  # upper case: valid
            "00000000-0000-0000-0000-000000000000",  # the nil uuid: valid
            "0b6f3a52-9c1e-1d7a-8f0e-2f4b6c8d1e3a",  # version 1: valid
            "0b6f3a529c1e4d7a8f0e2f4b6c8d1e3a",
            "{0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a}",
            "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3g",
            "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3",
            "urn:uuid:0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
        ]
    )
    times = st.sampled_from(
        [
            "2024-02-29T12:00:00Z",  # a leap day: valid
            "2000-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",  # no leap day in 1900
            "2026-02-29T12:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-30t12:00:00z",  # lower-case separators: valid
            "2026-11-30T12:00:00.123456789+05:30",
            "2026-11-30T12:00:00+24:00",
            "2026-11-30T12:00:00",  # no zone
            "2026-11-30 12:00:00Z",
            "2026-11-30T24:00:00Z",
        ]
    )
    return st.one_of(
        st.builds(lambda e, u: {**e, "event_id": u}, tool_call_events(), uuids),
        st.builds(lambda e, t: {**e, "timestamp": t}, tool_call_events(), times),
        st.builds(lambda e, t: {**e, "ingested_at": t}, tool_call_events(), times),
    )


@FAITHFUL
@given(
    st.one_of(
        tool_call_events(),
        defective_events(repairable_too=True).map(lambda pair: pair[0]),
        format_variants(),
    )
)
def test_the_fast_validator_and_the_oracle_agree(event: Any) -> None:
    assert fast_says_valid(event) is oracle().is_valid(event)


@FAITHFUL
def test_the_comparison_can_tell_the_two_apart() -> None:
    """Guard against a vacuous property: both sides see valid and invalid events."""
    valid = {
        "event_id": "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": "2026-02-28T12:00:00Z",
        "source": "server",
    }
    invalid = {**valid, "timestamp": "2026-02-29T12:00:00Z"}  # the pattern passes, the format not
    assert (fast_says_valid(valid), oracle().is_valid(valid)) == (True, True)
    assert (fast_says_valid(invalid), oracle().is_valid(invalid)) == (False, False)


@pytest.mark.parametrize(
    "timestamp",
    [
        "2026-12-31T23:59:60Z",  # a leap second: RFC 3339 allows it, the schema's pattern too
        "0000-01-01T00:00:00Z",  # year 0000: RFC 3339 allows it
    ],
)
def test_known_divergence_the_oracle_misreads_valid_rfc3339(timestamp: str) -> None:
    """Python's datetime cannot hold a leap second or year 0, so the oracle's format check
    refuses both; the fast validator reads RFC 3339 as written. The property above leaves these
    two shapes out; this test pins the divergence so a change on either side is noticed."""
    event = {
        "event_id": "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": timestamp,
        "source": "server",
    }
    assert fast_says_valid(event) is True
    assert oracle().is_valid(event) is False


@FAITHFUL
def test_the_property_catches_a_validator_that_skips_formats() -> None:
    """A planted mutation: the same schema compiled without format checks. The generated format
    variants must expose it (a calendar day that does not exist passes the pattern)."""
    lax = jsonschema_rs.Draft202012Validator(
        load_schema("tool-call-event"), registry=registry(), validate_formats=False
    )
    disagreement = find(
        format_variants(),
        lambda event: lax.is_valid(event) != oracle().is_valid(event),
        settings=settings(database=None, max_examples=500),
    )
    assert lax.is_valid(disagreement) is True
    assert oracle().is_valid(disagreement) is False
