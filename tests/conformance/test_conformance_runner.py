"""Outcomes, folding over hosts, and strict mode: every path of a leg ends in an outcome, a
missing seam is ``skipped`` and a missing capability ``inapplicable`` unless strict mode turns them
into failures, while a leg that is inapplicable by design stays inapplicable even in strict mode."""

from __future__ import annotations

from typing import Any

import pytest

from toolcall_spec.conformance.in_process import (
    InProcessAdapter,
    embedded_adapters,
    restricted,
)
from toolcall_spec.conformance.leg import Context, Gate, Leg
from toolcall_spec.conformance.outcomes import LegFailedError, Outcome, Verdict, passed
from toolcall_spec.conformance.runner import enforce_strict, fold, run_conformance
from toolcall_spec.host.reference import ReferenceHost

SEAM_LEGS = (
    "toolcall-spec.requirement.replay.agent-receives-tool-error",
    "toolcall-spec.requirement.replay.error-never-live",
    "toolcall-spec.requirement.replay.live-shadow-ignores-fixtures",
)


class NoSeams(InProcessAdapter):
    """A host exposing only the OpenWOP surface: no agent output, no live invocation counts."""

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]] | None:
        return None

    def live_invocations(self) -> dict[str, int] | None:
        return None


class BrokenEvents(InProcessAdapter):
    """A host whose event log cannot be read."""

    def events(self, run_id: str) -> list[dict[str, Any]]:
        raise ConnectionError("the event stream dropped")


class NoDiscovery(InProcessAdapter):
    def capabilities(self) -> dict[str, Any]:
        raise ConnectionError("discovery unreachable")


def by_id(adapters: list[Any], *, strict: bool = False) -> dict[str, Any]:
    report = run_conformance(adapters, strict=strict)
    return {result.requirement_id: result for result in report.results}


def test_a_missing_seam_is_skipped_and_fails_only_in_strict_mode() -> None:
    lenient = by_id([NoSeams(ReferenceHost())])
    for leg_id in SEAM_LEGS:
        assert lenient[leg_id].outcome is Outcome.SKIPPED, leg_id
        assert "seam" in lenient[leg_id].reason
    miss = lenient["toolcall-spec.requirement.replay.miss-handling"]
    assert miss.outcome is Outcome.EXECUTED_PASS
    assert "onMiss live not checked" in miss.reason
    strict = by_id([NoSeams(ReferenceHost())], strict=True)
    for leg_id in SEAM_LEGS:
        assert strict[leg_id].outcome is Outcome.EXECUTED_FAIL
        assert strict[leg_id].reason.startswith("strict: skipped:")


def test_a_missing_capability_is_inapplicable_and_fails_only_in_strict_mode() -> None:
    leg_id = "openwop.requirement.0245.fixture-error-replayed"
    host = restricted(ReferenceHost())
    lenient = by_id([InProcessAdapter(host)])[leg_id]
    assert lenient.outcome is Outcome.INAPPLICABLE
    assert "agents.evalSuite.fixtureErrors" in lenient.reason
    strict = by_id([InProcessAdapter(host)], strict=True)[leg_id]
    assert strict.outcome is Outcome.EXECUTED_FAIL
    assert strict.reason.startswith("strict: inapplicable:")


def test_strict_mode_keeps_a_by_design_inapplicable_leg() -> None:
    report = run_conformance([InProcessAdapter(ReferenceHost())], strict=True)
    outcomes = {r.requirement_id: r.outcome for r in report.results}
    assert outcomes["openwop.requirement.0245.unadvertised-refused"] is Outcome.INAPPLICABLE
    assert not report.failed


def test_the_embedded_default_passes_every_leg_in_strict_mode() -> None:
    report = run_conformance(embedded_adapters(), strict=True)
    by_design = {r.requirement_id for r in report.results if r.outcome is Outcome.INAPPLICABLE}
    assert by_design == {"toolcall-spec.requirement.wire.run-id-projection"}  # no wire here
    assert {r.outcome for r in report.results} - {Outcome.INAPPLICABLE} == {Outcome.EXECUTED_PASS}
    assert report.strict
    assert not report.failed


