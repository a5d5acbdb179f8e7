"""Reading JSON and JSONL documents safely: a clear error for every kind of bad input (missing,
binary, broken, too large, too deeply nested), never a traceback, never unbounded memory."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from toolcall_spec.json_paths import format_path

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
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DocumentError(_reason(str(exc))) from None
    repeated = repeated_member(raw, value)
    if repeated is not None:
        raise DocumentError(repeated)
    return value


# Repeated member names. RFC 8259 §4 leaves `{"isError": false, "isError": true}` to the reader:
# orjson keeps the last value, other parsers the first, so the one rule could flip between two
# readers of the same bytes. Every reader of this module refuses such a text instead.

_KEY_END = re.compile(rb'"\s*:')
"""The end of a member name. Also matches an escaped quote before a colon inside a string, so its
count over a text is at least the number of member names written in it."""
_SPACED_KEY_END = re.compile(rb'"\s+:')
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\],:]')
"""The tokens the exact check needs (strings and punctuation) in a text known to be valid JSON."""


def repeated_member(raw: bytes, value: Any) -> str | None:
    """A message naming the first repeated member name of the JSON text ``raw`` (already parsed
    as ``value``) and its path, or ``None``. Cheap when there is none, which is the common case:
    a text that re-serializes to itself has none, ``colons_rule_out_repeats`` against orjson's
    re-encoding settles most others in C, and otherwise a text whose count of name-ending tokens
    equals the number of members parsed has none either (the count only over-estimates). Only
    the rest is scanned exactly."""
    if type(value) is not dict and type(value) is not list:
        return None
    try:
        encoded = orjson.dumps(value)
        if encoded == raw or colons_rule_out_repeats(raw, encoded):  # equal: one memcmp
            return None
    except orjson.JSONEncodeError:  # deeper than orjson writes (254 levels): count instead
        pass
    return _repeated_slowly(raw, value)


def colons_rule_out_repeats(raw: bytes, reencoded: bytes) -> bool:
    """Whether the JSON text ``raw`` surely names no member twice in one object, given
    ``reencoded``: what a last-wins reader (orjson, msgspec) read from it, written back out
    (one member per name; several texts joined are fine).

    Outside strings a JSON text has one colon per member; inside, a colon is written as itself
    unless escaped as ``\\u003a``. So when ``raw`` has no ``\\u`` escape, its colons are its
    members plus every colon of its strings, the dropped repeats' too, while ``reencoded``
    (whose writer escapes no colon) has the kept members plus the kept strings' colons: raw's
    count is never below, and equal counts leave no room for a dropped member. A backslash is
    looked for first (one memchr: most texts have none), then the two counts, all in C."""
    if b"\\" in raw and b"\\u" in raw:
        return False
    return raw.count(b":") == reencoded.count(b":")


def _repeated_slowly(raw: bytes, value: Any) -> str | None:
    if _name_tokens(raw) == _member_count(value):
        return None
    found = _first_repeat(raw)
    if found is None:
        return None
    path, name = found
    return (
        f"{format_path([*path, name])}: the member {json.dumps(name, ensure_ascii=False)} "
        "appears more than once in one object; JSON readers disagree on which value counts, "
        "so the document is refused"
    )


def _name_tokens(raw: bytes) -> int:
    """At least the number of member names written in the JSON text ``raw`` (see ``_KEY_END``)."""
    if _SPACED_KEY_END.search(raw) is None:
        return raw.count(b'":')
    return len(_KEY_END.findall(raw))


def _member_count(value: Any) -> int:
    """Members of every object in ``value``, counted without recursion (any depth)."""
    count = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if type(node) is dict:
            count += len(node)
            node = node.values()
        for child in node:
            if type(child) is dict or type(child) is list:
                push(child)
    return count


def _first_repeat(raw: bytes) -> tuple[list[str | int], str] | None:
    """The path of the object and the first name repeated in it, by one iterative pass over the
    tokens of a valid JSON text (no recursion, so any depth the parser took is fine)."""
    path: list[str | int] = []
    frames: list[tuple[bool, set[str]]] = []  # (is an object, names seen) per open container
    pending: str | int | None = None  # where the next value goes: a member name or an index
    expect_name = False
    for match in _TOKEN.finditer(raw):
        token = match.group()
        if token in (b"{", b"["):
            if frames:
                path.append(pending if pending is not None else 0)
            frames.append((token == b"{", set()))
            expect_name, pending = token == b"{", 0
        elif token in (b"}", b"]"):
            frames.pop()
            pending = path.pop() if path else None
            expect_name = False
        elif token == b",":
            is_object = frames[-1][0]
            expect_name = is_object
            if not is_object and isinstance(pending, int):
                pending += 1
        elif token == b":":
            expect_name = False
        elif expect_name:
            name: str = json.loads(token)
            names = frames[-1][1]
            if name in names:
                return path, name
            names.add(name)
            pending = name
    return None


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
            return read_json_stream(handle, max_bytes=max_bytes)
    except OSError as exc:
        raise DocumentError(f"cannot read: {exc.strerror or exc}") from None


def read_json_stream(handle: BinaryIO, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Read and parse one JSON document from an open stream (standard input, a pipe), never
    holding more than ``max_bytes`` + 1 of it: the limit applies while reading, not after."""
    raw = read_limited(handle, max_bytes)
    return parse_json(raw, max_bytes=max_bytes)


def read_limited(handle: BinaryIO, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """At most ``max_bytes`` of ``handle``; ``DocumentError`` as soon as there is more."""
    raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise DocumentError(f"document is over the limit of {max_bytes:,} bytes")
    return raw


def iter_jsonl(
    handle: BinaryIO, *, max_line_bytes: int = MAX_DOCUMENT_BYTES, block_bytes: int = BLOCK_BYTES
) -> Iterator[Line]:
    """Every non-blank line of a JSONL stream, parsed, with its 1-based line number, in constant
    memory (one block plus one line). A line that fails, or is over ``max_line_bytes`` (its
    newline not counted; its bytes are dropped, not kept), yields its error and the stream goes
    on. orjson parses each line straight away; only a line it refuses goes to ``parse_json``,
    so values and messages are the same as for a single document."""
    number = 0
    for lines, _ in iter_jsonl_blocks(
        handle, max_line_bytes=max_line_bytes, block_bytes=block_bytes
    ):
        for raw in lines:
            number += 1
            settled = parse_jsonl_line(raw, max_line_bytes=max_line_bytes)
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
    raw: bytes | None, *, max_line_bytes: int = MAX_DOCUMENT_BYTES
) -> tuple[Any, str | None] | None:
    """One line from ``iter_jsonl_blocks`` as ``(value, error)``, or ``None`` for a blank
    line (which holds no event)."""
    if raw is None:
        return None, _too_long(max_line_bytes)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if not raw.strip():
            return None
        return _parse_slowly(raw)
    repeated = repeated_member(raw, value)
    return (value, None) if repeated is None else (None, repeated)


def _parse_slowly(raw: bytes) -> tuple[Any, str | None]:
    """A line orjson refused, read by ``parse_json``:
    the same value (it accepts a byte order mark, for one) or the same message as elsewhere."""
    try:
        return parse_json(raw), None
    except DocumentError as exc:
        return None, str(exc)


def _too_long(limit: int) -> str:
    return f"line is over the limit of {limit:,} bytes"


def is_jsonl_path(path: str | Path) -> bool:
    return str(path).endswith((".jsonl", ".ndjson"))
