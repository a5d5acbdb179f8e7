"""Building complete, schema-valid analytics ``tool_call`` events.

``EventFactory`` holds what is the same for every event of a server (session, source, SDK
version, capture switches) and the injectable clock and id source, so tests can pin both.
Captured inputs and outputs are cut to ``MAX_CAPTURED_BYTES`` first (long strings cut at a
boundary that leaves no part of an address or number behind, the value marked ``"_truncated":
true``), then PII-stripped: a huge output is never stripped whole only to be thrown away. What is
still too large, or is not JSON, is replaced by ``{"_truncated": true}``, as ingest does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from toolcall_spec import __version__
from toolcall_spec.analytics.classify import Classification, ToolResult, wire_result
from toolcall_spec.analytics.pii import safe_cut, strip_pii_deep
from toolcall_spec.clock import Clock, IdSource, format_timestamp, new_uuid, utc_now
from toolcall_spec.json_values import json_type
from toolcall_spec.typed import ToolCallEvent

MAX_ID_LENGTH = 128
"""Longest ``trace_id`` and ``session_id`` the schema accepts."""
MAX_NAME_LENGTH = 256
"""Longest ``event_name`` (the tool name) the schema accepts."""
MAX_CAPTURED_BYTES = 16_384
"""Largest captured ``input_values`` or ``output_content`` kept, as JSON; larger is truncated."""
TRUNCATED: dict[str, Any] = {"_truncated": True}

Source = Literal["server", "widget"]


@dataclass(frozen=True)
class EventFactory:
    """Makes ``tool_call`` events for one server. Defaults: a new session id, source ``server``,
    inputs and outputs captured."""

    session_id: str = field(default_factory=new_uuid)
    source: Source = "server"
    sdk_version: str = __version__
    capture_input: bool = True
    capture_output: bool = True
    clock: Clock = utc_now
    new_id: IdSource = new_uuid

    def tool_call(
        self,
        tool_name: str,
        classification: Classification,
        *,
        latency_ms: float | None = None,
        arguments: Mapping[str, Any] | None = None,
        output: ToolResult | None = None,
        trace_id: str | None = None,
        session_id: str | None = None,
    ) -> ToolCallEvent:
        """A complete ``tool_call`` event. ``latency_ms`` is left out when the handler never ran;
        ``arguments`` and ``output`` are captured when the factory's switches allow; ``output``
        may be the wire mapping or a result model (see ``classify.wire_result``)."""
        event: ToolCallEvent = {
            "event_id": self.new_id(),
            "event_type": "tool_call",
            "trace_id": (trace_id or self.new_id())[:MAX_ID_LENGTH],
            "session_id": (session_id or self.session_id)[:MAX_ID_LENGTH],
            "timestamp": format_timestamp(self.clock()),
            "source": self.source,
            "event_name": tool_name[:MAX_NAME_LENGTH],
            "sdk_version": self.sdk_version,
        }
        if latency_ms is not None:
            event["latency_ms"] = round(max(latency_ms, 0.0), 3)
        event["status"] = classification.status
        if classification.error_category is not None:
            event["error_category"] = classification.error_category
        if classification.error_message is not None:
            event["error_message"] = classification.error_message
        event["is_retry"] = 0  # nothing detects retries yet; the member says so explicitly
        if self.capture_input and arguments is not None:
            keys = strip_pii_deep(list(arguments))
            assert isinstance(keys, list)
            event["input_keys"] = dict.fromkeys(keys, True)
            event["input_types"] = dict(zip(keys, map(json_type, arguments.values()), strict=True))
            event["input_values"] = captured(arguments)
        if self.capture_output and output is not None:
            event["output_content"] = captured(wire_result(output))
        return event


def captured(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` as an event carries it: cut to ``MAX_CAPTURED_BYTES``, then PII-stripped."""
    size = _json_size(value)
    if size is None:  # not JSON (a tool handed back an object orjson cannot write)
        return dict(TRUNCATED)
    if size > MAX_CAPTURED_BYTES:
        value = {**_cut_strings(value, _string_budget(value, size)), **TRUNCATED}
    stripped = strip_pii_deep(value)
    assert isinstance(stripped, dict)
    final = _json_size(stripped)
    return stripped if final is not None and final <= MAX_CAPTURED_BYTES else dict(TRUNCATED)


def _json_size(value: object) -> int | None:
    try:
        return len(orjson.dumps(value))
    except TypeError:
        return None


def _string_budget(value: Mapping[str, Any], size: int) -> int:
    """How many characters each string may keep so the cut value fits with room for tokens: the
    structure's own bytes stay, the strings share what is left."""
    strings = list(_strings(value))
    text_bytes = sum(len(s.encode("utf-8")) for s in strings)
    room = MAX_CAPTURED_BYTES // 2 - (size - text_bytes)
    return max(room // max(len(strings), 1), 0)


def _strings(value: object) -> Any:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _cut_strings(value: Any, budget: int) -> Any:
    if isinstance(value, str):
        return safe_cut(value, budget) if len(value) > budget else value
    if isinstance(value, Mapping):
        return {key: _cut_strings(item, budget) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut_strings(item, budget) for item in value]
    return value
