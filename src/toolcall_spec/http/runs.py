"""The runs a server holds: created in the event loop, executed on worker threads (a small run in
the event loop itself, right after its create is answered), finished back in the event loop. Every
in-flight record is mutated in the loop thread only, so none needs a lock.

A run is ``running`` from its creation until its worker finishes, then ``completed`` (it produced
an event log and a summary) or ``failed`` (with an error). The registry holds the runs in flight
(an O(1) count); finished runs, completed or failed, live in the backend's run store
(``toolcall_spec.host.store.RunStore``), which accounts their memory in bytes, together with
the reservations of the runs in flight, and evicts the oldest finished runs to make room.
Limits: at most ``max_active_runs`` runs queued or running (429 past it), at most
``max_events_per_run`` events per run (413 at create), and a create whose reservation does not fit
in ``max_kept_bytes`` beside the runs in flight gets 503 with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import orjson

from toolcall_spec.clock import random_id, timestamp_now, utc_now
from toolcall_spec.host.inputs import checked_id_source, checked_tenant
from toolcall_spec.host.port import HostPort
from toolcall_spec.host.store import (
    PackedRun,
    RunRecord,
    RunStore,
    parsing_bytes,
    planned_bytes,
    planned_events,
    run_snapshot,
)
from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.limits import Limits
from toolcall_spec.openwop_wire import RUN_FAILED, RUN_STARTED, TERMINAL_STATUSES
from toolcall_spec.replay.events import EventLog
from toolcall_spec.replay.refusal import RunRequest
from toolcall_spec.typed import EvalSummary, RunEvent

RunStatus = Literal["running", "completed", "failed"]


@dataclass(eq=False)
class ServedRun:
    """A run as the server serves it: in flight (what the create asked, ``running``), or
    finished, with its packed record (``toolcall_spec.host.store.PackedRun``)."""

    run_id: str
    workflow_id: str
    owner: dict[str, Any]
    options: dict[str, Any]
    created_at: str
    status: RunStatus = "running"
    packed: PackedRun | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def finished(cls, packed: PackedRun) -> ServedRun:
        """A finished run read back from the store."""
        run = cls(
            packed.run_id,
            packed.workflow_id,
            packed.owner,
            packed.options,
            packed.started_at or "",
            "failed" if packed.status == "failed" else "completed",
            packed,
        )
        run.done.set()
        return run

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def snapshot(self) -> dict[str, Any]:
        """``GET /runs/{runId}``: the record's snapshot once finished, else one from the create."""
        if self.packed is not None:
            return self.packed.snapshot()
        return run_snapshot(
            self.run_id,
            self.workflow_id,
            self.status,
            self.owner,
            options=self.options,
            started_at=self.created_at,
        )

    def events_page(self, sequence: int, limit: int) -> tuple[bytes, int]:
        """Events with ``sequence`` greater than ``sequence``, at most ``limit`` of them, as one
        JSON array cut from the packed log, and the last sequence in it (-1: none). A log in
        order is indexed, not scanned or parsed."""
        packed = self.packed
        if packed is None:
            return b"[]", -1
        if packed.in_order:
            first = max(sequence + 1, 0)
            stop = min(first + limit, packed.event_count)
            return packed.events_json(first, stop), stop - 1 if stop > first else -1
        events = self.events_after(sequence, limit)
        return orjson.dumps(events), int(events[-1]["sequence"]) if events else -1

    def events_after(self, sequence: int, limit: int) -> list[RunEvent]:
        """The events of ``events_page`` as objects."""
        packed = self.packed
        if packed is None:
            return []
        if packed.in_order:
            first = max(sequence + 1, 0)
            page: list[RunEvent] = orjson.loads(packed.events_json(first, first + limit))
            return page
        return [e for e in packed.events() if e.get("sequence", -1) > sequence][:limit]


