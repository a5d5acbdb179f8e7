"""The ingest log where it meets what goes wrong, one test per class, against a real DuckDB file:

- a record the loader cannot read (any of them: generated) is quarantined, counted and passed,
  never the end of loading, and never quarantined twice across loader restarts;
- the next segment cannot be created after a group was made durable (every errno, at each call
  of the rotation): the group is acknowledged, later appends never land where the loader may
  delete them, and the rotation happens at a later append;
- the checkpoint cannot be written: the loader goes on from memory, shows the error, deletes
  no segment until a checkpoint is durable, and drains once it can write again;
- one key twice in one load (a retried batch): stored once, the first, no endless retry."""

from __future__ import annotations

import base64
import errno
import struct
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.store import tool_call

from toolcall_spec.analytics.store import EventStore, open_store
from toolcall_spec.analytics.store.layout import Columns, event_columns
from toolcall_spec.analytics.store.quarantine import QUARANTINE
from toolcall_spec.analytics.store.wal import (
    LogLoader,
    WriteAheadLog,
    decode_payload,
    encode_batch_record,
    encode_record,
    frame_at,
    framed,
    read_checkpoint,
    segment_numbers,
)
from toolcall_spec.filesystem import ERRNOS, Call, intercepted

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

NOW = datetime(2026, 12, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
_PREFIX = struct.Struct(">BHq")  # the payload prefix (kind, project length, accepted-at)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(str(tmp_path / "events.duckdb")) as opened:
        yield opened


def stored_ids(store: EventStore) -> list[str]:
    return [str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})]


def drain(directory: Path, store: EventStore, loader: LogLoader | None = None) -> LogLoader:
    loader = loader or LogLoader(directory, store)
    for _ in range(1000):
        if not loader.load_once() and not loader.pending():
            return loader
    raise AssertionError("the loader did not reach the end")


class FailCalls:
    """Fail with ``code`` the calls of ``op`` whose path ends with ``suffix`` (``None``: any
    path), the first ``times`` of them (``None``: all, until ``healed``)."""

    def __init__(self, op: str, suffix: str | None, code: int, times: int | None = 1) -> None:
        self.op, self.suffix, self.code, self.times = op, suffix, code, times
        self.failed = 0

    def before(self, call: Call) -> None:
        if call.op != self.op or (self.times is not None and self.failed >= self.times):
            return
        if self.suffix is not None and not str(call.path).endswith(self.suffix):
            return
        self.failed += 1
        raise OSError(self.code, f"{errno.errorcode[self.code]} (injected at {call})")


# --- records the loader cannot read ------------------------------------------------------------


def payload(kind: int, project: bytes, body: bytes) -> bytes:
    micros = int(NOW.timestamp() * 1_000_000)
    return _PREFIX.pack(kind, len(project), micros) + project + body


def _batch(events: list[Any]) -> bytes:
    return orjson.dumps({"events": events})


def _utf16(text: bytes) -> bytes:
    return text.decode().encode("utf-16")


def _without(event: dict[str, Any], name: str) -> dict[str, Any]:
    return {key: value for key, value in event.items() if key != name}


POISONS: dict[str, Callable[[bytes], tuple[bytes, int]]] = {
    # (noise) -> (payload, the count in the header): a checksum that holds over bytes that are
    # no record this loader can load, each a way a writer, a disk or a future version gets it
    "byte-order mark": lambda n: (payload(1, b"p", b"\xef\xbb\xbf" + _batch([tool_call(1)])), 1),
    "utf-16 body": lambda n: (payload(1, b"p", _utf16(_batch([tool_call(1)]))), 1),
    "project not utf-8": lambda n: (payload(0, b"\xff" + n[:3], orjson.dumps([tool_call(1)])), 1),
    "body not json": lambda n: (payload(0, b"p", b"[" + n), 1),
    "batch not an object": lambda n: (payload(1, b"p", orjson.dumps([tool_call(1)])), 1),
    "events not an array": lambda n: (payload(1, b"p", b'{"events": {"a": 1}}'), 1),
    "array of non-events": lambda n: (payload(0, b"p", orjson.dumps([1, "x", None])), 3),
    "count mismatch": lambda n: (payload(0, b"p", orjson.dumps([tool_call(1)])), 2 + len(n)),
    "unknown kind": lambda n: (payload(2 + n[0] % 250 if n else 7, b"p", b"[]"), 0),
    "project past the end": lambda n: (struct.pack(">BHq", 0, 999, 0) + n[:10], 0),
    "short prefix": lambda n: (n[:5], 0),
    "event without id": lambda n: (
        payload(0, b"p", orjson.dumps([_without(tool_call(1), "event_id")])),
        1,
    ),
    "bad timestamp": lambda n: (payload(0, b"p", orjson.dumps([tool_call(1, timestamp="x")])), 1),
}


