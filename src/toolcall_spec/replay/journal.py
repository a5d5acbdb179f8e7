"""The journal of a recording: what ``toolcall-spec record`` appends as calls are answered, and
the suite built from it.

``record --out SUITE`` keeps ``SUITE.journal`` beside SUITE while it records: one JSON object a
line, appended and made durable (``fdatasync``) as each call is answered, before the client sees
the answer, so the cost of a call does not grow with the session and a proxy killed with
``kill -9`` keeps every call it let through. At exit the suite is built from what the journal
holds, written atomically and durably, and the journal removed. A journal left behind (the proxy
was killed, or the suite could not be written) is read wherever a suite is: ``serve-fixtures``,
``replay`` and ``promote`` take ``SUITE`` (and read ``SUITE.journal`` when it is there) or the
journal itself.

The lines (compact JSON, no member order relied on)::

    {"journal": "toolcall-spec.record", "version": 1, "suiteId": ID}    the first line
    {"session": N, "label": TEXT}                         a session (a task); again when renamed
    {"session": N, "tools": [...], "page": "first" | "next"}            a tools/list answer
    {"session": N, "call": I, "tool": T, "args": {...} | null, "isError": B, "response": R}

``call`` is the call's place among the session's ``tools/call`` requests in the order the client
sent them: lines are appended in the order calls are answered and the suite puts them back in
send order. A call's line is written once; a reader keeps the first line of a ``(session, call)``
anyway. The last line may be torn by a crash (no newline, or not JSON): it is ignored. A line
that cannot be read anywhere else is reported and skipped: one bad line never drops another.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from toolcall_spec import filesystem
from toolcall_spec.json_values import milliseconds
from toolcall_spec.loading import MAX_DOCUMENT_BYTES, DocumentError, parse_json, read_limited
from toolcall_spec.replay.promote import RecordedCall, RecordedTask, recorded_suite

JOURNAL_SUFFIX = ".journal"
FORMAT = "toolcall-spec.record"
VERSION = 1
FIRST_PAGE, NEXT_PAGE = "first", "next"


def journal_path(suite: str | os.PathLike[str]) -> Path:
    """Where the journal of the suite ``suite`` is kept: ``SUITE.journal`` beside it."""
    path = Path(suite)
    return path.with_name(path.name + JOURNAL_SUFFIX)


def header(suite_id: str) -> dict[str, Any]:
    return {"journal": FORMAT, "version": VERSION, "suiteId": suite_id}


def encode_line(record: Mapping[str, Any]) -> bytes:
    """One journal line; ``orjson.JSONEncodeError`` (a ``TypeError``) for a value JSON cannot
    hold or nested deeper than orjson writes."""
    return orjson.dumps(record) + b"\n"


def suite_bytes(suite: Mapping[str, Any]) -> bytes:
    """The suite file's bytes (indented). A response nested near orjson's depth limit fits a
    journal line but not the suite, which nests it six levels deeper: the standard library
    writes those."""
    try:
        return orjson.dumps(suite, option=orjson.OPT_INDENT_2) + b"\n"
    except orjson.JSONEncodeError:
        return json.dumps(suite, indent=2, ensure_ascii=False).encode() + b"\n"


# --- what a journal holds ----------------------------------------------------------------------


@dataclass
class _Task:
    label: str
    tools: list[Any] | None = None
    calls: dict[int, RecordedCall] = field(default_factory=dict)


class Recording:
    """The suite a journal's lines describe, built line by line: by the recorder as it appends
    them (the suite it writes at exit) and by every reader of a journal. One function for both:
    the suite a journal rebuilds is the one the recorder would have written."""

    def __init__(self, suite_id: str) -> None:
        self.suite_id = suite_id
        self._tasks: dict[int, _Task] = {}

    def apply(self, record: Mapping[str, Any]) -> None:
        """Take one line's record; ``ValueError`` naming what is wrong with one that is not a
        record of this format (nothing is taken from it)."""
        session = record.get("session")
        if not _is_int(session):
            raise ValueError("no session number")
        if "call" in record:
            self._call(session, record)
        elif "tools" in record:
            self._tools(session, record)
        elif isinstance(record.get("label"), str):
            task = self._tasks.setdefault(session, _Task(record["label"]))
            task.label = record["label"]
        else:
            raise ValueError("neither a call, a tool list nor a session")

    def _call(self, session: int, record: Mapping[str, Any]) -> None:
        number, tool, args = record.get("call"), record.get("tool"), record.get("args")
        if not _is_int(number) or not isinstance(tool, str):
            raise ValueError("a call needs a call number and a tool name")
        if not isinstance(record.get("isError"), bool) or "response" not in record:
            raise ValueError("a call needs isError (a boolean) and a response")
        if args is not None and not isinstance(args, Mapping):
            raise ValueError("a call's args is an object or null")
        task = self._tasks.setdefault(session, _Task("session"))
        # Exactly once: a call's first line wins (the recorder writes one; a reader is sure).
        duration = milliseconds(record.get("ms"))
        task.calls.setdefault(
            number, RecordedCall(tool, args, record["response"], record["isError"], duration)
        )

    def _tools(self, session: int, record: Mapping[str, Any]) -> None:
        tools = record["tools"]
        if not isinstance(tools, list):
            raise ValueError("tools is not a list")
        task = self._tasks.setdefault(session, _Task("session"))
        following = record.get("page") == NEXT_PAGE
        task.tools = [*(task.tools or []), *tools] if following else list(tools)

    @property
    def empty(self) -> bool:
        return not self._tasks

    def calls(self) -> int:
        return sum(len(task.calls) for task in self._tasks.values())

    def suite(self) -> dict[str, Any]:
        """The suite: one task per session in the order they began, each call in send order."""
        tasks = [
            RecordedTask(task.label, [task.calls[n] for n in sorted(task.calls)], task.tools)
            for _, task in sorted(self._tasks.items())
        ]
        return recorded_suite(tasks, suite_id=self.suite_id)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# --- reading a journal --------------------------------------------------------------------------


@dataclass
class JournalRead:
    """A journal read back: the suite it holds and what was skipped (``line N: why``)."""

    suite: dict[str, Any]
    calls: int
    skipped: list[str]
    torn: bool
    """The last line was cut short (the writer was killed while appending it): ignored."""


def is_journal(data: bytes) -> bool:
    """Whether ``data`` starts with a journal's first line."""
    first = data.split(b"\n", 1)[0]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("journal") == FORMAT


