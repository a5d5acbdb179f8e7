"""Properties of fixture replay over generated suites and call sequences, each checked against the
independent model of tests/support/replay.py, plus planted mutant hosts the same checks catch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from support.replay import (
    TOOL_FAILED_CODE,
    canonical,
    model_task,
    schema_errors,
    tool_pairs,
)
from support.strategies.replay import suites

from toolcall_spec.host import CallResult, ReferenceHost, TaskRun
from toolcall_spec.replay import Served
from toolcall_spec.replay.promote import promote
from toolcall_spec.typed import AgentToolReturned

FIXED_MESSAGES = {
    "the tool reported an error",
    "no fixture entry matches this call",
    "the live tool raised an exception",
}


def check_run(host: ReferenceHost, suite: dict[str, Any], mode: str = "golden") -> None:
    """Run ``suite`` on ``host`` and assert every replay property against the model."""
    live_before = sum(host.live_invocations().values())
    run_id = host.create_run(suite, mode=mode)
    events, summary = host.events(run_id), host.summary(run_id)
    seen, served = host.agent_output(run_id), host.served_entries(run_id)
    assert [e for e in events if schema_errors("run-event", e)] == []
    assert schema_errors("eval-summary", summary) == []
    pairs = list(tool_pairs(events))
    calls = 0
    expected_live = 0
    for t, task in enumerate(suite["tasks"]):
        model = model_task(task, mode)
        task_pairs = pairs[calls : calls + len(model.calls)]
        calls += len(model.calls)
        entries = task.get("fixtures", {}).get("toolResponses", [])
        # misses equal the calls that matched no entry (per task and, below, in total)
        assert summary["tasks"][t]["fixtureMissCount"] == model.misses
        # the same entries are served in the same order, so none twice
        served_here = [c.entry for c in model.calls if c.entry is not None]
        assert served[task["taskId"]] == served_here
        assert len(set(served_here)) == len(served_here)
        for call, (called, returned), received in zip(
            model.calls, task_pairs, seen[task["taskId"]], strict=True
        ):
            assert called["toolName"] == returned["toolName"] == call.tool
            # exactly one of error / outcome
            assert ("error" in returned) != ("outcome" in returned)
            assert received["isError"] is call.is_error
            assert ("error" in returned) is call.is_error
            if call.is_error:
                assert returned["status"] == "error"
                assert returned["error"]["message"] in FIXED_MESSAGES
            if call.entry is not None and call.is_error:
                # an error entry never yields outcome, and its payload never reaches the message
                assert "outcome" not in returned
                assert returned["error"]["code"] == TOOL_FAILED_CODE
            elif call.entry is not None:
                entry = entries[call.entry]
                assert canonical(returned["outcome"]) == canonical(entry.get("response"))
        expected_live += model.live
    assert calls == len(pairs)
    assert summary["fixtureMissCount"] == sum(t["fixtureMissCount"] for t in summary["tasks"])
    # live invocations equal the misses under onMiss live (never an error entry's doing)
    assert sum(host.live_invocations().values()) - live_before == expected_live


@given(suites())
@pytest.mark.requirement("toolcall-spec.requirement.replay.first-unconsumed-match")
@pytest.mark.requirement("toolcall-spec.requirement.replay.miss-handling")
@pytest.mark.requirement("toolcall-spec.requirement.replay.error-never-live")
@pytest.mark.requirement("toolcall-spec.requirement.events.error-outcome-exclusive")
def test_replay_agrees_with_the_model(suite: dict[str, Any]) -> None:
    """Slow on purpose (over 10 s): each example runs a generated suite on the reference host."""
    check_run(ReferenceHost(), suite)


@given(suites(mode="live-shadow"))
@pytest.mark.requirement("toolcall-spec.requirement.replay.live-shadow-ignores-fixtures")
def test_live_shadow_agrees_with_the_model(suite: dict[str, Any]) -> None:
    """Slow on purpose (over 10 s): each example runs a generated suite on the reference host."""
    host = ReferenceHost(_with_modes(["live-shadow"]))
    check_run(host, suite, mode="live-shadow")
    assert all(served == [] for served in host.served_entries(host.run_ids()[0]).values())


@given(suites())
@pytest.mark.requirement("toolcall-spec.requirement.promote.reproduces-run")
def test_promoted_run_replays_the_same_outcomes_and_errors(suite: dict[str, Any]) -> None:
    host = ReferenceHost()
    recorded = host.events(host.create_run(suite))
    promotion = promote(recorded)
    if not list(tool_pairs(recorded)):  # nothing to promote: said so, no suite
        assert promotion.suite is None
        return
    assert promotion.suite is not None, promotion.problems
    fresh = ReferenceHost()
    replayed = fresh.events(fresh.create_run(promotion.suite))
    assert _answers(replayed) == _answers(recorded)
    assert fresh.summary(fresh.run_ids()[0])["fixtureMissCount"] == 0


def _answers(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The sequence of answers: the tool and either ``error`` or the outcome's canonical JSON."""
    return [
        (r["toolName"], "error" if "error" in r else canonical(r["outcome"]))
        for _, r in tool_pairs(events)
    ]


