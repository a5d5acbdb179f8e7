"""Input and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import orjson

from toolcall_spec.loading import (
    MAX_DOCUMENT_BYTES,
    DocumentError,
    is_jsonl_path,
    parse_json,
    read_json_file,
    read_json_stream,
)


def print_json(value: Any) -> None:
    """``value`` as indented JSON on stdout, in one write (a reader never sees half of it)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        # A lone surrogate (a file name that is not UTF-8): escaped, still valid JSON.
        text = json.dumps(value, indent=2)
    sys.stdout.write(text + "\n")


def fail(message: str) -> None:
    """A one-line message on stderr, prefixed with the program name."""
    print(f"toolcall-spec: {message}", file=sys.stderr)


JSONL_HINT = "; for one document a line (JSONL), pass --jsonl or name the file .jsonl"


def read_document(source: str) -> Any:
    """One JSON document from a path, or from standard input when ``source`` is ``-``. Several
    documents one after the other are refused with a hint at ``--jsonl``."""
    try:
        if source == "-":
            return read_json_stream(_standard_input())
        return read_json_file(Path(source))
    except DocumentError as exc:
        if "unexpected content after document" in str(exc):
            raise DocumentError(f"{exc}{JSONL_HINT}") from None
        raise


def open_input(name: str) -> AbstractContextManager[BinaryIO]:
    """The named file, or stdin for ``-`` (left open on exit), in binary mode."""
    if name == "-":
        return nullcontext(_standard_input())
    return Path(name).open("rb")


def reads_as_jsonl(name: str, *, jsonl: bool) -> bool:
    """Whether the input ``name`` is read as JSONL: with ``--jsonl``, for a ``.jsonl`` or
    ``.ndjson`` name, and for standard input whose shape says so: its first line is a whole JSON
    object or array and another non-blank line follows (a pretty-printed document's first line
    is never whole). The lines it reads to decide are read again by the command."""
    if jsonl or is_jsonl_path(name):
        return True
    return name == "-" and _stdin_is_jsonl()


_PEEKED: dict[int, tuple[Any, bool, BinaryIO]] = {}
"""Standard input streams whose first lines were read to decide their shape, by ``id``: the
stream itself (kept, so the id is not reused), the decision, and a stream that gives the lines
read back before the rest."""


def _standard_input() -> BinaryIO:
    raw = sys.stdin.buffer
    peeked = _PEEKED.get(id(raw))
    return peeked[2] if peeked is not None and peeked[0] is raw else raw


def _stdin_is_jsonl() -> bool:
    raw = sys.stdin.buffer
    peeked = _PEEKED.get(id(raw))
    if peeked is not None and peeked[0] is raw:
        return peeked[1]
    first = raw.readline(MAX_DOCUMENT_BYTES + 1)
    second = b""
    if first.strip().startswith((b"{", b"[")) and _is_json(first):
        second = raw.readline(MAX_DOCUMENT_BYTES + 1)
        while second and not second.strip():  # blank lines between documents are allowed
            first += second
            second = raw.readline(MAX_DOCUMENT_BYTES + 1)
    decision = bool(second.strip())
    _PEEKED[id(raw)] = (raw, decision, _Replayed(first + second, raw))
    return decision


def _is_json(line: bytes) -> bool:
    try:
        parse_json(line)
    except DocumentError:
        return False
    return True


class _Replayed(io.BufferedReader):
    """``head`` and then whatever is left of ``rest``, as one binary stream."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        super().__init__(_ChainedRaw(head, rest))


class _ChainedRaw(io.RawIOBase):
    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            size = min(len(buffer), len(self._head))
            buffer[:size] = self._head[:size]
            self._head = self._head[size:]
            return size
        read = getattr(self._rest, "read1", self._rest.read)
        chunk = read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)


def add_jsonl_option(parser: argparse.ArgumentParser) -> None:
    """``--jsonl``, the same for every subcommand that reads documents."""
    parser.add_argument(
        "--jsonl",
        action="store_true",
        help="read the input as JSONL (one document a line) whatever its name; with - for stdin",
    )


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range 0..65535")
    return port


def http_url(text: str) -> str:
    """An argparse type: an absolute http(s) URL whose host and port parse."""
    try:
        parts = urlsplit(text)
        _ = parts.port
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a valid URL {text!r}: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"not an http(s) URL with a host: {text!r}")
    return text


class LiveCommandAfterDashes(argparse.ArgumentParser):
    """Everything after the first ``--`` is the live server's command (``live_command``),
    whether options come before or after SUITE (argparse alone takes the positionals in one go
    and then refuses a ``--`` that follows an option)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        arguments = list(sys.argv[1:] if args is None else args)
        command: list[str] = []
        if "--" in arguments:
            cut = arguments.index("--")
            arguments, command = arguments[:cut], arguments[cut + 1 :]
        parsed, extras = super().parse_known_args(arguments, namespace)
        parsed.live_command = command
        return parsed, extras


__all__ = [
    "JSONL_HINT",
    "DocumentError",
    "LiveCommandAfterDashes",
    "add_jsonl_option",
    "fail",
    "http_url",
    "open_input",
    "port_number",
    "print_json",
    "read_document",
    "reads_as_jsonl",
]
