"""The reference host (``toolcall_spec.replay.ReferenceHost``) as the HTTP server's run backend.

Each run gets its own short-lived ``ReferenceHost``, built with the run id the server minted (its
id source answers that id), and dropped once its log, summary and agent output are copied out:
the server's run registry is then the only place runs are kept, and its eviction really frees
memory. Live invocation counts are summed across those hosts, so the seam still covers the
server's whole life.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

from toolcall_spec.http.runs import Refusal, RunOutcome
from toolcall_spec.replay.host import LiveTool, ReferenceHost, capabilities_without
from toolcall_spec.replay.refusal import RunRefused


class ReferenceBackend:
    """Runs suites on the reference host advertising ``capabilities`` (default: the reference
    host's own document). ``host_class`` lets a test serve a mutant host."""

    def __init__(
        self,
        capabilities: Mapping[str, Any] | None = None,
        *,
        live_tools: Mapping[str, LiveTool] | None = None,
        host_class: type[ReferenceHost] = ReferenceHost,
    ) -> None:
        self._prototype = host_class(capabilities, live_tools=live_tools)
        self._host_class = host_class
        self._live_tools = dict(live_tools or {})
        self._live_counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    @classmethod
    def without(cls, *members: str, **kwargs: Any) -> ReferenceBackend:
        """The reference host advertising none of these ``agents.evalSuite`` members: with
        ``fixtureErrors`` it is RFC 0245 §C's negative host, with ``fixtureMatching`` the host
        that must refuse ``args``/``argsMatch``."""
        capabilities = ReferenceHost().capabilities
        for member in members:
            capabilities = capabilities_without(capabilities, member)
        return cls(capabilities, **kwargs)

    def capabilities(self) -> dict[str, Any]:
        return dict(self._prototype.capabilities)

    def check(self, suite: dict[str, Any], *, mode: str, agent_id: str) -> Refusal | None:
        try:
            self._prototype.check_run(suite, mode=mode, agent_id=agent_id)
        except RunRefused as refused:
            return Refusal(refused.status, refused.envelope)
        return None

    def execute(
        self, run_id: str, suite: dict[str, Any], *, mode: str, agent_id: str
    ) -> RunOutcome:
        tenant, _, opaque = run_id.partition("/")
        host = self._host_class(
            self._prototype.capabilities,
            live_tools=self._live_tools,
            ids=lambda: opaque,
            tenant=tenant,
        )
        try:
            created = host.create_run(suite, mode=mode, agent_id=agent_id)
        finally:
            with self._lock:
                self._live_counts.update(host.live_invocations())
        if created != run_id:  # pragma: no cover - the id source above makes them equal
            raise RuntimeError(f"the host named the run {created!r}, not {run_id!r}")
        return RunOutcome(host.events(run_id), host.summary(run_id), host.agent_output(run_id))

    def live_invocations(self) -> dict[str, int]:
        with self._lock:
            return dict(self._live_counts)
