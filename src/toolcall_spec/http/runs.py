"""The runs a server holds: created in the event loop, executed on worker threads, finished back
in the event loop. Every record is mutated in the loop thread only, so no record needs a lock.

A run is ``running`` from its creation until its worker finishes, then ``completed`` (it produced
an event log and a summary) or ``failed`` (with an error). Limits: at most ``max_active_runs`` runs
queued or running, at most ``max_runs_kept`` in memory; the oldest finished runs are evicted
first, and past either limit a create is answered 429 while everything else keeps working.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.limits import Limits

RunStatus = Literal["running", "completed", "failed"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """A run the host refuses at create: the status and the flat envelope to answer with."""

    status: int
    envelope: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a finished run produced."""

    events: list[dict[str, Any]]
    summary: dict[str, Any] | None
    agent_output: dict[str, list[dict[str, Any]]] | None = None


class RunBackend(Protocol):
    """What executes runs: the reference host, or a test double."""

    def capabilities(self) -> dict[str, Any]:
        """The discovery document."""
        ...

    def check(self, suite: dict[str, Any], *, mode: str, agent_id: str) -> Refusal | None:
        """The run-create checks alone (fast): the refusal, or ``None`` when the run may start."""
        ...

    def execute(
        self, run_id: str, suite: dict[str, Any], *, mode: str, agent_id: str
    ) -> RunOutcome:
        """Run to completion (blocking, on a worker thread); the events carry ``run_id``."""
        ...

    def live_invocations(self) -> dict[str, int] | None:
        """Seam: per live tool, how often it was invoked; ``None`` when not exposed."""
        ...


@dataclass(eq=False)
class RunRecord:
    run_id: str
    agent_id: str
    eval_mode: str
    suite_id: str | None
    suite_version: str | None
    created_at: str
    status: RunStatus = "running"
    finished_at: str | None = None
    outcome: RunOutcome | None = None
    error: dict[str, Any] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.outcome.events if self.outcome else []

    def events_after(self, sequence: int, limit: int) -> list[dict[str, Any]]:
        """Events with ``sequence`` greater than ``sequence``, at most ``limit`` of them; the log
        is in sequence order from 0, so the start is an index, not a scan."""
        events = self.events
        start = max(sequence + 1, 0)
        if start < len(events) and events[start].get("sequence") == start:
            return events[start : start + limit]
        return [e for e in events if e.get("sequence", -1) > sequence][:limit]


RunGate = Callable[[str], None]
"""Called on the worker thread before a run executes (tests hold runs ``running`` with it)."""


class RunRegistry:
    """Creates, executes, finds and evicts runs. Use from the event loop thread only."""

    def __init__(
        self,
        backend: RunBackend,
        limits: Limits,
        *,
        tenant: str = "local",
        gate: RunGate | None = None,
        new_opaque_id: Callable[[], str] | None = None,
    ) -> None:
        self.backend = backend
        self.limits = limits
        self.tenant = tenant
        self.gate = gate
        self._new_opaque_id = new_opaque_id or (lambda: uuid.uuid4().hex)
        self._runs: OrderedDict[str, RunRecord] = OrderedDict()
        self._executor: ThreadPoolExecutor | None = None

    def get(self, run_id: str) -> RunRecord | None:
        return self._runs.get(run_id)

    def __len__(self) -> int:
        return len(self._runs)

    def active_count(self) -> int:
        return sum(1 for run in self._runs.values() if not run.is_terminal)

    def create(self, suite: dict[str, Any], *, mode: str, agent_id: str) -> RunRecord:
        """Register a run and start it on a worker; ``ApiError`` (429) past a limit. The
        run-create checks must have passed already (``RunBackend.check``)."""
        self._make_room()
        run_id = f"{self.tenant}/{self._new_opaque_id()}"
        record = RunRecord(
            run_id=run_id,
            agent_id=agent_id,
            eval_mode=mode,
            suite_id=_str_or_none(suite.get("suiteId")),
            suite_version=_str_or_none(suite.get("version")),
            created_at=now(),
        )
        self._runs[run_id] = record
        loop = asyncio.get_running_loop()
        future = self._pool().submit(self._execute, run_id, suite, mode, agent_id)
        future.add_done_callback(lambda done: _in_loop(loop, self._finish, record, done))
        return record

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                self.limits.worker_threads, thread_name_prefix="toolcall-spec-run"
            )
        return self._executor

    def _make_room(self) -> None:
        if self.active_count() >= self.limits.max_active_runs:
            raise _busy(f"this host already has {self.limits.max_active_runs} runs in progress")
        while len(self._runs) >= self.limits.max_runs_kept:
            oldest = next((rid for rid, run in self._runs.items() if run.is_terminal), None)
            if oldest is None:
                raise _busy(
                    f"this host keeps {self.limits.max_runs_kept} runs and none of them "
                    "has finished"
                )
            del self._runs[oldest]

    def _execute(self, run_id: str, suite: dict[str, Any], mode: str, agent_id: str) -> RunOutcome:
        if self.gate is not None:
            self.gate(run_id)
        return self.backend.execute(run_id, suite, mode=mode, agent_id=agent_id)

    @staticmethod
    def _finish(record: RunRecord, done: Future[RunOutcome]) -> None:
        record.finished_at = now()
        error = None if done.cancelled() else done.exception()
        if done.cancelled() or error is not None:
            record.status = "failed"
            record.error = _failure(error)
        else:
            record.outcome = done.result()
            record.status = "completed"
        record.done.set()


def _in_loop(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    """Hand ``callback`` to the loop from a worker thread; after shutdown there is no one left
    to tell, and that is fine."""
    with contextlib.suppress(RuntimeError):  # the loop is closed
        loop.call_soon_threadsafe(callback, *args)


def _failure(error: BaseException | None) -> dict[str, Any]:
    if error is None:
        return {"code": "cancelled", "message": "the server stopped before the run finished"}
    status = getattr(error, "status", None)
    envelope = getattr(error, "envelope", None)
    if isinstance(status, int) and isinstance(envelope, dict):
        # The backend refused after all (its checks moved on meanwhile): keep its own envelope.
        return {
            "code": str(envelope.get("error", "refused")),
            "message": str(envelope.get("message", "the run was refused")),
            "details": {"status": status, "envelope": envelope},
        }
    return {
        "code": "internal_error",
        "message": f"the run failed: {type(error).__name__}: {error}"[:500],
    }


def _busy(message: str) -> ApiError:
    return ApiError(429, "rate_limited", f"{message}; retry later", headers={"Retry-After": "1"})


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def now() -> str:
    """RFC 3339 UTC with milliseconds, the timestamp form the event schema accepts."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
