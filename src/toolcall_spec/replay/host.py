"""Moved: the reference host is ``toolcall_spec.host.reference`` (import from
``toolcall_spec.host``). This module keeps the old import path working."""

from __future__ import annotations

from toolcall_spec.host.reference import (
    CallResult,
    InvalidCapabilitiesError,
    LiveTool,
    ReferenceHost,
    TaskRun,
    capabilities_without,
    default_capabilities,
)
from toolcall_spec.host.store import UnknownRunError

__all__ = [
    "CallResult",
    "InvalidCapabilitiesError",
    "LiveTool",
    "ReferenceHost",
    "TaskRun",
    "UnknownRunError",
    "capabilities_without",
    "default_capabilities",
]
