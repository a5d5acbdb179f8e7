"""The server's limits, in one place. Past any of them a request gets a clear 4xx (or 503 while
the memory budget is taken by runs executing) and the server keeps serving: no limit is enforced
by running out of memory or threads."""

from __future__ import annotations

from dataclasses import dataclass

from toolcall_spec.host.store import StoreBudget
from toolcall_spec.http.suite_refs import DEFAULT_MAX_SUITE_BYTES

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    max_body_bytes: int = 1024 * 1024
    """Largest request body read (413 past it). A suite travels inside it as a ``data:`` URI."""

    max_suite_bytes: int = DEFAULT_MAX_SUITE_BYTES
    """Largest suite document once decoded or read from the allowed directory (413 past it)."""

    max_runs_kept: int = 1000
    """Finished runs kept in memory; the oldest are evicted first."""

    max_kept_bytes: int = 256 * MIB
    """Memory budget, in estimated bytes, of the finished runs kept plus the runs executing
    (``toolcall_spec.host.store.record_bytes``). The oldest finished runs are evicted to make
    room; a create whose run does not fit beside the runs executing gets 503 with Retry-After."""

    max_run_age_seconds: float = 3600.0
    """A finished run is evicted this long after it finished."""

    max_events_per_run: int = 20_000
    """Events one run may write; a suite that would write more is refused at create (413)."""

    max_active_runs: int = 32
    """Runs queued or running at once (429 past it)."""

    worker_threads: int = 4
    """Threads executing runs; runs past this many wait in the queue as ``running``."""

    min_poll_timeout: float = 1.0
    max_poll_timeout: float = 60.0
    """Bounds of the long-poll ``timeout`` query parameter, in seconds (400 outside them)."""

    max_events_per_poll: int = 1000
    """Events returned by one poll; a client asks again from the last sequence it received."""

    sse_keepalive_seconds: float = 15.0
    """Interval of SSE comment lines while a run has nothing new, so proxies keep the stream."""

    def __post_init__(self) -> None:
        for name in (
            "max_body_bytes",
            "max_suite_bytes",
            "max_runs_kept",
            "max_active_runs",
            "worker_threads",
            "max_events_per_poll",
            "max_kept_bytes",
            "max_events_per_run",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not self.max_run_age_seconds > 0:
            raise ValueError("max_run_age_seconds must be positive")
        if not 0 < self.min_poll_timeout <= self.max_poll_timeout:
            raise ValueError("poll timeout bounds must satisfy 0 < min <= max")

    def store_budget(self) -> StoreBudget:
        """What the run store keeps at most under these limits."""
        return StoreBudget(self.max_runs_kept, self.max_kept_bytes, self.max_run_age_seconds)
