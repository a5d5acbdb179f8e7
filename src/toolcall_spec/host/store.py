"""The run store: finished runs, kept apart from how they were executed.

A ``RunRecord`` is the one record of a run everyone reads: the in-process host, the HTTP
server and the conformance adapters. It is frozen once the run finished, and its log and summary
are never mutated afterwards, so readers share it without copying (a caller who wants to change a
log copies it first). ``RunStore`` is a thread-safe map from run id to record, bounded by a
``StoreBudget``: a count of runs, an age, and bytes. The bytes of the runs kept and of the runs
still executing (their reservations) are accounted here and nowhere else; the oldest finished
runs are evicted first to make room. A store with a byte bound keeps each run packed
(``PackedRun``: its log, summary and agent output as JSON text), so what it accounts is what it
holds, a log takes a third of the memory of its dicts, and the HTTP host answers from the text.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolcall_spec.openwop_wire import EVENT_LOG_SCHEMA_VERSION
from toolcall_spec.typed import EvalSummary, RunEvent


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A finished eval run: what the wire shows of it (its log, summary, owner and options) and,
    for test seams only, what the scripted agent received and which fixture entries were served."""

    run_id: str
    workflow_id: str
    agent_id: str
    modes: tuple[str, ...]
    owner: dict[str, Any]
    events: list[RunEvent]
    summary: EvalSummary
    agent_output: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    served: dict[str, list[int]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    """The persisted RunOptions (``configurable``, ``tags``, ``metadata``) as they were sent."""
    status: str = "completed"
    error: dict[str, Any] | None = None
    """Why a ``failed`` run failed (its snapshot's ``error``); ``None`` for a completed run."""

    @property
    def started_at(self) -> str | None:
        return str(self.events[0]["timestamp"]) if self.events else None

    @property
    def completed_at(self) -> str | None:
        return str(self.events[-1]["timestamp"]) if self.events else None

    def snapshot(self) -> dict[str, Any]:
        """The run snapshot (``GET /runs/{runId}``, runs.md §Snapshot): every required member and
        no suite or fixture content."""
        return run_snapshot(
            self.run_id,
            self.workflow_id,
            self.status,
            self.owner,
            options=self.options,
            started_at=self.started_at,
            completed_at=self.completed_at,
            error=self.error,
        )


def run_snapshot(
    run_id: str,
    workflow_id: str,
    status: str,
    owner: Mapping[str, Any],
    *,
    options: Mapping[str, Any],
    started_at: str | None = None,
    completed_at: str | None = None,
    error: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A snapshot from its parts; optional members only when known."""
    snapshot: dict[str, Any] = {
        "runId": run_id,
        "workflowId": workflow_id,
        "status": status,
        "owner": dict(owner),
        "eventLogSchemaVersion": EVENT_LOG_SCHEMA_VERSION,
    }
    for key, value in (("startedAt", started_at), ("completedAt", completed_at)):
        if value is not None:
            snapshot[key] = value
    if error is not None:
        snapshot["error"] = dict(error)
    for key in ("configurable", "tags", "metadata"):
        if key in options:
            snapshot[key] = options[key]
    return snapshot


class UnknownRunError(LookupError):
    """No run of this host has the id given."""


RUNNING_EVENT_BYTES = 3584
"""What one event of a run in progress costs the process: its dicts, keys and values (measured
with tracemalloc on reference-host logs: 1,000 to 1,400 bytes an event at the peak of a run),
its JSON text twice while the finished run is packed, and what the allocator keeps of freed
arenas (the server's RSS grew by up to 2.9 KB per event of its largest run; see
``tests/http/test_http_budget.py``)."""

SUITE_MEMORY_FACTOR = 4
"""A parsed suite waiting to run, as a multiple of its JSON length (dicts and strings)."""

PACKED_RUN_OVERHEAD_BYTES = 2048
"""The objects around a packed run: the record, its owner and options, the store's entry."""


PARSING_MEMORY_FACTOR = 16
"""Reading a create: the body, the suite decoded from its ``data:`` URI, parsed and validated,
as a multiple of the body's length (base64 text, bytes, dicts, the validator's own copy)."""


def parsing_bytes(body_bytes: int) -> int:
    """What reading and checking a create whose body is ``body_bytes`` long holds at once."""
    return PARSING_MEMORY_FACTOR * body_bytes


def planned_bytes(events: int, suite_bytes: int) -> int:
    """The reservation of a run before it executes: its log as dicts, estimated from the number
    of events it will write, plus its suite (held until the run finishes; its calls and
    responses are copied into the log)."""
    return events * RUNNING_EVENT_BYTES + SUITE_MEMORY_FACTOR * suite_bytes


def planned_events(suite: Mapping[str, Any]) -> int:
    """The most events a run of a checked suite writes with the scripted agent:
    ``run.started`` and ``eval.started``; per task one ``agent.tool-called`` and one
    ``agent.tool-returned`` per scripted call, ``eval.scored`` and, for a task that failed, its
    reason; then ``eval.completed`` and ``run.completed``."""
    tasks = suite.get("tasks") or []
    calls = sum(len(task.get("input", {}).get("calls") or []) for task in tasks)
    return 4 + 2 * len(tasks) + 2 * calls


def _dumps(value: Any) -> bytes:
    """JSON text of exactly its length: orjson's own result keeps a 4 KiB buffer however short
    the text, which a store of small runs would pay per document."""
    return bytes(memoryview(orjson.dumps(value)))


@dataclass(frozen=True, slots=True)
class PackedRun:
    """A finished run as JSON text: the events joined by commas (``starts[i]`` is where event
    ``i`` begins; ``starts[-1]`` is one past the end), the summary, agent output and served
    entries as documents. ``record()`` reads it back; the HTTP host splices the text."""

    run_id: str
    workflow_id: str
    agent_id: str
    modes: tuple[str, ...]
    owner: dict[str, Any]
    options: dict[str, Any]
    status: str
    error: dict[str, Any] | None
    events_text: bytes
    starts: array[int]
    in_order: bool
    """Whether event ``i`` has ``sequence`` ``i`` (any log of a reference host): a poll's start
    is then an index."""
    summary_json: bytes
    agent_output_json: bytes
    served_json: bytes
    snapshot_json: bytes
    """The record's own snapshot (a host's record decides what its snapshot shows)."""
    started_at: str | None

    @classmethod
    def of(cls, record: RunRecord) -> PackedRun:
        text = bytearray()  # one event at a time: no list of short texts to hold at once
        starts = array("Q")
        for event in record.events:
            starts.append(len(text))
            text += orjson.dumps(event)
            text += b","
        starts.append(len(text))
        in_order = all(event.get("sequence") == i for i, event in enumerate(record.events))
        return cls(
            record.run_id,
            record.workflow_id,
            record.agent_id,
            record.modes,
            record.owner,
            record.options,
            record.status,
            record.error,
            bytes(memoryview(text)[:-1]),
            starts,
            in_order,
            _dumps(record.summary),
            _dumps(record.agent_output),
            _dumps(record.served),
            _dumps(record.snapshot()),
            record.started_at,
        )

    @property
    def event_count(self) -> int:
        return len(self.starts) - 1

    def size(self) -> int:
        """Estimated bytes held: the texts, the offsets, and the small objects around them."""
        texts = (
            self.events_text,
            self.summary_json,
            self.agent_output_json,
            self.served_json,
            self.snapshot_json,
        )
        small = len(_dumps([self.owner, self.options, self.error]))
        return (
            sum(map(len, texts))
            + self.starts.itemsize * len(self.starts)
            + SUITE_MEMORY_FACTOR * small
            + PACKED_RUN_OVERHEAD_BYTES
        )

    def events_json(self, first: int, stop: int) -> bytes:
        """Events ``first`` to ``stop - 1`` as one JSON array, cut from the text."""
        stop = min(stop, self.event_count)
        if first >= stop:
            return b"[]"
        return b"[" + self.events_text[self.starts[first] : self.starts[stop] - 1] + b"]"

    def event_json(self, index: int) -> bytes:
        return self.events_text[self.starts[index] : self.starts[index + 1] - 1]

    def events(self) -> list[RunEvent]:
        events: list[RunEvent] = orjson.loads(self.events_json(0, self.event_count))
        return events

    def record(self) -> RunRecord:
        """The run as a record again (fresh objects: the caller may change them)."""
        return RunRecord(
            run_id=self.run_id,
            workflow_id=self.workflow_id,
            agent_id=self.agent_id,
            modes=self.modes,
            owner=self.owner,
            events=self.events(),
            summary=orjson.loads(self.summary_json),
            agent_output=orjson.loads(self.agent_output_json),
            served=orjson.loads(self.served_json),
            options=self.options,
            status=self.status,
            error=self.error,
        )

    def snapshot(self) -> dict[str, Any]:
        snapshot: dict[str, Any] = orjson.loads(self.snapshot_json)
        return snapshot


@dataclass(frozen=True, slots=True)
class StoreBudget:
    """What a store keeps at most; ``None`` is no bound."""

    max_runs: int | None = None
    max_bytes: int | None = None
    """Estimated bytes of the runs kept plus the reservations of the runs executing."""
    max_age_seconds: float | None = None
    """A finished run older than this is evicted."""

    def __post_init__(self) -> None:
        for name in ("max_runs", "max_bytes", "max_age_seconds"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")


@dataclass(slots=True)
class _Kept:
    run: RunRecord | PackedRun
    size: int
    kept_at: float

    def record(self) -> RunRecord:
        return self.run.record() if isinstance(self.run, PackedRun) else self.run

    def packed(self) -> PackedRun:
        return self.run if isinstance(self.run, PackedRun) else PackedRun.of(self.run)


class RunStore:
    """Finished runs by id, evicted oldest first past the budget. Safe across threads."""

    def __init__(
        self,
        max_runs: int | None = None,
        *,
        budget: StoreBudget | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_runs is not None and max_runs < 1:
            raise ValueError("max_runs is at least 1")
        self.budget = budget or StoreBudget(max_runs=max_runs)
        self._clock = clock
        self._runs: OrderedDict[str, _Kept] = OrderedDict()
        self._kept_bytes = 0
        self._reserved_bytes = 0
        self._peak_reserved_bytes = 0
        self._lock = threading.Lock()

    @property
    def max_runs(self) -> int | None:
        return self.budget.max_runs

    def configure(self, budget: StoreBudget) -> None:
        """Apply a new budget (the HTTP host sets its own), evicting what it no longer allows."""
        with self._lock:
            self.budget = budget
            if budget.max_bytes is not None:  # runs kept so far are packed and counted too
                for kept in self._runs.values():
                    if isinstance(kept.run, RunRecord):
                        kept.run = PackedRun.of(kept.run)
                        kept.size = kept.run.size()
                        self._kept_bytes += kept.size
            self._evict(0)

    @property
    def kept_bytes(self) -> int:
        """The estimated bytes of the runs kept (0 when the budget has no byte bound)."""
        return self._kept_bytes

    @property
    def reserved_bytes(self) -> int:
        return self._reserved_bytes

    @property
    def running_bytes(self) -> int:
        """What the runs in progress take: the most they have held at once so far. Memory freed
        by a finished run stays in the process (the allocator keeps it for the next run), so the
        runs kept get the rest of the budget, not what a quiet moment leaves."""
        return max(self._reserved_bytes, self._peak_reserved_bytes)

    def reserve(self, size: int) -> bool:
        """Hold ``size`` bytes for a run about to execute, evicting finished runs to make room;
        ``False`` (nothing held) when the runs still executing leave no room for it."""
        with self._lock:
            limit = self.budget.max_bytes
            if limit is None:
                return True
            if self._reserved_bytes + size > limit:
                return False
            self._reserved_bytes += size
            self._peak_reserved_bytes = max(self._peak_reserved_bytes, self._reserved_bytes)
            self._evict(0)
            return True

    def release(self, size: int) -> None:
        """Give back a reservation (the run finished, or was never started)."""
        with self._lock:
            self._reserved_bytes = max(0, self._reserved_bytes - size)

    def put(self, run: RunRecord | PackedRun, *, reserved: int = 0) -> None:
        """Keep a finished run (releasing its reservation; packed when the store has a byte
        bound); older runs make room. The newest run is kept even when it alone is over the
        byte bound, so its creator can read it."""
        if self.budget.max_bytes is not None and isinstance(run, RunRecord):
            run = PackedRun.of(run)
        size = run.size() if isinstance(run, PackedRun) else 0
        with self._lock:
            if run.run_id in self._runs:
                raise ValueError(f"the run id {run.run_id!r} is already taken")
            self._reserved_bytes = max(0, self._reserved_bytes - reserved)
            self._runs[run.run_id] = _Kept(run, size, self._clock())
            self._kept_bytes += size
            self._evict(1)

    def find(self, run_id: str) -> RunRecord | None:
        kept = self._find(run_id)
        return kept.record() if kept else None

    def find_packed(self, run_id: str) -> PackedRun | None:
        """The run as JSON text (what the HTTP host serves), or ``None``."""
        kept = self._find(run_id)
        return kept.packed() if kept else None

    def _find(self, run_id: str) -> _Kept | None:
        with self._lock:
            self._expire()
            return self._runs.get(run_id)

    def get(self, run_id: str) -> RunRecord:
        record = self.find(run_id)
        if record is None:
            raise UnknownRunError(f"no run {run_id!r} on this host")
        return record

    def __contains__(self, run_id: object) -> bool:
        with self._lock:
            return run_id in self._runs

    def __len__(self) -> int:
        return len(self._runs)

    def finished_among(self, *run_ids: object) -> frozenset[str]:
        """Which of ``run_ids`` are kept: what a run-create check needs, without listing every
        kept run on each create."""
        with self._lock:
            return frozenset(r for r in run_ids if isinstance(r, str) and r in self._runs)

    def run_ids(self) -> list[str]:
        with self._lock:
            return list(self._runs)

    def _evict(self, keep_newest: int) -> None:
        """Evict the oldest runs past the age, the count and the bytes (lock held); the newest
        ``keep_newest`` runs stay whatever their size."""
        self._expire()
        budget = self.budget
        while len(self._runs) > keep_newest and (
            (budget.max_runs is not None and len(self._runs) > budget.max_runs)
            or (
                budget.max_bytes is not None
                and self._kept_bytes + self.running_bytes > budget.max_bytes
            )
        ):
            self._drop_oldest()

    def _expire(self) -> None:
        max_age = self.budget.max_age_seconds
        if max_age is None:
            return
        cutoff = self._clock() - max_age
        while self._runs and next(iter(self._runs.values())).kept_at < cutoff:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        _, kept = self._runs.popitem(last=False)
        self._kept_bytes -= kept.size