@st.composite
def logs_with_poison(draw: st.DrawFn) -> list[tuple[str | None, bytes, list[str]]]:
    """Records in log order: ``(poison name or None, framed record, event ids it holds)``; at
    least one poison, good records before and after."""
    out: list[tuple[str | None, bytes, list[str]]] = []
    for _ in range(draw(st.integers(1, 4))):
        for _ in range(draw(st.integers(0, 3))):
            events = [tool_call(i) for i in range(draw(st.integers(1, 4)))]
            if draw(st.booleans()):
                record = encode_record("p", NOW, events)
            else:
                record = encode_batch_record("p", NOW, _batch(events), len(events))
            out.append((None, record, [e["event_id"] for e in events]))
        name = draw(st.sampled_from(sorted(POISONS)))
        body, count = POISONS[name](draw(st.binary(min_size=0, max_size=40)))
        out.append((name, framed(body, count), []))
    events = [tool_call(9)]
    out.append((None, encode_record("p", NOW, events), [events[0]["event_id"]]))
    return out


def _rows_of(payload: bytes, count: int) -> Columns:
    record = decode_payload(payload, count)
    return event_columns(record.events, record.project, record.accepted_at)


def test_every_poison_is_unreadable_to_the_loader() -> None:
    """The generator's poisons are what they claim: decoding them fails (or mapping them)."""
    for name, make in POISONS.items():
        body, count = make(b"\x01noise")
        frame = frame_at(framed(body, count), 0)
        assert frame is not None, name
        with pytest.raises(Exception):  # noqa: B017, PT011  (any decoder or mapping error)
            _rows_of(frame.payload, frame.count)


@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.requirement("toolcall-spec.requirement.store.log-quarantine")
@given(written=logs_with_poison(), restart_at=st.integers(0, 30))
def test_a_record_the_loader_cannot_read_is_quarantined_once_and_loading_goes_on(
    tmp_path_factory: Any, written: list[tuple[str | None, bytes, list[str]]], restart_at: int
) -> None:
    """Every poison of the generator, among good records over several segments, with a loader
    stopped part-way and a fresh one started from the disk (about 1 s an example: a DuckDB file
    and a log each)."""
    root = tmp_path_factory.mktemp("poison")
    log = WriteAheadLog.open(root / "log", segment_bytes=600)
    for _, record, _ in written:
        log.append([record])
    with open_store(str(root / "e.duckdb")) as store:
        # a first loader stops (is killed) after a few loads; a second starts from the disk
        first = LogLoader(log.directory, store, load_batch_events=2)
        for _ in range(restart_at):
            first.load_once()
        first.close()
        loader = drain(log.directory, store, LogLoader(log.directory, store, load_batch_events=2))
        good = [event_id for name, _, ids in written if name is None for event_id in ids]
        assert sorted(stored_ids(store)) == sorted(good)
    poisons = [(name, record) for name, record, _ in written if name is not None]
    lines = [orjson.loads(line) for line in (log.directory / QUARANTINE).read_bytes().splitlines()]
    assert [base64.b64decode(line["record"]) for line in lines] == [r for _, r in poisons]
    assert all(line["reason"] for line in lines)
    assert loader.checkpoint.quarantined_records == len(poisons)
    log._checked_at = 0.0
    health = log.stats()
    assert health["quarantined_records"] == len(poisons)
    assert health["last_quarantine_reason"] == lines[-1]["reason"]
    assert (health["backlog_events"], health["last_load_error"]) == (0, None)
    assert segment_numbers(log.directory) == [max(segment_numbers(log.directory))]
    log.close()


