"""Run events, eval summaries and error envelopes."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.ids import author_ids, event_ids, opaque_values, owners, run_ids
from support.strategies.suites import semvers
from support.strategies.values import (
    DIGITS,
    EVAL_MODES,
    LOWER,
    Draw,
    free_text,
    json_integers,
    json_numbers,
    json_objects,
    json_values,
    objects_of,
    pattern_words,
    timestamps,
)
from toolcall_spec.catalog import all_schemas

# --- run events ---------------------------------------------------------------------------------

error_objects = objects_of(
    {"code": free_text(1), "message": free_text(1)},
    {"details": json_objects, "retryable": st.booleans()},
)

_tool_called = objects_of(
    {"agentId": author_ids, "toolName": free_text(1), "callId": free_text(1)},
    {
        "inputs": json_values(),
        "argsHash": st.text("0123456789abcdef", min_size=64, max_size=64) | free_text(),
        "principal": free_text(),
        "transport": st.sampled_from(["mcp", "http", "native"]),
        "causationHostId": free_text(1),
    },
)

_tool_returned_base = objects_of(
    {"agentId": author_ids, "toolName": free_text(1), "callId": free_text(1)},
    {"causationHostId": free_text(1)},
)


@st.composite
def _tool_returned_payloads(draw: Draw) -> dict[str, Any]:
    payload = draw(_tool_returned_base)
    shape = draw(st.sampled_from(["success", "failure", "refusal", "bare"]))
    status: str | None = None
    if shape == "success":
        status = draw(st.sampled_from([None, "ok"]))
        if draw(st.booleans()):
            payload["outcome"] = draw(opaque_values)
    elif shape == "failure":
        status = draw(st.sampled_from([None, "error"]))
        payload["error"] = draw(error_objects)
    elif shape == "refusal":
        status = draw(st.sampled_from(["forbidden", "rate_limited"]))
        member = draw(st.sampled_from([None, "error", "outcome"]))
        if member == "error":
            payload["error"] = draw(error_objects)
        elif member == "outcome":
            payload["outcome"] = draw(json_values())
    if status is not None:
        payload["status"] = status
    if status not in ("forbidden", "rate_limited") and draw(st.booleans()):
        payload["durationMs"] = draw(json_integers(0))
    return payload


tool_returned_payloads = _tool_returned_payloads()
"""``agent.tool-returned`` payloads in each legal shape: a success (``outcome``), a failure
(``error``), a refusal (``forbidden``/``rate_limited``, no ``durationMs``), or neither."""

PAYLOADS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "run.started": objects_of(
        {"workflowId": author_ids},
        {
            "inputs": json_objects,
            "transport": st.sampled_from(["rest", "mcp", "a2a", "ui"]),
            "engineVersion": json_integers(0),
            "owner": owners,
            "tags": st.lists(free_text(), max_size=2),
            "metadata": json_objects,
        },
    ),
    "run.completed": objects_of({"outputs": json_objects}, {"durationMs": json_integers(0)}),
    "run.failed": objects_of(
        {"error": error_objects}, {"failedNodeId": author_ids, "durationMs": json_integers(0)}
    ),
    "agent.tool-called": _tool_called,
    "agent.tool-returned": tool_returned_payloads,
    "eval.started": objects_of(
        {
            "suiteId": free_text(1),
            "suiteVersion": free_text(1),
            "taskCount": json_integers(0),
            "modes": st.lists(st.sampled_from(EVAL_MODES), unique=True),
        },
        {
            "baselineRunId": run_ids,
            "fixtureRuns": st.dictionaries(
                pattern_words(LOWER + DIGITS, LOWER + DIGITS + "-"), run_ids, min_size=1, max_size=2
            ),
        },
    ),
    "eval.scored": objects_of(
        {"taskId": free_text(1), "score": json_numbers(0, 1), "passed": st.booleans()},
        {
            "costUsd": json_numbers(0),
            "latencyMs": json_integers(0),
            "schemaValid": st.booleans(),
            "safetyFindingCount": json_integers(0),
        },
    ),
    "eval.completed": objects_of(
        {
            "aggregateScore": json_numbers(0, 1),
            "passed": st.booleans(),
            "taskCount": json_integers(0),
            "passedCount": json_integers(0),
        },
        {"regressionVsBaseline": json_numbers(-1, 1)},
    ),
}
"""The payload strategy of each event type the run-event schema checks."""

_segment = st.builds(
    str.__add__, pattern_words(LOWER, LOWER + DIGITS, 5), st.sampled_from(["", "-x", "-a1", "-2"])
)
_RUN_EVENT = all_schemas()["events/run-event.schema.json"]
REGISTERED_EVENT_TYPES: tuple[str, ...] = tuple(_RUN_EVENT["$defs"]["RegisteredEventType"]["enum"])
REGISTERED_DOMAINS = frozenset(t.partition(".")[0] for t in REGISTERED_EVENT_TYPES)
_vendor_event_types = (
    st.lists(_segment, min_size=2, max_size=3)
    .filter(lambda parts: parts[0] != "openwop" and parts[0] not in REGISTERED_DOMAINS)
    .map(".".join)
)
_other_event_types = (
    st.sampled_from(REGISTERED_EVENT_TYPES).filter(lambda t: t not in PAYLOADS)
    | _vendor_event_types
    | st.just("toolcall-spec.eval.task-failed")
)

_envelopes = objects_of(
    {
        "eventId": event_ids,
        "runId": run_ids,
        "schemaVersion": json_integers(1),
        "sequence": json_integers(0),
        "timestamp": timestamps,
    },
    {"nodeId": author_ids, "engineVersion": json_integers(0), "causationId": event_ids},
)

_typed_payloads = st.one_of(
    *(st.tuples(st.just(name), payload) for name, payload in PAYLOADS.items()),
    st.tuples(_other_event_types, json_objects),
)


def _event(envelope: dict[str, Any], typed: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {**envelope, "type": typed[0], "payload": typed[1]}


run_events = st.builds(_event, _envelopes, _typed_payloads)


def events_of_type(
    event_type: str, payloads: st.SearchStrategy[dict[str, Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """Run events of one type whose payloads ``payloads`` draws (by default, the type's own)."""
    default = PAYLOADS.get(event_type, json_objects)
    typed = st.tuples(st.just(event_type), default if payloads is None else payloads)
    return st.builds(_event, _envelopes, typed)


# --- eval summary, error envelope ---------------------------------------------------------------

_suite_ids = st.builds(
    "{}.evals.{}".format,
    st.text(LOWER + DIGITS + ".-", min_size=1, max_size=10),
    st.text(LOWER + DIGITS + "-", min_size=1, max_size=10),
)
_task_ids = pattern_words(LOWER + DIGITS, LOWER + DIGITS + "-")
_MODEL_CLASSES = ("reasoning", "writing", "coding", "research", "classification", "general")

eval_summaries = objects_of(
    {
        "suiteId": _suite_ids,
        "suiteVersion": semvers,
        "aggregateScore": json_numbers(0, 1),
        "passed": st.booleans(),
        "taskCount": json_integers(0),
        "passedCount": json_integers(0),
        "tasks": st.lists(
            objects_of(
                {"taskId": _task_ids, "score": json_numbers(0, 1), "passed": st.booleans()},
                {
                    "costUsd": json_numbers(0),
                    "latencyMs": json_integers(0),
                    "schemaValid": st.booleans(),
                    "fixtureMissCount": json_integers(0),
                    "safetyFindings": st.lists(
                        objects_of(
                            {
                                "kind": free_text(1),
                                "severity": st.sampled_from(["low", "medium", "high", "critical"]),
                            }
                        ),
                        max_size=2,
                    ),
                },
            ),
            max_size=2,
        ),
    },
    {
        "evaluatedModelClass": st.sampled_from(_MODEL_CLASSES),
        "totalCostUsd": json_numbers(0),
        "fixtureMissCount": json_integers(0),
        "pinnedNodeIds": st.lists(author_ids, max_size=2, unique=True),
        "regression": objects_of(
            {"baselineRunId": run_ids, "scoreDelta": json_numbers(-1, 1)}, {"diffRef": free_text()}
        ),
    },
)

code_names = pattern_words(LOWER, LOWER + DIGITS + "_", 10)
_vendor_orgs = st.builds(
    str.__add__, pattern_words(LOWER, LOWER + DIGITS, 6), st.sampled_from(["", "-x", "-ab1"])
).filter(lambda org: org != "openwop")
_ERROR_ENVELOPE = all_schemas()["events/error-envelope.schema.json"]
REGISTERED_ERROR_CODES: tuple[str, ...] = tuple(
    _ERROR_ENVELOPE["$defs"]["RegisteredErrorCode"]["enum"]
)
_error_codes = st.sampled_from(REGISTERED_ERROR_CODES) | st.builds(
    "{}.{}".format, _vendor_orgs, code_names
)


def is_code_specific_details(details: dict[str, Any]) -> bool:
    """Details shaped like one of OpenWOP's code-specific details (see ErrorDetails)."""
    supported = details.get("supported")
    modes = ("values", "updates", "messages", "debug")
    if isinstance(supported, list) and supported and all(m in modes for m in supported):
        return True
    if isinstance(details.get("runStatus"), str):
        return True
    keys = details.get("keys")
    return (
        {"type", "keys"} <= details.keys() <= {"type", "keys", "eventId", "sequence"}
        and isinstance(details["type"], str)
        and isinstance(keys, list)
        and bool(keys)
        and all(isinstance(k, str) for k in keys)
    )


error_envelopes = objects_of(
    {"error": _error_codes, "message": free_text(1)},
    {
        "details": objects_of({}, {"field": free_text(1)}, open_values=json_values(1)).filter(
            lambda d: not is_code_specific_details(d)
        )
    },
)
