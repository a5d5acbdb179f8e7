"""A conformance leg: one requirement id, a gate, and a check that runs against a host adapter.

The gate is declarative so reports and docs can say what each leg needs: capability members the
host must advertise (``requires``), members whose advertisement makes the leg inapplicable by
design (``excludes``: a refusal leg on a host that implements the feature), conformance fixtures
the discovery document must list, and the seams the check reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import orjson

from toolcall_spec.capabilities import CapabilityPath, advertised_modes, advertises, dotted
from toolcall_spec.conformance.adapter import HostAdapter, RunCreated, RunRefusal, RunRequest
from toolcall_spec.conformance.outcomes import LegFailedError, Outcome, Verdict
from toolcall_spec.host.fixtures import lists_fixture
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID

Seam = Literal["agent output", "live invocation counts", "HTTP wire"]


def non_empty_string(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def is_count(value: Any, expected: int) -> bool:
    """``value`` is the JSON integer ``expected`` (``False`` is not 0)."""
    return type(value) is int and value == expected


@dataclass(frozen=True, slots=True)
class Gate:
    requires: tuple[CapabilityPath, ...] = ()
    excludes: tuple[CapabilityPath, ...] = ()
    fixtures: tuple[str, ...] = ()
    seams: tuple[Seam, ...] = ()

    def closed_by(self, capabilities: Mapping[str, Any]) -> Verdict | None:
        """Why the host falls outside this gate, or ``None`` when the leg may run."""
        for path in self.requires:
            if not advertises(capabilities, path):
                reason = f"the host does not advertise {dotted(path)}"
                return Verdict(Outcome.INAPPLICABLE, reason, missing=True)
        for fixture_id in self.fixtures:
            if not lists_fixture(capabilities, fixture_id):
                reason = f"the host does not list the fixture {fixture_id} in discovery fixtures"
                return Verdict(Outcome.INAPPLICABLE, reason, missing=True)
        for path in self.excludes:
            if advertises(capabilities, path):
                reason = f"the host advertises {dotted(path)}, so it has nothing to refuse"
                return Verdict(Outcome.INAPPLICABLE, reason)
        return None

    def describe(self) -> str:
        parts = [f"advertises {dotted(p)}" for p in self.requires]
        parts += [f"does not advertise {dotted(p)}" for p in self.excludes]
        parts += [f"lists fixture {f}" for f in self.fixtures]
        parts += [f"exposes {s}" for s in self.seams]
        return "; ".join(parts) or "none (server-free)"


@dataclass(frozen=True, slots=True)
class CompletedRun:
    """A run the host accepted and finished, with its event log and eval summary."""

    run_id: str
    events: list[dict[str, Any]]
    summary: dict[str, Any]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [e for e in self.events if isinstance(e, dict) and e.get("type") == event_type]

    def payloads(self, event_type: str) -> list[dict[str, Any]]:
        return [
            e["payload"] if isinstance(e.get("payload"), dict) else {}
            for e in self.of_type(event_type)
        ]

    def returned(self) -> list[dict[str, Any]]:
        """The ``agent.tool-returned`` payloads, in log order."""
        return self.payloads("agent.tool-returned")


class Context:
    """What legs share on one host: its discovery document, read once, and the runs they ask
    for, created once per (suite, mode) so several legs can read the same fixture run."""

    def __init__(self, adapter: HostAdapter) -> None:
        self.adapter = adapter
        self.agent_id = SCRIPTED_AGENT_ID
        self._runs: dict[bytes, CompletedRun] = {}

    @cached_property
    def capabilities(self) -> dict[str, Any]:
        return self.adapter.capabilities()

    def advertises(self, path: CapabilityPath) -> bool:
        return advertises(self.capabilities, path)

    def modes(self) -> list[str]:
        """The eval modes the host advertises in ``agents.evalSuite.modes``."""
        return advertised_modes(self.capabilities)

    def create(self, suite: dict[str, Any], *, mode: str = "golden") -> RunCreated | RunRefusal:
        """A fresh run (never cached): for legs that measure side effects around it."""
        return self.adapter.create_eval_run(suite, mode=mode, agent_id=self.agent_id)

    def complete(self, created: RunCreated | RunRefusal, what: str) -> CompletedRun:
        """The finished run, or a failure naming ``what`` the host refused."""
        if isinstance(created, RunRefusal):
            raise LegFailedError(
                f"the host refused {what}: {created.status} {_envelope_text(created.envelope)}"
            )
        run_id = created.run_id
        return CompletedRun(run_id, self.adapter.events(run_id), self.adapter.summary(run_id))

    def run_request(self, request: RunRequest) -> CompletedRun:
        """A fresh finished run of ``request`` (modes, baseline, fixture runs, RunOptions)."""
        what = f"the suite {request.suite.get('suiteId')} with its create options"
        return self.complete(self.adapter.create_run(request), what)

    def run(self, suite: dict[str, Any], *, mode: str = "golden") -> CompletedRun:
        """The finished run of ``suite`` in ``mode``, shared by every leg that asks for it."""
        key = orjson.dumps([suite, mode], option=orjson.OPT_SORT_KEYS)
        if key not in self._runs:
            what = f"the suite {suite.get('suiteId')} in mode {mode}"
            self._runs[key] = self.complete(self.create(suite, mode=mode), what)
        return self._runs[key]


def _envelope_text(envelope: Mapping[str, Any]) -> str:
    return orjson.dumps(envelope).decode()[:300]


Check = Callable[[HostAdapter, Context], Verdict]


@dataclass(frozen=True, slots=True)
class Leg:
    """One conformance leg. ``requirement_id`` is its name: exactly one per leg."""

    requirement_id: str
    summary: str
    check: Check
    gate: Gate = Gate()
    server_free: bool = False
