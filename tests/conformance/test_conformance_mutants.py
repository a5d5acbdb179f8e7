"""Mutant hosts prove the legs can fail: each mutant (the reference host with one behaviour
broken) is caught, ``executed-fail``, by the leg named for it, while the unmutated reference host
passes that same leg; and a server-free leg fails when the schema check it relies on is lax."""

from __future__ import annotations

from typing import Any

import pytest
from support.mutants import MUTANTS, Mutant

from toolcall_spec.conformance import legs_schema
from toolcall_spec.conformance.in_process import InProcessAdapter, adapter_pair, restricted
from toolcall_spec.conformance.leg import Context
from toolcall_spec.conformance.outcomes import Outcome
from toolcall_spec.conformance.registry import leg_by_id
from toolcall_spec.conformance.runner import evaluate, run_conformance
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.problems import Problem

requirement = pytest.mark.requirement

# (mutant, the leg that must catch it), the id written literally for the witness finder.
CATALOGUE = [
    (
        "serves an error entry as a success",
        requirement("openwop.requirement.0245.fixture-error-replayed"),
    ),
    (
        "emits outcome beside error",
        requirement("toolcall-spec.requirement.events.error-outcome-exclusive"),
    ),
    (
        "counts a served error as a miss",
        requirement("toolcall-spec.requirement.replay.miss-handling"),
    ),
    (
        "calls the live tool for an error entry",
        requirement("toolcall-spec.requirement.replay.error-never-live"),
    ),
    (
        "advertises fixtureErrors but ignores isError",
        requirement("toolcall-spec.requirement.capabilities.advertise-what-implemented"),
    ),
    (
        "accepts an isError suite without advertising fixtureErrors",
        requirement("openwop.requirement.0245.unadvertised-refused"),
    ),
    (
        "omits status error under prePostEvents",
        requirement("openwop.requirement.0245.fixture-error-replayed"),
    ),
    (
        "logs the error but hands the agent a success",
        requirement("toolcall-spec.requirement.replay.agent-receives-tool-error"),
    ),
    (
        "echoes the error payload in error.message",
        requirement("toolcall-spec.requirement.replay.fixed-error-message"),
    ),
    (
        "never consumes a served entry",
        requirement("toolcall-spec.requirement.replay.first-unconsumed-match"),
    ),
    (
        "reads the integer 1 as true when matching",
        requirement("toolcall-spec.requirement.replay.args-matching"),
    ),
    (
        "serves fixtures in live-shadow mode",
        requirement("toolcall-spec.requirement.replay.live-shadow-ignores-fixtures"),
    ),
    (
        "accepts an args suite without advertising fixtureMatching",
        requirement("toolcall-spec.requirement.capabilities.fixture-matching-refused"),
    ),
    (
        "runs modes it should refuse",
        requirement("toolcall-spec.requirement.capabilities.mode-refused"),
    ),
    (
        "refuses without details.field",
        requirement("toolcall-spec.requirement.capabilities.refusal-envelope"),
    ),
    (
        "gives a return a callId its call does not have",
        requirement("toolcall-spec.requirement.events.log-order"),
    ),
    ("emits a negative durationMs", requirement("toolcall-spec.requirement.events.schema-valid")),
    (
        "reports the last task's misses as the total",
        requirement("toolcall-spec.requirement.events.summary-miss-count"),
    ),
    (
        "quotes recorded payloads in the snapshot",
        requirement("toolcall-spec.requirement.wire.snapshot-members"),
    ),
    (
        "echoes another owner in run.started",
        requirement("toolcall-spec.requirement.wire.run-bracket"),
    ),
    (
        "writes the failure reason into eval.scored",
        requirement("toolcall-spec.requirement.wire.eval-scored-closed"),
    ),
    ("does not persist RunOptions", requirement("toolcall-spec.requirement.wire.run-options")),
    (
        "takes evalModes without advertising baselineSelection",
        requirement("openwop.requirement.0251.eval-modes-gated"),
    ),
    (
        "takes fixtureRuns without advertising recordedFixtures",
        requirement("openwop.requirement.0252.fixture-runs-gated"),
    ),
    (
        "serves a discovery document upstream refuses",
        requirement("toolcall-spec.requirement.wire.discovery-valid"),
    ),
]
CAUGHT_BY = [pytest.param(name, mark.args[0], marks=mark, id=name) for name, mark in CATALOGUE]

