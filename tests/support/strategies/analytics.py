"""Analytics ``tool_call`` events (valid ones, cheap ones for batch properties, ones with one
planted defect), ingest batches and ingest answers."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from support.strategies.values import (
    ERROR_CATEGORIES,
    Draw,
    free_text,
    json_integers,
    json_numbers,
    json_values,
    member_names,
    objects_of,
    text_chars,
    timestamps,
    uuids,
)
from toolcall_spec.catalog import load_schema

# --- valid tool_call events ---------------------------------------------------------------------

# A string at its bound repeats one of these: 1, 2 and 4 UTF-8 bytes, the last 2 UTF-16 units (a
# bound counts code points). ``None``, two draws in three and first so that shrinking ends there:
# short text.
_AT_BOUND_CHARS = st.sampled_from((None,) * 6 + ("m", "\u00e9", "\U0001f600"))


@cache
def _up_to(max_size: int, min_size: int = 0, short: int = 12) -> st.SearchStrategy[str]:
    """Short free text or, one draw in three, a string of exactly ``max_size`` characters (the
    schema's ``maxLength``)."""

    def pick(drawn: tuple[str, str | None]) -> str:
        text, char = drawn
        return text if char is None else char * max_size

    return st.tuples(free_text(min_size, short), _AT_BOUND_CHARS).map(pick)


# Open objects: member names of any text too (quotes, backslashes, colons: what a reader of the
# raw bytes must step over).
_open_objects = st.dictionaries(
    member_names | st.text(text_chars, max_size=8), json_values(1), max_size=2
)

# Up to the schema's maximum (2^63 - 1: what the stores' 64-bit columns hold).
_token_counts = json_integers(
    0, load_schema("tool-call-event")["properties"]["tokens_in"]["maximum"]
)

_tool_call_base = objects_of(
    {
        "event_id": uuids,
        "event_type": st.just("tool_call"),
        "trace_id": _up_to(128, 1),
        "session_id": _up_to(128, 1),
        "timestamp": timestamps,
        "source": st.sampled_from(["server", "widget"]),
    },
    {
        "event_name": _up_to(256),
        "metadata": _open_objects,
        "user_id": _up_to(256),
        "platform": _up_to(256),
        "sdk_version": _up_to(64),
        "workspace_id": free_text(1),
        "project_id": free_text(1),
        "ingested_at": timestamps,
        "latency_ms": json_numbers(0),
        "is_retry": json_integers(0, 1),
        "input_keys": _open_objects,
        "input_types": _open_objects,
        "input_values": _open_objects,
        "output_content": _open_objects,
        "intent_signals": _open_objects,
        "tokens_in": _token_counts,
        "tokens_out": _token_counts,
        "country_code": st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2),
        "locale": _up_to(35),
        "end_user_agent": _up_to(512),
        "subject_id": _up_to(256),
    },
)
_small_base = objects_of(
    {
        "event_id": uuids,
        "event_type": st.just("tool_call"),
        "trace_id": st.just("tr_1"),
        "session_id": st.just("ses_1"),
        "timestamp": st.just("2026-11-30T12:00:00Z"),
        "source": st.just("server"),
    }
)
_error_messages = _up_to(500, short=40)


@st.composite
def _with_outcome(
    draw: Draw, base: st.SearchStrategy[dict[str, Any]], statuses: st.SearchStrategy[str | None]
) -> dict[str, Any]:
    """An event of ``base`` with a status of ``statuses`` (``None``: none); an error names a
    category and maybe a message."""
    event_doc = draw(base)
    status = draw(statuses)
    if status is not None:
        event_doc["status"] = status
    if status == "error":
        event_doc["error_category"] = draw(st.sampled_from(ERROR_CATEGORIES))
        if draw(st.booleans()):
            event_doc["error_message"] = draw(_error_messages)
    return event_doc


tool_call_events = _with_outcome(_tool_call_base, st.sampled_from([None, "success", "error"]))
"""Valid analytics ``tool_call`` events: any subset of the optional members, strings short or at
their ``maxLength`` exactly (in 1-, 2- and 4-byte characters), integral floats for integers; no
status, a success, or an error that names a category (and maybe a message of up to 500
characters, the limit itself included)."""

