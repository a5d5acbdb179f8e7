"""The host port: what the CLI, the HTTP server and the conformance runner ask of a host.

- ``discovery()``: the discovery document (every capability flag is read from it);
- ``check(request)``: the run-create checks alone, returning the one refusal type
  (``toolcall_spec.replay.refusal.RunRefused``) or ``None``;
- ``execute(run_id, request)``: run a checked request to completion and return its
  ``toolcall_spec.host.store.RunRecord`` (blocking; the caller decides where it runs);
- a ``toolcall_spec.host.store.RunStore`` keeps finished runs; execution does not store.

A ``toolcall_spec.replay.refusal.RunRequest`` is everything a create asks for: the suite,
the agent, the RFC 0251 modes and baseline, the RFC 0252 fixture runs, the RunOptions members and
the owner. The suite is validated once, by ``check``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol

from toolcall_spec.host.store import RunRecord, RunStore
from toolcall_spec.replay.refusal import RunRefused, RunRequest

__all__ = ["HostPort", "RunRequest", "owner_for"]

ISSUER = "urn:toolcall-spec:reference-host"
"""The trust root of the subjects this package's hosts stamp on the runs they own."""


def owner_for(tenant: str, token: str | None = None) -> dict[str, Any]:
    """The run owner (``RunSnapshot.owner``, RFC 0170): the tenant and the subject who created
    the run. Behind a bearer token the subject is the key (named by a digest, never the key
    itself); without one it is the anonymous subject."""
    if token is None:
        subject = {
            "issuer": ISSUER,
            "subjectId": "anonymous",
            "tenant": tenant,
            "lane": "anonymous",
            "kind": "anonymous",
        }
    else:
        digest = hashlib.sha256(token.encode("utf-8")).hexdigest()[:24]
        subject = {
            "issuer": ISSUER,
            "subjectId": f"key-{digest}",
            "tenant": tenant,
            "lane": "api-key",
            "kind": "user",
        }
    return {"tenant": tenant, "subject": subject}


class HostPort(Protocol):
    """What executes eval runs: the reference host, a mutant of it in tests, or a test double."""

    store: RunStore

    def discovery(self) -> dict[str, Any]:
        """The discovery document (every capability flag a consumer reads comes from it)."""
        ...

    def check(self, request: RunRequest) -> RunRefused | None:
        """The run-create checks (fast; nothing runs): the refusal, or ``None``."""
        ...

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        """Run a request ``check`` accepted to completion; the log carries ``run_id``."""
        ...

    def live_invocations(self) -> dict[str, int] | None:
        """Seam: per live tool, how often it was invoked; ``None`` when not exposed."""
        ...
