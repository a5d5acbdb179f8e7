"""The server's limits, in one place. Past any of them a request gets a clear 4xx and the server
keeps serving: no limit is enforced by running out of memory or threads."""

from __future__ import annotations

from dataclasses import dataclass

from toolcall_spec.http.suite_refs import DEFAULT_MAX_SUITE_BYTES


@dataclass(frozen=True, slots=True)
class Limits:
    max_body_bytes: int = 1024 * 1024
    """Largest request body read (413 past it). A suite travels inside it as a ``data:`` URI."""

    max_suite_bytes: int = DEFAULT_MAX_SUITE_BYTES
    """Largest suite document once decoded or read from the allowed directory (413 past it)."""

    max_runs_kept: int = 1000
    """Runs kept in memory; the oldest finished runs are evicted first (429 when all are live)."""

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
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 0 < self.min_poll_timeout <= self.max_poll_timeout:
            raise ValueError("poll timeout bounds must satisfy 0 < min <= max")
