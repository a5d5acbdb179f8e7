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
    received, when every event in it was accepted as sent and orjson reads the body as the
    intake's parser did (``loggable_body``: no byte-order mark)

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

**Nothing stops the loader.** A record the loader cannot read (its payload does not decode, is
no batch, or its events map to no row) is moved to the quarantine file (``quarantine.jsonl``,
``.quarantine``: the record's bytes and why, made durable before the checkpoint passes it),
counted (``quarantined_records``, with the last reason) and logged; loading goes on after it. An
event the store refuses (see below) goes there too.

**Faults.** Every durable file-system call goes through ``toolcall_spec.filesystem`` (the seam
the fault sweeps drive). A group whose fsync returned is acknowledged whatever follows: when the
next segment cannot be created (rotation), the writer keeps the current one and tries again at
the next append (the loader finishes a segment only once a later one is published). A checkpoint
that cannot be written (a full disk) is kept in memory and tried again at the next load; segments
are deleted only after a durable checkpoint past them (``write_file_atomically``: fsync, rename,
directory fsync). What the loader would have said in the checkpoint goes meanwhile to
``loader.state``, a small file rewritten in place (no new block: it works on a full disk), which
the writer reads for the backlog and ``GET /v1/health``.

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
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec import filesystem as fs
from toolcall_spec.analytics.store.base import EventStore, StoreError, UnstorableRowsError
from toolcall_spec.analytics.store.layout import Columns, event_columns, joined
from toolcall_spec.analytics.store.quarantine import Quarantine
from toolcall_spec.loading import UTF8_BOM

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
CHECKPOINT_RETRY_SECONDS = 0.5
"""A checkpoint that could not be written is tried again after this long (with the next load)."""
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
    it started. Written by the loader after each load (``checkpoint.json``, replaced whole and
    durably), mirrored in ``loader.state``; read by the writer for the backlog and by
    ``GET /v1/health``. ``quarantined_records`` and its last reason count the quarantine file
    (every start reads it again), not only this run."""

    segment: int = 1
    offset: int = 0
    loaded_events: int = 0
    corrupt_records: int = 0
    unstorable_events: int = 0
    quarantined_records: int = 0
    last_quarantine_reason: str | None = None
    last_load_error: str | None = None
    last_checkpoint_error: str | None = None

    @property
    def position(self) -> tuple[int, int]:
        return self.segment, self.offset


CHECKPOINT = "checkpoint.json"
STATE = "loader.state"
"""The loader's checkpoint as it is in memory (possibly ahead of ``checkpoint.json``, with the
errors it could not write there), rewritten in place: not durable, for the writer's health."""
RESERVE = "checkpoint.reserve"
"""A file the loader keeps, and deletes when the disk is full, so that the checkpoint (a new
file, then renamed) can still be written: the segments it lets go then free the disk."""
RESERVE_BYTES = 16 * 1024
DURABLE = "durable"
"""The writer's durable end (segment, offset), rewritten in place after every fsync."""
_MARK = struct.Struct(">QQI")
_STATE_BYTES = 4096
_STATE_HEAD = struct.Struct(">II")
_MAX_REASON = 400
"""Error texts kept in the checkpoint are cut to this many characters (the state file is small)."""


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
    """The loader's durable checkpoint in ``directory``; ``None`` when there is none or it is
    unreadable (logged: the whole log is then loaded again, which the dedupe key absorbs)."""
    path = directory / CHECKPOINT
    try:
        value = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except orjson.JSONDecodeError as exc:
        logger.warning("%s: unreadable checkpoint (%s); loading the whole log again", path, exc)
        return None
    checkpoint = checkpoint_of(value)
    if checkpoint is None:
        logger.warning("%s: unreadable checkpoint %r; loading the whole log again", path, value)
    return checkpoint


def checkpoint_of(value: object) -> Checkpoint | None:
    """The checkpoint ``value`` (parsed JSON) holds, ``None`` when it holds none."""
    if not isinstance(value, dict):
        return None
    known = {field.name for field in fields(Checkpoint)}
    try:
        checkpoint = Checkpoint(**{k: v for k, v in value.items() if k in known})
    except TypeError:
        return None
    counts = (checkpoint.segment, checkpoint.offset, checkpoint.loaded_events)
    if not all(type(count) is int and count >= 0 for count in counts):
        return None
    return checkpoint


