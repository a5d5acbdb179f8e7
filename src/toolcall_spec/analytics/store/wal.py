"""The write-ahead log in front of a store: a batch is durable once fsynced here, and a loader
moves the log into the engine in large writes.

Why: an engine statement per acknowledged batch caps the endpoint at the engine's commit rate.
Appending to a file and calling ``fdatasync`` once for every batch that arrived meanwhile (group
commit, by the caller: ``append`` takes all the waiting records at once) costs one disk flush per
group; the engine then sees writes of up to ``LOAD_BATCH_EVENTS`` events.

**Two sides.** ``WriteAheadLog`` writes (in the endpoint's process); ``LogLoader`` loads (under
``serve-ingest``, in a loader process of its own: ``toolcall_spec.analytics.store.loader``, so
that loading, which is Python work, never holds the interpreter lock the answers need). They share
nothing but the files: the loader reads records whose checksum holds, and writes its
``checkpoint.json``; the writer reads that checkpoint for the backlog.

**Layout.** A log is a directory holding numbered segment files (``000000000001.log``, ...),
``checkpoint.json`` (where the loader is, and what it counted) and two lock files (``flock``: one
writer and one loader per log). A segment is a run of records; each record is framed::

    magic b"TCW1" | payload length (u32) | event count (u32) | CRC-32 of count and payload (u32)
    payload: kind (u8) | project length (u16) | accepted-at, microseconds (i64) | project | body
    body: a JSON array of the events as accepted, or (kind 1) the request's batch body as
    received, when every event in it was accepted as sent

**Recovery** (``WriteAheadLog.open``) reads from the checkpoint on: a record that ends past the end
of its file, or bytes after the last good record, are a torn tail (the process died while writing):
they are cut off and logged. A bad record followed by good ones is corruption: the loader skips it
(resynchronising on the next magic that starts a good record), counts it and logs it.
Acknowledged records were fsynced whole, so neither case loses one.

**Exactly once.** The loader writes a record's events, then moves the checkpoint past it; after a
crash between the two, the record is loaded again and the store's dedupe key (project and
``event_id``) keeps one row. The accepted-at time is kept in the record, so a reloaded row is the
same row (ClickHouse's first-write-wins rank derives from it).

**An event the store cannot hold** (none is known: the schema bounds the counts, and a timestamp
takes the nearest moment its column holds) would fail every load that holds it, and every load
after it. Should one come, the loader writes the load in halves down to that one event, leaves it
out, logs its ``event_id`` and counts it (``unstorable_events``), and loads the rest.

**Bounded.** ``backlog_bytes`` (written, not yet loaded) is checked before a batch is taken
(``has_room``): past ``max_backlog_bytes`` the endpoint answers 503 with ``Retry-After``. A write
or fsync that fails (``ENOSPC`` above all) raises ``LogWriteError``; the file is cut back to the
end of the last good write, so the failed batch, never acknowledged, leaves nothing behind.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec.analytics.store.base import EventStore, StoreError, UnstorableRowsError
from toolcall_spec.analytics.store.layout import event_columns, joined

logger = logging.getLogger("toolcall_spec.wal")

MAGIC = b"TCW1"
_HEADER = struct.Struct(">4sIII")
HEADER_BYTES = _HEADER.size
MAX_RECORD_BYTES = 64 * 2**20
"""No record is larger (a batch is at most 1 MiB decompressed); a bigger length is corruption."""

SEGMENT_BYTES = 64 * 2**20
DEFAULT_MAX_BACKLOG_BYTES = 256 * 2**20
LOAD_BATCH_EVENTS = 20_000
_READ_BYTES = 8 * 2**20
_SUFFIX = ".log"
_RETRY_SECONDS = (0.1, 0.5, 1.0, 2.0, 5.0)
CHECK_SECONDS = 0.02
"""The writer reads the loader's checkpoint at most this often (for the backlog)."""
IDLE_POLL_SECONDS = 0.01
"""With nothing to load (or nothing due), the loader looks again after this long."""
MIN_LOAD_BYTES = 4 * 2**20
"""A load waits until this much is durable (about 12,000 events of 350 bytes)..."""
QUIET_SECONDS = 0.05
"""... or until the writer has appended nothing for this long (the endpoint is quiet) ..."""
MAX_LOAD_DELAY_SECONDS = 1.0
"""... or until what waits has waited this long. Why: an engine statement has a large fixed
cost (DuckDB, measured: 43.6 us of loader CPU per event in loads of 300 events, 12.2 in loads
of 20,000), so a loader that took each record as soon as it was durable spent most of its CPU on
small loads, taken from the answers on the same cores."""
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_MAPPING_ERRORS = (ValueError, TypeError, OverflowError, KeyError)
"""What turning a logged event into its row may raise for a value no row can hold. The event was
checked before it was logged, so none is expected; should one come, that event is left out
(logged, counted) rather than stopping every load after it."""


