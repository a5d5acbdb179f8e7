"""Reading JSON and JSONL documents safely: a clear error for every kind of bad input (missing,
binary, broken, too large, too deeply nested), never a traceback, never unbounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
"""Largest single JSON document (or JSONL line) read; larger input is refused, not parsed."""


class DocumentError(Exception):
    """Input that cannot be read as a JSON document. ``str()`` is a one-line user-facing message."""


Line = tuple[int, Any, "str | None"]
"""One parsed JSONL line: ``(1-based line number, value, error)``; ``error`` is ``None`` when the
line parsed, and ``value`` is ``None`` when it did not. A plain tuple: at ingest rates even a
small object per line costs as much as parsing it."""

BLOCK_BYTES = 1 << 20
"""JSONL is read in blocks of this size and split in C: reading line by line costs about as much
as parsing each line."""


def parse_json(data: bytes | str, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Parse one JSON document; raise ``DocumentError`` with a readable reason."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > max_bytes:
        raise DocumentError(
            f"document is {len(raw):,} bytes, over the limit of {max_bytes:,} bytes"
        )
    if b"\x00" in raw:
        raise DocumentError("not a JSON text: the input is binary (it contains NUL bytes)")
    if raw.startswith(UTF8_BOM):  # RFC 8259 §8.1: a parser may ignore a byte order mark
        raw = raw[len(UTF8_BOM) :]
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DocumentError(_reason(str(exc))) from None


UTF8_BOM = b"\xef\xbb\xbf"


def _reason(parser_message: str) -> str:
    """orjson's message, said in the user's terms where it names a limit rather than a typo."""
    lowered = parser_message.lower()
    if "recursion" in lowered or "depth limit" in lowered:
        return "not accepted: JSON nested deeper than 1,024 levels"
    if "utf-8" in lowered:
        return "not a JSON text: the input is not valid UTF-8"
    if "empty" in lowered:
        return "not a JSON text: the input is empty"
    if "infinity" in lowered:
        return f"not accepted: a number beyond the range of a double ({parser_message})"
    return f"invalid JSON: {parser_message}"


def read_json_file(path: str | Path, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Read and parse one JSON file without reading more than ``max_bytes`` of it."""
    try:
        with Path(path).open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise DocumentError(f"document is over the limit of {max_bytes:,} bytes")
    return parse_json(raw, max_bytes=max_bytes)


def iter_jsonl(
    handle: BinaryIO, *, max_line_bytes: int = MAX_DOCUMENT_BYTES, block_bytes: int = BLOCK_BYTES
) -> Iterator[Line]:
    """Every non-blank line of a JSONL stream, parsed, with its 1-based line number, in constant
    memory (one block plus one line). A line that fails, or is over ``max_line_bytes`` (its
    newline not counted; its bytes are dropped, not kept), yields its error and the stream goes
    on. orjson parses each line straight away; only a line it refuses goes to ``parse_json``,
    so values and messages are the same as for a single document."""
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
    """A line (with its newline, if it had one) orjson refused, read by ``parse_json``:
    the same value (it accepts a byte order mark, for one) or the same message as elsewhere."""
    try:
        return parse_json(raw), None
    except DocumentError as exc:
        return None, str(exc)


def _too_long(limit: int) -> str:
    return f"line is over the limit of {limit:,} bytes"


def is_jsonl_path(path: str | Path) -> bool:
    return str(path).endswith((".jsonl", ".ndjson"))
