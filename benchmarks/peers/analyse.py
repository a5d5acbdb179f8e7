"""What a peer recorded, call by call: turns the raw records of one run (spans, events, Sentry
envelopes) into observations, matches each to its probe call by the tool name it mentions, and
summarises per error class what the call became.

An observation is one thing a peer recorded that mentions exactly one probe tool: a span, an
event, a Sentry span or error event. It "records an error" when:

- a span: its status is ERROR or it has ``error.type`` (the OpenTelemetry conventions' two marks);
- a ``toolcall_spec`` event: ``status`` is ``error``;
- an AgentCat event: ``is_error`` is true;
- Sentry: a span whose status is not ``ok``, or an error event (level ``error`` or ``fatal``).

Its label says what the call became: the ``error.type`` (or the package's ``error_category``, or
Sentry's span status / event kind), ``ERROR without error.type``, or ``success`` when nothing marks
it as an error.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.peers.probe import CALLS, CLASSES, EMAIL, RAISED, SUCCESS

SUCCESS_LABEL = "success"
FINER_CATEGORIES = ("toolcall_spec.error_category", "mcp.failure.category")
"""Span attributes in which a peer (this package, opentel-mcp) says more than ``error.type``."""
EXCEPTION_WORDS = ("mail server refused", "declined for", "unreachable", "may not export")
"""Words only the four raised exceptions' own messages contain (never the framework's wrapper)."""


@dataclass
class Observation:
    tool: str
    error: bool
    label: str
    messages: list[str] = field(default_factory=list)
    source: str = ""
    """Who recorded it: a span's instrumentation scope (``mcp-python-sdk``, ``fastmcp``, the
    peer's own), or the kind of record (``toolcall_spec event``, ``sentry``, ``agentcat``)."""


def mentioned_tools(text: str) -> set[str]:
    return {call.tool for call in CALLS if re.search(rf"\b{re.escape(call.tool)}\b", text)}


def _single_tool(*parts: Any) -> str | None:
    tools = mentioned_tools(json.dumps(parts, default=repr, ensure_ascii=False))
    return tools.pop() if len(tools) == 1 else None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# --- one reader per record kind -----------------------------------------------------------------


def _from_span(record: Mapping[str, Any]) -> Iterator[Observation]:
    attributes = record.get("attributes") or {}
    tool = _single_tool(record.get("name"), attributes)
    if tool is None:
        return
    error_type = attributes.get("error.type")
    failed = record.get("status") == "ERROR" or error_type is not None
    label = SUCCESS_LABEL
    if error_type is not None:
        label = str(error_type)
    elif failed:
        label = "ERROR without error.type"
    finer = next((attributes[key] for key in FINER_CATEGORIES if key in attributes), None)
    if failed and finer is not None:
        label = f"{label} ({finer})"
    messages = [record["description"]] if record.get("description") else []
    for event in record.get("events") or []:
        event_attributes = event.get("attributes") or {}
        messages.extend(_strings(event_attributes.get("exception.message")))
    messages.extend(
        str(value)
        for key, value in attributes.items()
        if "error" in key or "exception" in key or "failure" in key
    )
    yield Observation(tool, failed, label, messages, str(record.get("scope")))


def _from_toolcall_event(record: Mapping[str, Any]) -> Iterator[Observation]:
    event = record.get("event") or {}
    tool = event.get("event_name")
    if tool not in {call.tool for call in CALLS}:
        return
    failed = event.get("status") == "error"
    label = str(event.get("error_category")) if failed else SUCCESS_LABEL
    message = event.get("error_message")
    messages = [message] if isinstance(message, str) else []
    yield Observation(str(tool), failed, label, messages, "toolcall_spec event")


def _from_agentcat(record: Mapping[str, Any]) -> Iterator[Observation]:
    event = record.get("event") or {}
    tool = event.get("resource_name")
    if tool not in {call.tool for call in CALLS}:
        tool = _single_tool(event.get("parameters"), event.get("resource_name"))
    if tool is None:
        return
    failed = event.get("is_error") is True
    error: Mapping[str, Any] = event["error"] if isinstance(event.get("error"), Mapping) else {}
    label = str(error.get("type") or "is_error") if failed else SUCCESS_LABEL
    yield Observation(
        str(tool), failed, label, list(_strings(error.get("message"))), "agentcat event"
    )


