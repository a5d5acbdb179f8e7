"""The host port and the reference host every consumer uses (the CLI, the HTTP server, the
conformance runner): ``port`` (what a host offers), ``reference`` (the reference host),
``store`` (finished runs), ``fixtures`` (the conformance fixtures a host seeds), ``inputs``
(the id source, clock and tenant a host is given, checked where they enter)."""

from __future__ import annotations

from toolcall_spec.host.inputs import InvalidHostInputError
from toolcall_spec.host.port import HostPort, owner_for
from toolcall_spec.host.reference import (
    CallResult,
    InvalidCapabilitiesError,
    ReferenceHost,
    TaskRun,
    capabilities_without,
    default_capabilities,
)
from toolcall_spec.host.store import RunRecord, RunStore, UnknownRunError
from toolcall_spec.replay.refusal import RunRefused, RunRequest

__all__ = [
    "CallResult",
    "HostPort",
    "InvalidCapabilitiesError",
    "InvalidHostInputError",
    "ReferenceHost",
    "RunRecord",
    "RunRefused",
    "RunRequest",
    "RunStore",
    "TaskRun",
    "UnknownRunError",
    "capabilities_without",
    "default_capabilities",
    "owner_for",
]
