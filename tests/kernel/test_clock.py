"""Reading timestamps: every RFC 3339 timestamp the schemas accept becomes a UTC datetime, the
two that ``datetime`` cannot hold as written (a leap second, a moment past year 1 or 9999 once in
UTC) included: each is the nearest moment it can hold."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from toolcall_spec import validate
from toolcall_spec.clock import parse_timestamp

UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-11-30T12:00:00.250Z", datetime(2026, 11, 30, 12, 0, 0, 250000, UTC)),
        ("2026-11-30T13:00:00+01:00", datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)),
        ("2026-11-30t12:00:00z", datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)),
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, 999999, UTC)),
        ("2016-12-31T23:59:60.5Z", datetime(2016, 12, 31, 23, 59, 59, 999999, UTC)),
        ("2016-12-31T18:59:60-05:00", datetime(2016, 12, 31, 23, 59, 59, 999999, UTC)),
        ("0001-01-01T00:00:00+01:00", datetime.min.replace(tzinfo=UTC)),
        ("9999-12-31T23:59:59-01:00", datetime.max.replace(tzinfo=UTC)),
    ],
)
def test_a_valid_timestamp_is_read_as_the_nearest_moment_datetime_holds(
    text: str, moment: datetime
) -> None:
    event = {
        "event_id": "123e4567-e89b-42d3-a456-426614174000",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": text,
        "source": "server",
    }
    assert not [p for p in validate(event, "tool-call-event") if p.severity == "error"]
    assert parse_timestamp(text) == moment
