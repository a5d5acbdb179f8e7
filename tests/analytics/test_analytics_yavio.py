"""Real Yavio SDK 0.3.x ``tool_call`` events both ways: Yavio's own ingest schema accepts them, and
ours accepts them, with a warning where it changes the event.

The vectors (examples/analytics/yavio-sdk-0.3.1.jsonl) are written from the facts in
teamyavio/yavio at commit 4099786b04ac8be76e0b322fa6bdb7685c1e609e (``@yavio/sdk`` 0.3.1):
``packages/sdk/src/core/events.ts`` (``buildToolCallEvent``: members, ``is_retry`` always 0),
``packages/sdk/src/server/proxy.ts`` (``wrapToolCallback``: a returned result is always a
success, ``isError`` kept in ``output_content``; a thrown error is ``unknown`` with the raw
``error.message``; ``input_values`` carries ``_sessionId`` and ``_requestId``; integer
``latency_ms``), ``packages/sdk/src/core/ids.ts`` (``tr_``/``ses_`` + 21 characters) and
``packages/sdk/src/server/intent.ts`` (``intent_signals``: ``{intent, source}``). What Yavio's
ingest accepts: ``packages/shared/src/events.ts`` (``ToolCallEvent``, zod, not strict) and
``packages/ingest/src/lib/field-limits.ts`` (identifiers over their limits are rejected)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from toolcall_spec.analytics.classify import MAX_ERROR_MESSAGE_LENGTH
from toolcall_spec.analytics.ingest import (
    MAX_BATCH_EVENTS,
    MAX_BODY_BYTES,
    ingest_batch,
    ingest_body,
)
from toolcall_spec.analytics.metrics import error_metrics
from toolcall_spec.validation import validate

YAVIO = pytest.mark.requirement("toolcall-spec.requirement.ingest.yavio-events-accepted")
VECTORS = Path(__file__).parents[2] / "examples" / "analytics" / "yavio-sdk-0.3.1.jsonl"

# Yavio's ToolCallEvent (packages/shared/src/events.ts): member -> the JSON types zod accepts.
_YAVIO_TOOL_CALL: dict[str, tuple[type, ...]] = {
    "event_id": (str,), "event_type": (str,), "trace_id": (str,), "session_id": (str,),
    "timestamp": (str,), "source": (str,), "event_name": (str,), "metadata": (dict,),
    "user_id": (str,), "platform": (str,), "sdk_version": (str,), "latency_ms": (int, float),
    "status": (str,), "error_category": (str,), "error_message": (str,), "is_retry": (int,),
    "input_keys": (dict,), "input_types": (dict,), "input_values": (dict,),
    "output_content": (dict,), "intent_signals": (dict,), "tokens_in": (int,),
    "tokens_out": (int,), "country_code": (str,), "locale": (str,), "end_user_agent": (str,),
    "subject_id": (str,),
}  # fmt: skip
_YAVIO_REQUIRED = ("event_id", "event_type", "trace_id", "session_id", "timestamp", "source")
_YAVIO_CATEGORIES = ("auth", "validation", "timeout", "rate_limit", "server", "unknown")


def yavio_accepts(event: dict[str, Any]) -> bool:
    """Yavio's ingest verdict from its zod schema and field limits (field-limits.ts): required
    members, member types, enums, and the identifier limits it rejects on."""
    typed = all(isinstance(event[k], t) for k, t in _YAVIO_TOOL_CALL.items() if k in event)
    return (
        typed
        and all(name in event for name in _YAVIO_REQUIRED)
        and event.get("status", "success") in ("success", "error")
        and event.get("error_category", "unknown") in _YAVIO_CATEGORIES
        and len(event.get("locale", "")) <= 35
        and len(event["trace_id"]) <= 128
        and len(event["session_id"]) <= 128
        and len(event.get("event_name", "")) <= 256
    )


def vectors() -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in VECTORS.read_bytes().splitlines()]


@YAVIO
def test_yavio_accepts_its_own_vectors_and_so_do_we() -> None:
    events = vectors()
    assert all(yavio_accepts(event) for event in events)
    stored: list[dict[str, Any]] = []
    answer = ingest_batch({"events": events}, stored.append)
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (200, 4, 0)
    assert [warning["index"] for warning in answer.get("warnings", [])] == [
        2
    ]  # only the long message
    assert answer.get("warnings", [])[0]["message"].startswith("error_message: 807 characters")
    thrown = stored[2]
    assert len(thrown["error_message"]) <= MAX_ERROR_MESSAGE_LENGTH
    assert "jane.doe@example.com" not in thrown["error_message"]
    assert "[EMAIL_REDACTED]" in thrown["error_message"]
    assert all(validate(event, "tool-call-event") == [] for event in stored)
    assert stored[3]["intent_signals"] == events[3]["intent_signals"]


@YAVIO
def test_their_errors_reach_the_error_rate() -> None:
    metrics = error_metrics(vectors())
    assert (metrics.tool_calls, metrics.errors, metrics.reclassified) == (4, 1, 1)
    assert metrics.corrected_error_rate == 0.5  # the isError result is a tool error too


@YAVIO
@pytest.mark.requirement("toolcall-spec.requirement.ingest.batch-limits")
def test_a_full_batch_of_realistic_events_fits_the_body_limit() -> None:
    events = vectors()
    batch = [
        {**events[n % 4], "event_id": f"{n:08x}-0000-4000-8000-000000000000"}
        for n in range(MAX_BATCH_EVENTS)
    ]
    # The body as Yavio's SDK posts it (packages/sdk/src/transport/http.ts): events, sdk_version,
    # sent_at.
    body = orjson.dumps(
        {"events": batch, "sdk_version": "0.3.1", "sent_at": "2026-11-30T12:00:04.000Z"}
    )
    assert len(body) > 512_000  # Yavio's re-serialized limit would refuse it
    assert len(body) <= MAX_BODY_BYTES
    answer = ingest_body(body)
    assert (answer["status"], answer["accepted"]) == (200, MAX_BATCH_EVENTS)
    assert ingest_body(body + b" " * (MAX_BODY_BYTES - len(body) + 1))["status"] == 413


@pytest.mark.requirement("toolcall-spec.requirement.ingest.repairs-with-warning")
def test_the_answer_with_warnings_is_valid_with_status_first() -> None:
    event = {**vectors()[0], "surprise": 1, "platform": "p" * 300}
    answer = ingest_batch({"events": [event]})
    assert next(iter(answer)) == "status"
    assert [w["message"].split(":")[0] for w in answer["warnings"]] == ["surprise", "platform"]
    assert validate(answer, "ingest-answer") == []


def test_an_over_long_identifier_is_still_rejected_as_in_yavio() -> None:
    event = {**vectors()[0], "session_id": "s" * 129}
    assert not yavio_accepts(event)
    assert ingest_batch({"events": [event]})["rejected"] == 1