class Reservation:
    """Bytes held in a store's budget, given back when the ``with`` block ends (a plain class:
    a generator-based context manager costs more than the reservation on every create)."""

    __slots__ = ("size", "store")

    def __init__(self, store: RunStore, size: int) -> None:
        self.store = store
        self.size = size

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        self.store.release(self.size)


RunGate = Callable[[str], None]
"""Called on the worker thread before a run executes (tests hold runs ``running`` with it)."""


class TooManyEventsError(RuntimeError):
    """A run wrote more events than its host allows (its log is dropped, the run fails)."""


class RunRegistry:
    """Creates, executes and finds runs. Use from the event loop thread only."""

    def __init__(
        self,
        backend: HostPort,
        limits: Limits,
        *,
        tenant: str = "local",
        gate: RunGate | None = None,
        new_opaque_id: Callable[[], str] | None = None,
        inline_run_events: int = 0,
    ) -> None:
        self.backend = backend
        self.inline_run_events = inline_run_events
        self.store = backend.store
        self.store.configure(limits.store_budget())
        self.limits = limits
        self.tenant = checked_tenant(tenant)
        self.gate = gate
        self._new_opaque_id: Callable[[], str] = (
            random_id if new_opaque_id is None else checked_id_source(new_opaque_id, tenant)
        )
        self._in_flight: dict[str, ServedRun] = {}
        self._executor: ThreadPoolExecutor | None = None

    def get(self, run_id: str) -> ServedRun | None:
        run = self._in_flight.get(run_id)
        if run is not None:
            return run
        packed = self.store.find_packed(run_id)
        return ServedRun.finished(packed) if packed is not None else None

    def active_count(self) -> int:
        return len(self._in_flight)

    def preparing(self, body_bytes: int) -> Reservation:
        """Hold the memory of reading a create's body and suite (``parsing_bytes``) while it is
        prepared (``with registry.preparing(n):``): 503 at once, before any parsing, when the
        budget has no room for it."""
        held = parsing_bytes(body_bytes)
        if not self.store.reserve(held):
            raise _no_room(held, self.limits.max_kept_bytes)
        return Reservation(self.store, held)

    def create(self, request: RunRequest, suite_bytes: int, *, inline: bool = False) -> ServedRun:
        """Register a run and start it: ``ApiError`` 429 past the active runs, 413 past the
        events per run, 503 when its memory does not fit beside the runs in flight. The
        run-create checks must have passed already (``HostPort.check``). With ``inline``, a run
        of at most ``inline_run_events`` events executes in the event loop once the caller
        yields (after the create is answered), else on a worker thread."""
        if self.active_count() >= self.limits.max_active_runs:
            raise _busy(f"this host already has {self.limits.max_active_runs} runs in progress")
        events = planned_events(request.suite)
        if events > self.limits.max_events_per_run:
            raise _too_many_events(events, self.limits.max_events_per_run)
        reserved = planned_bytes(events, suite_bytes)
        if reserved > self.limits.max_kept_bytes:
            raise _too_large_for_budget(reserved, self.limits.max_kept_bytes)
        if not self.store.reserve(reserved):
            raise _no_room(reserved, self.limits.max_kept_bytes)
        run_id = f"{self.tenant}/{self._new_opaque_id()}"
        run = ServedRun(
            run_id=run_id,
            workflow_id=str(request.suite.get("suiteId", "eval")),
            owner=dict(request.owner or {}),
            options=dict(request.options),
            created_at=timestamp_now(),
        )
        self._in_flight[run_id] = run
        loop = asyncio.get_running_loop()
        if inline and self.gate is None and events <= self.inline_run_events:
            loop.call_soon(self._execute_inline, run, request, reserved)
            return run
        future = self._pool().submit(self._execute, run_id, request, reserved)
        future.add_done_callback(
            lambda done: _in_loop(loop, self._finish_future, run, reserved, done)
        )
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

    def _execute(self, run_id: str, request: RunRequest, reserved: int) -> PackedRun:
        if self.gate is not None:
            self.gate(run_id)
        record = self.backend.execute(run_id, request)
        if len(record.events) > self.limits.max_events_per_run:
            raise TooManyEventsError(
                f"the run wrote {len(record.events):,} events, over this host's limit of "
                f"{self.limits.max_events_per_run:,} per run"
            )
        packed = PackedRun.of(record)  # here, on the worker, not in the event loop
        self.store.put(packed, reserved=reserved)  # the one home of finished runs
        return packed

    def _execute_inline(self, run: ServedRun, request: RunRequest, reserved: int) -> None:
        """A small run, in the event loop: cheaper than a hop to a worker thread and back."""
        try:
            packed = self._execute(run.run_id, request, reserved)
        except Exception as error:  # any failure of the backend fails the run, as on a worker
            self._finish(run, reserved, None, error)
        else:
            self._finish(run, reserved, packed, None)

    def _finish_future(self, run: ServedRun, reserved: int, done: Future[PackedRun]) -> None:
        if done.cancelled():
            self._finish(run, reserved, None, None)
        elif (error := done.exception()) is not None:
            self._finish(run, reserved, None, error)
        else:
            self._finish(run, reserved, done.result(), None)

    def _finish(
        self,
        run: ServedRun,
        reserved: int,
        packed: PackedRun | None,
        error: BaseException | None,
    ) -> None:
        """Record the outcome: ``packed`` (completed), or ``error`` (``None``: cancelled)."""
        if packed is None:
            packed = PackedRun.of(failed_record(run, _failure(error)))
            self.store.put(packed, reserved=reserved)
            run.status = "failed"
        else:
            run.status = "completed"
        run.packed = packed
        del self._in_flight[run.run_id]
        run.done.set()


