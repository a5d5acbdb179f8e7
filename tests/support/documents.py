"""One valid document of each kind, and variants of it with one member changed: the rows of the
table-driven tests (tests/schemas/test_models_strict.py, tests/schemas/test_validate_api.py)."""

from __future__ import annotations

import copy
from typing import Any

from toolcall_spec.catalog import Kind

UUID = "123e4567-e89b-12d3-a456-426614174000"
NOW = "2026-11-30T12:00:00Z"
TOOL_CALL: dict[str, Any] = {
    "event_id": UUID,
    "event_type": "tool_call",
    "trace_id": "trace-1",
    "session_id": "session-1",
    "timestamp": NOW,
    "source": "server",
    "status": "error",
    "error_category": "tool_error",
    "error_message": "the upstream API answered 503",
}
BASE: dict[Kind, dict[str, Any]] = {
    "suite": {
        "suiteId": "core.openwop.evals.billing",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "lookup",
                "input": {"calls": []},
                "expected": {"kind": "golden"},
                "fixtures": {
                    "toolResponses": [
                        {"tool": "billing:lookup", "isError": True, "response": {"code": 503}},
                        {"tool": "billing:lookup", "args": {"id": 1}, "argsMatch": "subset"},
                    ]
                },
            }
        ],
    },
    "capabilities": {
        "protocolVersions": ["2.0"],
        "preferredVersion": "2.0",
        "implementation": {"name": "reference-host"},
        "agents": {
            "status": "experimental",
            "since": "2.0",
            "until": "3.0",
            "witness": "claims-check",
            "evalSuite": {"modes": ["golden"], "fixtureErrors": True},
        },
        "toolHooks": {"status": "stable", "since": "2.0", "witness": "seam-gated"},
    },
    "run-event": {
        "eventId": "event-0000000000001",
        "runId": "tenant/run-000000000001",
        "schemaVersion": 1,
        "sequence": 3,
        "timestamp": NOW,
        "type": "agent.tool-returned",
        "payload": {
            "agentId": "core.conformance.agents.scripted",
            "toolName": "billing:lookup",
            "callId": "call-1",
            "error": {"code": "openwop.fixture_error", "message": "recorded tool error"},
            "status": "error",
            "durationMs": 0,
        },
    },
    "eval-summary": {
        "suiteId": "core.openwop.evals.billing",
        "suiteVersion": "1.0.0",
        "aggregateScore": 1,
        "passed": True,
        "taskCount": 1,
        "passedCount": 1,
        "fixtureMissCount": 0,
        "tasks": [{"taskId": "lookup", "score": 1.0, "passed": True, "fixtureMissCount": 0}],
    },
    "error-envelope": {
        "error": "validation_error",
        "message": "tasks[0].fixtures.toolResponses[0].isError needs fixtureErrors",
        "details": {"field": "tasks[0].fixtures.toolResponses[0].isError"},
    },
    "call-tool-result": {"content": [{"type": "text", "text": "503"}], "isError": True},
    "tool-call-event": TOOL_CALL,
    "ingest-batch": {"events": [TOOL_CALL], "sent_at": NOW},
    "ingest-answer": {
        "status": 207,
        "accepted": 1,
        "rejected": 1,
        "errors": [{"index": 1, "issues": ["error_category: not one of the categories"]}],
    },
}
"""One valid document per kind; every row below changes one thing in it."""

DROP = object()
"""As a value: remove the member instead of setting it."""


def variant(kind: Kind, *changes: tuple[tuple[str | int, ...], Any]) -> dict[str, Any]:
    """A copy of ``BASE[kind]`` with each ``(path, value)`` applied (``DROP`` removes)."""
    document = copy.deepcopy(BASE[kind])
    for path, value in changes:
        parent: Any = document
        for part in path[:-1]:
            parent = parent[part]
        if value is DROP:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
    return document


def numbered_event(number: int, **members: Any) -> dict[str, Any]:
    """A minimal valid ``tool_call`` event whose ``event_id`` carries ``number`` (so events in a
    stream stay apart), with ``members`` added or replaced; no ``status`` unless given."""
    return {
        "event_id": f"00000000-0000-4000-8000-{number:012d}",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": NOW,
        "source": "server",
        **members,
    }
