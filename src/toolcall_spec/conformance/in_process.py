"""The embedded reference host as a conformance target, with both seams exposed.

``embedded_adapters()`` is what ``toolcall-spec conformance`` runs without ``--host``: the reference
host as shipped, and the same host advertising neither ``fixtureErrors`` nor ``fixtureMatching``,
so the legs that need a host *without* a feature (the RFC 0245 §C refusal, the fixtureMatching
refusal) execute too instead of being inapplicable.
"""

from __future__ import annotations

from typing import Any, cast

from toolcall_spec.conformance.adapter import RunCreated, RunRefusal, WireAnswer
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.replay.refusal import RunRefused, RunRequest

REFERENCE = "reference"
RESTRICTED = "reference without fixtureErrors, fixtureMatching, baselineSelection, recordedFixtures"

WITHHELD = ("fixtureErrors", "fixtureMatching", "baselineSelection", "recordedFixtures")
"""What the restricted twin does not advertise, so every refusal leg executes on it."""


class InProcessAdapter:
    """A ``toolcall_spec.conformance.adapter.HostAdapter`` over a ``ReferenceHost`` (or a
    subclass: the mutant hosts), in the same process."""

    def __init__(self, host: ReferenceHost, name: str = REFERENCE) -> None:
        self.host = host
        self.name = name

    def capabilities(self) -> dict[str, Any]:
        return self.host.discovery()  # what the host serves, as GET /.well-known/openwop does

    def create_eval_run(
        self, suite: dict[str, Any], *, mode: str = "golden", agent_id: str
    ) -> RunCreated | RunRefusal:
        return self.create_run(RunRequest(suite, agent_id, mode))

    def create_run(self, request: RunRequest) -> RunCreated | RunRefusal:
        try:
            return RunCreated(self.host.submit(request))
        except RunRefused as refusal:
            return refusal

    def snapshot(self, run_id: str) -> dict[str, Any]:
        return self.host.record(run_id).snapshot()

    def raw_get(self, path: str) -> WireAnswer | None:
        return None  # in process there is no wire

    # The adapter hands every host's documents to the legs as plain JSON (a foreign host's are not
    # known to be valid): the reference host's typed log and summary are read as such.
    def events(self, run_id: str) -> list[dict[str, Any]]:
        return cast("list[dict[str, Any]]", self.host.events(run_id))

    def summary(self, run_id: str) -> dict[str, Any]:
        return cast("dict[str, Any]", self.host.summary(run_id))

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]] | None:
        return self.host.agent_output(run_id)

    def live_invocations(self) -> dict[str, int] | None:
        return self.host.live_invocations()


def restricted(host: ReferenceHost) -> ReferenceHost:
    """The same host (class, live tools, clock) advertising none of ``WITHHELD``."""
    return host.without(*WITHHELD)


def adapter_pair(host: ReferenceHost) -> list[InProcessAdapter]:
    """``host`` and its restricted twin, as the embedded default runs them."""
    return [InProcessAdapter(host, REFERENCE), InProcessAdapter(restricted(host), RESTRICTED)]


def embedded_adapters() -> list[InProcessAdapter]:
    """The embedded default: a fresh reference host and its restricted twin."""
    return adapter_pair(ReferenceHost())
