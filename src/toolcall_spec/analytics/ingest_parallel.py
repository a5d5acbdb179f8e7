"""JSONL ingest on several processes, with the answer one process gives.

The file is cut into pieces of about ``PIECE_BYTES`` at line boundaries (a cut always falls
just after a newline, so no line is split). Each worker process checks whole pieces with the
single-process code (``toolcall_spec.analytics.ingest.iter_jsonl_rejections``) and returns
its counts, its line count and its rejections, numbered within the piece; the parent takes the
pieces in file order and renumbers each rejection by the events and lines of the pieces before
it. So the answer (counts, indices, line numbers, issues, their order) is the same for any number
of workers.

Memory stays flat: at most two pieces per worker are in flight, and a piece's rejections are
handed on (streamed) before later pieces are read.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Generator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO, TypeVar, cast

from toolcall_spec.analytics.ingest import (
    EVENT_KIND,
    ProgressCallback,
    iter_jsonl_rejections,
    jsonl_answer,
    keep_first,
)
from toolcall_spec.analytics.precheck import event_precheck
from toolcall_spec.catalog import validator
from toolcall_spec.typed import EventRejection, EventWarning, IngestAnswer

PIECE_BYTES = 2 << 20
"""About how much of the file one task of a worker covers."""
IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True, slots=True)
class PieceAnswer:
    """What a worker found in one piece; indices and line numbers count from the piece's start."""

    lines: int
    accepted: int
    rejected: int
    rejections: list[EventRejection]
    warnings: list[EventWarning]


class _PieceReader:
    """Reads bytes ``start`` to ``end`` of an open file (``os.pread``: no shared file position).
    The JSONL reader tells it how many lines it held (``record_lines``): counting them here
    again would cost about 7% of the work."""

    def __init__(self, descriptor: int, start: int, end: int) -> None:
        self._descriptor = descriptor
        self._position = start
        self._end = end
        self.lines: int | None = None

    def read(self, size: int = -1) -> bytes:
        left = self._end - self._position
        data = os.pread(self._descriptor, left if size < 0 else min(size, left), self._position)
        self._position += len(data)
        return data

    def record_lines(self, count: int) -> None:
        self.lines = count


def check_piece(path: str, start: int, end: int) -> PieceAnswer:
    """The single-process check of bytes ``start`` to ``end`` of ``path`` (run in a worker)."""
    with Path(path).open("rb") as handle:
        reader = _PieceReader(handle.fileno(), start, end)
        counts = [0, 0]
        warnings: list[EventWarning] = []
        rejections = list(iter_jsonl_rejections(cast(BinaryIO, reader), counts, None, warnings))
    if reader.lines is None:
        raise RuntimeError("the JSONL reader did not report the lines of a piece")
    return PieceAnswer(reader.lines, counts[0], counts[1], rejections, warnings)


def piece_bounds(path: str, piece_bytes: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` byte ranges covering the file, each cut just after a newline, about
    ``piece_bytes`` (default ``PIECE_BYTES``) apart."""
    piece_bytes = piece_bytes or PIECE_BYTES
    size = Path(path).stat().st_size
    cuts = [0]
    with Path(path).open("rb") as handle:
        while cuts[-1] + piece_bytes < size:
            cut = _next_line_start(handle, cuts[-1] + piece_bytes)
            if cut >= size:
                break
            cuts.append(cut)
    return list(pairwise([*cuts, size]))


def _next_line_start(handle: BinaryIO, position: int) -> int:
    """The position just after the first newline at or after ``position`` (or the end)."""
    handle.seek(position)
    while chunk := handle.read(1 << 16):
        newline = chunk.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(chunk)
    return position


def iter_jsonl_rejections_parallel(
    handle: BinaryIO,
    workers: int,
    counts: list[int],
    on_progress: ProgressCallback | None = None,
    warnings: list[EventWarning] | None = None,
) -> Generator[EventRejection, None, None]:
    """``toolcall_spec.analytics.ingest.iter_jsonl_rejections`` over a JSONL *file* with
    ``workers`` processes: the same rejections in the same order, the same ``counts``. A stream
    that is not a named file, or a file of one piece, is read in this process. ``handle`` is left
    at the end of what has been answered (a progress display reads its position)."""
    path = getattr(handle, "name", None)
    if workers <= 1 or not isinstance(path, str) or not Path(path).is_file():
        yield from iter_jsonl_rejections(handle, counts, on_progress, warnings)
        return
    pieces = piece_bounds(path)
    if len(pieces) <= 1:
        yield from iter_jsonl_rejections(handle, counts, on_progress, warnings)
        return
    event_precheck(), validator(EVENT_KIND)  # built once here, inherited by forked workers
    lines_before = events_before = 0
    # ProcessPoolExecutor, not multiprocessing.Pool: the Pool's worker-handler thread wakes on
    # every result and costs the parent about a tenth of a core, which two busy workers on two
    # cores feel.
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
    try:
        waiting = iter(pieces)
        running: deque[tuple[int, Future[PieceAnswer]]] = deque()

        def submit() -> None:
            for start, end in waiting:
                running.append((end, pool.submit(check_piece, path, start, end)))
                return

        gc.freeze()  # the workers fork at the first submit: their collections then leave the
        try:  # inherited objects (and their pages) alone
            for _ in range(workers * IN_FLIGHT_PER_WORKER):
                submit()
        finally:
            gc.unfreeze()
        while running:
            end, pending = running.popleft()
            piece = pending.result()
            submit()
            for rejection in piece.rejections:
                yield _renumbered(rejection, events_before, lines_before)
            if warnings is not None:
                warnings += (
                    _renumbered(warning, events_before, lines_before) for warning in piece.warnings
                )
            counts[0] += piece.accepted
            counts[1] += piece.rejected
            events_before += piece.accepted + piece.rejected
            lines_before += piece.lines
            handle.seek(end)
            if on_progress is not None:
                on_progress(events_before, counts[0], counts[1])
    finally:  # a reader that stops early leaves no piece running
        pool.shutdown(wait=True, cancel_futures=True)


Found = TypeVar("Found", EventRejection, EventWarning)


def _renumbered(found: Found, events: int, lines: int) -> Found:
    """``found`` (numbered within its piece) numbered within the file."""
    renumbered = found.copy()
    renumbered["index"] = found["index"] + events
    if "line" in found:
        renumbered["line"] = found["line"] + lines
    return renumbered


def _context() -> multiprocessing.context.BaseContext:
    """Fork where it is safe (a single thread, a platform that has it): the workers then start
    at once with the compiled validators; otherwise a fresh interpreter per worker."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def ingest_jsonl_file(
    handle: BinaryIO,
    *,
    workers: int = 1,
    on_progress: ProgressCallback | None = None,
    max_errors: int | None = None,
) -> IngestAnswer:
    """``toolcall_spec.analytics.ingest.ingest_jsonl`` with ``workers`` processes for a
    named file. ``max_errors`` bounds the rejections kept (``rejected`` counts them all)."""
    counts = [0, 0]
    warnings: list[EventWarning] = []
    rejections = iter_jsonl_rejections_parallel(handle, workers, counts, on_progress, warnings)
    errors = keep_first(rejections, max_errors)
    return jsonl_answer(counts[0], counts[1], errors, warnings)
