"""The quarantine of an ingest log: what its loader could not load, kept, never in the way.

A record the loader cannot read (its payload decodes to no batch, or its events map to no row)
and an event the store refuses whatever is tried are appended to ``quarantine.jsonl`` in the log's
directory, one JSON object a line: ``key`` (where it was: ``segment:offset``, and ``:event_id``
for one event of a record), ``reason``, ``quarantined_at``, ``project`` when known, and
``record``, the base64 of a framed log record holding what was quarantined (for a record, the
record as it was logged; for an event, a record of that event alone), so an operator can read it,
repair it and append it to a log again. A line is fsynced (and a new file's name) before the
loader moves past what it holds: a crash never loses it. Keys make it idempotent: a record loaded
again after a crash is not quarantined twice.
"""

from __future__ import annotations

import base64
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec import filesystem as fs

QUARANTINE = "quarantine.jsonl"
logger = logging.getLogger("toolcall_spec.wal")


@dataclass
class Quarantine:
    """The quarantine file of the log in ``directory``: what it holds is read at start (its
    count and last reason are the health's figures), and ``add`` appends durably."""

    directory: Path
    count: int = 0
    last_reason: str | None = None

    def __post_init__(self) -> None:
        self.path = self.directory / QUARANTINE
        self._keys: set[str] = set()
        self._good_end = 0
        """Where the last whole line ends: a line torn by a crash is cut before the next one."""
        self._stale = False
        self._read()

    def _read(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        self._keys.clear()
        self.count, self.last_reason = 0, None
        self._good_end = data.rfind(b"\n") + 1
        for line in data[: self._good_end].splitlines():
            try:
                entry = orjson.loads(line)
                key, reason = str(entry["key"]), str(entry["reason"])
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # not ours: kept, not counted
            if key not in self._keys:
                self._keys.add(key)
                self.count += 1
                self.last_reason = reason

    def add(self, key: str, reason: str, record: bytes, **details: Any) -> bool:
        """Keep ``record`` (framed log bytes) under ``key`` with ``reason``, durably; ``False``
        when ``key`` was kept before. ``OSError`` when it cannot be kept now: the caller must not
        move past it (and tries again later)."""
        if self._stale:  # an earlier add failed part-way: what it left is read and made durable
            self._read()
            self._sync()
            self._stale = False
        if key in self._keys:
            return False
        entry = {
            "key": key,
            "reason": reason,
            "quarantined_at": datetime.now(timezone.utc).isoformat(),
            **details,
            "record": base64.b64encode(record).decode(),
        }
        self._append(orjson.dumps(entry) + b"\n")
        self._keys.add(key)
        self.count += 1
        self.last_reason = reason
        logger.error("%s: quarantined %s: %s", self.path, key, reason)
        return True

    def _sync(self) -> None:
        if not self.path.exists():
            return
        fd = fs.open_fd(self.path, os.O_WRONLY)
        try:
            fs.fsync(fd)
        finally:
            fs.close(fd)
        fs.sync_directory(self.directory)

    def _append(self, line: bytes) -> None:
        new = not self.path.exists()
        try:
            fd = fs.open_fd(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                if os.fstat(fd).st_size > self._good_end:
                    fs.truncate(fd, self._good_end)  # a line torn by a crash
                fs.write_all(fd, line)
                fs.fsync(fd)
            finally:
                fs.close(fd)
            if new:
                fs.sync_directory(self.directory)
        except BaseException:
            self._stale = True  # what reached the file is unknown: read it again first
            raise
        self._good_end += len(line)
