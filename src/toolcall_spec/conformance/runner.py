"""Running legs against one or more hosts and folding the outcomes into one per leg.

The embedded default runs two hosts (the reference host, and the same host advertising less) so
every leg, the refusal legs included, executes somewhere. A leg's outcome over several hosts is the
most telling one: a failure anywhere wins, then a block, then a pass; a leg is inapplicable only
when it is inapplicable everywhere. Strict mode is applied after folding, so a leg that is
inapplicable on one host by design but executed on another still passes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolcall_spec.conformance.adapter import HostAdapter
from toolcall_spec.conformance.leg import Context, Leg
from toolcall_spec.conformance.outcomes import (
    LegFailedError,
    LegNotRunError,
    Outcome,
    Verdict,
)
from toolcall_spec.conformance.registry import LEGS

SERVER_FREE = "server-free"

_RANK = {
    Outcome.EXECUTED_FAIL: 0,
    Outcome.BLOCKED: 1,
    Outcome.EXECUTED_PASS: 2,
    Outcome.SKIPPED: 3,
    Outcome.INAPPLICABLE: 4,
}


@dataclass(frozen=True, slots=True)
class HostVerdict:
    """One leg's outcome on one host, before folding."""

    host: str
    outcome: Outcome
    reason: str


@dataclass(frozen=True, slots=True)
class LegResult:
    """One leg's outcome for the whole run, the host that decided it, and every host's own."""

    requirement_id: str
    outcome: Outcome
    reason: str
    host: str
    summary: str = ""
    per_host: tuple[HostVerdict, ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    hosts: tuple[str, ...]
    strict: bool
    results: tuple[LegResult, ...] = field(default_factory=tuple)

    def counts(self) -> dict[str, int]:
        counted = Counter(result.outcome for result in self.results)
        return {outcome.value: counted[outcome] for outcome in Outcome}

    @property
    def failed(self) -> bool:
        """Some leg is ``executed-fail`` or ``blocked``: the host is not shown to conform (a
        blocked leg, e.g. a rejected token, must not let a CI run pass)."""
        return any(
            result.outcome in (Outcome.EXECUTED_FAIL, Outcome.BLOCKED) for result in self.results
        )


def evaluate(leg: Leg, adapter: HostAdapter, ctx: Context) -> Verdict:
    """Run one leg on one host. Every path ends in a verdict: a failed check is
    ``executed-fail``, a missing seam or capability its gate verdict, anything unexpected (the host
    did not answer, or answered something unreadable) ``blocked``."""
    try:
        if not leg.server_free:
            closed = leg.gate.closed_by(ctx.capabilities)
            if closed is not None:
                return closed
        return leg.check(adapter, ctx)
    except LegFailedError as failure:
        return Verdict(Outcome.EXECUTED_FAIL, str(failure))
    except LegNotRunError as unavailable:
        return unavailable.verdict
    except Exception as exc:  # a leg must end with an outcome, whatever the host did
        return Verdict(Outcome.BLOCKED, f"{type(exc).__name__}: {exc}"[:500])


def fold(verdicts: Sequence[tuple[str, Verdict]]) -> tuple[str, Verdict]:
    """The most telling ``(host, verdict)`` of one leg over several hosts."""
    return min(verdicts, key=lambda pair: (_RANK[pair[1].outcome], pair[1].missing))


def enforce_strict(verdict: Verdict) -> Verdict:
    """Strict mode (upstream ``OPENWOP_REQUIRE_BEHAVIOR=true``): a leg that could not execute
    because a capability or seam is missing, or because it was blocked, fails."""
    unexecuted = verdict.outcome in (Outcome.SKIPPED, Outcome.BLOCKED) or (
        verdict.outcome is Outcome.INAPPLICABLE and verdict.missing
    )
    if not unexecuted:
        return verdict
    return Verdict(Outcome.EXECUTED_FAIL, f"strict: {verdict.outcome.value}: {verdict.reason}")


def run_conformance(
    adapters: Sequence[HostAdapter], legs: Sequence[Leg] = LEGS, *, strict: bool = False
) -> Report:
    """Every leg against every host; one result per leg."""
    if not adapters:
        raise ValueError("run_conformance needs at least one host adapter")
    contexts = [(adapter, Context(adapter)) for adapter in adapters]
    labelled = len(adapters) > 1
    results: list[LegResult] = []
    for leg in legs:
        if leg.server_free:
            adapter, ctx = contexts[0]
            verdicts = [(SERVER_FREE, evaluate(leg, adapter, ctx))]
        else:
            verdicts = [(a.name, evaluate(leg, a, ctx)) for a, ctx in contexts]
        host, verdict = fold(verdicts)
        if strict:
            verdict = enforce_strict(verdict)
        labelled_reason = labelled and host != SERVER_FREE
        reason = f"[{host}] {verdict.reason}" if labelled_reason else verdict.reason
        per_host = tuple(HostVerdict(h, v.outcome, v.reason) for h, v in verdicts)
        results.append(
            LegResult(leg.requirement_id, verdict.outcome, reason, host, leg.summary, per_host)
        )
    return Report(tuple(a.name for a in adapters), strict, tuple(results))
