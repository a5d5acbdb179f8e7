"""The ingest logs under one root, and what ``GET /v1/health`` says about them and their loader.

**Every log under the root is loaded.** ``serve-ingest`` keeps its write-ahead log in a root
directory: the root itself with one worker, ``ROOT/worker-K`` with ``--workers N``. A restart with
another worker count leaves the logs of the earlier layout behind (the root's own segments, or
``worker-3`` when there are now two workers): ``log_directories`` finds every log under the root,
and the loader takes them all, while each writer opens only its own. A log nobody writes any
more is read up to the durable end its last writer published, as any other.

**The loader's state** is a small file in each log it loads (``loader.json``: running or not,
how many times it was started again, how its last run ended, when), written by the process that
supervises it (``LoaderProcess``) and read by the endpoint for its health answer: a loader that
keeps ending shows up there as a problem, with the exit status.

**Health.** ``log_problems`` turns a log's counters (``WriteAheadLog.stats()``, or the files of a
log another process writes) into reasons the service is not ok: a failed write, load or
checkpoint, quarantined or skipped records, a full log, a loader that is not running or was just
started again. Names are relative to the root, never absolute paths.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec.analytics.store.wal import read_checkpoint, segment_numbers, segment_path

LOADER_STATE = "loader.json"
RECENT_RESTART_SECONDS = 60.0
"""A loader started again less than this long ago is reported: one that keeps ending (a crash
loop) always is."""
_LOG_FILES = ("writer.lock", "checkpoint.json", "durable")
STALL_SECONDS = 5.0
"""Events waiting this long with the loader not moving is a problem even when nothing says why
(a loader whose every write fails, its state file included, can report nothing itself): a load
is due within 1 s, and a failed one is retried within 5 s and says so."""
_ERRORS = ("last_write_error", "last_load_error", "last_checkpoint_error")
_LOST_COUNTS = {
    "quarantined_records": "records quarantined",
    "corrupt_records": "corrupt records skipped",
    "unstorable_events": "events the store cannot hold left out",
}


def is_log(directory: Path) -> bool:
    """Whether ``directory`` holds an ingest log (a writer's lock, a checkpoint, segments)."""
    return any((directory / name).exists() for name in _LOG_FILES) or bool(
        segment_numbers(directory)
    )


def log_directories(root: Path, current: list[Path]) -> list[Path]:
    """The logs to load: ``current`` (the writers' own, in order), then every other log found
    under ``root`` (the root itself, its direct subdirectories) that an earlier layout left."""
    found = [root, *sorted(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []
    resolved = {path.resolve() for path in current}
    return current + [p for p in found if p.resolve() not in resolved and is_log(p)]


def log_name(directory: Path, root: Path) -> str:
    """The log's name relative to the root (``.`` for the root, ``worker-2``)."""
    with contextlib.suppress(ValueError):
        return str(directory.resolve().relative_to(root.resolve()))
    return directory.name


def write_loader_state(directories: list[Path], state: dict[str, Any]) -> None:
    """Replace ``loader.json`` in each log (a report, not data: no fsync; a failure is ignored,
    the next change writes it again)."""
    data = orjson.dumps({**state, "changed_at": time.time()})
    for directory in directories:
        temporary = directory / (LOADER_STATE + ".tmp")
        with contextlib.suppress(OSError):
            temporary.write_bytes(data)
            temporary.replace(directory / LOADER_STATE)


def read_loader_state(directory: Path) -> dict[str, Any] | None:
    try:
        value = orjson.loads((directory / LOADER_STATE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def file_stats(directory: Path) -> dict[str, Any]:
    """A log's counters read from its files (for a log this process does not write): the
    backlog in bytes past the loader's checkpoint, and what the checkpoint counted."""
    checkpoint = read_checkpoint(directory)
    segment, offset = (checkpoint.segment, checkpoint.offset) if checkpoint else (1, 0)
    backlog = 0
    for number in segment_numbers(directory):
        if number >= segment:
            with contextlib.suppress(OSError):
                size = segment_path(directory, number).stat().st_size
                backlog += max(0, size - (offset if number == segment else 0))
    counts = dict(vars(checkpoint)) if checkpoint is not None else {}
    for position in ("segment", "offset"):
        counts.pop(position, None)
    return {"backlog_bytes": backlog, **counts}


def loader_problem(state: dict[str, Any] | None, now: float) -> str | None:
    """Why the loader of a log is a problem, if it is: not running, or just started again."""
    if state is None:
        return None
    exit_status = state.get("last_exit")
    since = now - float(state.get("changed_at", 0))
    if state.get("state") != "running":
        return f"the loader is not running ({state.get('state')}; it ended with {exit_status})"
    restarts = int(state.get("restarts", 0))
    if restarts and since < RECENT_RESTART_SECONDS:
        return (
            f"the loader ended with {exit_status} and was started again {since:.0f} s ago "
            f"({restarts} restarts)"
        )
    return None


def log_problems(name: str, stats: dict[str, Any]) -> list[str]:
    """The reasons a log's counters say the service is not ok, each prefixed with its name."""
    problems = [
        f"{name}: {key.removeprefix('last_').replace('_', ' ')}: {stats[key]}"
        for key in _ERRORS
        if stats.get(key)
    ]
    for key, what in _LOST_COUNTS.items():
        if stats.get(key):
            reason = stats.get("last_quarantine_reason") if key == "quarantined_records" else None
            problems.append(
                f"{name}: {stats[key]} {what}" + (f" (last: {reason})" if reason else "")
            )
    stalled = stats.get("stalled_seconds", 0)
    if stalled >= STALL_SECONDS:
        problems.append(
            f"{name}: nothing loaded for {stalled:.0f} s while "
            f"{stats.get('backlog_events', 0)} events wait (is the loader able to work?)"
        )
    bound = stats.get("max_backlog_bytes")
    if bound and stats.get("backlog_bytes", 0) >= bound:
        problems.append(f"{name}: the log is full (the store is behind)")
    return problems


__all__ = [
    "LOADER_STATE",
    "STALL_SECONDS",
    "file_stats",
    "is_log",
    "loader_problem",
    "log_directories",
    "log_name",
    "log_problems",
    "read_loader_state",
    "write_loader_state",
]