def _from_sentry(record: Mapping[str, Any]) -> Iterator[Observation]:
    payload = record.get("payload")
    if not isinstance(payload, Mapping):
        return
    if record.get("type") == "transaction":
        spans = [
            {
                "description": payload.get("transaction"),
                "status": (payload.get("contexts") or {}).get("trace", {}).get("status"),
                "data": (payload.get("contexts") or {}).get("trace", {}).get("data"),
            },
            *(payload.get("spans") or []),
        ]
        for span in spans:
            tool = _single_tool(span.get("description"), span.get("data"))
            if tool is None:
                continue
            status = span.get("status") or "ok"
            failed = status != "ok"
            label = f"span {status}" if failed else SUCCESS_LABEL
            yield Observation(tool, failed, label, [], "sentry transaction")
        return
    if record.get("type") == "event":
        level = payload.get("level")
        exceptions = (payload.get("exception") or {}).get("values") or []
        described = [[value.get("type"), value.get("value")] for value in exceptions]
        # Not the stack frames: their source lines mention other tools of the probe.
        tool = _single_tool(
            payload.get("transaction"), payload.get("logentry"), payload.get("message"), described
        )
        if tool is None:
            return
        mechanism = (exceptions[-1].get("mechanism") or {}).get("type") if exceptions else None
        label = f"{mechanism} event" if mechanism else f"{level} message event"
        messages = list(_strings([described, payload.get("logentry"), payload.get("message")]))
        yield Observation(tool, level in ("error", "fatal"), label, messages, "sentry event")


READERS = {
    "span": _from_span,
    "toolcall_event": _from_toolcall_event,
    "agentcat": _from_agentcat,
    "sentry": _from_sentry,
}


def observations(records: Sequence[Mapping[str, Any]]) -> list[Observation]:
    found: list[Observation] = []
    for record in records:
        reader = READERS.get(str(record.get("kind")))
        if reader is not None:
            found.extend(reader(record))
    return found


# --- the summary of one run ---------------------------------------------------------------------


def call_verdicts(found: list[Observation]) -> dict[str, dict[str, Any]]:
    """Per probe tool: seen at all, error recorded, the labels of its error observations (or
    ``success``), and the error messages recorded for it."""
    verdicts: dict[str, dict[str, Any]] = {}
    for call in CALLS:
        mine = [item for item in found if item.tool == call.tool]
        errors = [item for item in mine if item.error]
        labels = sorted({item.label for item in errors}) or (
            [SUCCESS_LABEL] if mine else ["not seen"]
        )
        verdicts[call.tool] = {
            "kind": call.kind,
            "seen": bool(mine),
            "error": bool(errors),
            "became": " + ".join(labels),
            # Each distinct message once (a span and its exception event often repeat it).
            "messages": list(dict.fromkeys(m for item in errors for m in item.messages)),
        }
    return verdicts


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    found = observations(records)
    verdicts = call_verdicts(found)
    per_class: dict[str, dict[str, Any]] = {}
    for kind in CLASSES:
        mine = [verdict for verdict in verdicts.values() if verdict["kind"] == kind]
        per_class[kind] = {
            "calls": len(mine),
            "recorded_as_error": sum(verdict["error"] for verdict in mine),
            "became": dict(Counter(verdict["became"] for verdict in mine)),
        }
    error_messages = [
        message
        for verdict in verdicts.values()
        if verdict["kind"] != SUCCESS
        for message in verdict["messages"]
    ]
    raised = [verdict for verdict in verdicts.values() if verdict["kind"] == RAISED]
    return {
        "recorded_by": dict(Counter(item.source for item in found)),
        "calls_seen": sum(verdict["seen"] for verdict in verdicts.values()),
        "errors_recorded": sum(
            verdict["error"] for verdict in verdicts.values() if verdict["kind"] != SUCCESS
        ),
        "successes_recorded_as_errors": per_class[SUCCESS]["recorded_as_error"],
        "per_class": per_class,
        "raised_with_own_message": sum(
            any(word in message for message in verdict["messages"] for word in EXCEPTION_WORDS)
            for verdict in raised
        ),
        "pii_in_error_messages": any(EMAIL in message for message in error_messages),
        "pii_anywhere_recorded": any(
            EMAIL in json.dumps(record, default=repr, ensure_ascii=False) for record in records
        ),
        "calls": verdicts,
    }
