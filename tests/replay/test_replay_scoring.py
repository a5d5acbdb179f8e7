"""Golden scoring (exact, contains, json-match) and rubric tasks on a host without a judge."""

from __future__ import annotations

from typing import Any

import pytest
from support.replay import example

from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.openwop_wire import EVAL_COMPLETED, TASK_FAILED
from toolcall_spec.replay.scoring import json_mismatch, output_text, score_task

SEEN = [
    {"tool": "billing:lookup", "isError": True, "content": [{"type": "text", "text": "down"}]},
    {"tool": "billing:lookup", "isError": False, "content": [{"type": "text", "text": '{"n":1}'}]},
]


def golden(strategy: str, value: Any) -> dict[str, Any]:
    return {"kind": "golden", "match": {"strategy": strategy, "value": value}}


@pytest.mark.parametrize(
    ("strategy", "value", "passed"),
    [
        ("exact", SEEN, True),
        ("exact", [{**SEEN[0], "isError": 1}, SEEN[1]], False),
        ("exact", SEEN[:1], False),
        ("contains", "down", True),
        ("contains", '{"n":1}', True),
        ("contains", "upstream", False),
        ("contains", 1, False),
        ("json-match", [{"isError": True}, {"isError": False}], True),
        ("json-match", [{"isError": True}, {"tool": "billing:lookup"}], True),
        ("json-match", [{"isError": 1}, {}], False),
        ("json-match", [{"isError": True}], False),
        ("json-match", [{"missing": None}, {}], False),
        ("json-match", [{"content": [{"text": "down"}]}, {}], True),
        ("json-match", {"isError": True}, False),
        ("unknown", SEEN, False),
    ],
)
def test_golden_strategies(strategy: str, value: Any, passed: bool) -> None:
    score = score_task(golden(strategy, value), SEEN)
    assert score.passed is passed
    assert score.score == (1.0 if passed else 0.0)
    assert (score.reason is None) is passed


def test_json_match_names_where_it_fails() -> None:
    assert json_mismatch([{"isError": False}, {}], SEEN) == "[0].isError"
    assert json_mismatch({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2.0]}, "c": 0}) is None
    assert json_mismatch({"a": {"b": [1, 2]}}, {"a": {"b": [1, 3]}}) == "a.b[1]"
    assert json_mismatch(1, 1.0) is None
    assert json_mismatch(True, 1) == "(root)"


def test_output_text() -> None:
    assert output_text("plain") == "plain"
    assert output_text(SEEN).split("\n") == ["billing:lookup", "text", "down", "billing:lookup",
                                             "text", '{"n":1}']  # fmt: skip


def test_rubric_and_match_less_tasks_score_zero_with_a_reason() -> None:
    rubric = score_task({"kind": "rubric", "rubric": [{"criterion": "c", "weight": 1}]}, SEEN)
    assert (rubric.score, rubric.passed) == (0.0, False)
    assert rubric.reason is not None
    assert "rubric" in rubric.reason
    assert score_task({"kind": "golden"}, SEEN).passed is False


def test_scores_reach_the_log_and_the_summary() -> None:
    suite = example("suites/rfc0245-fail-then-succeed.json")
    task = suite["tasks"][0]
    wrong = {**task, "taskId": "wrong", "expected": golden("json-match", [{"isError": False}, {}])}
    rubric = {**task, "taskId": "rubric", "expected": {"kind": "rubric", "rubric": [
        {"criterion": "recovers", "weight": 1}]}}  # fmt: skip
    suite["tasks"] += [wrong, rubric]
    suite["thresholds"] = {"passScore": 0.3}
    host = ReferenceHost()
    run_id = host.create_run(suite)
    events = host.events(run_id)
    scored = [e["payload"] for e in events if e["type"] == "eval.scored"]
    assert [s["passed"] for s in scored] == [True, False, False]
    # eval.scored is closed: the reason goes in the vendor event that follows a failed task
    assert all(set(s) == {"taskId", "score", "passed"} for s in scored)
    failed = [e["payload"] for e in events if e["type"] == TASK_FAILED]
    assert [f["taskId"] for f in failed] == [scored[1]["taskId"], scored[2]["taskId"]]
    assert failed[0]["reason"] == "json-match: mismatch at [0].isError"
    summary = host.summary(run_id)
    assert summary["aggregateScore"] == pytest.approx(1 / 3)
    assert (summary["passed"], summary["passedCount"], summary["taskCount"]) == (True, 1, 3)
    completed = next(e["payload"] for e in events if e["type"] == EVAL_COMPLETED)
    assert completed == {k: summary[k] for k in ("aggregateScore", "passed", "taskCount",
                                                  "passedCount")}  # fmt: skip
    del suite["thresholds"]  # default: every task must pass
    assert host.summary(host.create_run(suite))["passed"] is False
