"""Analytics ``tool_call`` events, ingest batches and answers."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.values import (
    ERROR_CATEGORIES,
    Draw,
    free_text,
    json_integers,
    json_numbers,
    json_objects,
    objects_of,
    timestamps,
    uuids,
)

# --- analytics ----------------------------------------------------------------------------------

_tool_call_base = objects_of(
    {
        "event_id": uuids,
        "event_type": st.just("tool_call"),
        "trace_id": free_text(1, 128),
        "session_id": free_text(1, 128),
        "timestamp": timestamps,
        "source": st.sampled_from(["server", "widget"]),
    },
    {
        "event_name": free_text(max_size=20),
        "metadata": json_objects,
        "user_id": free_text(),
        "platform": free_text(),
        "sdk_version": free_text(max_size=64),
        "workspace_id": free_text(1),
        "project_id": free_text(1),
        "ingested_at": timestamps,
        "latency_ms": json_numbers(0),
        "is_retry": json_integers(0, 1),
        "input_keys": json_objects,
        "input_types": json_objects,
        "input_values": json_objects,
        "output_content": json_objects,
        "intent_signals": json_objects,
        "tokens_in": json_integers(0),
        "tokens_out": json_integers(0),
        "country_code": st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2),
        "locale": free_text(max_size=35),
        "end_user_agent": free_text(),
        "subject_id": free_text(),
    },
)
_error_messages = free_text(max_size=40) | st.just("m" * 500)


@st.composite
def _tool_call_events(draw: Draw) -> dict[str, Any]:
    event_doc = draw(_tool_call_base)
    status = draw(st.sampled_from([None, "success", "error"]))
    if status is not None:
        event_doc["status"] = status
    if status == "error":
        event_doc["error_category"] = draw(st.sampled_from(ERROR_CATEGORIES))
        if draw(st.booleans()):
            event_doc["error_message"] = draw(_error_messages)
    return event_doc


tool_call_events = _tool_call_events()
"""Analytics ``tool_call`` events: no status, a success, or an error that names a category (and
maybe a message of up to 500 characters, the limit itself included)."""

ingest_batches = objects_of(
    {"events": st.lists(tool_call_events, min_size=1, max_size=2)},
    {"sdk_version": free_text(max_size=64), "sent_at": timestamps},
)

ingest_answers = objects_of(
    {
        "status": st.sampled_from([200, 207, 400, 413, 200.0, 413.0]),
        "accepted": json_integers(0),
        "rejected": json_integers(0),
        "errors": st.lists(
            objects_of(
                {
                    "index": json_integers(0),
                    "issues": st.lists(free_text(1), min_size=1, max_size=2),
                },
                {"line": json_integers(1)},
            ),
            max_size=2,
        ),
    },
    {
        "warnings": st.lists(
            objects_of({"index": json_integers(0), "message": free_text(1)}), max_size=2
        ),
        "envelopeWarnings": st.lists(free_text(1), max_size=2),
        "error": objects_of({"code": free_text(1), "message": free_text(1)}),
        "requestId": free_text(1),
    },
)