def _in_loop(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    """Hand ``callback`` to the loop from a worker thread; after shutdown there is no one left
    to tell, and that is fine."""
    with contextlib.suppress(RuntimeError):  # the loop is closed
        loop.call_soon_threadsafe(callback, *args)


def failed_record(run: ServedRun, error: dict[str, Any]) -> RunRecord:
    """The record of a run that failed: its log still starts with ``run.started`` and ends on a
    terminal event (``run.failed``), so a poll or a stream of it ends too."""
    log = EventLog(run.run_id, utc_now)
    log.append(RUN_STARTED, {"workflowId": run.workflow_id, "owner": run.owner})
    log.append(RUN_FAILED, {"error": error})
    return RunRecord(
        run_id=run.run_id,
        workflow_id=run.workflow_id,
        agent_id="",
        modes=(),
        owner=run.owner,
        events=log.events,
        summary=cast(EvalSummary, {}),  # a failed run has none: the summary endpoint answers 409
        options=run.options,
        status="failed",
        error=error,
    )


def _failure(error: BaseException | None) -> dict[str, Any]:
    if error is None:
        return {"code": "cancelled", "message": "the server stopped before the run finished"}
    if isinstance(error, TooManyEventsError):
        return {"code": "too_many_events", "message": str(error)}
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


def _too_many_events(events: int, limit: int) -> ApiError:
    return ApiError(
        413,
        "payload_too_large",
        f"the suite would write {events:,} events, over this host's limit of {limit:,} events "
        "per run (toolcall-spec serve --max-events-per-run)",
        {"events": events, "limit": limit},
    )


def _no_room(needed: int, budget: int) -> ApiError:
    return ApiError(
        503,
        "service_unavailable",
        "the runs in progress hold this host's memory budget; retry later",
        {"neededBytes": needed, "budgetBytes": budget},
        headers={"Retry-After": "1"},
    )


def _too_large_for_budget(reserved: int, budget: int) -> ApiError:
    return ApiError(
        413,
        "payload_too_large",
        f"a run of this suite needs about {reserved:,} bytes, over this host's whole memory "
        f"budget of {budget:,} bytes (toolcall-spec serve --max-kept-bytes)",
        {"reservedBytes": reserved, "budgetBytes": budget},
    )