def write_checkpoint(directory: Path, checkpoint: Checkpoint) -> None:
    """Replace ``checkpoint.json`` durably (fsync, rename, directory fsync): a segment is deleted
    only after this returned, so after any crash the checkpoint names a position that exists.
    ``OSError`` when it cannot be written; the old checkpoint stays whole."""
    fs.write_file_atomically(directory / CHECKPOINT, orjson.dumps(asdict(checkpoint)), mode=0o644)


def encode_state(checkpoint: Checkpoint) -> bytes:
    """``checkpoint`` as the fixed-size content of ``loader.state`` (length, CRC, JSON, zeros)."""
    value = asdict(checkpoint)
    for name, text in value.items():
        if isinstance(text, str) and len(text) > _MAX_REASON:
            value[name] = text[:_MAX_REASON] + "..."
    body = orjson.dumps(value)[: _STATE_BYTES - _STATE_HEAD.size]
    head = _STATE_HEAD.pack(len(body), zlib.crc32(body))
    return (head + body).ljust(_STATE_BYTES, b"\0")


def read_state(directory: Path) -> Checkpoint | None:
    """What the loader last put in ``loader.state``; ``None`` when nothing readable is there (a
    read caught mid-rewrite fails its checksum and is read again)."""
    for _ in range(20):
        try:
            data = (directory / STATE).read_bytes()
        except FileNotFoundError:
            return None
        if len(data) < _STATE_HEAD.size:
            return None
        length, checksum = _STATE_HEAD.unpack_from(data)
        body = data[_STATE_HEAD.size : _STATE_HEAD.size + length]
        if length and len(body) == length and zlib.crc32(body) == checksum:
            try:
                return checkpoint_of(orjson.loads(body))
            except orjson.JSONDecodeError:
                return None
        if not length:
            return None
        time.sleep(0.001)
    return None


