"""The run store: finished runs, kept apart from how they were executed.

A ``RunRecord`` is the one record of a run everyone reads: the in-process host, the HTTP
server and the conformance adapters. It is frozen once the run finished, and its log and summary
are never mutated afterwards, so readers share it without copying (a caller who wants to change a
log copies it first). ``RunStore`` is a thread-safe map from run id to record, bounded: past
``max_runs`` the oldest run is evicted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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


class RunStore:
    """Finished runs by id, oldest evicted first past ``max_runs``. Safe across threads."""

    def __init__(self, max_runs: int | None = None) -> None:
        if max_runs is not None and max_runs < 1:
            raise ValueError("max_runs is at least 1")
        self.max_runs = max_runs
        self._runs: OrderedDict[str, RunRecord] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, record: RunRecord) -> None:
        with self._lock:
            if record.run_id in self._runs:
                raise ValueError(f"the run id {record.run_id!r} is already taken")
            self._runs[record.run_id] = record
            while self.max_runs is not None and len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)

    def find(self, run_id: str) -> RunRecord | None:
        with self._lock:
            return self._runs.get(run_id)

    def get(self, run_id: str) -> RunRecord:
        record = self.find(run_id)
        if record is None:
            raise UnknownRunError(f"no run {run_id!r} on this host")
        return record

    def __contains__(self, run_id: object) -> bool:
        with self._lock:
            return run_id in self._runs

    def run_ids(self) -> list[str]:
        with self._lock:
            return list(self._runs)
