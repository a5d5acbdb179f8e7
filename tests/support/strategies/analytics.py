"""Analytics ``tool_call`` events, ingest batches and answers."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.values import (
    ERROR_CATEGORIES,
    Draw,
    _integers,
    _json_objects,
    _numbers,
    _obj,
    _text,
    timestamps,
    uuids,
)

# --- analytics ----------------------------------------------------------------------------------

_tool_call_base = _obj(
    {
        "event_id": uuids,
        "event_type": st.just("tool_call"),
        "trace_id": _text(1, 128),
        "session_id": _text(1, 128),
        "timestamp": timestamps,
        "source": st.sampled_from(["server", "widget"]),
    },
    {
        "event_name": _text(max_size=20),
        "metadata": _json_objects,
        "user_id": _text(),
        "platform": _text(),
        "sdk_version": _text(max_size=64),
        "workspace_id": _text(1),
        "project_id": _text(1),
        "ingested_at": timestamps,
        "latency_ms": _numbers(0),
        "is_retry": _integers(0, 1),
        "input_keys": _json_objects,
        "input_types": _json_objects,
        "input_values": _json_objects,
        "output_content": _json_objects,
        "intent_signals": _json_objects,
        "tokens_in": _integers(0),
        "tokens_out": _integers(0),
        "country_code": st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2),
        "locale": _text(max_size=35),
        "end_user_agent": _text(),
        "subject_id": _text(),
    },
)
_error_messages = _text(max_size=40) | st.just("m" * 500)


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

ingest_batches = _obj(
    {"events": st.lists(tool_call_events, min_size=1, max_size=2)},
    {"sdk_version": _text(max_size=64), "sent_at": timestamps},
)

ingest_answers = _obj(
    {
        "status": st.sampled_from([200, 207, 400, 413, 200.0, 413.0]),
        "accepted": _integers(0),
        "rejected": _integers(0),
        "errors": st.lists(
            _obj(
                {"index": _integers(0), "issues": st.lists(_text(1), min_size=1, max_size=2)},
                {"line": _integers(1)},
            ),
            max_size=2,
        ),
    },
    {
        "warnings": st.lists(_obj({"index": _integers(0), "message": _text(1)}), max_size=2),
        "error": _obj({"code": _text(1), "message": _text(1)}),
        "requestId": _text(1),
    },
)
