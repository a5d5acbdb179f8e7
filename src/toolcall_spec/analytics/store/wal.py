"""The write-ahead log in front of a store: batches are durable once fsynced here, and a loader
thread moves them into the engine in large writes.

Why: an engine statement per acknowledged batch caps the endpoint at the engine's commit rate.
Appending to a file and calling ``fsync`` once for every batch that arrived meanwhile (group
commit, by the caller: ``append`` takes all the waiting records at once) costs one disk flush per
group; the engine then sees one write of up to ``LOAD_BATCH_EVENTS`` events.

**Layout.** A log is a directory holding numbered segment files (``000000000001.log``, ...), a
``checkpoint`` (where the loader is: ``segment offset``) and a ``lock`` (``flock``: one process
per log). A segment is a run of records; each record is framed::

    magic b"TCW1" | payload length (u32) | event count (u32) | CRC-32 of count and payload (u32)
    payload: kind (u8) | project length (u16) | accepted-at, microseconds (i64) | project | body
    body: a JSON array of the events as accepted, or (kind 1) the request's batch body as
    received, when every event in it was accepted as sent

**Recovery** (``WriteAheadLog.open``) reads from the checkpoint on: a record that ends past the end
of its file, or bytes after the last good record, are a torn tail (the process died while writing):
they are cut off and logged. A bad record followed by good ones is corruption: the loader skips it
(resynchronising on the next magic), counts it and logs it. Acknowledged records were fsynced
whole, so neither case loses one.

**Exactly once.** The loader writes a record's events, then moves the checkpoint past it; after a
crash between the two, the record is loaded again and the store's dedupe key (project and
``event_id``) keeps one row. The accepted-at time is kept in the record, so a reloaded row is the
same row (ClickHouse's first-write-wins rank derives from it).

**Bounded.** ``backlog_bytes`` (fsynced, not yet loaded) is checked by the caller before a batch is
taken (``has_room``): past ``max_backlog_bytes`` the endpoint answers 503 with ``Retry-After``.
A write or fsync that fails (``ENOSPC`` above all) raises ``LogWriteError``; the file is cut back
to its last fsynced end, so the failed batch, never acknowledged, leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec.analytics.store.base import EventStore, StoreError
from toolcall_spec.analytics.store.layout import Row, event_row

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
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


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
class LogStats:
    """What ``GET /v1/health`` reports about the log."""

    backlog_bytes: int = 0
    backlog_events: int = 0
    appended_events: int = 0
    loaded_events: int = 0
    corrupt_records: int = 0
    cut_bytes: int = 0
    segments: int = 0
    last_load_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    """One process's log (see the module). ``append`` is called by one thread at a time (the
    endpoint's group writer); the loader thread runs beside it (``start``/``close``)."""

    def __init__(
        self,
        directory: Path,
        store: EventStore,
        *,
        max_backlog_bytes: int = DEFAULT_MAX_BACKLOG_BYTES,
        segment_bytes: int = SEGMENT_BYTES,
        load_batch_events: int = LOAD_BATCH_EVENTS,
    ) -> None:
        self.directory = directory
        self.store = store
        self.max_backlog_bytes = max_backlog_bytes
        self.segment_bytes = segment_bytes
        self.load_batch_events = load_batch_events
        self.stats = LogStats()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._durable: dict[int, int] = {}
        """Segment number -> its fsynced end (only these bytes are read by the loader)."""
        self._position = (1, 0)
        """Where the loader is: segment, offset."""
        self._fd = -1
        self._lock_fd = -1
        self._loader: threading.Thread | None = None
        self._stopping = False
        # The two system calls a full disk makes fail; tests replace them to inject the error.
        self.write_bytes: Callable[[int, memoryview], int] = os.write
        self.sync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)

    # --- opening and recovery -------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, store: EventStore, **options: Any) -> WriteAheadLog:
        """The log in ``directory`` (created when missing), recovered: a torn tail is cut, the
        backlog counted. ``LogError`` when another process holds it or it cannot be used."""
        log = cls(directory, store, **options)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            log._take_lock()
            log._recover()
        except OSError as exc:
            log._release_lock()
            raise LogError(f"{directory}: cannot open the ingest log: {exc}") from None
        except LogError:
            log._release_lock()
            raise
        return log

    def _take_lock(self) -> None:
        self._lock_fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock_fd)
            self._lock_fd = -1
            raise LogError(
                f"{self.directory}: the ingest log is in use by another process (each "
                "serve-ingest process needs a log directory of its own: --log-dir)"
            ) from None

    def _release_lock(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

    def _recover(self) -> None:
        numbers = sorted(self._segment_numbers())
        position = self._read_checkpoint()
        if position is None or position[0] not in numbers:
            position = (numbers[0] if numbers else 1, 0)
        for number in numbers:
            if number < position[0]:  # loaded before the last stop; its deletion was cut short
                self._segment_path(number).unlink()
        numbers = [number for number in numbers if number >= position[0]] or [position[0]]
        for number in numbers:
            start = position[1] if number == position[0] else 0
            self._durable[number] = self._recover_segment(number, start)
        if self._durable[numbers[0]] < position[1]:  # the checkpoint is past a cut tail
            position = (numbers[0], self._durable[numbers[0]])
        self._position = position
        self.stats.backlog_bytes = self._backlog_bytes()
        self.stats.segments = len(self._durable)
        self._open_active(numbers[-1])

    def _recover_segment(self, number: int, start: int) -> int:
        """Count the good records of one segment from ``start``; cut a torn tail. Its end."""
        path = self._segment_path(number)
        data = path.read_bytes() if path.exists() else b""
        end = min(start, len(data))
        for item in scan(data, end):
            if isinstance(item, Frame):
                self.stats.backlog_events += item.count
                end = item.end
            elif item.tail:
                self._cut(path, item.start, len(data))
                return item.start
            else:
                end = item.end  # corruption in the middle: the loader skips and counts it
        return max(end, len(data)) if data else 0

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
        self.stats.cut_bytes += size - at

    def _segment_numbers(self) -> list[int]:
        found = []
        for path in self.directory.glob(f"*{_SUFFIX}"):
            stem = path.name.removesuffix(_SUFFIX)
            if stem.isdigit():
                found.append(int(stem))
        return found

    def _segment_path(self, number: int) -> Path:
        return self.directory / f"{number:012d}{_SUFFIX}"

    def _read_checkpoint(self) -> tuple[int, int] | None:
        path = self.directory / "checkpoint"
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        parts = text.split()
        if len(parts) != 2 or not all(part.isdigit() for part in parts):
            logger.warning("%s: unreadable checkpoint %r; replaying the whole log", path, text)
            return None
        return int(parts[0]), int(parts[1])

    def _write_checkpoint(self, position: tuple[int, int]) -> None:
        # No fsync: a lost checkpoint only means records are loaded again, and dedupe absorbs it.
        path = self.directory / "checkpoint"
        temporary = path.with_suffix(".tmp")
        temporary.write_text(f"{position[0]} {position[1]}\n")
        temporary.replace(path)

    def _open_active(self, number: int) -> None:
        self._fd = os.open(self._segment_path(number), os.O_WRONLY | os.O_CREAT, 0o644)
        os.lseek(self._fd, self._durable.setdefault(number, 0), os.SEEK_SET)
        _sync_directory(self.directory)

    # --- appending ------------------------------------------------------------------------------

    def has_room(self) -> bool:
        """False once the backlog is at its bound (the caller answers 503 then)."""
        return self.stats.backlog_bytes < self.max_backlog_bytes

    def append(self, records: Sequence[bytes]) -> None:
        """Write the framed ``records`` and fsync them, all at once. On return they are durable;
        on ``LogWriteError`` none of them is (the file is cut back to its last fsynced end)."""
        data = b"".join(records)
        if not data:
            return
        if not self.has_room():
            raise LogFullError
        number = max(self._durable)
        start = self._durable[number]
        try:
            self._write_all(data)
            self.sync(self._fd)
        except OSError as exc:
            self._undo(start)
            full = exc.errno in DISK_FULL_ERRNOS
            reason = "the disk is full" if full else f"write failed: {exc.strerror or exc}"
            raise LogWriteError(f"{self.directory}: {reason}", disk_full=full) from None
        count = sum(_HEADER.unpack_from(record)[2] for record in records)
        with self._wake:
            self._durable[number] = start + len(data)
            self.stats.backlog_bytes += len(data)
            self.stats.backlog_events += count
            self.stats.appended_events += count
            self._wake.notify()
        if start + len(data) >= self.segment_bytes:
            self._rotate(number + 1)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self.write_bytes(self._fd, view) :]

    def _undo(self, start: int) -> None:
        """Cut the active segment back to ``start`` after a failed write or fsync, so the next
        batch follows the last good record (a failed fsync leaves the page cache unknown)."""
        try:
            os.ftruncate(self._fd, start)
            os.lseek(self._fd, start, os.SEEK_SET)
        except OSError as exc:  # the loader's resync skips what is left (counted as corrupt)
            logger.error("%s: cannot cut back a failed write: %s", self.directory, exc)
            os.lseek(self._fd, 0, os.SEEK_END)

    def _rotate(self, number: int) -> None:
        old = self._fd
        with self._wake:
            self._durable[number] = 0
            self.stats.segments = len(self._durable)
        self._open_active(number)
        os.close(old)

    # --- loading ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the loader thread (it loads the recovered backlog first)."""
        self._loader = threading.Thread(target=self._load_forever, name="wal-loader", daemon=True)
        self._loader.start()

    def close(self, drain_seconds: float = 10.0) -> None:
        """Load what is fsynced (for up to ``drain_seconds``), stop the loader, release the log.
        What is not loaded stays in the log for the next start."""
        deadline = time.monotonic() + drain_seconds
        while self._loader is not None and self.stats.backlog_bytes and time.monotonic() < deadline:
            time.sleep(0.02)
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._loader is not None:
            self._loader.join(drain_seconds + 5)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._release_lock()

    def load_once(self) -> int:
        """Load one batch (up to ``load_batch_events``) from the loader's position into the store;
        the events loaded. ``StoreError`` when the store write fails (nothing moves then)."""
        frames, position, skipped = self._next_frames()
        rows: list[Row] = []
        for frame in frames:
            record = decode_payload(frame.payload)
            at = record.accepted_at
            rows.extend(event_row(event, record.project, at) for event in record.events)
        if rows:
            self.store.write(rows)
        loaded = sum(frame.count for frame in frames)
        if position != self._position:
            self._advance(position, loaded, skipped)
        return loaded

    def _next_frames(self) -> tuple[list[Frame], tuple[int, int], int]:
        """The good records from the loader's position (up to a batch), the position after them,
        and the corrupt records skipped on the way (logged and counted here)."""
        number, offset = self._position
        with self._lock:
            end = self._durable.get(number, offset)
            later = [n for n in self._durable if n > number]
        if offset >= end:
            return [], ((min(later), 0) if later else (number, offset)), 0
        limit = min(end, offset + _READ_BYTES)
        data = _read(self._segment_path(number), offset, limit)
        frames, at, skipped = self._frames_in(number, offset, data, limit == end)
        if not frames and not skipped:
            # one record longer than a read: read as much as a record can be, whole
            limit = min(end, offset + HEADER_BYTES + MAX_RECORD_BYTES)
            data = _read(self._segment_path(number), offset, limit)
            frames, at, skipped = self._frames_in(number, offset, data, complete=True)
        return frames, (number, offset + at), skipped

    def _frames_in(
        self, number: int, offset: int, data: bytes, complete: bool
    ) -> tuple[list[Frame], int, int]:
        """The good records of ``data`` (read at ``offset``) up to a batch, where they end, and
        the corrupt spans skipped. ``complete``: ``data`` reaches the fsynced end, so damage at
        its end is corruption, not a record cut short by the read."""
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
                self._segment_path(number),
                offset + item.start,
                item.end - item.start,
            )
        return frames, at, skipped

    def _advance(self, position: tuple[int, int], loaded: int, skipped: int) -> None:
        with self._lock:
            self._position = position
            self.stats.loaded_events += loaded
            self.stats.backlog_events -= loaded
            self.stats.corrupt_records += skipped
            self.stats.backlog_bytes = self._backlog_bytes()
            finished = [n for n in self._durable if n < position[0]]
            for number in finished:
                del self._durable[number]
            self.stats.segments = len(self._durable)
        self._write_checkpoint(position)
        for number in finished:  # after the checkpoint, so a restart never looks for them
            self._segment_path(number).unlink(missing_ok=True)

    def _backlog_bytes(self) -> int:
        number, offset = self._position
        ends = self._durable.items()
        return sum(end - (offset if n == number else 0) for n, end in ends if n >= number)

    def _load_forever(self) -> None:
        _lower_priority()
        failures = 0
        while True:
            with self._wake:
                if self._stopping:
                    return
                if not self._has_unloaded():
                    self._wake.wait(0.5)
                    continue
            try:
                self.load_once()
            except StoreError as exc:
                self.stats.last_load_error = str(exc)
                pause = _RETRY_SECONDS[min(failures, len(_RETRY_SECONDS) - 1)]
                failures += 1
                logger.error("loading the ingest log failed (retry in %.1f s): %s", pause, exc)
                with self._wake:
                    self._wake.wait(pause)
            else:
                failures = 0
                self.stats.last_load_error = None

    def _has_unloaded(self) -> bool:
        number, offset = self._position
        return self._durable.get(number, offset) > offset or any(n > number for n in self._durable)


LOADER_NICENESS = 10
"""How much lower the loader thread's CPU priority is than the endpoint's: on a busy machine the
answers get the CPU first and the loader catches up when requests pause; the backlog bound stops
it from falling behind without limit."""


def _lower_priority() -> None:
    # Linux: the niceness is per thread; elsewhere the loader keeps the same priority
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOADER_NICENESS)


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
