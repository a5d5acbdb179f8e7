"""Reading JSON and JSONL documents safely: a clear error for every kind of bad input (missing,
binary, broken, too large, too deeply nested), never a traceback, never unbounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
"""Largest single JSON document (or JSONL line) read; larger input is refused, not parsed."""


class DocumentError(Exception):
    """Input that cannot be read as a JSON document. ``str()`` is a one-line user-facing message."""


@dataclass(frozen=True, slots=True)
class Line:
    """One JSONL line: its 1-based number and either the parsed value or why it failed."""

    number: int
    value: Any = None
    error: str | None = None


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


def iter_jsonl(handle: BinaryIO, *, max_line_bytes: int = MAX_DOCUMENT_BYTES) -> Iterator[Line]:
    """Parse a JSONL stream line by line in constant memory. Blank lines are skipped; a line that
    fails yields a :class:`Line` with ``error`` set and the stream goes on."""
    number = 0
    while True:
        raw = handle.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            _skip_rest_of_line(handle)
            yield Line(number, error=f"line is over the limit of {max_line_bytes:,} bytes")
            continue
        if not raw.strip():
            continue
        try:
            yield Line(number, value=parse_json(raw, max_bytes=max_line_bytes))
        except DocumentError as exc:
            yield Line(number, error=str(exc))


def _skip_rest_of_line(handle: BinaryIO) -> None:
    while chunk := handle.readline(1 << 20):
        if chunk.endswith(b"\n"):
            return


def is_jsonl_path(path: str | Path) -> bool:
    return str(path).endswith((".jsonl", ".ndjson"))
