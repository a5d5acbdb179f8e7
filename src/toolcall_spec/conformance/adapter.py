"""The host adapter: everything a conformance leg may ask of a host, in process or over HTTP.

Legs only talk to a host through this protocol. ``InProcessAdapter`` (conformance/in_process.py)
wraps the embedded reference host; ``HttpAdapter`` (toolcall_spec.http.adapter) speaks the OpenWOP
v2 HTTP surface. Seams a host may lack return ``None``; a leg that needs a missing seam is
``inapplicable`` (or ``executed-fail`` in strict mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from toolcall_spec.replay.refusal import RunRefused, RunRequest

RunRefusal = RunRefused
"""A run the host refused at create: ``status``, ``field`` and the flat error ``envelope`` (the
one refusal type, here under the name the legs have always used)."""

__all__ = ["HostAdapter", "RunCreated", "RunRefusal", "RunRequest", "WireAnswer"]


@dataclass(frozen=True, slots=True)
class RunCreated:
    """A run the host accepted (and, for the reference host, ran to completion)."""

    run_id: str
    links: dict[str, str] | None = None
    """The links of the create answer (``eventsUrl``, ``statusUrl``), when there is a wire."""


@dataclass(frozen=True, slots=True)
class WireAnswer:
    """One raw HTTP answer (for legs that check the wire itself): status and parsed body."""

    status: int
    body: Any


class HostAdapter(Protocol):
    """What a conformance leg needs from a host."""

    name: str
    """A short label for reports, e.g. ``reference (in process)`` or the host URL."""

    def capabilities(self) -> dict[str, Any]:
        """The host's discovery document (``GET /.well-known/openwop``)."""
        ...

    def create_eval_run(
        self, suite: dict[str, Any], *, mode: str = "golden", agent_id: str
    ) -> RunCreated | RunRefusal:
        """Create an eval run of ``suite`` driven by ``agent_id``; return once it is terminal."""
        ...

    def create_run(self, request: RunRequest) -> RunCreated | RunRefusal:
        """Create the run ``request`` describes (modes, baseline, fixture runs, RunOptions);
        return once it is terminal."""
        ...

    def snapshot(self, run_id: str) -> dict[str, Any]:
        """The run snapshot (``GET /runs/{runId}``)."""
        ...

    def raw_get(self, path: str) -> WireAnswer | None:
        """Seam for wire legs: ``GET path`` exactly as given; ``None`` without a wire."""
        ...

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's event log, in sequence order."""
        ...

    def summary(self, run_id: str) -> dict[str, Any]:
        """The run's eval summary."""
        ...

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]] | None:
        """Seam: per task id, what the scripted agent received; ``None`` when not exposed."""
        ...

    def live_invocations(self) -> dict[str, int] | None:
        """Seam: per live tool, how often it was invoked; ``None`` when not exposed."""
        ...