class LogError(StoreError):
    """The log cannot be opened (in use by another process, unreadable directory, ...)."""


class LogFullError(Exception):
    """The backlog is at its bound: the engine is behind. Retry later."""


class LogWriteError(Exception):
    """Appending or fsyncing failed; nothing of the batch is acknowledged."""

    def __init__(self, message: str, *, disk_full: bool) -> None:
        super().__init__(message)
        self.disk_full = disk_full


@dataclass(frozen=True, slots=True)
class Record:
    project: str
    accepted_at: datetime
    events: list[dict[str, Any]]


@dataclass
class Checkpoint:
    """Where the loader is (the next record to load: segment, offset), and what it counted since
    it started. Written by the loader after each load (``checkpoint.json``, replaced whole), read
    by the writer for the backlog and by ``GET /v1/health``."""

    segment: int = 1
    offset: int = 0
    loaded_events: int = 0
    corrupt_records: int = 0
    unstorable_events: int = 0
    last_load_error: str | None = None

    @property
    def position(self) -> tuple[int, int]:
        return self.segment, self.offset


CHECKPOINT = "checkpoint.json"
DURABLE = "durable"
"""The writer's durable end (segment, offset), rewritten in place after every fsync."""
_MARK = struct.Struct(">QQI")


def encode_mark(segment: int, end: int) -> bytes:
    return _MARK.pack(segment, end, zlib.crc32(_MARK.pack(segment, end, 0)))


def read_mark(directory: Path) -> tuple[int, int] | None:
    """The durable end the writer published, ``None`` before it did. A value caught while being
    rewritten fails its checksum and is read again."""
    for _ in range(100):
        try:
            data = (directory / DURABLE).read_bytes()
        except FileNotFoundError:
            return None
        if len(data) == _MARK.size:
            segment, end, checksum = _MARK.unpack(data)
            if zlib.crc32(_MARK.pack(segment, end, 0)) == checksum:
                return segment, end
        time.sleep(0.001)
    return None


def read_checkpoint(directory: Path) -> Checkpoint | None:
    """The loader's checkpoint in ``directory``; ``None`` when there is none or it is unreadable
    (logged: the whole log is then loaded again, which the dedupe key absorbs)."""
    path = directory / CHECKPOINT
    try:
        value = orjson.loads(path.read_bytes())
        checkpoint = Checkpoint(**value)
    except FileNotFoundError:
        return None
    except (orjson.JSONDecodeError, TypeError) as exc:
        logger.warning("%s: unreadable checkpoint (%s); loading the whole log again", path, exc)
        return None
    counts = (checkpoint.segment, checkpoint.offset, checkpoint.loaded_events)
    if not all(type(count) is int and count >= 0 for count in counts):
        logger.warning("%s: unreadable checkpoint %r; loading the whole log again", path, value)
        return None
    return checkpoint


def write_checkpoint(directory: Path, checkpoint: Checkpoint) -> None:
    # No fsync: a lost checkpoint only means records are loaded again, and dedupe absorbs it.
    temporary = directory / (CHECKPOINT + ".tmp")
    temporary.write_bytes(orjson.dumps(asdict(checkpoint)))
    temporary.replace(directory / CHECKPOINT)


_EVENTS, _BATCH = 0, 1
"""Payload kinds: a JSON array of the events as accepted; or a batch body (``{"events": [...]}``)
every event of which was accepted as sent, logged as received (no second encoding)."""
_PREFIX = struct.Struct(">BHq")
"""Payload prefix: kind, project length (the project's UTF-8 follows), accepted-at microseconds."""


