"""The write-ahead log on its own, its writer and its loader, against a real DuckDB store: framing,
recovery of a torn tail and of a corrupt record, the bound, a full disk (the error injected at the
system call), segment rotation, and a crash between a load and its checkpoint."""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.store import tool_call

from toolcall_spec.analytics.store import EventStore, open_store
from toolcall_spec.analytics.store import wal as wal_module
from toolcall_spec.analytics.store.base import UnstorableRowsError
from toolcall_spec.analytics.store.layout import COLUMNS, Columns, Row
from toolcall_spec.analytics.store.log_health import STALL_SECONDS, log_problems
from toolcall_spec.analytics.store.wal import (
    CHECKPOINT,
    HEADER_BYTES,
    MAX_LOAD_DELAY_SECONDS,
    MIN_LOAD_BYTES,
    QUIET_SECONDS,
    STATE,
    LogError,
    LogFullError,
    LogLoader,
    LogWriteError,
    WriteAheadLog,
    decode_payload,
    encode_batch_record,
    encode_record,
    frame_at,
)
from toolcall_spec.filesystem import Call, FaultPlan, intercepted

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

NOW = datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(str(tmp_path / "events.duckdb")) as opened:
        yield opened


def records(count: int, per_record: int = 3, start: int = 0) -> list[tuple[bytes, list[Any]]]:
    out = []
    for number in range(count):
        events = [tool_call(start + number * per_record + i) for i in range(per_record)]
        out.append((encode_record("p", NOW, events), events))
    return out


def load_all(log: WriteAheadLog, store: EventStore) -> LogLoader:
    """A loader of the log, run until nothing is left; the writer sees the new checkpoint."""
    loader = LogLoader(log.directory, store)
    for _ in range(1000):
        if not loader.load_once() and not loader.pending():
            log._checked_at = 0.0  # read the checkpoint now, not at the next interval
            return loader
    raise AssertionError("the loader did not reach the end")


def segment(log_dir: Path) -> Path:
    [path] = sorted(log_dir.glob("*.log"))
    return path


def stored_ids(store: EventStore) -> set[str]:
    return {str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})}


@pytest.mark.requirement("toolcall-spec.requirement.store.log-framing")
@pytest.mark.parametrize("kind", ["events", "batch body"])
def test_a_record_round_trips_with_its_project_time_and_events(kind: str) -> None:
    events = [tool_call(1), tool_call(2)]
    if kind == "events":
        data = encode_record("shöp", NOW, events)
    else:
        data = encode_batch_record("shöp", NOW, orjson.dumps({"events": events, "x": 1}), 2)
    frame = frame_at(data, 0)
    assert frame is not None
    assert frame.count == 2
    assert frame.end == len(data)
    record = decode_payload(frame.payload)
    assert (record.project, record.accepted_at, record.events) == ("shöp", NOW, events)


def test_appended_records_are_loaded_once_and_counted(tmp_path: Path, store: EventStore) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    batch = records(4)
    log.append([data for data, _ in batch[:3]])
    log.append([batch[3][0]])
    assert (log.stats()["appended_events"], log.stats()["backlog_events"]) == (12, 12)
    load_all(log, store)
    assert log.stats()["loaded_events"] == 12
    assert (log.stats()["backlog_events"], log.stats()["backlog_bytes"]) == (0, 0)
    assert stored_ids(store) == {e["event_id"] for _, events in batch for e in events}
    log.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-framing")