def test_an_unreadable_host_blocks_the_legs_and_strict_mode_fails_them() -> None:
    lenient = by_id([BrokenEvents(ReferenceHost())])
    leg = lenient["openwop.requirement.0245.fixture-error-replayed"]
    assert leg.outcome is Outcome.BLOCKED
    assert "ConnectionError: the event stream dropped" in leg.reason
    strict = by_id([BrokenEvents(ReferenceHost())], strict=True)
    assert strict["openwop.requirement.0245.fixture-error-replayed"].outcome is (
        Outcome.EXECUTED_FAIL
    )


def test_without_discovery_host_legs_are_blocked_and_server_free_legs_still_run() -> None:
    results = by_id([NoDiscovery(ReferenceHost())])
    assert results["toolcall-spec.requirement.suite.is-error-boolean"].outcome is (
        Outcome.EXECUTED_PASS
    )
    host_legs = [r for r in results.values() if r.host != "server-free"]
    assert host_legs
    assert {r.outcome for r in host_legs} == {Outcome.BLOCKED}


def _leg(check: Any, gate: Gate | None = None) -> Leg:
    return Leg("toolcall-spec.requirement.events.log-order", "a test leg", check, gate or Gate())


def _raises(exc: Exception) -> Any:
    def check(adapter: Any, ctx: Context) -> Verdict:
        raise exc

    return check


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (_raises(LegFailedError("broken")), Outcome.EXECUTED_FAIL),
        (_raises(KeyError("payload")), Outcome.BLOCKED),
        (lambda adapter, ctx: passed("fine"), Outcome.EXECUTED_PASS),
    ],
)
def test_every_path_of_a_leg_ends_in_an_outcome(check: Any, expected: Outcome) -> None:
    report = run_conformance([InProcessAdapter(ReferenceHost())], [_leg(check)])
    (result,) = report.results
    assert result.outcome is expected
    assert result.reason


def test_a_closed_gate_never_calls_the_check() -> None:
    gate = Gate(requires=(("agents", "evalSuite", "somethingNobodyAdvertises"),))
    report = run_conformance(
        [InProcessAdapter(ReferenceHost())], [_leg(_raises(AssertionError("ran")), gate)]
    )
    assert report.results[0].outcome is Outcome.INAPPLICABLE
    assert "somethingNobodyAdvertises" in report.results[0].reason


def test_fold_prefers_a_failure_then_a_block_then_a_pass() -> None:
    fail = Verdict(Outcome.EXECUTED_FAIL, "f")
    block = Verdict(Outcome.BLOCKED, "b")
    ok = Verdict(Outcome.EXECUTED_PASS, "p")
    missing = Verdict(Outcome.INAPPLICABLE, "m", missing=True)
    by_design = Verdict(Outcome.INAPPLICABLE, "d")
    assert fold([("a", ok), ("b", fail)]) == ("b", fail)
    assert fold([("a", ok), ("b", block)]) == ("b", block)
    assert fold([("a", missing), ("b", ok)]) == ("b", ok)
    assert fold([("a", missing), ("b", by_design)]) == ("b", by_design)


def test_enforce_strict_touches_only_unexecuted_legs() -> None:
    ok = Verdict(Outcome.EXECUTED_PASS, "p")
    assert enforce_strict(ok) is ok
    assert enforce_strict(Verdict(Outcome.INAPPLICABLE, "d")).outcome is Outcome.INAPPLICABLE
    for outcome in (Outcome.SKIPPED, Outcome.BLOCKED):
        assert enforce_strict(Verdict(outcome, "x", missing=True)).outcome is Outcome.EXECUTED_FAIL


def test_run_conformance_needs_a_host() -> None:
    with pytest.raises(ValueError, match="at least one"):
        run_conformance([])
