"""The in-process reference host: RFC 0245 §B on the wire and as the agent sees it, misses,
live tools, live-shadow, recorded logs, summaries, and advertising exactly what it implements."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from support.replay import (
    RFC0251_0252,
    VENDOR_CODE,
    advertising,
    example,
    oracle_errors,
    tool_pairs,
)

from toolcall_spec import validate
from toolcall_spec.host import ReferenceHost, RunRefused, UnknownRunError
from toolcall_spec.host.fixtures import FIXTURE_FILES
from toolcall_spec.host.inputs import InvalidHostInputError
from toolcall_spec.host.reference import InvalidCapabilitiesError, LiveTool, default_capabilities
from toolcall_spec.replay import SCRIPTED_AGENT_ID

RFC_SUITE = "suites/rfc0245-fail-then-succeed.json"
LOOKUP = "billing:lookup"


@dataclass(eq=False)
class CountingTool:
    """A live tool that always gives ``answer`` and keeps the arguments of every call."""

    answer: Any
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, args: dict[str, Any]) -> Any:
        self.calls.append(args)
        return self.answer


def one_task(entries: list[dict[str, Any]], calls: list[dict[str, Any]], **fixtures: Any) -> Any:
    suite = example(RFC_SUITE)
    task = suite["tasks"][0]
    task["input"] = {"calls": calls}
    task["fixtures"] = {"toolResponses": entries, **fixtures}
    return suite


@pytest.mark.requirement("openwop.requirement.0245.fixture-error-replayed")
def test_rfc0245_positive_example() -> None:
    live = CountingTool({"content": []})
    host = ReferenceHost(live_tools={LOOKUP: live})
    run_id = host.create_run(example(RFC_SUITE))
    events = host.events(run_id)
    called = [e for e in events if e["type"] == "agent.tool-called"]
    returned = [e["payload"] for e in events if e["type"] == "agent.tool-returned"]
    assert len(called) == 2
    assert len(returned) == 2
    failed, succeeded = returned
    assert "outcome" not in failed
    assert failed["status"] == "error"
    assert failed["error"]["code"]
    assert failed["error"]["message"]
    assert re.match(VENDOR_CODE, failed["error"]["code"])
    assert "error" not in succeeded
    assert succeeded["status"] == "ok"
    assert succeeded["outcome"] == {
        "content": [{"type": "text", "text": '{"id":"c-1","balance":42}'}]
    }
    summary = host.summary(run_id)
    assert summary["fixtureMissCount"] == 0
    assert summary["tasks"][0]["fixtureMissCount"] == 0
    assert summary["passed"] is True
    seen = host.agent_output(run_id)["lookup-recovers"]
    assert [s["isError"] for s in seen] == [True, False]
    assert live.calls == []
    assert host.live_invocations() == {}
    assert oracle_errors("eval-summary", summary) == []


def test_the_summary_matches_the_example_summary() -> None:
    host = ReferenceHost()
    assert host.summary(host.create_run(example(RFC_SUITE))) == example("events/eval-summary.json")


def test_the_conformance_fixture_is_the_listed_one() -> None:
    host = ReferenceHost()
    assert set(FIXTURE_FILES) == set(host.capabilities["fixtures"])
    run_id = host.create_run(host.fixture_suite("conformance-eval-fixture-error"))
    assert [s["isError"] for s in next(iter(host.agent_output(run_id).values()))] == [True, False]
    with pytest.raises(KeyError):
        host.fixture_suite("nope")


@pytest.mark.requirement("toolcall-spec.requirement.replay.agent-receives-tool-error")
def test_the_agent_receives_the_recorded_payload_as_a_tool_error() -> None:
    mcp = {"content": [{"type": "text", "text": "upstream_down"}]}
    suite = one_task(
        [
            {"tool": LOOKUP, "isError": True, "response": mcp},
            {"tool": LOOKUP, "isError": True, "response": {"error": "rate_limited"}},
            {"tool": LOOKUP, "isError": True},
            {"tool": LOOKUP, "response": "plain"},
        ],
        [{"tool": LOOKUP}] * 4,
    )
    host = ReferenceHost()
    seen = host.agent_output(host.create_run(suite))["lookup-recovers"]
    assert seen[0] == {"tool": LOOKUP, "isError": True, "content": mcp["content"]}
    assert seen[1]["isError"] is True
    assert json.loads(seen[1]["content"][0]["text"]) == {"error": "rate_limited"}
    assert seen[2]["isError"] is True
    assert seen[2]["content"][0]["text"]  # no recorded payload: the fixed message
    assert seen[3] == {
        "tool": LOOKUP,
        "isError": False,
        "content": [{"type": "text", "text": '"plain"'}],
    }


@pytest.mark.requirement("toolcall-spec.requirement.suite.warn-error-inside-response")
def test_an_is_error_key_inside_a_success_response_stays_opaque() -> None:
    suite = example("suites/error-recorded-inside-response.json")
    warnings = [(p.path, p.severity) for p in validate(suite)]
    assert warnings == [("tasks[0].fixtures.toolResponses[0].response.isError", "warning")]
    host = ReferenceHost()  # a warning is no refusal: the entry is served, as a success
    run_id = host.create_run(suite)
    first = next(tool_pairs(host.events(run_id)))[1]
    assert "error" not in first
    assert first["outcome"]["isError"] is True
    assert host.agent_output(run_id)["lookup-recovers"][0]["isError"] is False


@pytest.mark.requirement("toolcall-spec.requirement.replay.error-never-live")
def test_an_error_entry_is_never_retried_live_whatever_on_miss_says() -> None:
    live = CountingTool({"content": [{"type": "text", "text": "live"}]})
    suite = one_task(
        [{"tool": LOOKUP, "isError": True, "response": {"content": []}}],
        [{"tool": LOOKUP}, {"tool": LOOKUP}],
        onMiss="live",
    )
    host = ReferenceHost(live_tools={LOOKUP: live})
    run_id = host.create_run(suite)
    returned = [r for _, r in tool_pairs(host.events(run_id))]
    assert "error" in returned[0]
    assert returned[1]["outcome"] == {"content": [{"type": "text", "text": "live"}]}
    assert len(live.calls) == 1  # the second call, a miss, went live; the error entry did not
    assert host.live_invocations() == {LOOKUP: 1}
    assert host.summary(run_id)["fixtureMissCount"] == 1


@pytest.mark.requirement("toolcall-spec.requirement.replay.miss-handling")
@pytest.mark.requirement("toolcall-spec.requirement.events.summary-miss-count")
def test_misses_follow_on_miss_and_are_counted_per_task_and_in_total() -> None:
    suite = example(RFC_SUITE)
    entries = [{"tool": LOOKUP, "args": {"id": "c-1"}, "response": "ok"}]
    calls = [{"tool": LOOKUP, "args": {"id": "c-1"}}, {"tool": LOOKUP, "args": {"id": "c-2"}}]
    base = {k: v for k, v in suite["tasks"][0].items() if k != "fixtures"}
    suite["tasks"] = [
        {**base, "taskId": "default", "input": {"calls": calls},
         "fixtures": {"toolResponses": entries}},
        {**base, "taskId": "errors", "input": {"calls": calls + calls},
         "fixtures": {"toolResponses": entries, "onMiss": "error"}},
        {**base, "taskId": "live", "input": {"calls": calls},
         "fixtures": {"toolResponses": entries, "onMiss": "live"}},
        {**base, "taskId": "no-fixtures", "input": {"calls": calls[:1]}},
    ]  # fmt: skip
    host = ReferenceHost()
    run_id = host.create_run(suite)
    summary = host.summary(run_id)
    per_task = {t["taskId"]: t["fixtureMissCount"] for t in summary["tasks"]}
    assert per_task == {"default": 1, "errors": 3, "live": 1, "no-fixtures": 1}
    assert summary["fixtureMissCount"] == 6
    assert oracle_errors("eval-summary", summary) == []
    returned = [r for _, r in tool_pairs(host.events(run_id))]
    miss_codes = [r["error"]["code"] for r in returned if "error" in r]
    assert miss_codes == ["toolcall-spec.fixture_miss"] * 5
    live_answer = returned[7]["outcome"]
    assert json.loads(live_answer["content"][0]["text"]) == {
        "tool": LOOKUP, "args": {"id": "c-2"}, "live": True,
    }  # fmt: skip
    assert host.live_invocations() == {LOOKUP: 1}
    seen = host.agent_output(run_id)
    assert [s["isError"] for s in seen["default"]] == [False, True]
    assert [s["isError"] for s in seen["live"]] == [False, False]


def test_live_results_follow_the_one_rule() -> None:
    def raises(args: dict[str, Any]) -> Any:
        raise RuntimeError("boom: secret")

    tools: dict[str, LiveTool] = {
        "t:error": CountingTool({"content": [{"type": "text", "text": "no"}], "isError": True}),
        "t:string": CountingTool({"content": [], "isError": "true"}),
        "t:raises": raises,
    }
    suite = one_task([], [{"tool": name} for name in tools], onMiss="live")
    host = ReferenceHost(live_tools=tools)
    run_id = host.create_run(suite)
    returned = [r for _, r in tool_pairs(host.events(run_id))]
    assert returned[0]["error"]["code"] == "toolcall-spec.tool_failed"
    assert returned[1]["outcome"] == {"content": [], "isError": "true"}  # not an error
    assert returned[2]["error"]["code"] == "toolcall-spec.tool_raised"
    assert "secret" not in json.dumps(returned)
    assert [s["isError"] for s in host.agent_output(run_id)["lookup-recovers"]] == [
        True, False, True,
    ]  # fmt: skip
    assert host.live_invocations() == {"t:error": 1, "t:string": 1, "t:raises": 1}


@pytest.mark.requirement("toolcall-spec.requirement.replay.live-shadow-ignores-fixtures")
def test_live_shadow_ignores_fixtures() -> None:
    suite = example(RFC_SUITE)
    suite["modes"] = ["golden", "live-shadow"]
    live = CountingTool({"content": [{"type": "text", "text": "live"}]})
    host = ReferenceHost(live_tools={LOOKUP: live})
    run_id = host.create_run(suite, mode="live-shadow")
    returned = [r for _, r in tool_pairs(host.events(run_id))]
    assert [r.get("outcome") for r in returned] == [
        {"content": [{"type": "text", "text": "live"}]}
    ] * 2
    assert len(live.calls) == 2
    assert host.served_entries(run_id) == {"lookup-recovers": []}
    assert host.summary(run_id)["fixtureMissCount"] == 0
    assert host.events(run_id)[1]["payload"]["modes"] == ["live-shadow"]


@pytest.mark.requirement("toolcall-spec.requirement.replay.recorded-log-not-reserved")
def test_replaying_a_finished_run_reads_the_recorded_log() -> None:
    live = CountingTool({"content": []})
    suite = example(RFC_SUITE)
    suite["tasks"][0]["input"]["calls"].append({"tool": LOOKUP, "args": {"id": "c-9"}})
    suite["tasks"][0]["fixtures"]["onMiss"] = "live"
    host = ReferenceHost(live_tools={LOOKUP: live})
    run_id = host.create_run(suite)
    recorded, served = host.events(run_id), host.served_entries(run_id)
    assert len(live.calls) == 1
    replayed = host.replay(run_id)
    replayed[1]["payload"]["suiteId"] = "tampered"  # a copy: the record stays as it was
    again = host.replay(run_id)
    assert again == recorded
    assert len(live.calls) == 1
    assert host.live_invocations() == {LOOKUP: 1}
    assert host.served_entries(run_id) == served == {"lookup-recovers": [0, 1]}
    assert host.run_ids() == [run_id]
    with pytest.raises(UnknownRunError):
        host.replay("local/unknown")


def test_regression_against_a_baseline() -> None:
    suite = example(RFC_SUITE)
    suite["modes"] = ["golden", "regression"]
    host = advertising(ReferenceHost(), *RFC0251_0252)
    baseline = host.create_run(suite)
    broken = json.loads(json.dumps(suite))
    broken["tasks"][0]["fixtures"]["toolResponses"][0].pop("isError")
    run_id = host.create_run(broken, mode="regression", baseline_run_id=baseline)
    summary = host.summary(run_id)
    assert summary["regression"] == {"baselineRunId": baseline, "scoreDelta": -1.0}
    events = host.events(run_id)
    assert events[1]["payload"]["baselineRunId"] == baseline
    assert events[-2]["payload"]["regressionVsBaseline"] == -1.0
    assert oracle_errors("eval-summary", summary) == []


@pytest.mark.requirement("toolcall-spec.requirement.capabilities.advertise-what-implemented")
def test_the_host_advertises_exactly_what_it_implements() -> None:
    caps = default_capabilities()
    assert caps == example("capabilities/reference-host.json")
    assert oracle_errors("capabilities", caps) == []
    eval_suite = caps["agents"]["evalSuite"]
    assert eval_suite["fixtureMatching"] is True
    assert eval_suite["fixtureErrors"] is True
    assert caps["toolHooks"]["prePostEvents"] is True
    assert not {"perToolAuthorization", "perToolRateLimit"} & caps["toolHooks"].keys()
    # every advertised mode runs; every other mode is refused
    suite = example(RFC_SUITE)
    suite["modes"] = ["golden", "rubric", "adversarial", "regression", "live-shadow"]
    host = ReferenceHost()
    for mode in suite["modes"]:
        if mode in eval_suite["modes"]:
            host.summary(host.create_run(suite, mode=mode))
        else:
            with pytest.raises(RunRefused):
                host.create_run(suite, mode=mode)
    # what each advertised member promises is behaviour the tests in this file witness:
    # fixtureErrors (the RFC 0245 example), fixtureMatching (args honoured, below),
    # prePostEvents (tests/replay/test_replay_events.py)
    run_id = host.create_run(
        one_task(
            [{"tool": LOOKUP, "args": {"id": "c-2"}, "response": "c-2"},
             {"tool": LOOKUP, "args": {"id": "c-1"}, "response": "c-1"}],
            [{"tool": LOOKUP, "args": {"id": "c-1"}}],
        )
    )  # fmt: skip
    assert host.served_entries(run_id) == {"lookup-recovers": [1]}


def test_without_fixture_errors_keeps_the_rest() -> None:
    host = ReferenceHost(live_tools={LOOKUP: CountingTool({})}, tenant="acme")
    other = host.without_fixture_errors()
    assert type(other) is ReferenceHost
    assert "fixtureErrors" not in other.capabilities["agents"]["evalSuite"]
    assert other.capabilities["agents"]["evalSuite"]["fixtureMatching"] is True
    assert other.tenant == "acme"
    assert other.live_tools == host.live_tools
    assert "fixtureErrors" in host.capabilities["agents"]["evalSuite"]  # the original unchanged


def test_bad_construction_is_a_clear_error() -> None:
    with pytest.raises(InvalidCapabilitiesError, match=r"agents\.until"):
        ReferenceHost(example("capabilities/stable-record-with-until.json"))
    with pytest.raises(ValueError, match="tenant"):
        ReferenceHost(tenant="a/b")


def test_unknown_runs_are_lookup_errors() -> None:
    host = ReferenceHost()
    for read in (host.events, host.summary, host.agent_output, host.served_entries):
        with pytest.raises(UnknownRunError):
            read("local/none")


def test_the_scripted_agent_is_the_agent_on_the_wire() -> None:
    host = ReferenceHost()
    events = host.events(host.create_run(example(RFC_SUITE)))
    assert {c["agentId"] for c, _ in tool_pairs(events)} == {SCRIPTED_AGENT_ID}
    assert [c["inputs"] for c, _ in tool_pairs(events)] == [{"id": "c-1"}] * 2


def test_the_record_does_not_follow_later_changes_to_the_suite() -> None:
    suite = example(RFC_SUITE)
    host = ReferenceHost()
    run_id = host.create_run(suite)
    before = host.events(run_id)
    suite["tasks"][0]["fixtures"]["toolResponses"][1]["response"]["content"].clear()
    assert host.events(run_id) == before


def test_a_repeated_run_id_is_refused() -> None:
    host = ReferenceHost(ids=lambda: "same-opaque-id-01")
    host.create_run(example(RFC_SUITE))
    with pytest.raises(ValueError, match="repeated"):
        host.create_run(example(RFC_SUITE))


def test_the_collector_is_paused_during_a_run_and_restored_after() -> None:
    import gc

    from toolcall_spec.host.reference import paused_gc

    seen: list[bool] = []

    def recording_tool(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(gc.isenabled())
        return {"content": []}

    suite = example(RFC_SUITE)
    suite["modes"] = ["live-shadow"]
    assert gc.isenabled()
    ReferenceHost(live_tools={LOOKUP: recording_tool}).create_run(suite, mode="live-shadow")
    assert seen == [False, False]
    assert gc.isenabled()
    with paused_gc(), paused_gc():  # nested (or on two threads): restored once, by the last
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a collector the caller had disabled stays disabled
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"ids": lambda: "short"}, "ids:"),  # the opaque part is 16 to 128 characters
        ({"ids": lambda: "a run id with spaces"}, "ids:"),
        ({"ids": lambda: 1234567890123456789}, "ids:"),
        ({"clock": time.time}, "clock:"),
        ({"tenant": "acme corp"}, "tenant:"),
        ({"tenant": "anon:acme"}, "tenant:"),  # a tenant id, but no run id's tenant part
    ],
)
def test_inputs_that_would_write_schema_invalid_documents_are_refused_when_built(
    options: dict[str, Any], named: str
) -> None:
    """Issue 21: ``ReferenceHost(ids=...)`` took an id source whose run ids break the run-id
    grammar and then wrote events that fail the package's own schema, silently."""
    with pytest.raises(InvalidHostInputError, match=f"^{named}"):
        ReferenceHost(**options)


def test_the_checked_id_source_loses_no_id_and_refuses_a_bad_one_before_the_run() -> None:
    drawn = iter(["first-opaque-id-01", "second-opaque-id-2", "bad"])
    host = ReferenceHost(ids=lambda: next(drawn), tenant="acme")
    assert host.create_run(example(RFC_SUITE)) == "acme/first-opaque-id-01"
    second = host.create_run(example(RFC_SUITE))
    assert second == "acme/second-opaque-id-2"
    with pytest.raises(InvalidHostInputError, match="'bad'"):
        host.create_run(example(RFC_SUITE))
    assert len(host.store) == 2  # nothing of the refused run was stored
    for event in host.events(second):
        assert not [p for p in validate(event, "run-event") if p.severity == "error"]
