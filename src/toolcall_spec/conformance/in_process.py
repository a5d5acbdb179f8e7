"""The embedded reference host as a conformance target, with both seams exposed.

``embedded_adapters()`` is what ``toolcall-spec conformance`` runs without ``--host``: the reference
host as shipped, and the same host advertising neither ``fixtureErrors`` nor ``fixtureMatching``,
so the legs that need a host *without* a feature (the RFC 0245 §C refusal, the fixtureMatching
refusal) execute too instead of being inapplicable.
"""

from __future__ import annotations

from typing import Any

from toolcall_spec.conformance.adapter import RunCreated, RunRefusal
from toolcall_spec.replay.host import ReferenceHost, capabilities_without
from toolcall_spec.replay.refusal import RunRefused

REFERENCE = "reference"
RESTRICTED = "reference without fixtureErrors/fixtureMatching"


class InProcessAdapter:
    """A ``toolcall_spec.conformance.adapter.HostAdapter`` over a ``ReferenceHost`` (or a
    subclass: the mutant hosts), in the same process."""

    def __init__(self, host: ReferenceHost, name: str = REFERENCE) -> None:
        self.host = host
        self.name = name

    def capabilities(self) -> dict[str, Any]:
        return dict(self.host.capabilities)

    def create_eval_run(
        self, suite: dict[str, Any], *, mode: str = "golden", agent_id: str
    ) -> RunCreated | RunRefusal:
        try:
            return RunCreated(self.host.create_run(suite, mode=mode, agent_id=agent_id))
        except RunRefused as refusal:
            return RunRefusal(refusal.status, refusal.envelope)

    def events(self, run_id: str) -> list[dict[str, Any]]:
        return self.host.events(run_id)

    def summary(self, run_id: str) -> dict[str, Any]:
        return self.host.summary(run_id)

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]] | None:
        return self.host.agent_output(run_id)

    def live_invocations(self) -> dict[str, int] | None:
        return self.host.live_invocations()


def restricted(host: ReferenceHost) -> ReferenceHost:
    """The same host (class, live tools, clock) advertising neither ``fixtureErrors`` nor
    ``fixtureMatching``."""
    document = capabilities_without(host.capabilities, "fixtureErrors")
    return host.with_capabilities(capabilities_without(document, "fixtureMatching"))


def adapter_pair(host: ReferenceHost) -> list[InProcessAdapter]:
    """``host`` and its restricted twin, as the embedded default runs them."""
    return [InProcessAdapter(host, REFERENCE), InProcessAdapter(restricted(host), RESTRICTED)]


def embedded_adapters() -> list[InProcessAdapter]:
    """The embedded default: a fresh reference host and its restricted twin."""
    return adapter_pair(ReferenceHost())