# --- a rotation that fails after a durable group -------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.store.log-faults")
@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
@pytest.mark.parametrize("op", ["open", "dirsync"])
@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT", "EMFILE"])
def test_a_rotation_that_fails_never_fails_a_durable_group_nor_loses_a_later_one(
    tmp_path: Path, store: EventStore, op: str, code: str
) -> None:
    first = [tool_call(i) for i in range(3)]
    record = encode_record("p", NOW, first)
    log = WriteAheadLog.open(tmp_path / "log", segment_bytes=len(record))
    loader = LogLoader(log.directory, store)
    suffix = "000000000002.log" if op == "open" else None
    fault = FailCalls(op, suffix, ERRNOS[code], times=2)  # the rotation, and its first retry
    acknowledged: list[str] = []
    with intercepted(fault):
        for round_ in range(4):  # each append fills a segment: each one rotates
            events = [tool_call(10 * round_ + i) for i in range(3)]
            log.append([encode_record("p", NOW, events)])  # never raises: each is durable
            acknowledged += [e["event_id"] for e in events]
            loader.load_once()  # the loader, meanwhile, finishes and deletes what it may
    assert fault.failed == 2
    drain(log.directory, store, loader)
    assert sorted(stored_ids(store)) == sorted(acknowledged)
    assert len(segment_numbers(log.directory)) == 1
    log.close()
    reopened = WriteAheadLog.open(tmp_path / "log")
    assert reopened.stats()["backlog_events"] == 0
    reopened.close()


# --- a checkpoint that cannot be written ------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.store.log-faults")
@pytest.mark.requirement("toolcall-spec.requirement.store.log-disk-full")
@pytest.mark.parametrize("op", ["open", "write", "fsync", "rename", "dirsync"])
def test_a_checkpoint_that_cannot_be_written_stops_nothing_and_deletes_nothing_early(
    tmp_path: Path, store: EventStore, op: str
) -> None:
    """The engine is on another disk: loading goes on while the log's disk is full; no segment
    goes before a durable checkpoint past it; once the checkpoint can be written, it drains."""
    one = encode_record("p", NOW, [tool_call(0)])
    log = WriteAheadLog.open(tmp_path / "log", segment_bytes=len(one))
    ids = []
    for index in range(4):
        events = [tool_call(index)]
        log.append([encode_record("p", NOW, events)])
        ids.append(events[0]["event_id"])
    segments = segment_numbers(log.directory)
    loader = LogLoader(log.directory, store)
    suffix = "checkpoint.json" if op == "rename" else ".tmp" if op != "dirsync" else None
    full = FailCalls(op, suffix, errno.ENOSPC, times=None)
    with intercepted(full):
        drain(log.directory, store, loader)  # never raises
        assert sorted(stored_ids(store)) == sorted(ids)
        assert segment_numbers(log.directory) == segments  # no durable checkpoint: all stay
        log._checked_at = 0.0
        health = log.stats()
        assert "cannot write the checkpoint" in str(health["last_checkpoint_error"])
        assert health["backlog_events"] == 0  # loaded, as the loader's state says
    assert full.failed
    assert read_checkpoint(log.directory) in (None, read_checkpoint(log.directory))
    loader.clock = lambda: float("inf")  # the retry is due
    assert loader.due()
    loader.load_once()
    assert segment_numbers(log.directory) == [segments[-1]]
    checkpoint = read_checkpoint(log.directory)
    assert checkpoint is not None
    assert checkpoint.last_checkpoint_error is None
    log._checked_at = 0.0
    assert log.stats()["last_checkpoint_error"] is None
    log.close()
    # a crash now finds a checkpoint naming what exists
    fresh = drain(log.directory, store)
    assert fresh.checkpoint.position[0] in segment_numbers(log.directory)
    assert sorted(stored_ids(store)) == sorted(ids)


# --- one key twice in one load ------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
def test_a_retried_batch_in_the_same_load_is_stored_once_the_first(
    tmp_path: Path, store: EventStore
) -> None:
    """A client's retry reaches the log beside its first send: one load holds each key twice
    (DuckDB 1.1 refused such an insert whole, and the loader retried it forever)."""
    events = [tool_call(i) for i in range(5)]
    again = [dict(event, event_name="the retry") for event in events]
    log = WriteAheadLog.open(tmp_path / "log")
    log.append([encode_record("p", NOW, events), encode_record("p", NOW, again)])
    loader = drain(log.directory, store)
    rows = store.query("SELECT event_name FROM {events}", {})
    assert sorted(stored_ids(store)) == sorted(e["event_id"] for e in events)
    assert "the retry" not in {row[0] for row in rows}
    assert loader.checkpoint.quarantined_records == 0
    log.close()


def test_a_store_write_with_one_key_twice_keeps_the_first(store: EventStore) -> None:
    event = tool_call(1)
    store.write_events([event, dict(event, event_name="second")], "p", NOW)
    assert store.query("SELECT event_name FROM {events}", {}) == [(event["event_name"],)]
