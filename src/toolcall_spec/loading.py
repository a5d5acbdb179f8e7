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
    """Parse one JSON document; raise :class:`DocumentError` with a readable reason."""
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
    on. orjson parses each line straight away; only a line it refuses goes to :func:`parse_json`,
    so values and messages are the same as for a single document."""
    number = 0
    for lines, terminated in iter_jsonl_blocks(
        handle, max_line_bytes=max_line_bytes, block_bytes=block_bytes
    ):
        for raw in lines:
            number += 1
            if raw is not None:
                try:
                    yield number, orjson.loads(raw), None
                    continue
                except orjson.JSONDecodeError:
                    pass
            settled = parse_jsonl_line(raw, max_line_bytes=max_line_bytes, terminated=terminated)
            if settled is not None:
                yield number, *settled


RawLines = tuple[list["bytes | None"], bool]
"""One block of a JSONL stream: its complete lines in order (bytes without the newline, blank
lines included, ``None`` for a line over the limit, whose bytes were dropped), and whether they
ended with a newline (only the stream's last line may not)."""


def iter_jsonl_blocks(
    handle: BinaryIO, *, max_line_bytes: int = MAX_DOCUMENT_BYTES, block_bytes: int = BLOCK_BYTES
) -> Iterator[RawLines]:
    """The lines of a JSONL stream, a block at a time, unparsed: a caller can then handle a
    block's lines in one tight loop. The n-th line overall is line n (blank lines count)."""
    pending: list[bytes] = []  # the start of a line whose end is in a later block
    pending_size = 0
    oversize = False  # the current line is over the limit: its bytes are being dropped
    while block := handle.read(block_bytes):
        lines: list[bytes | None] = list(block.split(b"\n"))
        tail = lines.pop()
        if lines and (pending or oversize):
            first = lines[0]
            if oversize or first is None or pending_size + len(first) > max_line_bytes:
                lines[0] = None
            else:
                lines[0] = b"".join([*pending, first])
            pending, pending_size, oversize = [], 0, False
        if len(block) > max_line_bytes:  # only then can a line inside the block be too long
            lines = [None if raw is None or len(raw) > max_line_bytes else raw for raw in lines]
        if lines:
            yield lines, True
        if tail and not oversize:
            pending.append(tail)
            pending_size += len(tail)
            if pending_size > max_line_bytes:
                pending, pending_size, oversize = [], 0, True
    if oversize:
        yield [None], False
    elif pending:
        yield [b"".join(pending)], False


def parse_jsonl_line(
    raw: bytes | None, *, max_line_bytes: int = MAX_DOCUMENT_BYTES, terminated: bool = True
) -> tuple[Any, str | None] | None:
    """One line from :func:`iter_jsonl_blocks` as ``(value, error)``, or ``None`` for a blank
    line (which holds no event)."""
    if raw is None:
        return None, _too_long(max_line_bytes)
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        if not raw.strip():
            return None
        return _parse_slowly(raw + b"\n" if terminated else raw)


def _parse_slowly(raw: bytes) -> tuple[Any, str | None]:
    """A line (with its newline, if it had one) orjson refused, read by :func:`parse_json`:
    the same value (it accepts a byte order mark, for one) or the same message as elsewhere."""
    try:
        return parse_json(raw), None
    except DocumentError as exc:
        return None, str(exc)


def _too_long(limit: int) -> str:
    return f"line is over the limit of {limit:,} bytes"


def is_jsonl_path(path: str | Path) -> bool:
    return str(path).endswith((".jsonl", ".ndjson"))
