"""A one-line progress indicator on stderr, shown only when stderr is a terminal (so piped and
captured output never carries it). No dependency: a carriage return redraws the line."""

from __future__ import annotations

import os
import sys
from typing import BinaryIO, TextIO


class TerminalProgress:
    """Called with (events read, accepted, rejected); shows them and how much of the file was
    read."""

    def __init__(self, handle: BinaryIO, stream: TextIO) -> None:
        self.handle = handle
        self.stream = stream
        try:
            self.total: int | None = os.fstat(handle.fileno()).st_size or None
        except (OSError, ValueError):
            self.total = None

    @classmethod
    def for_stderr(cls, handle: BinaryIO) -> TerminalProgress | None:
        return cls(handle, sys.stderr) if sys.stderr.isatty() else None

    def __call__(self, events: int, accepted: int, rejected: int) -> None:
        where = ""
        if self.total is not None:
            try:
                where = f" ({100 * self.handle.tell() / self.total:.0f}%)"
            except (OSError, ValueError):
                where = ""
        self.stream.write(
            f"\r{events:,} events read{where}: {accepted:,} accepted, {rejected:,} rejected"
        )
        self.stream.flush()

    def done(self) -> None:
        self.stream.write("\n")
        self.stream.flush()