MUTANTS_BY_NAME = {mutant.name: mutant for mutant in MUTANTS}


def test_the_literal_table_is_exactly_the_mutant_catalogue() -> None:
    assert [(p.values[0], p.values[1]) for p in CAUGHT_BY] == [
        (m.name, m.caught_by) for m in MUTANTS
    ]


def test_every_host_leg_has_a_mutant_named_for_it() -> None:
    from toolcall_spec.conformance.registry import LEGS

    host_legs = {leg.requirement_id for leg in LEGS if not leg.server_free}
    # the projection leg needs a wire: its mutant is an HTTP one
    # (tests/http/test_http_conformance.py)
    wire_only = {"toolcall-spec.requirement.wire.run-id-projection"}
    assert host_legs == {m.caught_by for m in MUTANTS} | wire_only


def _outcome(leg_id: str, adapter: InProcessAdapter) -> tuple[Outcome, str]:
    verdict = evaluate(leg_by_id(leg_id), adapter, Context(adapter))
    return verdict.outcome, verdict.reason


def _unmutated(mutant: Mutant) -> InProcessAdapter:
    """The reference host advertising what the mutant advertises, with nothing broken."""
    host = ReferenceHost(mutant.host().capabilities)
    return InProcessAdapter(host)


@pytest.mark.parametrize(("name", "leg_id"), CAUGHT_BY)
def test_mutant_is_caught_by_its_leg(name: str, leg_id: str) -> None:
    mutant = MUTANTS_BY_NAME[name]
    outcome, reason = _outcome(leg_id, mutant.adapter())
    assert outcome is Outcome.EXECUTED_FAIL, reason
    passing, why = _outcome(leg_id, _unmutated(mutant))
    assert passing is Outcome.EXECUTED_PASS, why


def test_a_mutant_fails_the_whole_run_through_its_adapter_pair() -> None:
    from support.mutants import ServesErrorAsSuccess

    report = run_conformance(adapter_pair(ServesErrorAsSuccess()))
    assert report.failed
    by_id = {r.requirement_id: r for r in report.results}
    failed = by_id["openwop.requirement.0245.fixture-error-replayed"]
    assert failed.outcome is Outcome.EXECUTED_FAIL
    assert failed.host == "reference"  # the failing host decides, whatever the other did


def test_the_restricted_twin_keeps_the_mutant_class() -> None:
    from support.mutants import AcceptsUnadvertisedArgs

    assert type(restricted(AcceptsUnadvertisedArgs())) is AcceptsUnadvertisedArgs


@pytest.mark.parametrize(
    ("leg_id", "symptom"),
    [
        ("toolcall-spec.requirement.suite.is-error-boolean", "isError: 'true' is accepted"),
        ("toolcall-spec.requirement.suite.args-match-needs-args", "argsMatch without args"),
    ],
)
def test_a_server_free_leg_fails_when_validation_is_lax(
    monkeypatch: pytest.MonkeyPatch, leg_id: str, symptom: str
) -> None:
    adapter = InProcessAdapter(ReferenceHost())

    def lax(document: Any, kind: str | None = None) -> list[Problem]:
        return []

    monkeypatch.setattr(legs_schema, "validate", lax)
    verdict = evaluate(leg_by_id(leg_id), adapter, Context(adapter))
    assert verdict.outcome is Outcome.EXECUTED_FAIL
    assert symptom in verdict.reason
