"""The judgments of ``toolcall-spec verify`` as properties over generated answers and tool lists
(``toolcall_spec.mcp.verify.judge_call`` and ``judge_contract``); the real servers are in
test_verify.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.strategies import Draw
from support.strategies.compat import generated_schemas
from support.strategies.mcp import call_tool_results
from support.strategies.secret_names import secret_values
from support.strategies.values import json_objects

from toolcall_spec.compat import compare, verdict
from toolcall_spec.json_values import json_equal
from toolcall_spec.mcp.secrets import redact_secrets
from toolcall_spec.mcp.verify import judge_call, judge_contract
from toolcall_spec.replay.promote import RecordedCall, fixture_entry
from toolcall_spec.rules import is_tool_error
from toolcall_spec.validation import validate

CALLS_JUDGED = pytest.mark.requirement("toolcall-spec.requirement.verify.calls-judged")
CONTRACT = pytest.mark.requirement("toolcall-spec.requirement.verify.contract-judged")

answers = st.one_of(
    call_tool_results.map(lambda result: RecordedCall.answered("t", {}, result)),
    json_objects.map(lambda error: RecordedCall.failed("t", {}, {"error": error})),
)
"""A call as ``record`` keeps it and as ``verify`` reads the live answer: a result, or a
JSON-RPC error (a failure whose content holds the error)."""


@CALLS_JUDGED
@given(answers, answers)
def test_a_call_is_judged_by_the_one_rule_then_by_its_content(
    recorded: RecordedCall, live: RecordedCall
) -> None:
    entry = fixture_entry(recorded)
    found = judge_call(entry, live)
    if is_tool_error(entry) != live.is_error:
        assert found == "isError flipped"
        return
    same_content = all(
        json_equal(
            redact_secrets(recorded.response.get(key, "absent")),
            redact_secrets(live.response.get(key, "absent")),
        )
        for key in ("content", "structuredContent")
    )
    assert found == ("same" if same_content else "content changed")


@CALLS_JUDGED
@given(st.sampled_from(["access_token", "apiKey", "password"]), secret_values(), secret_values())
def test_an_answer_that_differs_only_in_its_secrets_is_the_same(
    name: str, recorded_secret: str | int, live_secret: str | int
) -> None:
    """A live server issues a new token each time, and ``record`` keeps none: neither is a
    change. Anything else that differs still is."""

    def answer(secret: str | int, text: str) -> RecordedCall:
        result = {
            "content": [{"type": "text", "text": f"{text}: use Bearer {secret}x0000000"}],
            "structuredContent": {"session": {name: secret}},
        }
        return RecordedCall.answered("t", {}, result)

    recorded = fixture_entry(answer(recorded_secret, "signed in"))
    assert judge_call(recorded, answer(live_secret, "signed in")) == "same"
    assert judge_call(recorded, answer(live_secret, "signed out")) == "content changed"


@CALLS_JUDGED
@given(answers, json_objects)
def test_the_same_answer_is_the_same_whatever_its_meta(recorded: RecordedCall, meta: Any) -> None:
    live = copy.deepcopy(recorded.response)
    live["_meta"] = meta
    again = RecordedCall("t", {}, live, recorded.is_error)
    assert judge_call(fixture_entry(recorded), again) == "same"


@st.composite
def tool_lists(draw: Draw) -> list[dict[str, Any]]:
    names = draw(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=5))
    return [{"name": name, "inputSchema": draw(generated_schemas())} for name in names]


@CONTRACT
@settings(deadline=None)
@given(tool_lists(), tool_lists())
def test_the_contract_is_the_difference_of_the_lists_and_the_engines_verdicts(
    recorded: list[dict[str, Any]], live: list[dict[str, Any]]
) -> None:
    """Slow under load: each example runs the compatibility engine on up to five pairs of
    generated schemas."""
    report = judge_contract(recorded, live, "tasks[0].input.mcp.tools")
    before, now = [t["name"] for t in recorded], [t["name"] for t in live]
    assert report.removed == [name for name in before if name not in now]
    assert report.added == [name for name in now if name not in before]
    schemas = {(s.tool, s.path, s.verdict) for s in report.schemas}
    expected = set()
    for index, tool in enumerate(recorded):
        if tool["name"] in now:
            new = live[now.index(tool["name"])]["inputSchema"]
            changes = compare(tool["inputSchema"], new)
            if changes:
                level = "breaking" if verdict(changes) == "major" else "compatible"
                expected.add(
                    (tool["name"], f"tasks[0].input.mcp.tools[{index}].inputSchema", level)
                )
    assert schemas == expected
    breaking = report.removed or any(level == "breaking" for _, _, level in expected)
    assert report.verdict == (
        "breaking" if breaking else "changed" if report.added or expected else "same"
    )


@CONTRACT
@settings(deadline=None)
@given(tool_lists())
def test_an_unchanged_tool_list_is_the_same(recorded: list[dict[str, Any]]) -> None:
    """Slow under load: generated schemas are large to draw."""
    report = judge_contract(recorded, copy.deepcopy(recorded), "tasks[0].input.mcp.tools")
    assert report.verdict == "same"
    assert (report.removed, report.added, report.schemas) == ([], [], [])


@pytest.mark.parametrize(
    ("tools", "path", "words"),
    [
        ({"name": "a"}, "tasks[0].input.mcp.tools", "is not an array"),
        (["a"], "tasks[0].input.mcp.tools[0]", "is an object"),
        ([{"inputSchema": {}}], "tasks[0].input.mcp.tools[0].name", "non-empty name"),
        ([{"name": "a", "inputSchema": True}], "tasks[0].input.mcp.tools[0].inputSchema", "object"),
        (
            [{"name": "a", "inputSchema": {}}, {"name": "a", "inputSchema": {}}],
            "tasks[0].input.mcp.tools[1].name",
            "listed twice",
        ),
    ],
)
def test_a_malformed_recorded_tool_list_is_a_warning_with_its_path(
    tools: Any, path: str, words: str
) -> None:
    suite: dict[str, Any] = {
        "suiteId": "recorded.evals.x",
        "version": "1.0.0",
        "targetAgentId": "core.conformance.agents.scripted",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "t",
                "input": {"calls": [], "mcp": {"tools": tools}},
                "expected": {"kind": "golden", "match": {"strategy": "json-match", "value": []}},
            }
        ],
    }
    [problem] = validate(suite, "suite")
    assert (problem.path, problem.severity) == (path, "warning")
    assert words in problem.message
    good = [{"name": "a", "inputSchema": {"type": "object"}}]
    suite["tasks"][0]["input"]["mcp"]["tools"] = good
    assert validate(suite, "suite") == []
