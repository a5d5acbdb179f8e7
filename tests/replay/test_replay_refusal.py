"""Run-create checks (RFC 0244 §G as DESIGN.md reads it, RFC 0245 §C): each rule refuses with
``400 validation_error`` naming the full path, before anything runs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support.replay import RFC0251_0252, advertising, example, oracle_errors

from toolcall_spec.host.reference import ReferenceHost, capabilities_without
from toolcall_spec.replay import refusal
from toolcall_spec.replay.refusal import RUN_CREATE_CHECKS, CheckContext, RunRefused, RunRequest

RFC_SUITE = "suites/rfc0245-fail-then-succeed.json"


def refuse(host: ReferenceHost, suite: Any, **kwargs: Any) -> RunRefused:
    with pytest.raises(RunRefused) as caught:
        host.create_run(suite, **kwargs)
    assert host.run_ids() == []  # nothing ran
    assert host.live_invocations() == {}
    envelope = caught.value.envelope
    assert caught.value.status == 400
    assert oracle_errors("error-envelope", envelope) == []
    assert envelope["error"] == "validation_error"
    assert envelope["details"]["field"] == caught.value.field
    assert caught.value.field is not None
    assert envelope["message"].startswith(caught.value.field + ": ")
    return caught.value


@pytest.mark.requirement("openwop.requirement.0245.unadvertised-refused")
@pytest.mark.requirement("toolcall-spec.requirement.capabilities.refusal-envelope")
def test_rfc0245_suite_on_a_host_without_fixture_errors() -> None:
    host = ReferenceHost(example("capabilities/host-without-fixture-errors.json"))
    refused = refuse(host, example(RFC_SUITE))
    expected = example("events/refusal-envelope.json")
    assert refused.envelope["details"]["field"] == expected["details"]["field"]
    assert refused.field == "tasks[0].fixtures.toolResponses[0].isError"
    assert refused.envelope["message"] == expected["message"]


@pytest.mark.requirement("openwop.requirement.0245.unadvertised-refused")
def test_the_first_error_entry_is_named_and_the_helper_host_refuses_too() -> None:
    suite = example(RFC_SUITE)
    entries = suite["tasks"][0]["fixtures"]["toolResponses"]
    entries[0].pop("isError")
    entries[1]["isError"] = True
    refused = refuse(ReferenceHost().without_fixture_errors(), suite)
    assert refused.field == "tasks[0].fixtures.toolResponses[1].isError"
    # isError false everywhere: nothing to refuse on that ground
    entries[1]["isError"] = False
    host = ReferenceHost().without_fixture_errors()
    assert host.summary(host.create_run(suite))["fixtureMissCount"] == 0


@pytest.mark.requirement("toolcall-spec.requirement.suite.is-error-boolean")
def test_string_is_error_is_refused_as_invalid() -> None:
    refused = refuse(ReferenceHost(), example("suites/rfc0245-string-iserror.json"))
    assert refused.field == "tasks[0].fixtures.toolResponses[0].isError"
    assert "boolean" in refused.envelope["message"]
    assert refused.envelope["details"]["problems"][0]["path"] == refused.field


def test_argsmatch_without_args_is_refused_as_invalid() -> None:
    refused = refuse(ReferenceHost(), example("suites/args-match-without-args.json"))
    assert refused.field == "tasks[0].fixtures.toolResponses[1]"


def test_a_non_object_suite_is_refused_at_the_root() -> None:
    assert refuse(ReferenceHost(), ["not", "a", "suite"]).field == "(root)"


@pytest.mark.requirement("toolcall-spec.requirement.capabilities.fixture-matching-refused")
@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"tool": "t:x", "args": {"id": 1}}, "args"),
        ({"tool": "t:x", "args": {"id": 1}, "argsMatch": "subset"}, "args"),
    ],
)
def test_args_need_fixture_matching(entry: dict[str, Any], field: str) -> None:
    suite = example(RFC_SUITE)
    suite["tasks"][0]["fixtures"]["toolResponses"] = [{"tool": "t:y"}, entry]
    host = ReferenceHost(capabilities_without(ReferenceHost().capabilities, "fixtureMatching"))
    refused = refuse(host, suite)
    assert refused.field == f"tasks[0].fixtures.toolResponses[1].{field}"
    assert "fixtureMatching" in refused.envelope["message"]
    # the same suite without args runs
    del entry["args"]
    entry.pop("argsMatch", None)
    host.create_run(suite)


def test_argsmatch_alone_is_named_when_a_host_skips_schema_validation() -> None:
    request = RunRequest(
        {"tasks": [{"fixtures": {"toolResponses": [{"tool": "t", "argsMatch": "exact"}]}}]}
    )
    refused = refusal.check_fixture_matching(CheckContext(request, {}))
    assert refused is not None
    assert refused.field == "tasks[0].fixtures.toolResponses[0].argsMatch"


@pytest.mark.requirement("toolcall-spec.requirement.capabilities.mode-refused")
def test_a_mode_the_suite_does_not_declare_is_refused() -> None:
    refused = refuse(ReferenceHost(), example(RFC_SUITE), mode="regression")
    assert (refused.field, refused.envelope["details"]["mode"]) == ("mode", "regression")
    assert "suite does not declare" in refused.message


@pytest.mark.requirement("toolcall-spec.requirement.capabilities.mode-refused")
@pytest.mark.parametrize("mode", ["rubric", "adversarial"])
def test_a_mode_the_host_does_not_advertise_is_refused(mode: str) -> None:
    suite = example(RFC_SUITE)
    suite["modes"] = ["golden", mode]
    refused = refuse(ReferenceHost(), suite, mode=mode)
    assert refused.field == "mode"
    assert "agents.evalSuite.modes" in refused.message


def test_a_host_without_eval_suite_refuses_every_mode() -> None:
    caps = ReferenceHost().capabilities
    del caps["agents"]["evalSuite"]
    assert refuse(ReferenceHost(caps), example(RFC_SUITE)).field == "mode"


def test_unknown_agent_is_refused() -> None:
    refused = refuse(ReferenceHost(), example(RFC_SUITE), agent_id="acme.agents.other")
    assert refused.field == "agentId"


def test_more_tasks_than_advertised_are_refused() -> None:
    suite = example(RFC_SUITE)
    task = suite["tasks"][0]
    suite["tasks"] = [{**copy.deepcopy(task), "taskId": f"t-{i}"} for i in range(101)]
    assert refuse(ReferenceHost(), suite).field == "tasks"
    suite["tasks"] = suite["tasks"][:100]
    ReferenceHost().create_run(suite)


def test_duplicate_task_ids_are_refused() -> None:
    suite = example(RFC_SUITE)
    suite["tasks"].append(copy.deepcopy(suite["tasks"][0]))
    assert refuse(ReferenceHost(), suite).field == "tasks[1].taskId"


@pytest.mark.parametrize(
    ("task_input", "field"),
    [
        ("call billing:lookup", "tasks[0].input"),
        ({"calls": "billing:lookup"}, "tasks[0].input"),
        ({"calls": ["billing:lookup"]}, "tasks[0].input.calls[0]"),
        ({"calls": [{"args": {}}]}, "tasks[0].input.calls[0].tool"),
        ({"calls": [{"tool": "t", "args": [1]}]}, "tasks[0].input.calls[0].args"),
        ({"calls": [{"tool": "t", "wait": 1}]}, "tasks[0].input.calls[0].wait"),
    ],
)
def test_inputs_the_scripted_agent_cannot_run_are_refused(task_input: Any, field: str) -> None:
    suite = example(RFC_SUITE)
    suite["tasks"][0]["input"] = task_input
    assert refuse(ReferenceHost(), suite).field == field


def test_a_baseline_must_be_a_finished_run_of_a_regression() -> None:
    host = advertising(ReferenceHost(), *RFC0251_0252)
    suite = example(RFC_SUITE)
    suite["modes"] = ["golden", "regression"]
    with pytest.raises(RunRefused) as unknown:
        host.create_run(suite, mode="regression", baseline_run_id="local/none")
    assert unknown.value.field == "baselineRunId"
    baseline = host.create_run(suite)
    with pytest.raises(RunRefused) as wrong_mode:
        host.create_run(suite, mode="golden", baseline_run_id=baseline)
    assert wrong_mode.value.field == "baselineRunId"


def test_live_shadow_does_not_lift_the_fixture_errors_rule() -> None:
    suite = example(RFC_SUITE)
    suite["modes"] = ["live-shadow"]
    refused = refuse(ReferenceHost().without_fixture_errors(), suite, mode="live-shadow")
    assert refused.field is not None
    assert refused.field.endswith(".isError")


def test_every_check_is_registered_once_in_one_place() -> None:
    defined = [getattr(refusal, name) for name in dir(refusal) if name.startswith("check_")]
    assert sorted(c.__name__ for c in RUN_CREATE_CHECKS) == sorted(c.__name__ for c in defined)
    assert RUN_CREATE_CHECKS[0] is refusal.check_suite_validates
    assert ReferenceHost.refusal_checks == RUN_CREATE_CHECKS


def test_check_run_refuses_without_running() -> None:
    host = ReferenceHost().without_fixture_errors()
    with pytest.raises(RunRefused):
        host.check_run(example(RFC_SUITE))
    assert host.run_ids() == []
    ReferenceHost().check_run(example(RFC_SUITE))
