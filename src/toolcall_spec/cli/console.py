"""Input and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import orjson

from toolcall_spec.loading import DocumentError, read_json_file, read_json_stream


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


def read_document(source: str) -> Any:
    """One JSON document from a path, or from standard input when ``source`` is ``-``."""
    if source == "-":
        return read_json_stream(sys.stdin.buffer)
    return read_json_file(Path(source))


def open_input(name: str) -> AbstractContextManager[BinaryIO]:
    """The named file, or stdin for ``-`` (left open on exit), in binary mode."""
    if name == "-":
        return nullcontext(sys.stdin.buffer)
    return Path(name).open("rb")


def write_atomically(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` through a temporary file in the same folder, renamed into
    place only once complete: an interrupted run leaves the old file or none, never half."""
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", delete=False
    ) as handle:
        temporary = Path(handle.name)
        try:
            handle.write(text)
        except BaseException:
            handle.close()
            temporary.unlink()
            raise
    temporary.replace(target)


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


__all__ = [
    "DocumentError",
    "add_jsonl_option",
    "fail",
    "http_url",
    "open_input",
    "port_number",
    "print_json",
    "read_document",
    "write_atomically",
]
