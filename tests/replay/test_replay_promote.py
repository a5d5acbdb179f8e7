"""Record -> replay: promoting a recorded run's event log into a suite, and bad logs."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from support.replay import (
    RUN_LOG_EXAMPLE,
    example,
    oracle_errors,
    record_example_run_log,
    tool_pairs,
)
from support.repo import EXAMPLES

from toolcall_spec.host import ReferenceHost
from toolcall_spec.replay.promote import promote, promote_jsonl
from toolcall_spec.typed import RunEvent

RFC_SUITE = "suites/rfc0245-fail-then-succeed.json"
AGENT = "acme.agents.support"


def recorded() -> list[RunEvent]:
    host = ReferenceHost(tenant="acme")
    return host.events(host.create_run(example(RFC_SUITE)))


def event(sequence: int, kind: str, **payload: Any) -> dict[str, Any]:
    return {
        "eventId": f"event-{sequence:010d}",
        "runId": "prod/Run_42_0000000000",
        "schemaVersion": 1,
        "sequence": sequence,
        "timestamp": "2026-11-30T12:00:00Z",
        "type": kind,
        "payload": payload,
    }


def called(sequence: int, call_id: str, tool: str = "crm:find", **extra: Any) -> dict[str, Any]:
    return event(
        sequence, "agent.tool-called", agentId=AGENT, toolName=tool, callId=call_id, **extra
    )


def returned(sequence: int, call_id: str, tool: str = "crm:find", **extra: Any) -> dict[str, Any]:
    return event(
        sequence, "agent.tool-returned", agentId=AGENT, toolName=tool, callId=call_id, **extra
    )


@pytest.mark.requirement("toolcall-spec.requirement.promote.reproduces-run")
def test_the_rfc0245_run_promotes_and_replays() -> None:
    log = recorded()
    promotion = promote(log)
    assert promotion.problems == []
    suite = promotion.suite
    assert suite is not None
    assert oracle_errors("suite", suite) == []
    task = suite["tasks"][0]
    assert task["taskId"] == "lookup-recovers"
    failed, succeeded = task["fixtures"]["toolResponses"]
    assert failed["isError"] is True
    assert failed["args"] == {"id": "c-1"}
    assert failed["argsMatch"] == "exact"
    error = next(tool_pairs(log))[1]["error"]
    assert json.loads(failed["response"]["content"][0]["text"]) == error
    assert "isError" not in succeeded
    assert succeeded["response"] == list(tool_pairs(log))[1][1]["outcome"]
    assert task["input"] == {"calls": [{"tool": "billing:lookup", "args": {"id": "c-1"}}] * 2}
    host = ReferenceHost()
    run_id = host.create_run(suite)
    assert host.summary(run_id)["passed"] is True
    assert [s["isError"] for s in host.agent_output(run_id)["lookup-recovers"]] == [True, False]


def test_a_foreign_log_without_eval_events() -> None:
    log = [
        called(1, "a", inputs={"q": "x"}),
        called(2, "b", tool="billing:lookup"),
        returned(3, "b", tool="billing:lookup", error={"code": "acme.down", "message": "down"}),
        returned(4, "a", outcome={"content": [{"type": "text", "text": "found"}]}),
        event(5, "acme.audit-note", note="ignored"),
    ]
    promotion = promote(reversed(log))  # sorted by sequence, whatever the order given
    assert promotion.problems == []
    suite = promotion.suite
    assert suite is not None
    assert suite["suiteId"] == "recorded.evals.run-42-0000000000"
    (task,) = suite["tasks"]
    assert task["taskId"] == "recorded"
    assert [e["tool"] for e in task["fixtures"]["toolResponses"]] == ["crm:find", "billing:lookup"]
    lookup = task["fixtures"]["toolResponses"][1]
    assert "args" not in lookup  # the call recorded no inputs: the entry matches any call
    assert task["input"]["calls"][1] == {"tool": "billing:lookup", "args": {}}
    host = ReferenceHost()
    run_id = host.create_run(suite)
    assert [s["isError"] for s in host.agent_output(run_id)["recorded"]] == [False, True]


def test_calls_after_the_last_score_form_one_more_task() -> None:
    log = [
        called(0, "a"),
        returned(1, "a", outcome=1),
        event(2, "eval.scored", taskId="First Task!", score=1, passed=True),
        called(3, "b"),
        returned(4, "b", outcome=2),
    ]
    suite = promote(log).suite
    assert suite is not None
    assert [t["taskId"] for t in suite["tasks"]] == ["first-task", "recorded"]


def test_inputs_that_are_not_an_object_are_a_warning() -> None:
    promotion = promote([called(0, "a", inputs=[1, 2]), returned(1, "a", outcome=None)])
    assert promotion.suite is not None
    assert [(p.path, p.severity) for p in promotion.problems] == [("[0].payload.inputs", "warning")]


@pytest.mark.parametrize(
    ("log", "paths"),
    [
        ([called(0, "a")], ["[0].payload.callId"]),
        (
            [called(0, "a"), returned(1, "b", outcome=1)],
            ["[1].payload.callId", "[0].payload.callId"],
        ),
        ([returned(0, "a", outcome=1)], ["[0].payload.callId"]),
        (
            [called(0, "a"), returned(1, "a", tool="other:tool", outcome=1)],
            ["[1].payload.toolName"],
        ),
        ([called(0, "a"), returned(1, "a")], ["[1].payload"]),
        ([called(0, "a"), called(1, "a")], ["[1].payload.callId", "[0].payload.callId"]),
        (
            [{**called(0, "a"), "runId": "prod/other-0000000000000"}, returned(1, "a", outcome=1)],
            ["[1].runId", "[0].payload.callId"],
        ),  # the other run's return is not this call's
        (
            [called(0, "a"), {**returned(0, "a", outcome=1), "eventId": "x" * 16}],
            ["[1].sequence", "[0].payload.callId"],
        ),
        (
            [called(0, "a"), returned(1, "a", outcome=1, error={"code": "c", "message": "m"})],
            ["[1].payload"],
        ),
        ([called(0, "a"), returned(1, "a", error={"code": "c"})], ["[1].payload.error"]),
        ([{"not": "an event"}], ["[0]"]),
        ([], ["(root)"]),
        (
            [
                event(
                    0, "eval.started", suiteId="s", suiteVersion="1", taskCount=0, modes=["golden"]
                )
            ],
            ["(root)"],
        ),
    ],
)
def test_bad_logs_get_problems_with_paths(log: list[Any], paths: list[str]) -> None:
    promotion = promote(log)
    assert promotion.suite is None
    assert not promotion.ok
    found = [p.path for p in promotion.problems if p.severity == "error"]
    assert list(dict.fromkeys(found)) == paths


def test_jsonl_problems_name_line_numbers() -> None:
    lines = [
        json.dumps(called(0, "a")),
        "",
        "{broken",
        json.dumps(returned(1, "a", outcome=1)),
        json.dumps({**called(2, "b"), "timestamp": "yesterday"}),
        json.dumps(called(3, "c")),
    ]
    promotion = promote_jsonl(io.BytesIO("\n".join(lines).encode()))
    assert promotion.suite is None
    paths = [p.path for p in promotion.problems]
    assert paths[0] == "line 3"
    assert "line 5: timestamp" in paths
    assert "line 6: payload.callId" in paths
    assert all("line 1" not in p and "line 4" not in p for p in paths)


def test_jsonl_roundtrip() -> None:
    text = "".join(json.dumps(e) + "\n" for e in recorded())
    from_jsonl = promote_jsonl(io.BytesIO(text.encode())).suite
    from_events = promote(recorded()).suite
    assert from_jsonl is not None
    assert from_events is not None
    assert from_jsonl == from_events | {"suiteId": from_jsonl["suiteId"]}


def test_the_example_run_log_is_a_fresh_recording_and_promotes() -> None:
    text = (EXAMPLES / RUN_LOG_EXAMPLE).read_text()
    assert text == record_example_run_log()
    with (EXAMPLES / RUN_LOG_EXAMPLE).open("rb") as handle:
        promotion = promote_jsonl(handle)
    assert promotion.problems == []
    assert promotion.suite is not None
    assert promotion.suite["suiteId"] == "recorded.evals.run-000000000001"
