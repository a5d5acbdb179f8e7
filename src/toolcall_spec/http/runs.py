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
from typing import Any, Literal

from toolcall_spec.clock import timestamp_now, utc_now
from toolcall_spec.host.port import HostPort
from toolcall_spec.host.store import RunRecord, run_snapshot
from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.limits import Limits
from toolcall_spec.openwop_wire import RUN_FAILED, RUN_STARTED, TERMINAL_STATUSES
from toolcall_spec.replay.events import EventLog
from toolcall_spec.replay.refusal import RunRequest
from toolcall_spec.typed import RunEvent

RunStatus = Literal["running", "completed", "failed"]


@dataclass(eq=False)
class ServedRun:
    """A run as the server tracks it: what the create asked, its status, and its one record
    (``toolcall_spec.host.store.RunRecord``) once the host finished it."""

    run_id: str
    request: RunRequest
    workflow_id: str
    owner: dict[str, Any]
    created_at: str
    status: RunStatus = "running"
    finished_at: str | None = None
    record: RunRecord | None = None
    error: dict[str, Any] | None = None
    failure_log: list[RunEvent] = field(default_factory=list)
    """The log of a run whose execution failed: ``run.started`` then ``run.failed``."""
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def events(self) -> list[RunEvent]:
        return self.record.events if self.record else self.failure_log

    def snapshot(self) -> dict[str, Any]:
        """``GET /runs/{runId}``: the record's snapshot once finished, else one from the create."""
        if self.record is not None:
            return self.record.snapshot()
        return run_snapshot(
            self.run_id,
            self.workflow_id,
            self.status,
            self.owner,
            options=self.request.options,
            started_at=self.created_at,
            completed_at=self.finished_at,
            error=self.error,
        )

    def events_after(self, sequence: int, limit: int) -> list[RunEvent]:
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
        backend: HostPort,
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
        self._runs: OrderedDict[str, ServedRun] = OrderedDict()
        self._active = 0
        self._executor: ThreadPoolExecutor | None = None

    def get(self, run_id: str) -> ServedRun | None:
        return self._runs.get(run_id)

    def __len__(self) -> int:
        return len(self._runs)

    def active_count(self) -> int:
        return self._active

    def create(self, request: RunRequest) -> ServedRun:
        """Register a run and start it on a worker; ``ApiError`` (429) past a limit. The
        run-create checks must have passed already (``HostPort.check``)."""
        self._make_room()
        run_id = f"{self.tenant}/{self._new_opaque_id()}"
        run = ServedRun(
            run_id=run_id,
            request=request,
            workflow_id=str(request.suite.get("suiteId", "eval")),
            owner=dict(request.owner or {}),
            created_at=timestamp_now(),
        )
        self._runs[run_id] = run
        self._active += 1
        loop = asyncio.get_running_loop()
        future = self._pool().submit(self._execute, run_id, request)
        future.add_done_callback(lambda done: _in_loop(loop, self._finish, run, done))
        return run

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

    def _execute(self, run_id: str, request: RunRequest) -> RunRecord:
        if self.gate is not None:
            self.gate(run_id)
        record = self.backend.execute(run_id, request)
        self.backend.store.put(record)  # finished runs live in the host's store (baselines...)
        return record

    def _finish(self, run: ServedRun, done: Future[RunRecord]) -> None:
        run.finished_at = timestamp_now()
        self._active -= 1
        error = None if done.cancelled() else done.exception()
        if done.cancelled() or error is not None:
            run.status = "failed"
            run.error = _failure(error)
            run.failure_log = failed_log(run, run.error)
        else:
            run.record = done.result()
            run.status = "completed"
        run.done.set()


def _in_loop(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    """Hand ``callback`` to the loop from a worker thread; after shutdown there is no one left
    to tell, and that is fine."""
    with contextlib.suppress(RuntimeError):  # the loop is closed
        loop.call_soon_threadsafe(callback, *args)


def failed_log(run: ServedRun, error: dict[str, Any]) -> list[RunEvent]:
    """The log of a run that failed before it had one: it still starts with ``run.started`` and
    ends on a terminal event, so a poll or a stream of it ends too."""
    log = EventLog(run.run_id, utc_now)
    log.append(RUN_STARTED, {"workflowId": run.workflow_id, "owner": run.owner})
    log.append(RUN_FAILED, {"error": error})
    return log.events


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
