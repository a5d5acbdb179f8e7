"""The fault sweeps of the ingest log (``nox -s faults``): every durable file-system call of the
writer, of the loader and of its checkpoint fails in turn (ENOSPC once and for good, EIO, EDQUOT,
EMFILE) or is where the process is killed (``Crashed``), and after recovery the invariants hold.

- ``wal.writer``: producers on several threads append across rotations (small segments), then
  the log is reopened (recovery) and loaded into DuckDB: every append that returned is stored
  exactly once; a failed append acknowledged nothing (with a transient fault: nothing of it is
  stored, and the producer's retry on the same log works); the reopened log takes appends.
- ``wal.loader`` (its reads of the log, the quarantine, the checkpoint, the deletions, the state
  file): a log of several segments with a poison record, loaded into a DuckDB file store; a kill
  is a fresh loader from the disk: every good record stored exactly once, the poison quarantined
  once, the loaded segments deleted, the checkpoint naming a segment that exists.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.fault_sweep import record_sweep, sweep
from support.store import tool_call

from toolcall_spec.analytics.store import EventStore, StoreError, open_store
from toolcall_spec.analytics.store.quarantine import QUARANTINE
from toolcall_spec.analytics.store.wal import (
    LogLoader,
    LogWriteError,
    WriteAheadLog,
    encode_record,
    framed,
    read_checkpoint,
    segment_numbers,
)
from toolcall_spec.filesystem import Crashed, FaultPlan, intercepted

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")
pytestmark = pytest.mark.faults

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)
PRODUCERS, APPENDS = 2, 3


def record_of(events: list[dict[str, Any]]) -> bytes:
    return encode_record("p", NOW, events)


def stored_ids(store: EventStore) -> list[str]:
    return [str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})]


def drain(loader: LogLoader, attempts: int = 1000) -> None:
    for _ in range(attempts):
        if not loader.load_once() and not loader.pending():
            return
    raise AssertionError("the loader did not reach the end")


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory (``/dev/shm``) where there is one: a sweep is hundreds of runs, each
    with its fsyncs, and what it checks is the order of the calls, not the device's speed."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="wal-sweep-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- the writer -----------------------------------------------------------------------------------


@dataclass
class WriterRun:
    directory: Path
    sent: set[str] = field(default_factory=set)
    acknowledged: list[str] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _produce(log: WriteAheadLog, run: WriterRun, number: int, crashed: list[BaseException]) -> None:
    """Append ``APPENDS`` records, one at a time; a refused one is tried once more (a client's
    retry); a kill ends the producer."""
    for index in range(APPENDS):
        events = [tool_call(100 * number + 10 * index + i) for i in range(2)]
        ids = [event["event_id"] for event in events]
        with run.lock:
            run.sent.update(ids)
        for _ in range(2):
            try:
                log.append([record_of(events)])
            except LogWriteError:
                with run.lock:
                    run.refused.update(ids)
                continue
            except Crashed as exc:
                crashed.append(exc)
                return
            with run.lock:
                run.acknowledged += ids
                run.refused.difference_update(ids)
            break


@pytest.mark.requirement("toolcall-spec.requirement.store.log-faults")
@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_the_writer_keeps_every_acknowledged_append_at_every_fault(
    fast_dir: Path, record_property: Callable[[str, object], None]
) -> None:
    """The sweep ``wal.writer`` (the module's docstring): 240 runs, about 8 s of CPU."""
    one = len(record_of([tool_call(0), tool_call(1)]))
    numbers = itertools.count()
    runs: list[WriterRun] = []

    def workload() -> None:
        run = WriterRun(fast_dir / f"run-{next(numbers)}")
        runs.append(run)
        log = WriteAheadLog.open(run.directory, segment_bytes=2 * one)
        crashed: list[BaseException] = []
        try:
            threads = [
                threading.Thread(target=_produce, args=(log, run, number, crashed))
                for number in range(PRODUCERS)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            log.close()
        if crashed:
            raise crashed[0]

    def check(plan: FaultPlan, raised: BaseException | None) -> None:
        run = runs[-1]
        if not run.directory.exists():  # the fault came before the log existed
            return
        log = WriteAheadLog.open(run.directory)  # recovery, no fault now
        try:
            late = [tool_call(999)]
            log.append([record_of(late)])  # the log takes appends again
            with open_store(":memory:") as store:
                drain(LogLoader(run.directory, store))
                stored = stored_ids(store)
        finally:
            log.close()
        assert len(stored) == len(set(stored)), "an event stored twice"
        assert set(run.acknowledged) <= set(stored), f"acknowledged and lost at {plan}"
        assert set(stored) <= run.sent | {late[0]["event_id"]}
        transient = plan.errno is not None and not plan.persistent
        if transient and raised is None:  # the log opened: the retry on it worked
            assert not run.refused, f"a retry failed after a transient fault at {plan}"
            assert len(run.acknowledged) == PRODUCERS * APPENDS * 2

    report = sweep(workload, check)
    record_sweep(record_property, "wal.writer", report)
    assert report.points > 20


# --- the loader and its checkpoint -------------------------------------------------------------


@pytest.fixture(scope="module")
def poisoned_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """A log of several segments, a poison record in the middle (a byte-order mark before a
    kind-1 body: what an old intake logged), and the ids of the good events."""
    directory = tmp_path_factory.mktemp("template") / "log"
    good: set[str] = set()
    first = record_of([tool_call(0), tool_call(1)])
    log = WriteAheadLog.open(directory, segment_bytes=2 * len(first))
    for index in range(4):
        events = [tool_call(10 * index + i) for i in range(2)]
        log.append([record_of(events)])
        good.update(event["event_id"] for event in events)
        if index == 1:
            body = b"\xef\xbb\xbf" + orjson.dumps({"events": [tool_call(77)]})
            micros = int(NOW.timestamp() * 1_000_000)
            payload = bytes([1]) + (1).to_bytes(2, "big") + micros.to_bytes(8, "big") + b"p"
            log.append([framed(payload + body, 1)])
    log.close()
    assert len(segment_numbers(directory)) >= 3
    return directory, good


LOADER_MODES = (("ENOSPC", True), ("EIO", False), (None, False))
"""The loader's sweep leaves out EDQUOT (handled as ENOSPC: one class), and a one-call ENOSPC
and EMFILE (the loader treats every one-call errno alike, as EIO once), to stay within its time:
each run opens a DuckDB file and loads the log twice."""


def _file_kind(path: str | None) -> str:
    name = Path(path or "").name
    if "reserve" in name:
        return "reserve"
    if "checkpoint" in name:
        return "checkpoint"
    if name.endswith(".log"):
        return "segment"
    if "quarantine" in name:
        return "quarantine"
    return "state" if name == "loader.state" else "directory"


@dataclass
class LoaderRun:
    directory: Path
    store: EventStore


def _load(directory: Path, store: EventStore, tries: int = 3) -> None:
    """What ``run_loaders`` does for one log, with a bounded number of retries."""
    loader = LogLoader(directory, store, load_batch_events=3)
    try:
        for _ in range(tries):
            try:
                drain(loader)
                loader.clock = lambda: float("inf")  # a failed checkpoint is due again
                if loader.due():
                    loader.load_once()
                return
            except (StoreError, OSError) as exc:
                loader.failed(exc)
        raise OSError("still failing")
    finally:
        loader.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-faults")
@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
def test_the_loader_loads_everything_once_and_quarantines_once_at_every_fault(
    fast_dir: Path,
    poisoned_log: tuple[Path, set[str]],
    record_property: Callable[[str, object], None],
) -> None:
    """The sweep ``wal.loader`` (the module's docstring): about 170 runs, each opening a DuckDB
    file and loading the log twice, about 25 s of CPU."""
    template, good = poisoned_log
    numbers = itertools.count()
    runs: list[LoaderRun] = []

    def workload() -> None:
        number = next(numbers)
        directory = fast_dir / f"run-{number}"
        shutil.copytree(template, directory)
        store = open_store(str(fast_dir / f"run-{number}.duckdb"))
        runs.append(LoaderRun(directory, store))
        _load(directory, store)

    def check(plan: FaultPlan, raised: BaseException | None) -> None:
        run = runs[-1]
        with run.store:
            _load(run.directory, run.store)  # a fresh loader from the disk, no fault
            stored = stored_ids(run.store)
        assert sorted(stored) == sorted(good), f"not every record stored once at {plan}"
        lines = (run.directory / QUARANTINE).read_bytes().splitlines()
        keys = [orjson.loads(line)["key"] for line in lines if line.endswith(b"}")]
        assert len(keys) == 1, f"the poison quarantined {len(keys)} times at {plan}"
        assert len(segment_numbers(run.directory)) == 1, "loaded segments left"
        checkpoint = read_checkpoint(run.directory)
        assert checkpoint is not None
        assert checkpoint.segment in segment_numbers(run.directory)
        shutil.rmtree(run.directory)

    report = sweep(workload, check, modes=LOADER_MODES)
    record_sweep(record_property, "wal.loader", report)
    assert report.points > 20
    counting = FaultPlan()
    with intercepted(counting):
        workload()
    check(counting, None)
    by_file = Counter(_file_kind(call.path) for call in counting.trace)
    record_property(
        "fault_points",
        "wal.checkpoint: {checkpoint} of wal.loader's points (write_file_atomically: open, "
        "write, fsync, close, rename, directory fsync per checkpoint); the others: segments "
        "{segment}, quarantine {quarantine}, loader.state {state}, checkpoint.reserve "
        "{reserve}, directory fsyncs (checkpoints', quarantine's) {directory}".format_map(by_file),
    )
