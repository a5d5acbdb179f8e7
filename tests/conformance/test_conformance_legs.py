"""The conformance legs on the embedded reference host: every leg executes and passes, each names
exactly one known requirement, the gates open and close where they should, and every suite a leg
sends to a host is schema-valid."""

from __future__ import annotations

from typing import Any

import pytest
from support.repo import REPO

from toolcall_spec.conformance.adapter import RunCreated, RunRefusal
from toolcall_spec.conformance.in_process import (
    REFERENCE,
    RESTRICTED,
    InProcessAdapter,
    embedded_adapters,
    restricted,
)
from toolcall_spec.conformance.leg import Context
from toolcall_spec.conformance.outcomes import Outcome
from toolcall_spec.conformance.registry import LEGS, leg_by_id
from toolcall_spec.conformance.runner import Report, evaluate, run_conformance
from toolcall_spec.host.fixtures import FIXTURE_ERROR, fixture_id_of, load_fixture
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.requirement_registry import registry
from toolcall_spec.validation import validate

requirement = pytest.mark.requirement

# One marker per leg, with the id written literally: the witness finder reads these calls.
WITNESSED = [
    requirement("toolcall-spec.requirement.suite.is-error-boolean"),
    requirement("toolcall-spec.requirement.suite.args-match-needs-args"),
    requirement("openwop.requirement.0245.fixture-error-replayed"),
    requirement("openwop.requirement.0245.unadvertised-refused"),
    requirement("toolcall-spec.requirement.replay.agent-receives-tool-error"),
    requirement("toolcall-spec.requirement.replay.error-never-live"),
    requirement("toolcall-spec.requirement.replay.fixed-error-message"),
    requirement("toolcall-spec.requirement.replay.first-unconsumed-match"),
    requirement("toolcall-spec.requirement.replay.args-matching"),
    requirement("toolcall-spec.requirement.replay.miss-handling"),
    requirement("toolcall-spec.requirement.replay.live-shadow-ignores-fixtures"),
    requirement("toolcall-spec.requirement.capabilities.fixture-matching-refused"),
    requirement("toolcall-spec.requirement.capabilities.mode-refused"),
    requirement("toolcall-spec.requirement.capabilities.refusal-envelope"),
    requirement("toolcall-spec.requirement.capabilities.advertise-what-implemented"),
    requirement("toolcall-spec.requirement.events.error-outcome-exclusive"),
    requirement("toolcall-spec.requirement.events.log-order"),
    requirement("toolcall-spec.requirement.events.schema-valid"),
    requirement("toolcall-spec.requirement.events.summary-miss-count"),
    requirement("toolcall-spec.requirement.wire.run-id-projection"),
    requirement("toolcall-spec.requirement.wire.snapshot-members"),
    requirement("toolcall-spec.requirement.wire.run-bracket"),
    requirement("toolcall-spec.requirement.wire.eval-scored-closed"),
    requirement("toolcall-spec.requirement.wire.run-options"),
    requirement("openwop.requirement.0251.eval-modes-gated"),
    requirement("openwop.requirement.0252.fixture-runs-gated"),
    requirement("toolcall-spec.requirement.wire.discovery-valid"),
]
WIRE_ONLY = "toolcall-spec.requirement.wire.run-id-projection"
"""The leg that needs an HTTP wire: in process it is inapplicable by design (over HTTP it executes,
tests/http/test_http_conformance.py)."""
LEG_IDS = [pytest.param(mark.args[0], marks=mark, id=mark.args[0]) for mark in WITNESSED]


@pytest.fixture(scope="module")
def default_report() -> Report:
    return run_conformance(embedded_adapters())


def test_the_literal_list_is_exactly_the_registered_legs() -> None:
    listed = [param.values[0] for param in LEG_IDS]
    assert listed == [leg.requirement_id for leg in LEGS]


def test_every_leg_names_one_known_requirement_and_no_two_legs_share_one() -> None:
    ids = [leg.requirement_id for leg in LEGS]
    assert len(ids) == len(set(ids))
    assert [rid for rid in ids if rid not in registry()] == []


@pytest.mark.parametrize("leg_id", LEG_IDS)
def test_leg_executes_and_passes_on_the_embedded_default(
    default_report: Report, leg_id: str
) -> None:
    (result,) = [r for r in default_report.results if r.requirement_id == leg_id]
    if leg_id == WIRE_ONLY:
        assert result.outcome is Outcome.INAPPLICABLE
        assert result.reason.endswith("in process there is no HTTP wire")
        return
    assert result.outcome is Outcome.EXECUTED_PASS, result.reason
    assert result.reason