def encode_record(project: str, accepted_at: datetime, events: Sequence[Any]) -> bytes:
    """One framed record holding ``events`` (schema-valid, as accepted) for ``project``."""
    return _frame(_EVENTS, project, accepted_at, orjson.dumps(events), len(events))


def encode_batch_record(project: str, accepted_at: datetime, body: bytes, count: int) -> bytes:
    """One framed record holding a batch body whose ``count`` events were all accepted exactly
    as sent (no repair, no rejection): the body is logged as it is, not encoded again."""
    return _frame(_BATCH, project, accepted_at, body, count)


def _frame(kind: int, project: str, accepted_at: datetime, body: bytes, count: int) -> bytes:
    name = project.encode()
    micros = int(accepted_at.timestamp() * 1_000_000)
    payload = b"".join((_PREFIX.pack(kind, len(name), micros), name, body))
    checksum = zlib.crc32(payload, zlib.crc32(count.to_bytes(4, "big")))
    return _HEADER.pack(MAGIC, len(payload), count, checksum) + payload


def decode_payload(payload: bytes) -> Record:
    kind, length, micros = _PREFIX.unpack_from(payload)
    start = _PREFIX.size + length
    project = payload[_PREFIX.size : start].decode()
    value = orjson.loads(payload[start:])
    events = value["events"] if kind == _BATCH else value
    return Record(project, datetime.fromtimestamp(micros / 1_000_000, timezone.utc), events)


@dataclass(frozen=True, slots=True)
class Frame:
    """A good record at ``start`` (its payload still encoded), ending at ``end``."""

    start: int
    end: int
    count: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class Damage:
    """Bytes ``start``..``end`` that are no good record. ``tail``: nothing good follows them in
    the data read (a torn tail when the data read is the whole file)."""

    start: int
    end: int
    tail: bool


def frame_at(data: bytes | memoryview, at: int) -> Frame | None:
    """The good record at ``at`` in ``data``, or ``None`` (short, bad magic, bad length or CRC)."""
    if at + HEADER_BYTES > len(data):
        return None
    magic, length, count, checksum = _HEADER.unpack_from(data, at)
    end = at + HEADER_BYTES + length
    if magic != MAGIC or length > MAX_RECORD_BYTES or end > len(data):
        return None
    payload = bytes(data[at + HEADER_BYTES : end])
    if zlib.crc32(payload, zlib.crc32(count.to_bytes(4, "big"))) != checksum:
        return None
    return Frame(at, end, count, payload)


def scan(data: bytes, start: int = 0) -> Iterator[Frame | Damage]:
    """The good records of ``data`` from ``start`` and the damaged spans between them, in order.
    After a bad record the scan resumes at the next magic that starts a good record."""
    at = start
    while at < len(data):
        frame = frame_at(data, at)
        if frame is not None:
            yield frame
            at = frame.end
            continue
        resume = _next_good(data, at + 1)
        yield Damage(at, len(data) if resume is None else resume, resume is None)
        if resume is None:
            return
        at = resume


def _next_good(data: bytes, at: int) -> int | None:
    while True:
        at = data.find(MAGIC, at)
        if at < 0:
            return None
        if frame_at(data, at) is not None:
            return at
        at += 1