def loader_view(directory: Path) -> Checkpoint | None:
    """The loader's freshest word: its state file, else its durable checkpoint."""
    return read_state(directory) or read_checkpoint(directory)


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
    as sent (no repair, no rejection): the body is logged as it is, not encoded again. ``body``
    must be what ``loggable_body`` gave."""
    return _frame(_BATCH, project, accepted_at, body, count)


def loggable_body(raw: bytes) -> bytes | None:
    """The bytes of a batch body the intake parsed (``toolcall_spec.loading.parse_json``) that
    the loader reads (``orjson``) as the same value, or ``None`` when there are none and the
    accepted events must be logged encoded (kind 0). The intake's parser takes what orjson does
    not: a UTF-8 byte-order mark (RFC 8259 allows a reader to ignore it), dropped here. Any other
    text the intake accepts is valid UTF-8 JSON (orjson parses it there), so it reads the same."""
    body = raw[len(UTF8_BOM) :] if raw.startswith(UTF8_BOM) else raw
    return body if body[:1] in _JSON_OBJECT_STARTS else None


_JSON_OBJECT_STARTS = frozenset((b"{", b" ", b"\t", b"\n", b"\r"))
"""How a batch body (a JSON object, after optional white space) can start."""


def _frame(kind: int, project: str, accepted_at: datetime, body: bytes, count: int) -> bytes:
    name = project.encode()
    micros = int(accepted_at.timestamp() * 1_000_000)
    payload = b"".join((_PREFIX.pack(kind, len(name), micros), name, body))
    return framed(payload, count)


def framed(payload: bytes, count: int) -> bytes:
    """A record: the header (magic, length, count, CRC) and ``payload``."""
    checksum = zlib.crc32(payload, zlib.crc32(count.to_bytes(4, "big")))
    return _HEADER.pack(MAGIC, len(payload), count, checksum) + payload


class UndecodableRecordError(ValueError):
    """A record whose checksum holds but whose payload is no record this loader can load."""


def decode_payload(payload: bytes, count: int | None = None) -> Record:
    """The record a payload holds. ``UndecodableRecordError`` (why) when it holds none: a bad
    prefix, a project that is not UTF-8, a body that is not JSON, not an array of objects (kind
    0) or a batch object with one (kind 1), or (``count`` given) another number of events than
    its header says."""
    try:
        kind, length, micros = _PREFIX.unpack_from(payload)
        start = _PREFIX.size + length
        if kind not in (_EVENTS, _BATCH) or start > len(payload):
            raise UndecodableRecordError(f"unknown kind {kind} or project length {length}")
        project = payload[_PREFIX.size : start].decode()
        value = orjson.loads(payload[start:])
        accepted_at = datetime.fromtimestamp(micros / 1_000_000, timezone.utc)
    except UndecodableRecordError:
        raise
    except (struct.error, UnicodeDecodeError, orjson.JSONDecodeError, ValueError) as exc:
        raise UndecodableRecordError(f"{type(exc).__name__}: {exc}") from None
    events = value
    if kind == _BATCH:
        events = value.get("events") if isinstance(value, dict) else None
    if not isinstance(events, list) or not all(isinstance(event, dict) for event in events):
        what = "a batch object with an events array" if kind == _BATCH else "an array of events"
        raise UndecodableRecordError(f"the body is not {what}")
    if count is not None and len(events) != count:
        held = len(events)
        raise UndecodableRecordError(f"the header says {count} events, the body holds {held}")
    return Record(project, accepted_at, events)


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
    """The writing side of one log (see the module): recovery at open, ``append`` (thread-safe;
    in the endpoint, its group writer's thread calls it), the backlog against the loader's
    checkpoint. The loader (``LogLoader``) runs elsewhere: in a process of its own under
    ``serve-ingest``."""

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
        self.last_write_error: str | None = None
        self.rotation_error: str | None = None
        """Why the next segment could not be started (appends go on in the active one)."""
        self._ends: dict[int, int] = {}
        """Segment number -> the end of what was written to it whole (fsynced, or recovered)."""
        self._active = 0
        """The segment appended to (the last one created: the loader finishes the others)."""
        self._marks: deque[tuple[int, int, int]] = deque()
        """(segment, end of a record or group, events logged up to there), in log order."""
        self._events = 0
        self._loaded_mark = 0
        self._checkpoint = Checkpoint()
        self._checked_at = 0.0
        self._lock = threading.Lock()
        self._append_lock = threading.Lock()
        self._dirty = False
        """The active segment holds bytes past its end: a failed write or fsync whose cut-back
        failed too. They are never published (so never loaded); the next append cuts first."""
        self._published: tuple[int, int] | None = None
        self._fd = -1
        self._lock_fd = -1
        self._mark_fd = -1

    # --- opening and recovery -------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, **options: Any) -> WriteAheadLog:
        """The log in ``directory`` (created when missing), recovered: a torn tail is cut, the
        backlog counted. ``LogError`` when another process holds it or it cannot be used."""
        log = cls(directory, **options)
        try:
            fs.mkdir(directory)
            log._lock_fd = lock_file(directory / "writer.lock", wait=0)
            log._recover()
        except OSError as exc:
            log.close()
            raise LogError(f"{directory}: cannot open the ingest log: {exc}") from None
        except BaseException:
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
        self._mark_fd = fs.open_fd(self.directory / DURABLE, os.O_RDWR | os.O_CREAT)
        self._fd = self._create_segment(numbers[-1])
        self._active = numbers[-1]
        self._publish(self._active, self._ends[self._active])
        if self._published is None:
            raise OSError(errno.EIO, "cannot publish the durable end")

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
        fd = fs.open_fd(path, os.O_WRONLY)
        try:
            fs.truncate(fd, at)
            fs.fsync(fd)
        finally:
            fs.close(fd)
        self.cut_bytes += size - at

    def _create_segment(self, number: int) -> int:
        """Segment ``number``, opened for appending at its known end (0 when new) and its name
        made durable. On failure nothing changed (a new empty file may stay: harmless)."""
        fd = fs.open_fd(segment_path(self.directory, number), os.O_WRONLY | os.O_CREAT)
        try:
            os.lseek(fd, self._ends.get(number, 0), os.SEEK_SET)
            fs.sync_directory(self.directory)
        except BaseException:
            fs.close(fd)
            raise
        return fd

    def _publish(self, number: int, end: int) -> None:
        """Tell the loader how far the log is durable: it reads no further, so it never loads a
        batch whose fsync then fails (a batch never acknowledged). Not fsynced itself: after a
        crash the writer's recovery publishes again before a loader starts reading. A failed
        publish is tried again (``_republish``): the data is durable, only the loader waits."""
        try:
            fs.pwrite(self._mark_fd, encode_mark(number, end), 0)
        except OSError as exc:
            logger.error("%s: cannot publish the durable end (retrying): %s", self.directory, exc)
            self.last_write_error = f"publishing the durable end: {exc}"
            return
        self._published = (number, end)

    def _republish(self) -> None:
        with self._append_lock:
            wanted = (self._active, self._ends.get(self._active, 0))
            if self._published != wanted and self._mark_fd >= 0:
                self._publish(*wanted)

    def close(self) -> None:
        fds = [fd for fd in (self._fd, self._mark_fd, self._lock_fd) if fd >= 0]
        self._fd = self._mark_fd = self._lock_fd = -1
        close_all(fds, self.directory)

    # --- appending ------------------------------------------------------------------------------

    def has_room(self) -> bool:
        """False once the backlog is at its bound (the caller answers 503 then)."""
        return self.backlog_bytes() < self.max_backlog_bytes

    def append(self, records: Sequence[bytes]) -> None:
        """Write the framed ``records`` and fsync them, all at once. On return they are durable;
        on ``LogWriteError`` none of them is (the file is cut back to its last good end, and
        nothing past that end is published). What follows a durable group (publishing it to
        the loader, rotating to a new segment) never fails it."""
        data = b"".join(records)
        if not data:
            return
        if not self.has_room():
            raise LogFullError
        with self._append_lock:
            try:
                self._clean()
            except OSError as exc:
                raise self._failed(exc) from None
            if self._ends[self._active] >= self.segment_bytes:
                self._rotate()  # an earlier rotation failed: the segment is over its size
            number = self._active
            start = self._ends[number]
            try:
                fs.write_all(self._fd, data)
                fs.fdatasync(self._fd)
            except OSError as exc:
                self._undo(start)
                raise self._failed(exc) from None
            count = sum(_HEADER.unpack_from(record)[2] for record in records)
            end = start + len(data)
            with self._lock:
                self._ends[number] = end
                self._events += count
                self.appended_events += count
                self._marks.append((number, end, self._events))
            self.last_write_error = None
            self._publish(number, end)
            if end >= self.segment_bytes:
                self._rotate()

    def _failed(self, exc: OSError) -> LogWriteError:
        full = exc.errno in DISK_FULL_ERRNOS
        reason = "the disk is full" if full else f"write failed: {exc.strerror or exc}"
        self.last_write_error = f"{reason} ({exc})"
        return LogWriteError(f"{self.directory}: {reason}", disk_full=full)

    def _clean(self) -> None:
        """Cut back what a failed write left past the active segment's end, when cutting it
        back then failed too: before anything else is written or a later segment started."""
        if self._dirty:
            end = self._ends[self._active]
            fs.truncate(self._fd, end)
            os.lseek(self._fd, end, os.SEEK_SET)
            self._dirty = False

    def _undo(self, start: int) -> None:
        """Cut the active segment back to ``start`` after a failed write or fsync, so the next
        batch follows the last good record (a failed fsync leaves the page cache unknown). The
        loader never read past ``start``: it reads up to the published durable end only. When
        the cut fails too, the next append cuts first (and fails while it cannot)."""
        try:
            fs.truncate(self._fd, start)
            os.lseek(self._fd, start, os.SEEK_SET)
        except OSError as exc:
            logger.error("%s: cannot cut back a failed write yet: %s", self.directory, exc)
            self._dirty = True

    def _rotate(self) -> None:
        """Start the next segment once the active one is full. The loader finishes a segment
        once a later one is published, so the new file is created, and its name made durable,
        before anything changes here; when that fails (no space, no inode, no descriptor) the
        writer keeps the active segment and tries again at the next append."""
        number = self._active + 1
        try:
            fd = self._create_segment(number)
        except OSError as exc:
            if self.rotation_error is None:  # once, not at every append while it lasts
                logger.error(
                    "%s: cannot start segment %d (appending to %d meanwhile): %s",
                    self.directory,
                    number,
                    self._active,
                    exc,
                )
            self.rotation_error = f"cannot start segment {number}: {exc}"
            return
        self.rotation_error = None
        old, self._fd = self._fd, fd
        with self._lock:
            self._ends[number] = 0
            self._active = number
        self._publish(number, 0)
        try:
            fs.close(old)
        except OSError as exc:  # written and fsynced before: nothing is lost
            logger.warning("%s: closing a finished segment: %s", self.directory, exc)

    # --- the backlog ----------------------------------------------------------------------------

    def _refresh(self) -> Checkpoint:
        """The loader's checkpoint, read again at most every ``CHECK_SECONDS`` (a publish that
        failed is tried again then)."""
        now = time.monotonic()
        if now - self._checked_at >= CHECK_SECONDS:
            self._checked_at = now
            if self._published != (self._active, self._ends.get(self._active, 0)):
                self._republish()
            self._checkpoint = loader_view(self.directory) or self._checkpoint
            with self._lock:
                position = self._checkpoint.position
                while self._marks and self._marks[0][:2] <= position:
                    self._loaded_mark = self._marks.popleft()[2]
                for number in [n for n in self._ends if n < position[0]]:
                    del self._ends[number]  # loaded (and deleted, or soon, by the loader)
        return self._checkpoint

    def backlog_bytes(self) -> int:
        segment, offset = self._refresh().position
        with self._lock:
            ends = list(self._ends.items())
        return sum(end - (offset if n == segment else 0) for n, end in ends if n >= segment)

    def stats(self) -> dict[str, Any]:
        """What ``GET /v1/health`` reports (a plain dict): the backlog (bytes and events fsynced
        here and not yet loaded), what the loader counted (its last checkpoint or state), the
        records it quarantined and why the last one was, the last error of a load, of a
        checkpoint and of a write here, and where the log is."""
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
            "quarantined_records": checkpoint.quarantined_records,
            "last_quarantine_reason": checkpoint.last_quarantine_reason,
            "last_load_error": checkpoint.last_load_error,
            "last_checkpoint_error": checkpoint.last_checkpoint_error,
            "last_write_error": self.last_write_error,
            "rotation_error": self.rotation_error,
            "cut_bytes": self.cut_bytes,
            "segments": len(self._ends),
        }


class LogLoader:
    """The loading side of one log: from the checkpoint on, good records go to ``store`` in writes
    of up to ``load_batch_events`` events; then the checkpoint moves past them, durably, and
    segments wholly behind a durable checkpoint are deleted. It reads what the writer has
    published as durable. A record it cannot read, and an event the store refuses, go to the
    quarantine (``.quarantine``); nothing in the log stops it."""

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
        self.quarantine = Quarantine(directory)
        found = read_checkpoint(directory) or Checkpoint()
        self.checkpoint = Checkpoint(found.segment, found.offset)
        self._count_quarantine()
        numbers = sorted(segment_numbers(directory))
        if numbers and self.checkpoint.segment not in numbers:
            self.checkpoint.segment, self.checkpoint.offset = numbers[0], 0
        self._saved = self.checkpoint.position
        """The position of the durable checkpoint: segments before it may go."""
        self._save_due: float | None = None
        """When a checkpoint that could not be written is tried again (``None``: none waits)."""
        self._state_fd = -1
        self._delete_before(self._saved[0])  # loaded before; its deletion was cut short
        self._write_state()
        if found.position != self.checkpoint.position or not (directory / CHECKPOINT).exists():
            self._save()  # a checkpoint file from the start: its rewrites then need no new inode
        self._keep_reserve()

    def _count_quarantine(self) -> None:
        self.checkpoint.quarantined_records = self.quarantine.count
        self.checkpoint.last_quarantine_reason = self.quarantine.last_reason

    # --- loading --------------------------------------------------------------------------------

    def load_once(self) -> int:
        """Load one batch from the checkpoint into the store; the events loaded. ``StoreError``
        when the store write fails, ``OSError`` when the log cannot be read or a record cannot be
        quarantined (the checkpoint stays; the next call tries again)."""
        if self._save_due is not None:
            self._save()
        frames, position, skipped = self._next_frames()
        segment = self.checkpoint.segment
        records = self._decoded(segment, frames)
        unstorable = self._write(segment, records)
        self._waiting_since = None
        loaded = sum(len(record.events) for _, record, _ in records) - unstorable
        if position != self.checkpoint.position or skipped:
            self._advance(position, loaded, skipped, unstorable)
        return loaded

    def _decoded(self, segment: int, frames: list[Frame]) -> list[tuple[Frame, Record, Columns]]:
        """Each frame's record and rows; a frame that has none is quarantined (durably) instead."""
        out = []
        for frame in frames:
            try:
                record = decode_payload(frame.payload, frame.count)
                rows = event_columns(record.events, record.project, record.accepted_at)
            except Exception as exc:  # any decoder or mapping error: the record, not the loader
                reason = exc if isinstance(exc, UndecodableRecordError) else repr(exc)
                self._quarantine(f"{segment}:{frame.start}", f"unreadable record: {reason}", frame)
                continue
            out.append((frame, record, rows))
        return out

    def _quarantine(self, key: str, reason: str, frame: Frame, **details: Any) -> None:
        self.quarantine.add(key, reason, framed(frame.payload, frame.count), **details)
        self._count_quarantine()

    def _write(self, segment: int, records: list[tuple[Frame, Record, Columns]]) -> int:
        """Write the rows of ``records`` in one write (the store keeps the first row of a key
        written twice in it); the number of events the store refused (quarantined)."""
        parts = [rows for _, record, rows in records if record.events]
        if not parts:
            return 0
        try:
            self.store.write_columns(joined(parts))
        except UnstorableRowsError:
            items = [(frame, rec, event) for frame, rec, _ in records for event in rec.events]
            return self._write_apart(segment, items)
        return 0

    def _write_apart(self, segment: int, items: list[tuple[Frame, Record, dict[str, Any]]]) -> int:
        """Write the events in halves, down to one event, when a write of them all failed on its
        rows: every event that can be stored is, and each one that cannot is quarantined (with
        its ``event_id``) and counted. The number left out."""
        try:
            self.store.write_columns(
                joined([event_columns([event], r.project, r.accepted_at) for _, r, event in items])
            )
        except UnstorableRowsError as exc:
            if len(items) > 1:
                half = len(items) // 2
                return self._write_apart(segment, items[:half]) + self._write_apart(
                    segment, items[half:]
                )
            frame, record, event = items[0]
            event_id = str(event.get("event_id"))
            alone = encode_record(record.project, record.accepted_at, [event])
            self.quarantine.add(
                f"{segment}:{frame.start}:{event_id}",
                f"the store refuses event {event_id}: {exc}",
                alone,
                project=record.project,
                event_id=event_id,
            )
            self._count_quarantine()
            return 1
        return 0

    def pending(self) -> bool:
        """Something durable past the checkpoint (or a later segment to move on to)."""
        segment, offset = self.checkpoint.position
        end, final = self._durable_end(segment)
        return end > offset or final

    def due(self) -> bool:
        """Whether a load should run now: something durable waits past the checkpoint and it
        is a large load (``MIN_LOAD_BYTES``, or the rest of a segment the writer is done with),
        or the writer has gone quiet (``QUIET_SECONDS``), or it has waited
        ``MAX_LOAD_DELAY_SECONDS``; or a checkpoint that failed is due again."""
        segment, offset = self.checkpoint.position
        end, final = self._durable_end(segment)
        now = self.clock()
        if self._save_due is not None and now >= self._save_due:
            return True
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
        moved = [Frame(offset + f.start, offset + f.end, f.count, f.payload) for f in frames]
        return moved, (number, offset + at), skipped

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

    # --- the checkpoint -------------------------------------------------------------------------

    def _advance(
        self, position: tuple[int, int], loaded: int, skipped: int, unstorable: int = 0
    ) -> None:
        checkpoint = self.checkpoint
        checkpoint.segment, checkpoint.offset = position
        checkpoint.loaded_events += loaded
        checkpoint.corrupt_records += skipped
        checkpoint.unstorable_events += unstorable
        checkpoint.last_load_error = None
        self._save()

    def _save(self) -> None:
        """Write the checkpoint durably, then delete the segments wholly behind it. When it
        cannot be written the position stays in memory (loading goes on), the error shows in
        the state file, and it is tried again after ``CHECKPOINT_RETRY_SECONDS``; segments
        stay until a checkpoint past them is durable."""
        checkpoint = self.checkpoint
        previous, checkpoint.last_checkpoint_error = checkpoint.last_checkpoint_error, None
        try:
            self._write_checkpoint()
        except OSError as exc:
            checkpoint.last_checkpoint_error = f"cannot write the checkpoint: {exc}"
            if previous is None:
                logger.error("%s: %s (retrying)", self.directory, checkpoint.last_checkpoint_error)
            self._save_due = self.clock() + CHECKPOINT_RETRY_SECONDS
            self._write_state()
            return
        self._save_due = None
        self._saved = checkpoint.position
        self._write_state()
        self._delete_before(self._saved[0])
        self._keep_reserve()

    def _write_checkpoint(self) -> None:
        """``write_checkpoint``; on a full disk (no block or no inode left, the log's own
        segments filling it), once more after giving up the reserve: without a checkpoint no
        segment can go, and without that nothing frees the disk."""
        try:
            write_checkpoint(self.directory, self.checkpoint)
        except OSError as exc:
            if exc.errno not in DISK_FULL_ERRNOS or not (self.directory / RESERVE).exists():
                raise
            fs.unlink(self.directory / RESERVE)
            logger.warning("%s: the disk is full; the checkpoint uses the reserve", self.directory)
            write_checkpoint(self.directory, self.checkpoint)

    def _keep_reserve(self) -> None:
        """Keep ``RESERVE`` (a file of ``RESERVE_BYTES``) for the checkpoint's next full disk;
        best effort (made again after a later checkpoint when it cannot be made now)."""
        if (self.directory / RESERVE).exists():
            return
        try:
            fs.write_file_atomically(self.directory / RESERVE, bytes(RESERVE_BYTES), durable=False)
        except OSError as exc:
            logger.debug("%s: no reserve for the checkpoint yet: %s", self.directory, exc)

    def _delete_before(self, segment: int) -> None:
        for number in segment_numbers(self.directory):
            if number < segment:
                try:
                    fs.unlink(segment_path(self.directory, number))
                except OSError as exc:  # tried again after the next checkpoint
                    logger.warning("%s: cannot delete a loaded segment: %s", self.directory, exc)

    def _write_state(self) -> None:
        """Mirror the checkpoint in ``loader.state`` (in place: works on a full disk). Best
        effort: the writer's health figures lag when it fails."""
        try:
            if self._state_fd < 0:
                self._state_fd = fs.open_fd(self.directory / STATE, os.O_RDWR | os.O_CREAT)
            fs.pwrite(self._state_fd, encode_state(self.checkpoint), 0)
        except OSError as exc:
            logger.debug("%s: cannot write the loader's state: %s", self.directory, exc)

    def failed(self, error: Exception) -> None:
        """Record a failed load (the store, or the log's files), for ``GET /v1/health``."""
        self.checkpoint.last_load_error = str(error)[:_MAX_REASON] or type(error).__name__
        self._write_state()

    def close(self) -> None:
        fds = [self._state_fd] if self._state_fd >= 0 else []
        self._state_fd = -1
        close_all(fds, self.directory)


