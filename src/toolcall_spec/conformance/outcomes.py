"""What a conformance leg concludes: one of five outcomes, always with a reason.

A leg function either returns a ``Verdict`` or raises one of the exceptions below; the runner
turns every path into an outcome, so a leg never ends without one (upstream forbids a bare early
return). ``executed-*`` outcomes mean the host was really exercised; the other three say why not.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Outcome(str, Enum):
    EXECUTED_PASS = "executed-pass"
    """The host was exercised and did what the requirement says."""
    EXECUTED_FAIL = "executed-fail"
    """The host was exercised and violated the requirement (or, in strict mode, could not be)."""
    SKIPPED = "skipped"
    """The leg needs a seam (what the agent saw, live invocation counts) the host lacks."""
    INAPPLICABLE = "inapplicable"
    """The host's discovery document puts it outside the leg's gate."""
    BLOCKED = "blocked"
    """The leg could not finish: the host did not answer, or answered something unreadable."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Verdict:
    """A leg's conclusion on one host. ``missing`` marks a gate that failed because the host lacks
    a capability or seam; strict mode turns exactly those (and ``blocked``) into failures, while an
    ``inapplicable`` that is by design (e.g. the refusal leg on a host that implements the feature)
    stays inapplicable."""

    outcome: Outcome
    reason: str
    missing: bool = False

    @property
    def executed(self) -> bool:
        return self.outcome in (Outcome.EXECUTED_PASS, Outcome.EXECUTED_FAIL)


def passed(reason: str) -> Verdict:
    return Verdict(Outcome.EXECUTED_PASS, reason)


class LegFailedError(Exception):
    """Raised by a leg (usually through ``check``) when the host violates the requirement."""


class LegNotRunError(Exception):
    """Raised by a leg when it cannot run on this host; carries the verdict to report."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


def check(condition: bool, reason: str) -> None:
    """Fail the leg with ``reason`` unless ``condition`` holds."""
    if not condition:
        raise LegFailedError(reason)


def seam_missing(seam: str) -> LegNotRunError:
    return LegNotRunError(
        Verdict(Outcome.SKIPPED, f"the host does not expose the {seam} seam", missing=True)
    )