class WriteAheadLog:
    """The writing side of one log (see the module): recovery at open, ``append`` (called by one
    thread at a time: the endpoint's group writer), the backlog against the loader's checkpoint.
    The loader (``LogLoader``) runs elsewhere: in a process of its own under ``serve-ingest``."""

    def __init__(
        self,
        directory: Path,
        *,
        max_backlog_bytes: int = DEFAULT_MAX_BACKLOG_BYTES,
        segment_bytes: int = SEGMENT_BYTES,
    ) -> None:
        self.directory = directory
        self.max_backlog_bytes = max_backlog_bytes
        self.segment_bytes = segment_bytes
        self.appended_events = 0
        self.cut_bytes = 0
        self._ends: dict[int, int] = {}
        """Segment number -> the end of what was written to it whole (fsynced, or recovered)."""
        self._marks: deque[tuple[int, int, int]] = deque()
        """(segment, end of a record or group, events logged up to there), in log order."""
        self._events = 0
        self._loaded_mark = 0
        self._checkpoint = Checkpoint()
        self._checked_at = 0.0
        self._lock = threading.Lock()
        self._fd = -1
        self._lock_fd = -1
        self._mark_fd = -1
        # The two system calls a full disk makes fail; tests replace them to inject the error.
        self.write_bytes: Callable[[int, memoryview], int] = os.write
        self.sync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)

    # --- opening and recovery -------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, **options: Any) -> WriteAheadLog:
        """The log in ``directory`` (created when missing), recovered: a torn tail is cut, the
        backlog counted. ``LogError`` when another process holds it or it cannot be used."""
        log = cls(directory, **options)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            log._lock_fd = lock_file(directory / "writer.lock", wait=0)
            log._recover()
        except OSError as exc:
            log.close()
            raise LogError(f"{directory}: cannot open the ingest log: {exc}") from None
        except LogError:
            log.close()
            raise
        return log

    def _recover(self) -> None:
        numbers = sorted(segment_numbers(self.directory))
        checkpoint = read_checkpoint(self.directory)
        position = checkpoint.position if checkpoint is not None else (1, 0)
        if position[0] not in numbers:
            position = (numbers[0] if numbers else position[0], 0)
        numbers = [number for number in numbers if number >= position[0]] or [position[0]]
        for number in numbers:
            start = position[1] if number == position[0] else 0
            self._ends[number] = self._recover_segment(number, start)
        self._mark_fd = os.open(self.directory / DURABLE, os.O_RDWR | os.O_CREAT, 0o644)
        self._open_active(numbers[-1])

    def _recover_segment(self, number: int, start: int) -> int:
        """Count the good records of one segment from ``start``; cut a torn tail. Its end."""
        path = segment_path(self.directory, number)
        data = path.read_bytes() if path.exists() else b""
        for item in scan(data, min(start, len(data))):
            if isinstance(item, Frame):
                self._events += item.count
                self._marks.append((number, item.end, self._events))
            elif item.tail:
                self._cut(path, item.start, len(data))
                return item.start
        return len(data)

    def _cut(self, path: Path, at: int, size: int) -> None:
        logger.warning(
            "%s: cut %d bytes of a torn tail at offset %d (a write the process did not finish; "
            "never acknowledged)",
            path,
            size - at,
            at,
        )
        with path.open("r+b") as handle:
            handle.truncate(at)
            os.fsync(handle.fileno())
        self.cut_bytes += size - at

    def _open_active(self, number: int) -> None:
        self._fd = os.open(segment_path(self.directory, number), os.O_WRONLY | os.O_CREAT, 0o644)
        os.lseek(self._fd, self._ends.setdefault(number, 0), os.SEEK_SET)
        _sync_directory(self.directory)
        self._publish(number, self._ends[number])

    def _publish(self, number: int, end: int) -> None:
        """Tell the loader how far the log is durable: it reads no further, so it never loads a
        batch whose fsync then fails (a batch never acknowledged). Not fsynced itself: after a
        crash the writer's recovery publishes again before a loader starts reading."""
        os.pwrite(self._mark_fd, encode_mark(number, end), 0)

    def close(self) -> None:
        for name in ("_fd", "_mark_fd", "_lock_fd"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    # --- appending ------------------------------------------------------------------------------

    def has_room(self) -> bool:
        """False once the backlog is at its bound (the caller answers 503 then)."""
        return self.backlog_bytes() < self.max_backlog_bytes

    def append(self, records: Sequence[bytes]) -> None:
        """Write the framed ``records`` and fsync them, all at once. On return they are durable;
        on ``LogWriteError`` none of them is (the file is cut back to its last good end)."""
        data = b"".join(records)
        if not data:
            return
        if not self.has_room():
            raise LogFullError
        number = max(self._ends)
        start = self._ends[number]
        try:
            self._write_all(data)
            self.sync(self._fd)
        except OSError as exc:
            self._undo(start)
            full = exc.errno in DISK_FULL_ERRNOS
            reason = "the disk is full" if full else f"write failed: {exc.strerror or exc}"
            raise LogWriteError(f"{self.directory}: {reason}", disk_full=full) from None
        count = sum(_HEADER.unpack_from(record)[2] for record in records)
        self._publish(number, start + len(data))
        with self._lock:
            self._ends[number] = start + len(data)
            self._events += count
            self.appended_events += count
            self._marks.append((number, start + len(data), self._events))
        if start + len(data) >= self.segment_bytes:
            self._rotate(number + 1)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self.write_bytes(self._fd, view) :]

    def _undo(self, start: int) -> None:
        """Cut the active segment back to ``start`` after a failed write or fsync, so the next
        batch follows the last good record (a failed fsync leaves the page cache unknown). The
        loader never read past ``start``: it reads up to the published durable end only."""
        try:
            os.ftruncate(self._fd, start)
            os.lseek(self._fd, start, os.SEEK_SET)
        except OSError as exc:  # the loader's resync skips what is left (counted as corrupt)
            logger.error("%s: cannot cut back a failed write: %s", self.directory, exc)
            self._ends[max(self._ends)] = os.lseek(self._fd, 0, os.SEEK_END)

    def _rotate(self, number: int) -> None:
        """Start the next segment. The loader moves on to it once it exists, so the new file is
        created only after the last write to the old one."""
        old = self._fd
        with self._lock:
            self._ends[number] = 0
        self._open_active(number)
        os.close(old)

    # --- the backlog ----------------------------------------------------------------------------

    def _refresh(self) -> Checkpoint:
        """The loader's checkpoint, read again at most every ``CHECK_SECONDS``."""
        now = time.monotonic()
        if now - self._checked_at >= CHECK_SECONDS:
            self._checked_at = now
            self._checkpoint = read_checkpoint(self.directory) or self._checkpoint
            with self._lock:
                position = self._checkpoint.position
                while self._marks and self._marks[0][:2] <= position:
                    self._loaded_mark = self._marks.popleft()[2]
                for number in [n for n in self._ends if n < position[0]]:
                    del self._ends[number]  # loaded and deleted by the loader
        return self._checkpoint

    def backlog_bytes(self) -> int:
        segment, offset = self._refresh().position
        with self._lock:
            ends = list(self._ends.items())
        return sum(end - (offset if n == segment else 0) for n, end in ends if n >= segment)

    def stats(self) -> dict[str, Any]:
        """What ``GET /v1/health`` reports: the backlog (bytes and events fsynced here and not
        yet loaded), what the loader counted, and where the log is."""
        backlog = self.backlog_bytes()
        checkpoint = self._checkpoint
        return {
            "directory": str(self.directory),
            "backlog_bytes": backlog,
            "backlog_events": self._events - self._loaded_mark if backlog else 0,
            "max_backlog_bytes": self.max_backlog_bytes,
            "appended_events": self.appended_events,
            "loaded_events": checkpoint.loaded_events,
            "corrupt_records": checkpoint.corrupt_records,
            "unstorable_events": checkpoint.unstorable_events,
            "last_load_error": checkpoint.last_load_error,
            "cut_bytes": self.cut_bytes,
            "segments": len(self._ends),
        }