def run_loaders(
    loaders: Sequence[LogLoader], stop: threading.Event, drain_seconds: float = 10.0
) -> None:
    """Load the logs, each when a load is due (``LogLoader.due``), until ``stop`` is set; then
    load what is left for up to ``drain_seconds`` (the rest stays in the logs for the next
    start). A failed load (the store, or the log's files: a full disk) is logged, shown in
    health and retried after a pause that grows to 5 s: never fatal."""
    failures = 0
    deadline: float | None = None
    while True:
        if stop.is_set() and deadline is None:
            deadline = time.monotonic() + drain_seconds
        if deadline is not None and time.monotonic() > deadline:
            return
        draining = deadline is not None
        loaded = 0
        failed: Exception | None = None
        for loader in loaders:
            if not (draining or loader.due()):
                continue
            try:
                loaded += loader.load_once()
            except (StoreError, OSError) as exc:
                loader.failed(exc)
                failed = exc
        if failed is not None:
            pause = _RETRY_SECONDS[min(failures, len(_RETRY_SECONDS) - 1)]
            failures += 1
            logger.error("loading the ingest log failed (retry in %.1f s): %s", pause, failed)
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
    fd = fs.open_fd(path, os.O_RDWR | os.O_CREAT)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            fs.close(fd)
            raise LogError(
                f"{path.parent}: the ingest log is in use by another process (each "
                "serve-ingest process needs a log directory of its own: --log-dir)"
            ) from None
        return fd


def close_all(fds: Sequence[int], directory: Path) -> None:
    """Close every one of ``fds`` (each is released even when its close fails: ``fs.close``);
    a failure is logged, and anything else (an interrupt) raised once all are closed."""
    pending: BaseException | None = None
    for fd in fds:
        try:
            fs.close(fd)
        except OSError as exc:  # written and fsynced before, or nothing to keep: logged only
            logger.warning("%s: closing a file of the log: %s", directory, exc)
        except BaseException as exc:
            pending = pending or exc
    if pending is not None:
        raise pending


def _read(path: Path, start: int, end: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(start)
        return handle.read(max(0, end - start))