def test_the_refusal_legs_execute_on_the_restricted_twin_only(default_report: Report) -> None:
    by_id = {r.requirement_id: r for r in default_report.results}
    for leg_id in (
        "openwop.requirement.0245.unadvertised-refused",
        "toolcall-spec.requirement.capabilities.fixture-matching-refused",
    ):
        hosts = {v.host: v.outcome for v in by_id[leg_id].per_host}
        assert hosts == {REFERENCE: Outcome.INAPPLICABLE, RESTRICTED: Outcome.EXECUTED_PASS}
    served = {
        v.host: v.outcome for v in by_id["openwop.requirement.0245.fixture-error-replayed"].per_host
    }
    assert served == {REFERENCE: Outcome.EXECUTED_PASS, RESTRICTED: Outcome.INAPPLICABLE}


def _verdict(leg_id: str, host: ReferenceHost) -> Outcome:
    adapter = InProcessAdapter(host)
    return evaluate(leg_by_id(leg_id), adapter, Context(adapter)).outcome


def test_unadvertised_refused_is_inapplicable_by_design_on_a_host_with_fixture_errors() -> None:
    adapter = InProcessAdapter(ReferenceHost())
    verdict = evaluate(
        leg_by_id("openwop.requirement.0245.unadvertised-refused"), adapter, Context(adapter)
    )
    assert verdict.outcome is Outcome.INAPPLICABLE
    assert not verdict.missing  # strict mode must not turn it into a failure


def test_host_legs_are_inapplicable_when_the_fixture_is_not_listed() -> None:
    capabilities = ReferenceHost().capabilities
    capabilities["fixtures"] = []
    host = ReferenceHost(capabilities)
    assert _verdict("openwop.requirement.0245.fixture-error-replayed", host) is Outcome.INAPPLICABLE
    assert _verdict("openwop.requirement.0245.unadvertised-refused", restricted(host)) is (
        Outcome.INAPPLICABLE
    )
    # A server-free leg ignores the host entirely.
    assert (
        _verdict("toolcall-spec.requirement.suite.is-error-boolean", host) is Outcome.EXECUTED_PASS
    )


class RecordingAdapter(InProcessAdapter):
    """Keeps every suite a leg sends, with the answer."""

    def __init__(self, host: ReferenceHost, name: str) -> None:
        super().__init__(host, name)
        self.sent: list[tuple[dict[str, Any], str, RunCreated | RunRefusal]] = []

    def create_eval_run(
        self, suite: dict[str, Any], *, mode: str = "golden", agent_id: str
    ) -> RunCreated | RunRefusal:
        answer = super().create_eval_run(suite, mode=mode, agent_id=agent_id)
        self.sent.append((suite, mode, answer))
        return answer


def test_every_suite_a_leg_sends_is_schema_valid_and_only_intended_refusals_happen() -> None:
    host = ReferenceHost()
    adapters = [RecordingAdapter(host, REFERENCE), RecordingAdapter(restricted(host), RESTRICTED)]
    run_conformance(adapters)
    sent = [item for adapter in adapters for item in adapter.sent]
    assert len(sent) > 20
    for suite, _, _ in sent:
        assert [p for p in validate(suite, "suite") if p.severity == "error"] == [], suite[
            "suiteId"
        ]
    refused_fields = {
        answer.envelope["details"]["field"]
        for _, _, answer in sent
        if isinstance(answer, RunRefusal)
    }
    # Refusals only where a leg provokes one: modes, and the two unadvertised features.
    assert refused_fields == {
        "mode",
        "tasks[0].fixtures.toolResponses[0].isError",
        "tasks[0].fixtures.toolResponses[0].args",
    }


def test_the_conformance_fixture_is_one_packaged_suite_the_host_serves_too() -> None:
    fixture = load_fixture(FIXTURE_ERROR)
    assert fixture == ReferenceHost().fixture_suite(FIXTURE_ERROR)
    assert fixture_id_of(fixture) == FIXTURE_ERROR
    assert fixture_id_of({"suiteId": "someone.evals.else"}) is None
    entries = fixture["tasks"][0]["fixtures"]["toolResponses"]
    assert [e.get("isError") for e in entries] == [True, None]
    assert all("args" not in e for e in entries)  # servable without fixtureMatching
    load_fixture(FIXTURE_ERROR)["suiteId"] = "changed"
    assert load_fixture(FIXTURE_ERROR)["suiteId"] == fixture["suiteId"]  # callers get copies


def test_the_user_guide_lists_every_leg() -> None:
    guide = (REPO / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert [leg.requirement_id for leg in LEGS if f"| `{leg.requirement_id}` |" not in guide] == []