def read_journal(data: bytes) -> JournalRead:
    """The suite a journal's bytes hold; ``DocumentError`` when they are not a journal."""
    lines = data.split(b"\n")
    torn = bool(lines[-1])  # a last line without its newline was never made durable whole
    lines = lines[:-1]
    if not lines:
        raise DocumentError("not a recording journal: no complete first line")
    first = _parsed(lines[0])
    if not isinstance(first, dict) or first.get("journal") != FORMAT:
        raise DocumentError(f"not a recording journal: the first line names no {FORMAT!r}")
    if first.get("version") != VERSION:
        raise DocumentError(f"journal version {first.get('version')!r}; this reads {VERSION}")
    suite_id = first.get("suiteId")
    recording = Recording(suite_id if isinstance(suite_id, str) else "recorded.evals.journal")
    skipped = list(_apply_lines(recording, enumerate(lines[1:], start=2)))
    return JournalRead(recording.suite(), recording.calls(), skipped, torn)


def _apply_lines(recording: Recording, lines: Iterable[tuple[int, bytes]]) -> Iterable[str]:
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = _parsed(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
            recording.apply(record)
        except (DocumentError, ValueError) as exc:
            yield f"line {number}: {exc} (skipped)"


def _parsed(line: bytes) -> Any:
    try:
        return parse_json(line)
    except DocumentError as exc:
        raise DocumentError(f"not JSON: {exc}") from None


# --- writing a journal --------------------------------------------------------------------------


class JournalWriter:
    """Appends lines to a journal durably, through ``toolcall_spec.filesystem``.

    Lines are written at the offset where the last durable one ended (``pwrite``), and a write
    or sync that fails leaves the file marked to be cut back there before anything else is
    written: a failed append never leaves half a line between two good ones. A line whose write
    failed stays queued and goes out with the next append, so a disk that was full for a moment
    loses nothing. The file is opened (truncated) on the first flush, and opened again after an
    open that failed."""

    def __init__(self, path: Path, first_line: bytes, *, mode: int, sync: bool = True) -> None:
        self.path = path
        self.mode = mode
        self.sync = sync
        """``fdatasync`` at every flush (a line survives an OS crash); otherwise only at
        ``flush(sync=True)``, and a line survives the process's death (it is in the page cache)
        but not the machine's."""
        self._fd: int | None = None
        self._size = 0
        self._cut = False
        self._named = False
        self._first_line = first_line
        self._queued: list[bytes] = [first_line]
        self._unsynced: list[bytes] = []
        """Lines written since the last ``fdatasync``."""

    @property
    def queued(self) -> int:
        """Lines not yet written."""
        return len(self._queued)

    def append(self, line: bytes) -> None:
        """Queue ``line`` and make every queued line durable; ``OSError`` if that failed (the
        lines stay queued)."""
        self._queued.append(line)
        self.flush()

    def queue(self, line: bytes) -> None:
        """Queue ``line`` for the next flush."""
        self._queued.append(line)

    def flush(self, *, sync: bool | None = None) -> None:
        """Write every queued line; ``fdatasync`` what is written when ``sync`` (default: the
        writer's). A sync that fails puts the lines it covered back in the queue (after a failed
        ``fsync`` the kernel may have dropped them) and the file is cut back before them."""
        fd = self._open()
        if self._cut:
            filesystem.truncate(fd, self._size)
            self._cut = False
        if self._queued:
            data = b"".join(self._queued)
            try:
                self._write_at(fd, data, self._size)
            except BaseException:
                self._cut = True
                raise
            self._size += len(data)
            self._unsynced.extend(self._queued)
            self._queued.clear()
        if self._unsynced and (self.sync if sync is None else sync):
            try:
                filesystem.fdatasync(fd)
            except BaseException:
                self._size -= sum(len(line) for line in self._unsynced)
                self._queued[:0] = self._unsynced
                self._unsynced.clear()
                self._cut = True
                raise
            self._unsynced.clear()
        if not self._named:  # the new file's name, durable once: else an OS crash loses it all
            filesystem.sync_directory(self.path.parent if str(self.path.parent) else ".")
            self._named = True

    def _open(self) -> int:
        if self._fd is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            self._fd = filesystem.open_fd(self.path, flags, self.mode)
            self._size, self._cut = 0, False
            self._queued[:0] = self._unsynced  # a new file holds none of them
            self._unsynced.clear()
        return self._fd

    @staticmethod
    def _write_at(fd: int, data: bytes, offset: int) -> None:
        done = 0
        while done < len(data):
            done += filesystem.pwrite(fd, data[done:] if done else data, offset + done)

    def close(self) -> None:
        """Close the file (queued lines stay unwritten: flush first)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                filesystem.close(fd)

    def remove(self) -> None:
        """Close and delete the journal, durably (its suite is on disk). A later flush starts
        a new journal."""
        self.close()
        self._queued, self._unsynced = [self._first_line], []
        self._named = False
        filesystem.unlink(self.path)
        filesystem.sync_directory(self.path.parent if str(self.path.parent) else ".")


# --- what the commands that read a suite read ---------------------------------------------


def read_suite_source(source: str) -> tuple[Any, list[str]]:
    """The suite the file ``source`` names, and notes for stderr: a journal given itself is
    read as its suite; for ``SUITE``, ``SUITE.journal`` is read instead when it is there and
    newer than SUITE (a recording killed before it wrote SUITE, or one still under way); else
    the JSON document SUITE. ``DocumentError`` when it cannot be read."""
    found = journal_source(source)
    return found if found is not None else (parse_json(_read_file(Path(source))), [])


def journal_source(source: str) -> tuple[Any, list[str]] | None:
    """What ``read_suite_source`` reads when a journal stands for ``source`` (the suite and the
    notes), or ``None`` when ``source`` is to be read as a suite document."""
    path = Path(source)
    journal = journal_path(path)
    newer = _newer(journal, path)
    if newer is not False:
        try:
            read = _read_journal_file(journal)
        except DocumentError as exc:  # killed before its first line was durable: nothing in it
            if not path.exists():
                raise DocumentError(f"no suite, and its journal {journal.name}: {exc}") from None
        else:
            if newer is None and _holds(path, read.suite):
                return None  # the journal of this very suite, left behind: read the suite
            note = f"{source}: read from {journal.name}, the journal of an unfinished recording"
            return read.suite, [note, *_notes(str(journal), read)]
    if not _starts_as_journal(path):
        return None
    read = _read_journal_file(path)
    return read.suite, _notes(source, read)


def _starts_as_journal(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return is_journal(handle.readline(4096))
    except OSError:
        return False


def _newer(journal: Path, suite: Path) -> bool | None:
    """Whether ``journal`` was written after ``suite``; ``None`` for a tie. A file system stamps
    times by its clock tick (4 ms and more), so a recording killed within a tick of the last
    one's exit ties with the suite that one wrote: the contents then decide (``_holds``)."""
    try:
        written = journal.stat().st_mtime_ns
    except OSError:
        return False
    try:
        suite_written = suite.stat().st_mtime_ns
    except OSError:
        return True
    return None if written == suite_written else written > suite_written


def _holds(path: Path, suite: Any) -> bool:
    """Whether the suite file ``path`` holds ``suite``: a journal whose removal failed after its
    suite was written (or was cut short by a kill) is that suite, not a later recording."""
    try:
        return bool(parse_json(_read_file(path)) == suite)
    except (DocumentError, OSError):
        return False


def _read_journal_file(path: Path) -> JournalRead:
    return read_journal(_read_file(path, limit=None))


def _read_file(path: Path, *, limit: int | None = MAX_DOCUMENT_BYTES) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read() if limit is None else read_limited(handle, limit)
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}") from None


def _notes(source: str, read: JournalRead) -> list[str]:
    notes = [f"{source}: {problem}" for problem in read.skipped]
    if read.torn:
        notes.append(f"{source}: the last line was cut short (the recorder was killed): ignored")
    return notes