def _with_modes(modes: list[str]) -> dict[str, Any]:
    document = ReferenceHost().capabilities
    document["agents"]["evalSuite"]["modes"] = modes
    return document


# --- planted mutations: each mutant host breaks one rule; the properties above must catch it ----


class ServesErrorAsSuccess(ReferenceHost):
    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        return self.serve_success_entry(task, served)


class RetriesErrorLive(ReferenceHost):
    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        return self.call_live(served.entry["tool"], {})


class CountsErrorAsMiss(ReferenceHost):
    def counts_as_miss(self, result: CallResult) -> bool:
        return result.miss or result.is_error


class NeverCountsMisses(ReferenceHost):
    def counts_as_miss(self, result: CallResult) -> bool:
        return False


class RecordsOutcomeBesideError(ReferenceHost):
    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> AgentToolReturned:
        payload = super().tool_returned(call_id, tool, result, duration_ms)
        if "error" in payload:
            payload["outcome"] = {"content": []}
        return payload


def _violates(mutant: type[ReferenceHost]) -> Any:
    def condition(suite: dict[str, Any]) -> bool:
        try:
            check_run(mutant(), suite)
        except AssertionError:
            return True
        return False

    return condition


@pytest.mark.parametrize(
    "mutant",
    [
        ServesErrorAsSuccess,
        RetriesErrorLive,
        CountsErrorAsMiss,
        NeverCountsMisses,
        RecordsOutcomeBesideError,
    ],
)
def test_the_properties_catch_a_planted_mutation(mutant: type[ReferenceHost]) -> None:
    quick = settings(  # the first counterexample is enough: no shrinking
        max_examples=2000,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    counterexample = find(suites(), _violates(mutant), settings=quick)
    check_run(ReferenceHost(), counterexample)  # the real host passes where the mutant fails


def test_the_promotion_property_catches_a_promoter_that_drops_is_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolcall_spec.replay import promote as promote_module

    real_entry = promote_module.fixture_entry

    def entry_without_flag(call: Any) -> dict[str, Any]:
        entry = real_entry(call)
        entry.pop("isError", None)  # the bug RFC 0245 exists for: a failure promoted as success
        return entry

    monkeypatch.setattr(promote_module, "fixture_entry", entry_without_flag)

    def reproduces(suite: dict[str, Any]) -> bool:
        host = ReferenceHost()
        recorded = host.events(host.create_run(suite))
        promoted = promote(recorded).suite
        if promoted is None:
            return True
        fresh = ReferenceHost()
        return _answers(fresh.events(fresh.create_run(promoted))) == _answers(recorded)

    quick = settings(max_examples=500, database=None, phases=[Phase.generate], deadline=None)
    counterexample = find(suites(), lambda suite: not reproduces(suite), settings=quick)
    monkeypatch.setattr(promote_module, "fixture_entry", real_entry)
    assert reproduces(counterexample)