def test_a_torn_tail_is_cut_and_logged(
    tmp_path: Path, store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    batch = records(3)
    log.append([data for data, _ in batch])
    log.close()
    path = segment(tmp_path / "log")
    whole = path.stat().st_size
    with path.open("ab") as handle:  # the process died half-way through writing a record
        handle.write(records(1, start=100)[0][0][: HEADER_BYTES + 5])
    with caplog.at_level(logging.WARNING, logger="toolcall_spec.wal"):
        reopened = WriteAheadLog.open(tmp_path / "log")
    assert path.stat().st_size == whole
    assert reopened.stats()["cut_bytes"] == HEADER_BYTES + 5
    assert "torn tail" in caplog.text
    load_all(reopened, store)
    assert len(stored_ids(store)) == 9
    reopened.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-framing")
def test_a_corrupt_record_is_skipped_counted_and_logged(
    tmp_path: Path, store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    batch = records(3)
    log.append([data for data, _ in batch])
    log.close()
    path = segment(tmp_path / "log")
    content = bytearray(path.read_bytes())
    content[len(batch[0][0]) + HEADER_BYTES + 10] ^= 0xFF  # a byte of the second record flips
    path.write_bytes(bytes(content))
    reopened = WriteAheadLog.open(tmp_path / "log")
    with caplog.at_level(logging.ERROR, logger="toolcall_spec.wal"):
        load_all(reopened, store)
    assert reopened.stats()["corrupt_records"] == 1
    assert "skipped a corrupt record" in caplog.text
    survivors = {e["event_id"] for index in (0, 2) for e in batch[index][1]}
    assert stored_ids(store) == survivors
    reopened.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-framing")
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_recovery_keeps_exactly_the_records_written_whole(tmp_path_factory: Any, cut: int) -> None:
    """A crash can tear the file at any byte: the records wholly before the tear are loaded,
    nothing else, and the file is cut back to their end."""
    root = tmp_path_factory.mktemp("torn")
    batch = records(5)
    sizes = [len(data) for data, _ in batch]
    full = b"".join(data for data, _ in batch)
    cut %= len(full) + 1
    (root / "log").mkdir()
    (root / "log" / "000000000001.log").write_bytes(full[:cut])
    with open_store(str(root / "e.duckdb")) as store:
        log = WriteAheadLog.open(root / "log")
        load_all(log, store)
        whole, end = 0, 0
        while whole < len(sizes) and end + sizes[whole] <= cut:
            end += sizes[whole]
            whole += 1
        assert stored_ids(store) == {e["event_id"] for _, events in batch[:whole] for e in events}
        assert segment(root / "log").stat().st_size == end
        log.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-disk-full")
@pytest.mark.parametrize("call", ["write", "fsync"])
def test_a_full_disk_fails_the_batch_and_keeps_what_was_acknowledged(
    tmp_path: Path, store: EventStore, call: str
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    batch = records(3)
    log.append([batch[0][0]])
    size = segment(tmp_path / "log").stat().st_size

    full = FaultPlan(at=1, errno="ENOSPC", ops=frozenset({call}))
    with intercepted(full), pytest.raises(LogWriteError) as failed:
        log.append([batch[1][0]])
    assert full.injected
    assert failed.value.disk_full
    assert "disk is full" in str(failed.value)
    assert "disk is full" in str(log.stats()["last_write_error"])
    assert segment(tmp_path / "log").stat().st_size == size  # nothing of the failed batch
    log.append([batch[2][0]])  # space again: the log goes on
    assert log.stats()["last_write_error"] is None
    load_all(log, store)
    expected = {e["event_id"] for index in (0, 2) for e in batch[index][1]}
    assert stored_ids(store) == expected
    assert log.stats()["corrupt_records"] == 0
    log.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-bounded")
def test_past_its_bound_the_log_refuses_more(tmp_path: Path, store: EventStore) -> None:
    batch = records(3)
    log = WriteAheadLog.open(tmp_path / "log", max_backlog_bytes=len(batch[0][0]) + 1)
    log.append([batch[0][0]])
    assert log.has_room()
    log.append([batch[1][0]])
    assert not log.has_room()
    with pytest.raises(LogFullError):
        log.append([batch[2][0]])
    load_all(log, store)  # the engine catches up: room again
    assert log.has_room()
    log.append([batch[2][0]])
    log.close()


def test_one_log_serves_one_process(tmp_path: Path, store: EventStore) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    with pytest.raises(LogError, match="in use by another process"):
        WriteAheadLog.open(tmp_path / "log")
    log.close()
    WriteAheadLog.open(tmp_path / "log").close()


def test_segments_rotate_and_loaded_ones_are_deleted(tmp_path: Path, store: EventStore) -> None:
    batch = records(10)
    log = WriteAheadLog.open(tmp_path / "log", segment_bytes=2 * len(batch[0][0]))
    for data, _ in batch:
        log.append([data])
    assert len(list((tmp_path / "log").glob("*.log"))) >= 5
    load_all(log, store)
    assert len(stored_ids(store)) == 30
    assert len(list((tmp_path / "log").glob("*.log"))) == 1  # the one being written
    log.close()
    reopened = WriteAheadLog.open(tmp_path / "log")
    assert reopened.stats()["backlog_events"] == 0
    reopened.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
def test_a_crash_between_load_and_checkpoint_loads_again_but_stores_once(
    tmp_path: Path, store: EventStore
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    batch = records(4)
    log.append([data for data, _ in batch])
    load_all(log, store)
    log.close()
    # as if the process died before writing either (the state is written after the checkpoint)
    (tmp_path / "log" / CHECKPOINT).unlink()
    (tmp_path / "log" / STATE).unlink()
    reopened = WriteAheadLog.open(tmp_path / "log")
    assert reopened.stats()["backlog_events"] == 12
    load_all(reopened, store)
    assert store.count() == 12
    reopened.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
def test_an_unreadable_checkpoint_replays_the_log(
    tmp_path: Path, store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    log.append([records(1)[0][0]])
    log.close()
    (tmp_path / "log" / CHECKPOINT).write_text("not a checkpoint")
    with caplog.at_level(logging.WARNING, logger="toolcall_spec.wal"):
        reopened = WriteAheadLog.open(tmp_path / "log")
    assert "unreadable checkpoint" in caplog.text
    load_all(reopened, store)
    assert store.count() == 3
    reopened.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_the_loader_never_reads_past_what_was_fsynced(tmp_path: Path, store: EventStore) -> None:
    """A batch written but whose fsync then fails is never acknowledged; a loader running at
    that moment must not store it: it reads up to the durable end the writer published."""
    log = WriteAheadLog.open(tmp_path / "log")
    first, second = records(2)
    log.append([first[0]])
    loader = LogLoader(tmp_path / "log", store)
    seen: list[int] = []

    class FsyncFailsWhileLoading:
        def before(self, call: Call) -> None:
            if call.op == "fsync" and call.path is not None and call.path.endswith(".log"):
                seen.append(loader.load_once())  # the loader runs between write and fsync
                seen.append(loader.load_once())
                raise OSError(errno.EIO, "Input/output error")

    with intercepted(FsyncFailsWhileLoading()), pytest.raises(LogWriteError) as failed:
        log.append([second[0]])
    assert not failed.value.disk_full
    assert seen == [3, 0]
    assert stored_ids(store) == {event["event_id"] for event in first[1]}
    assert loader.checkpoint.corrupt_records == 0
    log.close()


# -- when the loader loads: large loads, or a quiet writer, or a bounded delay ----------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.requirement("toolcall-spec.requirement.store.load-delay")
def test_a_small_backlog_waits_until_the_writer_is_quiet(tmp_path: Path, store: EventStore) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    clock = Clock()
    loader = LogLoader(log.directory, store, clock=clock)
    assert not loader.due()  # nothing durable
    log.append([record for record, _ in records(1)])
    assert not loader.due()  # just appended: more may follow
    clock.now += QUIET_SECONDS / 2
    assert not loader.due()
    clock.now += QUIET_SECONDS
    assert loader.due()  # nothing appended since: load what there is
    assert loader.load_once() == 3
    assert not loader.due()


@pytest.mark.requirement("toolcall-spec.requirement.store.load-delay")
def test_a_busy_writer_delays_a_small_load_by_at_most_the_bound(
    tmp_path: Path, store: EventStore
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    clock = Clock()
    loader = LogLoader(log.directory, store, clock=clock)
    waited, appended = 0.0, 0
    for record, _ in records(200):
        log.append([record])
        appended += 1
        if loader.due():
            break
        clock.now += QUIET_SECONDS / 5  # the next batch comes before the writer is quiet
        waited += QUIET_SECONDS / 5
    assert MAX_LOAD_DELAY_SECONDS <= waited < MAX_LOAD_DELAY_SECONDS + QUIET_SECONDS
    assert loader.load_once() == 3 * appended  # one load for all that waited


@pytest.mark.requirement("toolcall-spec.requirement.store.load-delay")
def test_a_large_backlog_is_loaded_at_once(tmp_path: Path, store: EventStore) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    loader = LogLoader(log.directory, store, clock=Clock())
    big = [tool_call(i) | {"error_message": "x" * 900} for i in range(100)]
    while log.backlog_bytes() < MIN_LOAD_BYTES:
        assert not loader.due()
        log.append([encode_record("p", NOW, big)])
    assert loader.due()  # the clock never moved: the size alone makes it due


# -- an event the store cannot hold stops nothing ------------------------------------------------


class RefusesOne(EventStore):
    """A real store that refuses, as a value its columns cannot hold, any write holding one
    event id: an event no engine should ever get, should one come all the same."""

    engine = "duckdb"

    def __init__(self, inner: EventStore, refused: str) -> None:
        self.inner = inner
        self.refused = refused
        self.writes = 0

    def write_columns(self, columns: Columns) -> None:
        self.writes += 1
        if self.refused in columns[COLUMNS.index("event_id")]:
            raise UnstorableRowsError("a value does not fit")
        self.inner.write_columns(columns)

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        return self.inner.query(sql, parameters)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
def test_an_event_the_store_cannot_hold_is_left_out_counted_and_the_rest_loaded(
    tmp_path: Path, store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    log = WriteAheadLog.open(tmp_path / "log")
    written = records(40, per_record=5)
    bad = written[17][1][3]
    log.append([record for record, _ in written])
    refusing = RefusesOne(store, bad["event_id"])
    with caplog.at_level(logging.ERROR, logger="toolcall_spec.wal"):
        loader = load_all(log, refusing)
    good = {event["event_id"] for _, events in written for event in events} - {bad["event_id"]}
    assert stored_ids(store) == good
    assert loader.checkpoint.unstorable_events == 1
    assert loader.checkpoint.loaded_events == len(good)
    assert bad["event_id"] in caplog.text
    assert refusing.writes < 2 * 200 // 10  # halves, not one write per event
    assert log.stats()["unstorable_events"] == 1


@pytest.mark.requirement("toolcall-spec.requirement.store.health-keyed")
def test_events_waiting_with_the_loader_not_moving_are_a_problem_health_names(
    tmp_path: Path, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loader whose every write fails (its state file included) can say nothing itself: the
    writer sees its events wait with the loader not moving, and health names it."""
    clock = Clock()
    monkeypatch.setattr(time, "monotonic", clock)  # the writer's clock; no thread runs here
    log = WriteAheadLog.open(tmp_path / "log")
    log.append([record for record, _ in records(2)])
    assert log.stats()["stalled_seconds"] == 0.0
    clock.now += STALL_SECONDS + 1
    waiting = log.stats()
    assert waiting["stalled_seconds"] >= STALL_SECONDS
    assert any("nothing loaded for" in problem for problem in log_problems("w", waiting))
    load_all(log, store)
    clock.now += wal_module.CHECK_SECONDS
    assert log.stats()["stalled_seconds"] == 0.0
    assert not log_problems("w", log.stats())
    log.close()