small_events = _with_outcome(_small_base, st.sampled_from(["success", "error"]))
"""Valid events with a status and few random members: cheap to draw in numbers, for properties
about batches rather than about the members of one event."""

# --- events with one planted defect -------------------------------------------------------------

# Each defect makes a valid event invalid, whatever else the event holds, and ingest rejects it.
DEFECTS: dict[str, Any] = {
    "unknown category": lambda e: {**e, "status": "error", "error_category": "exploded"},
    "is_retry as a string": lambda e: {**e, "is_retry": "true"},
    "status as a boolean": lambda e: {**e, "status": True},
    "hyphen-less event_id": lambda e: {**e, "event_id": e["event_id"].replace("-", "")},
    "timestamp without a zone": lambda e: {**e, "timestamp": e["timestamp"][:19]},
    "a day February lacks": lambda e: {**e, "timestamp": "2026-02-30T12:00:00Z"},
    "no event_id": lambda e: {k: v for k, v in e.items() if k != "event_id"},
    "negative latency": lambda e: {**e, "latency_ms": -1},
    "trace_id over 128": lambda e: {**e, "trace_id": "t" * 129},
    "not an object": lambda e: [e],
    "error members without a status": lambda e: {
        **{k: v for k, v in e.items() if k != "status"},
        "error_category": "tool_error",
    },
}

# Each of these makes a valid event schema-invalid the way an older SDK does; ingest repairs it,
# accepts it and warns, naming the member (the value: how the warning starts).
REPAIRABLE: dict[str, tuple[Any, str]] = {
    "category on success": (
        lambda e: {**e, "status": "success", "error_category": "tool_error"},
        "error_category: ",
    ),
    "error without category": (
        lambda e: {
            **{k: v for k, v in e.items() if k not in ("error_category", "error_message")},
            "status": "error",
        },
        "error_category: ",
    ),
    "unknown member": (lambda e: {**e, "surprise": 1}, "surprise: "),
    "message over 500": (
        lambda e: {
            **e,
            "status": "error",
            "error_category": "unknown",
            "error_message": "x" * 501,
        },
        "error_message: ",
    ),
}
SCHEMA_DEFECTS: dict[str, Any] = {
    **DEFECTS,
    **{name: repair[0] for name, repair in REPAIRABLE.items()},
}
"""Every defect that makes an event break the schema, repairable or not."""

_DEFECT_NAMES = st.sampled_from(sorted(DEFECTS))
_SCHEMA_DEFECT_NAMES = st.sampled_from(sorted(SCHEMA_DEFECTS))
_REPAIRABLE_NAMES = st.sampled_from(sorted(REPAIRABLE))


@st.composite
def defective_events(
    draw: Draw,
    valid: st.SearchStrategy[dict[str, Any]] = tool_call_events,
    *,
    repairable_too: bool = False,
) -> tuple[Any, str]:
    """``(event, defect name)``: a ``valid`` event with one defect that makes it invalid (one
    ingest rejects; with ``repairable_too``, also one ingest repairs)."""
    name = draw(_SCHEMA_DEFECT_NAMES if repairable_too else _DEFECT_NAMES)
    return SCHEMA_DEFECTS[name](draw(valid)), name


@st.composite
def repairable_events(
    draw: Draw, valid: st.SearchStrategy[dict[str, Any]] = tool_call_events
) -> tuple[dict[str, Any], str]:
    """``(event, warning start)``: a ``valid`` event with one defect ingest repairs."""
    defect, warning = REPAIRABLE[draw(_REPAIRABLE_NAMES)]
    return defect(draw(valid)), warning


# --- ingest batches and answers -----------------------------------------------------------------

ingest_batches = objects_of(
    {"events": st.lists(tool_call_events, min_size=1, max_size=2)},
    {"sdk_version": _up_to(64), "sent_at": timestamps},
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
