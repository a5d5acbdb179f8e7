"""Reading large JSONL streams of analytics events fast, in constant memory.

``toolcall_spec.loading.iter_jsonl`` reads one line at a time and builds a ``Line`` object for
each; at ingest rates that bookkeeping costs about as much as parsing the line. This reader
splits 1 MiB blocks in C, parses with orjson straight away and only when orjson refuses a line
hands it to ``loading.parse_json``, so values and messages are the same as everywhere else in the
package.
Memory is one block plus one line; a line over ``loading.MAX_DOCUMENT_BYTES`` is dropped, not
kept, and reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from toolcall_spec.loading import MAX_DOCUMENT_BYTES, DocumentError, parse_json

BLOCK_BYTES = 1 << 20

Parsed = tuple[int, Any, "str | None"]
"""``(line number, value, error)``: ``error`` is ``None`` when the line parsed."""


def iter_json_lines(
    handle: BinaryIO, max_line_bytes: int = MAX_DOCUMENT_BYTES, block_bytes: int = BLOCK_BYTES
) -> Iterator[Parsed]:
    """Every non-blank line of a JSONL stream, parsed, with its 1-based line number."""
    number = 0
    pending: list[bytes] = []  # the start of a line whose end is in a later block
    pending_size = 0
    oversize = False  # the current line is over the limit: its bytes are being dropped
    while block := handle.read(block_bytes):
        lines = block.split(b"\n")
        for piece in lines[:-1]:
            number += 1
            raw = piece
            if pending or oversize:
                if oversize or pending_size + len(piece) > max_line_bytes:
                    pending, pending_size, oversize = [], 0, False
                    yield number, None, _too_long(max_line_bytes)
                    continue
                raw = b"".join([*pending, piece])
                pending, pending_size = [], 0
            if len(raw) > max_line_bytes:
                yield number, None, _too_long(max_line_bytes)
                continue
            try:
                yield number, orjson.loads(raw), None
            except orjson.JSONDecodeError:
                if raw.strip():
                    yield number, *_parse_slowly(raw + b"\n")
        tail = lines[-1]
        if tail and not oversize:
            pending.append(tail)
            pending_size += len(tail)
            if pending_size > max_line_bytes:
                pending, pending_size, oversize = [], 0, True
    if pending or oversize:
        number += 1
        raw = b"".join(pending)
        if oversize:
            yield number, None, _too_long(max_line_bytes)
        elif raw.strip():
            yield number, *_parse_slowly(raw)


def _parse_slowly(raw: bytes) -> tuple[Any, str | None]:
    """A line (with its newline, if it had one) orjson refused, read by ``loading.parse_json``:
    the same value (it accepts a byte order mark, for one) or the same message as elsewhere."""
    try:
        return parse_json(raw), None
    except DocumentError as exc:
        return None, str(exc)


def _too_long(limit: int) -> str:
    return f"line is over the limit of {limit:,} bytes"
