"""Building a run's event log: the OpenWOP v2 envelope and the payloads of the events a replay
emits (schemas/events/run-event.schema.json). The clock and the id source are injectable, so a run
with a fixed clock and fixed ids reproduces its log byte for byte."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_spec.clock import (
    Clock,
    format_timestamp,
)
from toolcall_spec.openwop_wire import (
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    EVENT_SCHEMA_VERSION,
    TOOL_CALLED,
    TOOL_RETURNED,
    vendor_code,
)
from toolcall_spec.typed import AgentToolCalled, AgentToolReturned, ErrorObject, RunEvent

__all__ = [
    "CALL_CANCELLED",
    "EVAL_COMPLETED",
    "EVAL_SCORED",
    "EVAL_STARTED",
    "FIXTURE_MISS",
    "INJECTED_FAILURE",
    "SCHEMA_VERSION",
    "TOOL_CALLED",
    "TOOL_FAILED",
    "TOOL_RAISED",
    "TOOL_RETURNED",
    "TRANSPORT",
    "ErrorCode",
    "EventLog",
    "args_hash",
    "tool_called_payload",
    "tool_returned_payload",
]


SCHEMA_VERSION = EVENT_SCHEMA_VERSION

TRANSPORT: Literal["native"] = "native"
"""How the reference host reaches its tools: in process, neither MCP nor HTTP."""


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """A vendor error code (``<org>.<code>``) and the short fixed message that goes with it. The
    message never carries the tool's payload (RFC 0245 §D)."""

    code: str
    message: str

    def error_object(self) -> ErrorObject:
        return {"code": self.code, "message": self.message}


TOOL_FAILED = ErrorCode(vendor_code("tool_failed"), "the tool reported an error")
"""A failed tool execution: a served ``isError: true`` entry, or a live result reporting one."""
FIXTURE_MISS = ErrorCode(vendor_code("fixture_miss"), "no fixture entry matches this call")
"""A call that matched no entry under ``onMiss: fail`` (or its deprecated spelling ``error``)."""
TOOL_RAISED = ErrorCode(vendor_code("tool_raised"), "the live tool raised an exception")
"""A live tool that raised instead of answering."""
INJECTED_FAILURE = ErrorCode(vendor_code("injected_failure"), "a failure injected by --inject")
"""A call ``serve-fixtures --inject`` answered with a tool error of its own, not the recording's."""
CALL_CANCELLED = ErrorCode(vendor_code("call_cancelled"), "the client cancelled the call")
"""A call the client gave up on before it was answered (its timeout, a cancel notification)."""


def args_hash(args: Any) -> str | None:
    """SHA-256 (hex) of the RFC 8785 canonical JSON of ``args``. An integer beyond IEEE double
    precision is canonicalized as the double it denotes, as any JCS implementation reads it;
    ``None`` only for a value JCS cannot express at all (e.g. nesting past the recursion limit)."""
    import rfc8785  # noqa: PLC0415  (imported on first use: `import toolcall_spec` stays light)

    try:
        canonical = rfc8785.dumps(args)
    except rfc8785.IntegerDomainError:
        try:
            canonical = rfc8785.dumps(_ints_as_doubles(args))
        except (rfc8785.CanonicalizationError, RecursionError, OverflowError):
            return None
    except (rfc8785.CanonicalizationError, RecursionError):
        return None
    return hashlib.sha256(canonical).hexdigest()


def _ints_as_doubles(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, dict, list)):
        return value
    if isinstance(value, int):
        return float(value) if abs(value) > 2**53 - 1 else value
    if isinstance(value, dict):
        return {key: _ints_as_doubles(item) for key, item in value.items()}
    return [_ints_as_doubles(item) for item in value]


class EventLog:
    """An append-only run event log: ``sequence`` from 0, ``eventId`` unique within the run."""

    def __init__(self, run_id: str, clock: Clock) -> None:
        self.run_id = run_id
        self.clock = clock
        self.events: list[RunEvent] = []
        self._opaque = run_id.partition("/")[2] or run_id

    def append(self, event_type: str, payload: Mapping[str, Any]) -> RunEvent:
        """Append one event; ``payload`` is one of the payload types of ``toolcall_spec.typed``
        (``RunStarted``, ``AgentToolCalled`` ...), or a vendor event's object."""
        sequence = len(self.events)
        event: RunEvent = {
            "eventId": f"{self._opaque}-{sequence:04d}",
            "runId": self.run_id,
            "schemaVersion": SCHEMA_VERSION,
            "sequence": sequence,
            "timestamp": format_timestamp(self.clock()),
            "type": event_type,
            "payload": dict(payload),
        }
        self.events.append(event)
        return event


def tool_called_payload(
    agent_id: str, tool: str, call_id: str, args: Any, *, hooks: bool
) -> AgentToolCalled:
    """``agent.tool-called``; with tool hooks (``toolHooks.prePostEvents``) it carries ``argsHash``
    and ``transport``."""
    payload: AgentToolCalled = {
        "agentId": agent_id,
        "toolName": tool,
        "callId": call_id,
        "inputs": args,
    }
    if hooks:
        digest = args_hash(args)
        if digest is not None:
            payload["argsHash"] = digest
        payload["transport"] = TRANSPORT
    return payload


def tool_returned_payload(
    agent_id: str,
    tool: str,
    call_id: str,
    *,
    error: ErrorObject | None,
    outcome: Any = None,
    hooks: bool,
    duration_ms: int,
) -> AgentToolReturned:
    """``agent.tool-returned``: ``error`` and no ``outcome`` for a failed call, ``outcome``
    otherwise; with tool hooks also ``status`` (``ok``/``error``) and ``durationMs``."""
    payload: AgentToolReturned = {"agentId": agent_id, "toolName": tool, "callId": call_id}
    if error is not None:
        payload["error"] = error.copy()
    else:
        payload["outcome"] = outcome
    if hooks:
        payload["status"] = "error" if error is not None else "ok"
        payload["durationMs"] = duration_ms
    return payload