class LogLoader:
    """The loading side of one log: from the checkpoint on, good records go to ``store`` in writes
    of up to ``load_batch_events`` events; then the checkpoint moves past them and segments wholly
    loaded are deleted. It reads what the writer has written whole (a record is loaded once its
    checksum holds, possibly just before the writer's fsync returns: should that fsync fail, the
    batch is not acknowledged, and the client's retry is stored once)."""

    def __init__(
        self,
        directory: Path,
        store: EventStore,
        load_batch_events: int = LOAD_BATCH_EVENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = directory
        self.store = store
        self.load_batch_events = load_batch_events
        self.clock = clock
        self._waiting_since: float | None = None
        self._durable_seen = (0, 0)
        self._changed_at = 0.0
        found = read_checkpoint(directory) or Checkpoint()
        self.checkpoint = Checkpoint(found.segment, found.offset)
        numbers = sorted(segment_numbers(directory))
        if numbers and self.checkpoint.segment not in numbers:
            self.checkpoint.segment, self.checkpoint.offset = numbers[0], 0
        for number in numbers:
            if number < self.checkpoint.segment:  # loaded before; its deletion was cut short
                segment_path(directory, number).unlink(missing_ok=True)

    def load_once(self) -> int:
        """Load one batch from the checkpoint into the store; the events loaded. ``StoreError``
        when the store write fails (the checkpoint stays; the next call tries again)."""
        frames, position, skipped = self._next_frames()
        records = [decode_payload(frame.payload) for frame in frames]
        try:
            parts = [event_columns(r.events, r.project, r.accepted_at) for r in records if r.events]
            if parts:
                self.store.write_columns(joined(parts))
            unstorable = 0
        except (UnstorableRowsError, *_MAPPING_ERRORS):
            unstorable = self._write_apart([(r, event) for r in records for event in r.events])
        self._waiting_since = None
        loaded = sum(frame.count for frame in frames) - unstorable
        if position != self.checkpoint.position or skipped:
            self._advance(position, loaded, skipped, unstorable)
        return loaded

    def _write_apart(self, items: list[tuple[Record, dict[str, Any]]]) -> int:
        """Write the events in halves, down to one event, when a write of them all failed on its
        rows: every event that can be stored is, and each one that cannot is left out, logged
        with its ``event_id`` (and counted). The number left out."""
        try:
            self.store.write_columns(
                joined([event_columns([event], r.project, r.accepted_at) for r, event in items])
            )
        except (UnstorableRowsError, *_MAPPING_ERRORS) as exc:
            if len(items) > 1:
                half = len(items) // 2
                return self._write_apart(items[:half]) + self._write_apart(items[half:])
            logger.error(
                "%s: event %s of project %s cannot be stored and is left out: %s",
                self.directory,
                items[0][1].get("event_id"),
                items[0][0].project,
                exc,
            )
            return 1
        return 0

    def pending(self) -> bool:
        """Something durable past the checkpoint."""
        segment, offset = self.checkpoint.position
        return self._durable_end(segment)[0] > offset

    def due(self) -> bool:
        """Whether a load should run now: something durable waits past the checkpoint and it
        is a large load (``MIN_LOAD_BYTES``, or the rest of a segment the writer is done with),
        or the writer has gone quiet (``QUIET_SECONDS``), or it has waited
        ``MAX_LOAD_DELAY_SECONDS``."""
        segment, offset = self.checkpoint.position
        end, final = self._durable_end(segment)
        now = self.clock()
        if end <= offset and not final:
            self._waiting_since = None
            return False
        if self._waiting_since is None:
            self._waiting_since = now
        if (segment, end) != self._durable_seen:
            self._durable_seen, self._changed_at = (segment, end), now
        return (
            final
            or end - offset >= MIN_LOAD_BYTES
            or now - self._changed_at >= QUIET_SECONDS
            or now - self._waiting_since >= MAX_LOAD_DELAY_SECONDS
        )

    def _durable_end(self, number: int) -> tuple[int, bool]:
        """How far segment ``number`` may be read, and whether the writer is done with it (a
        later segment is the one being written): the whole file then, else the published end."""
        published = read_mark(self.directory)
        if published is None or published[0] < number:
            return 0, False
        if published[0] == number:
            return published[1], False
        path = segment_path(self.directory, number)
        return (path.stat().st_size if path.exists() else 0), True

    def _next_frames(self) -> tuple[list[Frame], tuple[int, int], int]:
        """The good records from the checkpoint (up to a batch), the position after them, and
        the corrupt records skipped on the way (logged here)."""
        number, offset = self.checkpoint.position
        path = segment_path(self.directory, number)
        end, final = self._durable_end(number)
        if offset >= end:
            return [], ((number + 1, 0) if final else (number, offset)), 0
        limit = min(end, offset + _READ_BYTES)
        data = _read(path, offset, limit)
        complete = limit == end  # everything up to the durable end is whole records
        frames, at, skipped = self._frames_in(path, offset, data, complete)
        if not frames and not skipped and limit < end:
            # one record longer than a read: read as much as a record can be, whole
            limit = min(end, offset + HEADER_BYTES + MAX_RECORD_BYTES)
            data = _read(path, offset, limit)
            frames, at, skipped = self._frames_in(path, offset, data, complete=True)
        return frames, (number, offset + at), skipped

    def _frames_in(
        self, path: Path, offset: int, data: bytes, complete: bool
    ) -> tuple[list[Frame], int, int]:
        """The good records of ``data`` (read at ``offset``) up to a batch, where they end, and
        the corrupt spans skipped. ``complete``: damage at the end of ``data`` is corruption,
        not a record still being written or cut by the read."""
        frames: list[Frame] = []
        at = skipped = events = 0
        for item in scan(data):
            if isinstance(item, Frame):
                frames.append(item)
                at = item.end
                events += item.count
                if events >= self.load_batch_events:
                    break
                continue
            if item.tail and not complete:
                break
            skipped += 1
            at = item.end
            logger.error(
                "%s: skipped a corrupt record at offset %d (%d bytes)",
                path,
                offset + item.start,
                item.end - item.start,
            )
        return frames, at, skipped

    def _advance(
        self, position: tuple[int, int], loaded: int, skipped: int, unstorable: int = 0
    ) -> None:
        checkpoint = self.checkpoint
        checkpoint.segment, checkpoint.offset = position
        checkpoint.loaded_events += loaded
        checkpoint.corrupt_records += skipped
        checkpoint.unstorable_events += unstorable
        checkpoint.last_load_error = None
        write_checkpoint(self.directory, checkpoint)
        for number in segment_numbers(self.directory):
            if number < position[0]:  # after the checkpoint, so a restart never looks for it
                segment_path(self.directory, number).unlink(missing_ok=True)

    def failed(self, error: StoreError) -> None:
        """Record a failed load in the checkpoint, for ``GET /v1/health``."""
        self.checkpoint.last_load_error = str(error)
        write_checkpoint(self.directory, self.checkpoint)


def run_loaders(
    loaders: Sequence[LogLoader], stop: threading.Event, drain_seconds: float = 10.0
) -> None:
    """Load the logs, each when a load is due (``LogLoader.due``), until ``stop`` is set; then
    load what is left for up to ``drain_seconds`` (the rest stays in the logs for the next
    start). A failed store write is logged and retried after a pause that grows to 5 s."""
    failures = 0
    deadline: float | None = None
    while True:
        if stop.is_set() and deadline is None:
            deadline = time.monotonic() + drain_seconds
        if deadline is not None and time.monotonic() > deadline:
            return
        try:
            draining = deadline is not None
            loaded = sum(loader.load_once() for loader in loaders if draining or loader.due())
        except StoreError as exc:
            for loader in loaders:
                loader.failed(exc)
            pause = _RETRY_SECONDS[min(failures, len(_RETRY_SECONDS) - 1)]
            failures += 1
            logger.error("loading the ingest log failed (retry in %.1f s): %s", pause, exc)
            stop.wait(pause) if deadline is None else time.sleep(min(pause, 0.5))
            continue
        failures = 0
        if loaded or (draining and any(loader.pending() for loader in loaders)):
            continue
        if deadline is not None:
            return  # drained
        stop.wait(IDLE_POLL_SECONDS)


def start_loader_thread(loaders: Sequence[LogLoader]) -> Callable[[], None]:
    """Run the loaders in a thread of this process (tests, embedding); returns ``stop``, which
    drains and joins it."""
    stop = threading.Event()
    thread = threading.Thread(target=run_loaders, args=(loaders, stop), daemon=True)
    thread.start()

    def halt() -> None:
        stop.set()
        thread.join(30)

    return halt


def segment_numbers(directory: Path) -> list[int]:
    found = []
    for path in directory.glob(f"*{_SUFFIX}"):
        stem = path.name.removesuffix(_SUFFIX)
        if stem.isdigit():
            found.append(int(stem))
    return found


def segment_path(directory: Path, number: int) -> Path:
    return directory / f"{number:012d}{_SUFFIX}"


def lock_file(path: Path, wait: float) -> int:
    """An exclusive ``flock`` on ``path``, waiting up to ``wait`` seconds; ``LogError`` when
    another process keeps it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            os.close(fd)
            raise LogError(
                f"{path.parent}: the ingest log is in use by another process (each "
                "serve-ingest process needs a log directory of its own: --log-dir)"
            ) from None
        return fd


def _read(path: Path, start: int, end: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(start)
        return handle.read(max(0, end - start))


def _sync_directory(directory: Path) -> None:
    """Make a new segment's directory entry durable (a fsynced file whose name is lost is lost)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
