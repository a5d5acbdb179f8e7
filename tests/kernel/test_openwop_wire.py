"""The wire module, the host port's new create members (RunOptions, RFC 0251 evalModes, RFC 0252
fixtureRuns) and the discovery leg, on the reference host in process and over HTTP."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest
from support.http_serving import FIXTURE_ERROR, client, create, serving, wait_terminal
from support.replay import RFC0251_0252, advertising, example

from toolcall_spec.conformance.in_process import InProcessAdapter
from toolcall_spec.conformance.leg import Context
from toolcall_spec.conformance.legs_wire import DISCOVERY_LEG, discovery_problems
from toolcall_spec.conformance.outcomes import Outcome
from toolcall_spec.conformance.runner import evaluate
from toolcall_spec.host import ReferenceHost, RunRefused, RunRequest, default_capabilities
from toolcall_spec.http.app import HostSettings
from toolcall_spec.openwop_wire import (
    EVAL_STARTED,
    RUN_FAILED,
    RUN_STARTED,
    SEAMS_EXTENSION,
    project_id,
    run_links,
    run_path_readings,
)
from toolcall_spec.replay.promote import promote, recorded_fixtures

RFC_SUITE = "suites/rfc0245-fail-then-succeed.json"
TASK = "lookup-recovers"


def test_links_and_path_readings_agree() -> None:
    run_id = "acme/0123456789abcdef"
    links = run_links(run_id)
    assert links["statusUrl"] == "/runs/acme~2F0123456789abcdef"
    assert links["eventsUrl"] == links["statusUrl"] + "/events"
    for raw in (
        "/runs/acme~2F0123456789abcdef/events/poll",
        "/runs/acme%2f0123456789abcdef/events/poll",
    ):
        assert run_path_readings(raw)[0] == (run_id, "events/poll")
    assert run_path_readings("/runs/acme/0123456789abcdef")[1] == (run_id, "")
    assert project_id("a b/ü~") == "a~20b~2F~C3~BC~7E"


# -- RFC 0252 fixture runs and promote: one mapping --------------------------------------------


def recorded_host() -> tuple[ReferenceHost, str]:
    host = advertising(ReferenceHost(), *RFC0251_0252)
    return host, host.create_run(example(RFC_SUITE))


def without_fixtures(suite: dict[str, Any]) -> dict[str, Any]:
    bare = copy.deepcopy(suite)
    for task in bare["tasks"]:
        task["fixtures"] = {"toolResponses": []}
    return bare


@pytest.mark.requirement("openwop.requirement.0252.fixture-runs-gated")
def test_a_fixture_run_serves_the_recorded_calls_under_on_miss_fail() -> None:
    host, source = recorded_host()
    replaying = without_fixtures(example(RFC_SUITE))
    replaying["tasks"][0]["input"]["calls"].append({"tool": "billing:refund", "args": {}})
    run_id = host.submit(RunRequest(replaying, fixture_runs={TASK: source}))
    returned = [e["payload"] for e in host.events(run_id) if e["type"] == "agent.tool-returned"]
    assert ["error" in r for r in returned] == [True, False, True]
    assert (
        returned[1]["outcome"]
        == example(RFC_SUITE)["tasks"][0]["fixtures"]["toolResponses"][1]["response"]
    )
    assert returned[2]["error"]["code"] == "toolcall-spec.fixture_miss"  # onMiss fail
    assert host.summary(run_id)["tasks"][0]["fixtureMissCount"] == 1
    started = next(e for e in host.events(run_id) if e["type"] == EVAL_STARTED)
    assert started["payload"]["fixtureRuns"] == {TASK: source}
    seen = host.agent_output(run_id)[TASK]
    assert [call["isError"] for call in seen] == [True, False, True]


def test_promote_and_fixture_runs_make_the_same_entries() -> None:
    host, source = recorded_host()
    events = host.events(source)
    promoted = promote(events).suite
    assert promoted is not None
    assert promoted["tasks"][0]["fixtures"]["toolResponses"] == recorded_fixtures(events)[TASK]
    assert recorded_fixtures(events)[TASK][0]["isError"] is True


@pytest.mark.parametrize(
    ("fixture_runs", "field"),
    [
        ({}, "fixtureRuns"),
        ({"no-such-task": "SOURCE"}, "fixtureRuns.no-such-task"),
        ({TASK: "local/unknown-run-000000"}, f"fixtureRuns.{TASK}"),
    ],
)
def test_unusable_fixture_runs_are_refused_naming_the_member(
    fixture_runs: dict[str, str], field: str
) -> None:
    host, source = recorded_host()
    mapping = {k: (source if v == "SOURCE" else v) for k, v in fixture_runs.items()}
    with pytest.raises(RunRefused) as refused:
        host.submit(RunRequest(without_fixtures(example(RFC_SUITE)), fixture_runs=mapping))
    assert (refused.value.status, refused.value.field) == (400, field)


def test_a_recorded_failure_needs_fixture_errors_like_any_error_entry() -> None:
    host, source = recorded_host()
    twin = advertising(ReferenceHost().without("fixtureErrors"), *RFC0251_0252)
    twin.store.put(host.record(source))
    with pytest.raises(RunRefused) as refused:
        twin.submit(RunRequest(without_fixtures(example(RFC_SUITE)), fixture_runs={TASK: source}))
    assert refused.value.field == f"fixtureRuns.{TASK}[0].isError"


# -- RFC 0251 modes ---------------------------------------------------------------------------


@pytest.mark.requirement("openwop.requirement.0251.eval-modes-gated")
def test_eval_modes_run_when_advertised_and_are_refused_otherwise() -> None:
    suite = example(RFC_SUITE)
    suite["modes"] = ["golden", "regression"]
    host = advertising(ReferenceHost(), *RFC0251_0252)
    run_id = host.submit(RunRequest(suite, modes=("golden", "regression")))
    started = next(e for e in host.events(run_id) if e["type"] == EVAL_STARTED)
    assert started["payload"]["modes"] == ["golden", "regression"]
    bare = ReferenceHost().without(*RFC0251_0252)
    for request, field in (
        (RunRequest(suite, modes=("golden",)), "evalModes"),
        (RunRequest(suite, mode="regression", baseline_run_id=run_id), "baselineRunId"),
    ):
        with pytest.raises(RunRefused) as refused:
            bare.submit(request)
        assert refused.value.field == field
    with pytest.raises(RunRefused) as mixed:
        host.submit(
            RunRequest(
                {**suite, "modes": ["golden", "live-shadow"]}, modes=("golden", "live-shadow")
            )
        )
    assert mixed.value.field == "evalModes"


# -- RunOptions over HTTP ------------------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.wire.run-options")
@pytest.mark.parametrize(
    ("members", "field"),
    [
        ({"configurable": {"run": {}}}, "configurable.version"),
        ({"configurable": {"version": 1, "graph": {}}}, "configurable.graph"),
        ({"configurable": {"version": 1, "run": {"depth": 3}}}, "configurable.run.depth"),
        ({"configurable": {"version": 1, "ai": {"provider": "x"}}}, "configurable.ai.provider"),
        ({"tags": ["t"] * 101}, "tags"),
        ({"tags": ["ok", "x" * 257]}, "tags[1]"),
        ({"metadata": []}, "metadata"),
        ({"workflowId": "wf"}, "workflowId"),
    ],
)
def test_invalid_run_options_are_refused_naming_the_member(
    members: dict[str, Any], field: str
) -> None:
    with serving() as running, client(running) as http:
        answer = create(http, FIXTURE_ERROR, **members)
    assert answer.status_code == 400
    assert answer.json()["error"] == "validation_error"
    assert answer.json()["details"]["field"] == field


def test_run_options_surface_on_the_snapshot_and_seams_stay_off_by_default() -> None:
    options = {
        "tags": ["a"],
        "metadata": {"k": [1]},
        "configurable": {"version": 1, "run": {"recursionLimit": 3}},
    }
    for seams in (False, True):
        with (
            serving(settings=HostSettings(expose_test_seams=seams)) as running,
            client(running) as http,
        ):
            run_id = create(http, FIXTURE_ERROR, **options).json()["runId"]
            wait_terminal(http, run_id)
            snapshot = http.get(f"/runs/{project_id(run_id)}").json()
            live = http.get("/x-toolcall-spec/live-invocations")
        assert {k: snapshot[k] for k in options} == options
        assert ("extensions" in snapshot) is seams
        assert (SEAMS_EXTENSION in snapshot.get("extensions", {})) is seams
        assert live.status_code == (200 if seams else 404)


def test_a_run_that_fails_still_has_a_bracketed_log() -> None:
    class Broken(ReferenceHost):
        def execute(self, run_id: str, request: RunRequest) -> Any:
            raise RuntimeError("disk on fire")

    with serving(Broken()) as running, client(running) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        wait_terminal(http, run_id)
        events = http.get(f"/runs/{project_id(run_id)}/events/poll").json()["events"]
        streamed = http.get(f"/runs/{project_id(run_id)}/events", timeout=10).text
    assert [e["type"] for e in events] == [RUN_STARTED, RUN_FAILED]
    assert events[1]["payload"]["error"]["code"] == "internal_error"
    assert f"event: {RUN_FAILED}" in streamed  # the stream ended, after the terminal event


# -- the discovery leg -------------------------------------------------------------------------


def upstream_shaped() -> dict[str, Any]:
    """The reference host's document as upstream's rules want it."""
    document = default_capabilities()
    document["eventLogSchemaVersion"] = 3
    document.pop("conformance", None)
    for family in ("agents", "toolHooks"):
        document[family]["until"] = "3.0"
    return document


@pytest.mark.requirement("toolcall-spec.requirement.wire.discovery-valid")
def test_the_discovery_leg_passes_an_upstream_shaped_document_and_fails_a_broken_one() -> None:
    class Serving(ReferenceHost):
        """Serves ``document`` whatever it says (the host checks its own document at start)."""

        def __init__(self, document: dict[str, Any]) -> None:
            super().__init__()
            self.served = document

        def discovery(self) -> dict[str, Any]:
            return copy.deepcopy(self.served)

    def outcome(document: dict[str, Any]) -> Outcome:
        adapter = InProcessAdapter(Serving(document))
        return evaluate(DISCOVERY_LEG, adapter, Context(adapter)).outcome

    good = upstream_shaped()
    assert discovery_problems(good) == []
    assert outcome(good) is Outcome.EXECUTED_PASS
    no_until = copy.deepcopy(good)
    del no_until["agents"]["until"]
    assert outcome(no_until) is Outcome.EXECUTED_FAIL
    assert discovery_problems(no_until) == [
        "agents: an experimental record says until when it ends"
    ]
    era_one = {**good, "eventLogSchemaVersion": 1}
    assert discovery_problems(era_one) == ["eventLogSchemaVersion: an integer >= 2, not 1"]
    profile = {**good, "conformance": {"seamsProfile": "toolcall-spec.reference"}}
    assert discovery_problems(profile) == [
        "conformance.seamsProfile: upstream's one value is 'openwop-conformance-seams-v2'"
    ]
    supported = copy.deepcopy(good)
    supported["toolHooks"]["supported"] = True
    assert discovery_problems(supported) == ["toolHooks: supported does not exist in v2"]


def test_the_served_discovery_document_is_the_hosts() -> None:
    """Capability flags come from the document the host reads, not from the server."""
    with serving(ReferenceHost().without("fixtureMatching")) as running:
        document = httpx.get(f"{running.url}/.well-known/openwop").json()
    assert "fixtureMatching" not in document["agents"]["evalSuite"]
    assert document["fixtures"] == [FIXTURE_ERROR]


def test_another_tenants_run_id_is_refused_without_saying_whether_it_exists() -> None:
    with serving() as running, client(running) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        wait_terminal(http, run_id)
        opaque = run_id.partition("/")[2]
        for other in (f"acme/{opaque}", "acme/0000000000000000"):  # one exists under local
            answer = http.get(f"/runs/{project_id(other)}")
            assert (answer.status_code, answer.json()["error"]) == (403, "id_tenant_mismatch")
        assert http.get(f"/runs/{project_id('local/' + '0' * 32)}").status_code == 404
